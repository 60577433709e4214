"""How many fetches a cold `watch check` makes while it follows files: one per link of the
files' chains for every item at once, never one per item (issue 36).

Counted as `upload-pack` runs in git's own trace (GIT_TRACE2_EVENT), against an upstream
packed with a bitmap as GitHub's is.
"""

from __future__ import annotations

from tests.conftest import Project
from tests.support import Trace
from tests.test_commands_check_costs import (
    FILES,
    NAMES,
    check,
    cite_everything,
    leave_files,
    leaver,
    module,
    publish,
    span,
)
from watcher.gitbuild import Upstream
from watcher.models import Verdict


def test_a_renamed_files_later_changes_are_looked_at_for_copies_with_every_others(
    project: Project, upstream: Upstream, trace: Trace
) -> None:
    # Four cited files, each renamed with an edit by a commit of its own; then each new
    # path changed by a commit that also adds a file of its kind (a copy, maybe: git
    # must compare their contents to tell). Followed one item at a time, each second
    # link cost a fetch of its own.
    files = [f"src/k{i}.rs" for i in range(4)]
    cite_everything(project, upstream, files)
    for i, path in enumerate(files):
        new = f"src/moved/k{i}.rs"
        upstream.commit(
            f"move {path} (#{i + 2})", {path: None, new: module(NAMES, 10 * i, gamma=-i)}
        )
    for i in range(4):
        upstream.commit(
            f"grow k{i} (#{i + 10})",
            {
                f"src/moved/k{i}.rs": module(NAMES, 10 * i, gamma=-i, beta=50 + i),
                f"src/extra{i}.rs": f"pub fn extra_{i}() -> bool {{\n    {i} > 2\n}}\n",
            },
        )
    publish(upstream)

    trace.start()
    report = check(project)

    betas = [r for r in report.results if r.id.endswith(span(NAMES, "beta"))]
    assert {r.verdict for r in betas} == {Verdict.CHANGED}
    assert {r.current.path for r in betas if r.current} == {f"src/moved/k{i}.rs" for i in range(4)}
    # The clone, its trees, what the renames' detection compares (all four commits),
    # what the later changes' does (all four: the files they added), the files at HEAD
    # the verdicts read. Not one fetch per file for the second link.
    assert trace.upload_packs() == 5


def test_where_the_files_of_many_missing_citations_hints_went_is_found_in_one_batch(
    project: Project, upstream: Upstream, trace: Trace
) -> None:
    # Each new file `leave_files` writes is then renamed with an edit. Each missing
    # citation's hint is in the new file where it is at HEAD: followed there one
    # citation at a time, each cost a fetch of its own.
    leave_files(project, upstream)
    for i in range(len(FILES)):
        moved = leaver(i, ", cursor: u32").replace("enabled", "visible")
        upstream.commit(
            f"move new{i} (#{i + 30})", {f"src/new{i}.rs": None, f"src/tools/new{i}.rs": moved}
        )
    publish(upstream)

    trace.start()
    report = check(project)

    missing = [r for r in report.results if r.verdict is Verdict.MISSING]
    assert sorted(c.path for r in missing for c in r.candidates) == [
        f"src/tools/new{i}.rs" for i in range(len(FILES))
    ]
    # The clone, its trees, what the first commits' detection compares (the cited files'
    # versions among it: the walks need no others), the files at HEAD the verdicts read,
    # what the new files' renames' detection compares (all four commits; the hints'
    # files among it). Not one fetch per missing citation.
    assert trace.upload_packs() == 5
