"""What a `watch check` costs, pinned by counters rather than timings.

- a warm run with the upstream unchanged parses nothing and makes one fetch (the refs);
- after one upstream commit to one cited file, only that file's versions are parsed;
- the blobs a partial mirror lacks come in one batch, however many files are cited;
- a long attribution walk parses each distinct blob at most once and stops at the answer.

And the costs that grow with the site: walks of many files fetch in lock-step
(round trips do not grow with the number of stale files), the commit-graph is current
after every fetch, releases are asked once per (commit, tag set), packs are rolled up
once they pile up, and state is written one item per line, the same bytes every time.

Network round trips are counted from git's own trace (GIT_TRACE2_EVENT): every fetch,
whatever its transport, runs exactly one `upload-pack` on the serving side.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Project
from tests.support import Trace
from watcher.config import Upstream as UpstreamConfig
from watcher.config import load
from watcher.gitbuild import Upstream
from watcher.locate import anchors, matching
from watcher.mirror import clone
from watcher.mirror import renames as paths
from watcher.mirror.mirrors import Mirror
from watcher.models import Report, Verdict
from watcher.parse import syntax
from watcher.pipeline import CheckOptions, run_check


def fn(name: str, value: int) -> str:
    return f"pub fn {name}() -> u32 {{\n    let value = {value};\n    value + 1\n}}\n"


def module(names: list[str], salt: int = 0, **values: int) -> str:
    """A Rust file of small functions, 4 lines and a blank line each; `salt` makes it unique."""
    return "\n".join(fn(n, values.get(n, salt + i)) for i, n in enumerate(names))


def span(names: list[str], name: str) -> str:
    start = 1 + 5 * names.index(name)
    return f"{start}-{start + 3}"


def publish(upstream: Upstream) -> None:
    """Pack the upstream with a reachability bitmap, as GitHub's servers do.

    Bitmaps change what a server leaves out of a pack (everything reachable from what the
    client says it has), so a blob fetch must be right against them too.
    """
    upstream.git("repack", "-a", "-d", "-q", "--write-bitmap-index")


def check(project: Project) -> Report:
    return run_check(load(project.config_file), CheckOptions(no_issues=True), counts=project.counts)


def verdicts(report: Report) -> dict[str, tuple[Verdict, str | None]]:
    return {
        r.id: (r.verdict, r.introduced_by.commit if r.introduced_by else None)
        for r in report.results
    }


NAMES = ["alpha", "beta", "gamma"]
FILES = [f"src/m{i}.rs" for i in range(4)]


def cite_everything(project: Project, upstream: Upstream, files: list[str]) -> str:
    """Commit `files` of NAMES functions; one note cites every function. Returns the base."""
    base = upstream.commit(
        "base (#1)", {p: module(NAMES, salt=10 * i) for i, p in enumerate(files)}
    )
    sources = [f"{base} {path}:{span(NAMES, n)}" for path in files for n in NAMES]
    project.note("everything", *sources)
    return base


def test_warm_run_parses_nothing_and_only_fetches_refs(
    project: Project, upstream: Upstream, trace: Trace
) -> None:
    cite_everything(project, upstream, FILES)
    changed = upstream.commit("change beta (#2)", {FILES[1]: module(NAMES, salt=10, beta=99)})
    upstream.commit("docs (#3)", {"README.md": "hello\n"})
    publish(upstream)
    cold = check(project)
    assert cold.summary.fresh == 11 and cold.summary.changed == 1
    assert verdicts(cold)[f"everything:{FILES[1]}:{span(NAMES, 'beta')}"] == (
        Verdict.CHANGED,
        changed,
    )

    project.counts.parse.reset()
    trace.start()
    warm = check(project)

    assert project.counts.parse.parses == 0
    assert trace.upload_packs() == 1  # the refs; no blob is fetched again
    assert verdicts(warm) == verdicts(cold)


def test_one_changed_file_parses_only_its_own_versions(
    project: Project, upstream: Upstream, trace: Trace
) -> None:
    base = cite_everything(project, upstream, FILES)
    publish(upstream)
    assert check(project).summary.fresh == 12
    touched = FILES[2]
    upstream.commit("change gamma (#4)", {touched: module(NAMES, salt=20, gamma=7)})
    publish(upstream)

    project.counts.parse.reset()
    trace.start()
    report = check(project)

    versions = {upstream.git("rev-parse", f"{rev}:{touched}") for rev in (base, "HEAD")}
    parsed = project.counts.parse.parsed_blobs
    assert upstream.git("rev-parse", f"HEAD:{touched}") in parsed
    assert set(parsed) <= versions  # nothing of the three untouched files
    assert len(parsed) == len(set(parsed))
    assert trace.upload_packs() == 2  # the refs, then the one new blob
    assert report.summary.changed == 1 and report.summary.fresh == 11


@pytest.mark.parametrize("count", [2, 12])
def test_missing_blobs_come_in_one_batch(
    project: Project, upstream: Upstream, trace: Trace, count: int
) -> None:
    files = [f"src/f{i}.rs" for i in range(count)]
    cite_everything(project, upstream, files)
    upstream.commit("uncited file (#5)", {"src/other.rs": module(["delta"])})
    publish(upstream)

    trace.start()
    report = check(project)

    assert report.summary.fresh == 3 * count
    # The clone of commits, the trees of their history, then one batch of blobs.
    assert trace.upload_packs() == 3
    mirror = Mirror(load(project.config_file).upstream[0], load(project.config_file).cache)
    present = mirror.repo.git.cat_file("--batch-all-objects", "--batch-check=%(objecttype)")
    assert present.split().count("blob") == count  # the cited blobs, and no other


def test_an_older_note_checked_offline_fetches_its_trees_in_one_batch(
    project: Project, upstream: Upstream, trace: Trace
) -> None:
    history = [upstream.commit(f"beta {i} (#{i + 1})", {FILES[0]: module(NAMES, beta=i)})
               for i in range(6)]  # fmt: skip
    project.note("late", f"{history[4]} {FILES[0]}:{span(NAMES, 'beta')}")
    publish(upstream)
    check(project)  # the mirror holds the trees of history[4:] only
    project.note("early", f"{history[0]} {FILES[0]}:{span(NAMES, 'beta')}")

    trace.start()
    report = run_check(load(project.config_file), CheckOptions(no_issues=True, offline=True))

    changes = {r.note: [c.commit for c in r.history] for r in report.results}
    assert changes == {"late": history[5:], "early": history[1:]}
    # The older trees in one fetch (not one per commit, by git), the early baseline's
    # blob, then the walk's older versions.
    assert trace.upload_packs() == 3


def test_mirror_counts_one_round_trip_per_batch_and_reads_without_fetching(
    upstream: Upstream, tmp_path: Path, trace: Trace
) -> None:
    files = {f"src/f{i}.rs": module(NAMES, salt=10 * i) for i in range(20)}
    head = upstream.commit("base (#1)", files)
    publish(upstream)
    # branch named: an omitted one costs one `ls-remote` more, at the first clone only
    up = UpstreamConfig(repo="acme/client", url=upstream.url, branch="main")
    mirror = Mirror(up, tmp_path / "cache")
    trace.start()
    mirror.sync()
    blobs = [b for p in files if (b := mirror.blob_id(head, p)) is not None]

    mirror.prefetch(blobs[:12])
    mirror.prefetch(blobs)  # only the 8 still missing
    mirror.prefetch(blobs)  # nothing missing: no round trip
    texts = [mirror.read(b) for b in blobs]

    # Commits, then HEAD's trees (sync); then two batches of blobs.
    assert (mirror.round_trips, mirror.blobs_fetched) == (4, 20)
    assert trace.upload_packs() == 4  # reading went to the local objects only
    assert {t.decode() for t in texts} == set(files.values())


TURN = "src/turn.rs"
WALK_RULE = """\
[[rule]]
id = "legacy-cursor"
note = "walk"
path = "src/turn.rs"
inside = '''(function_item name: (identifier) @n (#eq? @n "run_turn")) @scope'''
query = '''
(match_arm pattern: (match_pattern) @p (#eq? @p "Mode::Legacy") value: (_) @legacy) @target
'''
[[rule.claims]]
capture = "legacy"
equals = "None"
"""


def turn(budget: int, flipped: bool) -> str:
    """`run_turn` with a value edited in every commit and a match arm that flips once."""
    legacy = "response.next" if flipped else "None"
    return (
        "pub fn helper() -> u32 {\n    3\n}\n\n"
        "pub fn run_turn(mode: Mode, response: Response) -> Option<u32> {\n"
        f"    let budget = {budget};\n"
        "    let next = match mode {\n"
        f"        Mode::Legacy => {legacy},\n"
        "        Mode::Current => response.next,\n"
        "    };\n"
        "    next.map(|n| n + budget)\n"
        "}\n"
    )


def walk_history(project: Project, upstream: Upstream, budgets: list[int], flip_at: int) -> str:
    """A base, then one commit per budget editing `run_turn`; returns the flip commit."""
    base = upstream.commit("base (#1)", {TURN: turn(-1, flipped=False)})
    project.note("walk", f"{base} {TURN}:1-3")
    project.rules(WALK_RULE)
    flip = ""
    for index, budget in enumerate(budgets):
        sha = upstream.commit(
            f"edit {index} (#{index + 10})", {TURN: turn(budget, index >= flip_at)}
        )
        flip = sha if index == flip_at else flip
    publish(upstream)
    return flip


def test_long_walk_parses_each_distinct_blob_once(project: Project, upstream: Upstream) -> None:
    # 48 edits but only 8 distinct versions of the file: the budget cycles through 0..3.
    flip = walk_history(project, upstream, [i % 4 for i in range(48)], flip_at=30)

    report = check(project)

    assert verdicts(report)["legacy-cursor"] == (Verdict.BROKEN, flip)
    parsed = project.counts.parse.parsed_blobs
    assert len(parsed) == len(set(parsed))
    assert len(parsed) <= 1 + 8  # the base and the distinct versions, each once


def test_long_walk_parses_only_the_versions_whose_commit_touched_the_item(
    project: Project, upstream: Upstream
) -> None:
    # 48 edits, all distinct; the flip is 12 commits before HEAD.
    flip = walk_history(project, upstream, list(range(48)), flip_at=36)

    report = check(project)

    assert verdicts(report)["legacy-cursor"] == (Verdict.BROKEN, flip)
    # The walk back to the base (for the item's history) reads every version, but the rule's
    # target lines are touched by the flip alone: the other edits are followed, not parsed.
    assert project.counts.parse.parses <= 14


SESSION = """\
class Session:
    def deliver(self, message):
        payload = self.codec.encode(message)
        self.log.debug("delivering %s", message.id)
        return self.stream.send(payload)
"""


def test_a_definition_is_aligned_once_per_citation_and_version(
    project: Project, upstream: Upstream
) -> None:
    """A version is asked for a citation's place more than once (in its definition, then,
    where it is gone, past it; by the walk, the steps and the judge at HEAD): the
    alignment of its definition with the cited one is made once per citation and version
    of the definition's bytes. Here HEAD's, asked twice for the statement a commit
    deleted (the version before holds it verbatim: no alignment)."""
    path = "src/transport/session.py"
    base = upstream.commit("session", {path: SESSION})
    project.note("n", f"{base} {path}:4-4")
    upstream.commit("quiet (#2)", {path: SESSION.replace(SESSION.splitlines()[3] + "\n", "")})

    report = check(project)

    assert [r.verdict for r in report.results] == [Verdict.MISSING]
    assert project.counts.parse.aligned == 1


HEAVY_PROBE = """\
import sys
from watcher.cli import main
code = main(sys.argv[1:])
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"github", "apscheduler"})
print("heavy:", ",".join(heavy) or "none", "exit:", code, file=sys.stderr)
"""


def test_check_without_issues_imports_neither_pygithub_nor_apscheduler(
    project: Project, upstream: Upstream
) -> None:
    cite_everything(project, upstream, FILES[:1])
    project.config(sink="github")  # even with a GitHub sink configured ([issues] is last)
    project.config_file.write_text(project.config_file.read_text() + 'repo = "acme/notes"\n')
    command = [sys.executable, "-c", HEAVY_PROBE, "check", "--no-issues", "--format", "json",
               "--config", str(project.config_file)]  # fmt: skip

    done = subprocess.run(command, capture_output=True, text=True, check=False)

    assert "heavy: none exit: 0" in done.stderr, done.stderr


# --- costs that grow with the site ----------------------------------------------------


def spread_history(project: Project, upstream: Upstream, files: int, edits: int) -> list[str]:
    """`files` files each cited once; `beta` in each changes early, then `alpha` is edited
    `edits` times (every version distinct), so each walk goes far back. Returns, per file,
    the commit that changed `beta`."""
    paths = [f"src/s{i}.rs" for i in range(files)]
    base = upstream.commit(
        "base (#1)", {p: module(NAMES, salt=10 * i) for i, p in enumerate(paths)}
    )
    project.note("spread", *(f"{base} {p}:{span(NAMES, 'beta')}" for p in paths))
    blamed = []
    for i, path in enumerate(paths):
        blamed.append(upstream.commit(f"beta {i} (#2)", {path: module(NAMES, 10 * i, beta=-1)}))
    for n in range(edits):
        upstream.commit(
            f"alpha {n}",
            {p: module(NAMES, 10 * i, beta=-1, alpha=1000 + n) for i, p in enumerate(paths)},
        )
    return blamed


@pytest.mark.parametrize("files", [1, 6])
def test_walks_of_many_files_fetch_in_lock_step(
    project: Project, upstream: Upstream, trace: Trace, files: int
) -> None:
    blamed = spread_history(project, upstream, files, edits=40)
    publish(upstream)

    trace.start()
    report = check(project)

    assert [v for v, _ in verdicts(report).values()] == [Verdict.CHANGED] * files
    assert {c for _, c in verdicts(report).values()} == set(blamed)
    # The clone and its trees, the blobs of the verdicts, then the walks: every version
    # of every file in one batch (the history walks read them all, the walks back ask
    # for no more). Not 2 per file.
    assert trace.upload_packs() == 4
    # Everything reads blobs and commits through one `cat-file --batch` per mirror
    # (`--batch-check` besides): not one process per walk, and no GitPython reader.
    assert len(trace.commands("cat-file")) == 2


def commit_graph_commits(mirror: Mirror) -> tuple[int, bool]:
    """Commits in the mirror's commit-graph (all layers), and whether every layer has
    changed-path Bloom filters (the BIDX and BDAT chunks). A layer gone while it was
    read was replaced by the background write of the filters: the chain is read again."""
    folder = mirror.path / "objects" / "info" / "commit-graphs"
    for _ in range(100):
        with contextlib.suppress(FileNotFoundError):
            return _graph_commits(folder)
        time.sleep(0.05)
    return _graph_commits(folder)


def _graph_commits(folder: Path) -> tuple[int, bool]:
    chain = (folder / "commit-graph-chain").read_text().split()
    total, blooms = 0, True
    for layer in chain:
        data = (folder / f"graph-{layer}.graph").read_bytes()
        chunks = {
            data[8 + 12 * i : 12 + 12 * i]: int.from_bytes(data[12 + 12 * i : 20 + 12 * i], "big")
            for i in range(data[6])
        }
        fanout = chunks[b"OIDF"]
        total += int.from_bytes(data[fanout + 255 * 4 : fanout + 256 * 4], "big")
        blooms = blooms and b"BIDX" in chunks and b"BDAT" in chunks
    return total, blooms


def made_with_every_tree(mirror: Mirror) -> None:
    """Make a new mirror one that watch made before it fetched trees by range (its graph
    is written anew by the next fetch; git fetches the trees the filters read)."""
    mirror.repo.git.config("--unset", clone.TREES)
    shutil.rmtree(mirror.path / "objects" / "info" / "commit-graphs")


@pytest.mark.parametrize("every_tree", [False, True])
def test_commit_graph_is_current_after_every_fetch(
    upstream: Upstream, tmp_path: Path, every_tree: bool
) -> None:
    upstream.commit("base (#1)", {"src/a.rs": module(NAMES)})
    upstream.tag("v1.0.0")
    mirror = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    for n in range(3):
        mirror.sync()
        if every_tree and n == 0:
            made_with_every_tree(mirror)
            mirror.sync()
        reachable = int(mirror.repo.git.rev_list("--all", "--count"))
        assert commit_graph_commits(mirror)[0] == reachable
        mirror.settle()  # the first graph's filters are written in the background
        # Changed-path filters need every commit's trees: only such a mirror has them.
        assert commit_graph_commits(mirror) == (reachable, every_tree)
        upstream.commit(f"more {n}", {"src/a.rs": module(NAMES, salt=n + 1)})
    assert mirror.graph_writes == 3 + every_tree


def test_filters_git_could_not_write_are_written_by_the_next_fetch(
    upstream: Upstream, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    upstream.commit("base (#1)", {"src/a.rs": module(NAMES)})
    mirror = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    mirror.sync()
    made_with_every_tree(mirror)
    mirror.sync()
    mirror.settle()
    graphs = mirror.path / "objects" / "info" / "commit-graphs"
    # The background write of a first graph's filters, failing: another git holds the lock.
    (graphs / "commit-graph-chain.lock").touch()
    command = ["commit-graph", "write", "--reachable", "--changed-paths", "--split=replace"]
    mirror._filters = subprocess.Popen(
        ["git", "-C", str(mirror.path), *command], stderr=subprocess.PIPE
    )
    mirror.settle()
    assert "commit-graph filters not written" in caplog.text
    assert not (graphs / "commit-graph-chain").exists()
    (graphs / "commit-graph-chain.lock").unlink()

    mirror.sync()  # nothing new upstream: the graph is written again all the same
    mirror.settle()
    reachable = int(mirror.repo.git.rev_list("--all", "--count"))
    assert commit_graph_commits(mirror) == (reachable, True)


def test_releases_are_asked_once_per_commit_and_tag_set(
    project: Project, upstream: Upstream, trace: Trace
) -> None:
    base = cite_everything(project, upstream, FILES[:2])
    # One commit changes `beta` in both files: two stale items, one commit to place.
    both = upstream.commit(
        "change beta twice (#2)",
        {p: module(NAMES, 10 * i, beta=99) for i, p in enumerate(FILES[:2])},
    )
    upstream.tag("v1.0.0")
    publish(upstream)
    trace.start()
    cold = check(project)
    assert {r.released_in for r in cold.results if r.verdict is Verdict.CHANGED} == {"v1.0.0"}
    assert trace.release_queries() == 1

    # A new function in those files leaves the blame where it was: the items are judged
    # again (their files changed), their release is remembered.
    grown = [*NAMES, "delta"]
    upstream.commit(
        "add delta", {p: module(grown, 10 * i, beta=99) for i, p in enumerate(FILES[:2])}
    )
    trace.start()
    again = check(project)
    assert verdicts(again)[f"everything:{FILES[0]}:{span(NAMES, 'beta')}"] == (
        Verdict.CHANGED,
        both,
    )
    assert trace.release_queries() == 0

    upstream.tag("v0.9.0", both)  # an earlier version that holds it: asked again, once
    trace.start()
    tagged = check(project)
    assert {r.released_in for r in tagged.results if r.verdict is Verdict.CHANGED} == {"v0.9.0"}
    assert trace.release_queries() == 1
    assert len(trace.commands("for-each-ref")) == 2  # and the tag set's key
    assert base


def test_packs_are_rolled_up_once_they_pile_up(
    project: Project, upstream: Upstream, trace: Trace
) -> None:
    from watcher.mirror.packs import PACK_LIMIT

    base = cite_everything(project, upstream, FILES)
    config = load(project.config_file)
    mirror = Mirror(config.upstream[0], config.cache)
    counts = []
    for n in range(6):  # each run fetches the refs and the blobs of one new version
        path = FILES[n % len(FILES)]
        upstream.commit(f"gamma {n}", {path: module(NAMES, 10 * FILES.index(path), gamma=n)})
        report = check(project)
        assert report.summary.changed >= 1
        counts.append(len(mirror.packs()))
    assert max(counts) <= PACK_LIMIT
    pack_dir = mirror.path / "objects" / "pack"
    assert all(p.with_suffix(".promisor").exists() for p in mirror.packs())
    # Nothing was lost: a warm run fetches only the refs, and git finds the mirror whole.
    trace.start()
    assert verdicts(check(project)) == verdicts(report)
    assert trace.upload_packs() == 1
    mirror.repo.git.fsck("--connectivity-only")
    assert pack_dir.is_dir() and base


def test_state_is_one_item_per_line_and_the_same_bytes_every_time(
    project: Project, upstream: Upstream
) -> None:
    cite_everything(project, upstream, FILES)
    upstream.commit("change beta (#2)", {FILES[1]: module(NAMES, salt=10, beta=99)})
    check(project)
    file = project.root / "state" / "acme__client.json"
    first = file.read_bytes()
    check(project)

    assert file.read_bytes() == first
    data = json.loads(first)
    lines = first.decode().splitlines()
    items = [line for line in lines if line.startswith('    "everything:')]
    assert len(items) == len(data["items"]) == 12  # one line each, nothing else on it
    assert items == sorted(items) and (lines[0], lines[-1]) == ("{", "}")
    keys = [line.split('"')[1] for line in lines if line.startswith('  "')]
    assert keys == sorted(data)


def test_one_pass_places_many_commits_as_contains_queries_do(
    upstream: Upstream, tmp_path: Path
) -> None:
    """Pre-releases before their release, a tag on a side branch, an annotated tag, a
    commit in no release: the one walk of the tags' history gives each commit the
    release that `--contains` gives."""

    def main_commit(n: int) -> str:
        return upstream.commit(f"main {n}", {"src/a.rs": module(NAMES, salt=n)})

    commits = [main_commit(0), main_commit(1)]
    upstream.branch_off("release-0.9")
    commits.append(upstream.commit("backport", {"src/b.rs": module(NAMES)}))
    upstream.tag("v0.9.1")  # on a side branch: holds main 0 and 1 and the backport
    upstream.checkout("main")
    commits += [main_commit(2), main_commit(3)]
    upstream.tag("v1.0.0-beta.1")
    commits.append(main_commit(4))
    upstream.tag("v1.0.0")
    commits.append(main_commit(5))
    upstream.git("tag", "-a", "-m", "annotated", "v1.1.0")
    commits += [main_commit(6), main_commit(7)]
    mirror = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    mirror.sync()

    one_by_one = {c: mirror.first_release(c, "v*") for c in commits}
    fresh = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    at_once = fresh.releases("v*", commits)

    assert at_once == one_by_one
    assert list(one_by_one.values()) == [
        "v0.9.1", "v0.9.1", "v0.9.1", "v1.0.0-beta.1", "v1.0.0-beta.1", "v1.0.0", "v1.1.0", None, None
    ]  # fmt: skip
    assert (mirror.release_queries, mirror.release_passes) == (len(commits), 0)
    assert (fresh.release_queries, fresh.release_passes) == (0, 1)


def test_a_long_run_rolls_its_packs_up_as_it_goes(upstream: Upstream, tmp_path: Path) -> None:
    from watcher.mirror.packs import MID_RUN_PACKS

    files = {f"src/f{i}.rs": module(NAMES, salt=10 * i) for i in range(24)}
    head = upstream.commit("base (#1)", files)
    mirror = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    mirror.sync()
    blobs = {p: b for p in files if (b := mirror.blob_id(head, p)) is not None}
    synced, counts = mirror.round_trips, []
    for blob in blobs.values():  # one fetch each, as single reads of a long walk make
        mirror.prefetch([blob])
        counts.append(len(mirror.packs()))

    assert max(counts) <= MID_RUN_PACKS and mirror.rollups >= 1
    assert all(p.with_suffix(".promisor").exists() for p in mirror.packs())
    assert {p: mirror.read(b).decode() for p, b in blobs.items()} == files
    assert mirror.round_trips - synced == len(files)  # nothing was lost and fetched again


def test_a_roll_up_leaves_the_big_packs_alone(upstream: Upstream, tmp_path: Path) -> None:
    from watcher.mirror.packs import PACK_LIMIT

    files = {f"src/f{i}.rs": module(NAMES, salt=10 * i) for i in range(40)}
    head = upstream.commit("base (#1)", files)
    mirror = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    mirror.sync()
    blobs = [b for p in files if (b := mirror.blob_id(head, p)) is not None]
    mirror.prefetch(blobs[:30])  # a cold run's big fetch
    big = set(mirror.packs())
    for blob in blobs[30 : 30 + PACK_LIMIT]:  # then small ones, one pack each
        mirror.prefetch([blob])

    mirror.tidy()

    # The clone's pack and the big fetch's stay as they are: only enough of the small
    # ones are rolled into one to leave PACK_LIMIT packs.
    assert mirror.rollups == 1 and len(mirror.packs()) == PACK_LIMIT
    assert big <= set(mirror.packs())
    assert [mirror.read(b) for b in blobs[: 30 + PACK_LIMIT]] == [
        files[p].encode() for p in list(files)[: 30 + PACK_LIMIT]
    ]


def test_a_roll_up_keeps_the_fetched_packs_compression_and_searches_no_more(
    upstream: Upstream, tmp_path: Path
) -> None:
    # Versions of one file, much alike, each fetched alone: each pack holds it whole.
    # Rolled up, they stay whole: searching deltas among a cold run's blobs cost codex
    # 5 s of CPU to save a tenth of the pack.
    names = [f"f{i}" for i in range(30)]
    commits = [upstream.commit(f"v{n}", {"src/a.rs": module(names, f3=n)}) for n in range(6)]
    mirror = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    mirror.sync()
    blobs = [b for c in commits if (b := mirror.blob_id(c, "src/a.rs")) is not None]
    for blob in blobs:
        mirror.prefetch([blob])
    mirror.tidy()

    assert mirror.rollups == 1
    indexes = [str(p.with_suffix(".idx")) for p in mirror.packs()]
    listing = [line.split() for line in mirror.repo.git.verify_pack("-v", *indexes).splitlines()]
    kept = [row for row in listing if row[:1] and row[0] in blobs]
    assert len(kept) == len(blobs) and all(len(row) == 5 for row in kept)  # no delta base
    assert {mirror.read(b).decode() for b in blobs} == {module(names, f3=n) for n in range(6)}


def test_items_whose_files_vanished_share_one_search_of_head(
    project: Project, upstream: Upstream, trace: Trace
) -> None:
    # Six cited files lose their functions to one new file, then are deleted in a later
    # commit that adds nothing (no rename git could see): each item searches HEAD.
    gone = [f"src/old{i}.rs" for i in range(6)]
    names = {path: [f"f{i}_{n}" for n in NAMES] for i, path in enumerate(gone)}
    base = upstream.commit(
        "base (#1)", {p: module(names[p], salt=100 + 10 * i) for i, p in enumerate(gone)}
    )
    project.note("vanished", *(f"{base} {p}:{span(names[p], names[p][1])}" for p in gone))
    home = "src/home.rs"
    moved = "\n".join(module(names[p], salt=100 + 10 * i) for i, p in enumerate(gone))
    others = {f"src/other{i}.rs": module([f"unrelated{i}_{n}" for n in NAMES]) for i in range(8)}
    upstream.commit("gather (#2)", {home: moved, **others})
    head = upstream.commit("drop the old files (#3)", dict.fromkeys(gone))
    publish(upstream)
    project.counts.search.reset()

    trace.start()
    report = check(project)

    assert [r.verdict for r in report.results] == [Verdict.MOVED] * len(gone)
    assert {r.current.path for r in report.results if r.current} == {home}
    assert project.counts.search.searches == 1  # one word index of HEAD's Rust files
    # The clone and its trees; the cited blobs with HEAD's Rust files.
    assert trace.upload_packs() == 3
    assert sum(args[-1] == head for args in trace.commands("ls-tree")) == 1
    parsed = project.counts.parse.parsed_blobs
    assert len(parsed) == len(set(parsed))  # every blob parsed once at most
    head_blobs = {upstream.git("rev-parse", f"{head}:{p}").strip() for p in others}
    assert head_blobs.isdisjoint(parsed)  # files without the names are never parsed
    assert project.counts.search.keys == 1  # the one file holding them: its definitions listed once


def test_a_file_searched_for_many_items_is_parsed_only_for_those_it_defines(
    project: Project, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A cited file is deleted with no rename: each of its four items searches HEAD, where
    # three other files call every one of its functions (so they hold every name) and
    # define none. The parse cache keeps two parses; each file is still parsed once.
    # (Each call starts its line, where a comment could have ended: `may_define` cannot
    # rule the file out from its bytes.)
    names = ["f_alpha", "f_beta", "f_gamma", "f_delta"]
    base = upstream.commit("base (#1)", {"src/old.rs": module(names, salt=100)})
    project.note("gone", *(f"{base} src/old.rs:{span(names, n)}" for n in names))
    calls = "".join(f"    {n}();\n" for n in names)
    callers = {f"src/call{i}.rs": f"pub fn caller{i}() {{\n{calls}}}\n" for i in range(3)}
    upstream.commit("callers (#2)", callers)
    head = upstream.commit("drop the old file (#3)", {"src/old.rs": None})
    publish(upstream)
    monkeypatch.setattr(syntax._CACHE, "budget", 1)

    report = check(project)

    assert [r.verdict for r in report.results] == [Verdict.MISSING] * len(names)
    blobs = {upstream.git("rev-parse", f"{head}:{p}").strip() for p in callers}
    parsed = [b for b in project.counts.parse.parsed_blobs if b in blobs]
    assert sorted(parsed) == sorted(blobs)  # searched for four items, each parsed once


def test_a_file_whose_bytes_cannot_define_the_name_is_not_parsed(
    project: Project, upstream: Upstream
) -> None:
    # A cited file is deleted with no rename: its function is searched for at HEAD, in
    # the files holding its name. Twenty only call it (`.settle_all(`, `= settle_all(`,
    # `::settle_all`): no `fn` comes before the name, so none is parsed. The one defining
    # it, with a comment between `fn` and the name, is parsed and found.
    body = "pub fn settle_all(input: u32) -> u32 {\n    input + 1\n}\n"
    base = upstream.commit("base (#1)", {"src/old.rs": body})
    project.note("gone", f"{base} src/old.rs:1-3")
    callers = {
        f"src/call{i}.rs": f"pub fn caller{i}(l: &L) -> u32 {{\n    let a = settle_all({i});\n"
        f"    l.settle_all(a) + lib::settle_all(a)\n}}\n"
        for i in range(20)
    }
    home = "pub fn /* kept */ settle_all(input: u32) -> u32 {\n    input + 1\n}\n"
    upstream.commit("callers (#2)", {**callers, "src/home.rs": home})
    head = upstream.commit("drop the old file (#3)", {"src/old.rs": None})
    publish(upstream)
    project.counts.search.reset()

    report = check(project)

    assert [(r.verdict, r.current and r.current.path) for r in report.results] == [
        (Verdict.MOVED, "src/home.rs")
    ]
    blobs = {upstream.git("rev-parse", f"{head}:{p}").strip() for p in callers}
    assert blobs.isdisjoint(project.counts.parse.parsed_blobs)  # all 20 parsed without the check
    assert (project.counts.search.unparsed, project.counts.search.keys) == (20, 1)


def test_a_hint_in_another_class_parses_no_file_that_only_calls_the_name(
    project: Project, upstream: Upstream
) -> None:
    # A method leaves its class for a mixin in a new file, in a commit that also makes a
    # dozen files call it. Its missing citation's hint looks for a method of that name in
    # another class among the files the commit touched: the callers hold the name, but no
    # `def` before it, so none is parsed; the mixin is, and is the hint.
    client = (
        "class Client:\n    def __init__(self, transport: Transport) -> None:\n"
        "        self.transport = transport\n\n"
        "    async def read_resource(self, uri: str) -> list[Content]:\n"
        "        result = await self.session.read_resource(uri)\n"
        "        return result.contents\n"
    )
    mixin = (
        "class ResourcesMixin:\n    async def read_resource(self, uri: str) -> list[Content]:\n"
        "        result = await self.session.read_resource(uri, timeout=self.timeout)\n"
        "        return result.contents\n"
    )
    base = upstream.commit("client (#1)", {"src/client.py": client})
    project.note("n", f"{base} src/client.py:5-7")
    callers = {
        f"src/app/use{i}.py": f"async def use_{i}(client: Client) -> None:\n"
        f"    await client.read_resource('res://{i}')\n"
        for i in range(12)
    }
    kept = client[: client.index("\n    async def")] + "\n"
    head = upstream.commit(
        "split resources out (#2)", {"src/client.py": kept, "src/mixins.py": mixin, **callers}
    )
    publish(upstream)
    project.counts.search.reset()

    report = check(project)

    (result,) = report.results
    assert result.verdict is Verdict.MISSING
    assert [(c.path, c.chosen) for c in result.candidates] == [("src/mixins.py", False)]
    blobs = {upstream.git("rev-parse", f"{head}:{p}").strip() for p in callers}
    assert blobs.isdisjoint(project.counts.parse.parsed_blobs)  # all 12 parsed without the check
    assert project.counts.search.unparsed >= len(callers)


def test_the_files_each_removing_commit_touched_come_from_one_git_call(
    project: Project, upstream: Upstream, trace: Trace
) -> None:
    # Four cited functions in files of their own, each deleted by a commit of its own
    # that also adds another file: each missing citation's hints are looked for in what
    # its commit touched, and one git process lists that for the four commits.
    names = ["f_alpha", "f_beta", "f_gamma", "f_delta"]
    files = {
        f"src/a{n}.rs": f"pub struct Keep{n};\n\n" + fn(name, n) for n, name in enumerate(names)
    }
    base = upstream.commit("base (#1)", files)
    project.note("gone", *(f"{base} src/a{n}.rs:3-6" for n in range(len(names))))
    for n, name in enumerate(names):
        upstream.commit(f"drop {name} (#{n + 2})", {f"src/a{n}.rs": f"pub struct Keep{n};\n",
                                                     f"src/b{n}.rs": fn(f"other_{n}", n)})  # fmt: skip
    publish(upstream)

    trace.start()
    report = check(project)

    assert [r.verdict for r in report.results] == [Verdict.MISSING] * len(names)
    assert len({r.introduced_by.commit for r in report.results if r.introduced_by}) == 4
    assert len(trace.commands("diff-tree")) == 1  # not one `git diff` per commit
    assert not [a for a in trace.commands("diff") if "--name-only" in a]


def test_the_search_of_head_is_dropped_before_the_history_walks(
    project: Project, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A cited file's functions move to a new file, one of them edited, and the old file
    # is deleted by a commit that adds nothing: the edited one is found by searching HEAD,
    # then walked for its blame. The walks never read HEAD's word index (~25 MB on codex).
    from watcher.history import attribute

    names = ["f_alpha", "f_beta", "f_gamma"]
    base = upstream.commit("base (#1)", {"src/old.rs": module(names, salt=100)})
    project.note("gone", *(f"{base} src/old.rs:{span(names, n)}" for n in names))
    upstream.commit("gather (#2)", {"src/home.rs": module(names, salt=100, f_gamma=7)})
    upstream.commit("drop the old file (#3)", {"src/old.rs": None})
    publish(upstream)
    project.counts.search.reset()
    held: list[int] = []
    run_walks = attribute.run_walks

    def walks(mirror: Mirror, *started: Any) -> list[attribute.Told]:
        held.append(len(mirror.session.searches))
        return run_walks(mirror, *started)

    monkeypatch.setattr(attribute, "run_walks", walks)
    report = check(project)

    found = sorted((r.verdict, r.current.path if r.current else None) for r in report.results)
    assert found == [(Verdict.CHANGED, "src/home.rs")] + [(Verdict.MOVED, "src/home.rs")] * 2
    assert project.counts.search.searches == 1  # built while judging...
    assert held == [0]  # ...and no longer held when the walks run


def test_renames_made_by_many_commits_are_detected_from_one_batch_of_blobs(
    project: Project, upstream: Upstream, trace: Trace
) -> None:
    # Six cited files, each renamed with an edit (git must compare contents to see it)
    # by a commit of its own.
    files = [f"src/r{i}.rs" for i in range(6)]
    cite_everything(project, upstream, files)
    for i, old in enumerate(files):
        new = old.replace("src/", "src/moved/")
        upstream.commit(
            f"move {old} (#{i + 10})", {old: None, new: module(NAMES, salt=10 * i, gamma=-i)}
        )
    publish(upstream)
    project.counts.paths.reset()

    trace.start()
    report = check(project)

    alphas = {r.id: r for r in report.results if r.id.endswith(span(NAMES, "alpha"))}
    assert {r.verdict for r in alphas.values()} == {Verdict.MOVED}
    assert {r.current.path for r in alphas.values() if r.current} == {
        f.replace("src/", "src/moved/") for f in files
    }
    assert project.counts.paths.diffs == len(files)  # one similarity detection per removing commit
    # The clone and its trees, then the blobs every removal's detection compares, all
    # six commits at once (the files at HEAD the verdicts read among them). Not one
    # fetch per commit.
    assert trace.upload_packs() == 3


def test_chains_of_renames_are_followed_one_link_at_a_time_for_every_file(
    project: Project, upstream: Upstream, trace: Trace
) -> None:
    # Four cited files, each renamed with an edit twice, each rename a commit of its own.
    files = [f"src/c{i}.rs" for i in range(4)]
    cite_everything(project, upstream, files)
    for step, folder in enumerate(["src/mid", "src/end"]):
        for i, path in enumerate(files):
            old = path.replace("src/", "src/mid/") if step else path
            upstream.commit(
                f"move {path} to {folder} (#{10 * step + i + 2})",
                {old: None, f"{folder}/c{i}.rs": module(NAMES, salt=10 * i, gamma=-1 - step)},
            )
    publish(upstream)

    trace.start()
    report = check(project)

    betas = [r for r in report.results if r.id.endswith(span(NAMES, "beta"))]
    assert {r.current.path for r in betas if r.current} == {f"src/end/c{i}.rs" for i in range(4)}
    # The clone and its trees, what the first renames' detection compares (all four
    # commits), then the second renames' (all four; the verdicts read no other blob).
    # Not one per file.
    assert trace.upload_packs() == 4


def test_walks_read_their_files_histories_off_one_shared_log(
    project: Project, upstream: Upstream
) -> None:
    # Six cited files, `beta` changed in each by a commit of its own: six walks back
    # from HEAD. One of the files is then renamed with an edit: a chain of two paths.
    files = [f"src/w{i}.rs" for i in range(6)]
    cite_everything(project, upstream, files)
    blamed = {
        p: upstream.commit(f"beta {i} (#{i + 2})", {p: module(NAMES, salt=10 * i, beta=-i)})
        for i, p in enumerate(files)
    }
    moved = "src/moved/w0.rs"
    upstream.commit("move w0 (#9)", {files[0]: None, moved: module(NAMES, beta=0, gamma=-9)})
    publish(upstream)
    project.counts.paths.reset()

    report = check(project)

    betas = {r.id.split(":")[1]: r for r in report.results if r.id.endswith(span(NAMES, "beta"))}
    assert {p: r.introduced_by.commit for p, r in betas.items() if r.introduced_by} == blamed
    assert betas[files[0]].current and betas[files[0]].current.path == moved
    # One log of every cited file from the baseline, which each walk reads its own
    # file's history off, and one log of the renamed file's new path. Not one per walk.
    assert project.counts.paths.logs == 2


def test_a_shared_log_tells_each_path_what_its_own_log_does(
    upstream: Upstream, tmp_path: Path
) -> None:
    # More files than a pathspec is worth (a log of every file is read by path): edited,
    # deleted, renamed, changed on a side branch and merged, a directory holding a file
    # whose name git quotes, and a file whose own name git quotes (logged on its own).
    files = [f"src/f{i:02d}.rs" for i in range(paths.WHOLE_LOG + 2)]
    odd = ['src/d/say "hi".rs', "src/d/caf\u00e9.rs", "src/back\\slash.rs"]
    base = upstream.commit("base", {p: module(NAMES, salt=i) for i, p in enumerate(files + odd)})
    upstream.commit("edit", {files[0]: module(NAMES, salt=-1), odd[0]: "fn a() {}\n"})
    upstream.commit("drop", {files[1]: None, odd[2]: "fn b() {}\n"})
    upstream.move(files[2], "src/g/f02.rs", "move")
    upstream.branch_off("side")
    upstream.commit("side edit", {files[3]: module(NAMES, salt=-3), files[4]: None})
    upstream.checkout("main")
    upstream.commit("main edit", {files[5]: module(NAMES, salt=-5)})
    head = upstream.merge("side", "merge side")
    wanted = [*files, "src/d", odd[2], "src/g/f02.rs"]
    mirror = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    mirror.sync()
    mirror.session.counts.paths.reset()

    shared = mirror.paths
    shared.prelog(head, [(base, p) for p in wanted])
    assert mirror.session.counts.paths.logs == 1  # of every file
    told = {p: shared.follow(base, head, [p]) for p in wanted}
    told["pair"] = shared.follow(base, head, [files[3], "src/d"])
    # Every walk read its log off that one, the renamed file's new path too (from the
    # rename on), but for the quoted name (a log of its own).
    assert mirror.session.counts.paths.logs == 2
    own = paths.Paths(mirror)
    assert told == {
        **{p: own.follow(base, head, [p]) for p in wanted},
        "pair": own.follow(base, head, [files[3], "src/d"]),
    }
    assert mirror.session.counts.paths.logs > 2 + len(told)  # each path's own log, and the renames'


def test_citations_of_one_file_spread_over_notes_parse_it_once(
    project: Project, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two files, cited in turn by two notes (A, B, A, B), with a parse cache that holds
    # one file: judged in note order, each file would be parsed twice.
    files = ["src/a.rs", "src/b.rs"]
    base = upstream.commit(
        "base (#1)", {p: module(NAMES, salt=500 + 10 * i) for i, p in enumerate(files)}
    )
    for n, name in enumerate(NAMES[:2]):
        project.note(f"note-{n}", *(f"{base} {p}:{span(NAMES, name)}" for p in files))
    publish(upstream)
    monkeypatch.setattr(syntax, "_CACHE", syntax.Cache(budget=1))

    report = check(project)

    assert report.summary.fresh == 4
    parsed = project.counts.parse.parsed_blobs
    assert sorted(parsed) == sorted({upstream.git("rev-parse", f"HEAD:{p}") for p in files})


def test_a_stale_citation_is_anchored_once_for_its_verdict_and_its_walk(
    project: Project, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The walk behind `introduced_by` needs the citation's anchor too; by then the
    # baseline's parse is gone from the cache (here: a cache of one file).
    from watcher.locate import anchors

    cite_everything(project, upstream, FILES[:1])
    edit = upstream.commit("edit beta (#2)", {FILES[0]: module(NAMES, beta=99)})
    publish(upstream)
    monkeypatch.setattr(syntax, "_CACHE", syntax.Cache(budget=1))
    anchored: list[tuple[str, int | None]] = []
    real = anchors.anchor

    def counted(parsed: syntax.Parsed, path: str, start: int | None, end: int | None) -> object:
        anchored.append((path, start))
        return real(parsed, path, start, end)

    monkeypatch.setattr(anchors, "anchor", counted)

    report = check(project)

    changed = [r for r in report.results if r.verdict is Verdict.CHANGED]
    assert [r.introduced_by.commit for r in changed if r.introduced_by] == [edit]
    assert sorted(anchored) == sorted(set(anchored))  # each citation once
    assert len(anchored) == len(NAMES)


def keeper(i: int) -> str:
    return f"pub fn keep_{i}(url: &str) -> Session {{\n    Session::new(url, {i})\n}}\n"


def leaver(i: int, extra: str = "") -> str:
    return (
        f"pub fn leaving_{i}(session: &Session{extra}) -> Vec<Tool> {{\n"
        f'    let listed = session.request("tools/list_{i}", None);\n'
        f"    listed.into_iter().filter(|t| t.enabled).collect()\n}}\n"
    )


def leave_files(project: Project, upstream: Upstream) -> None:
    """Four files each lose a function, each by a commit of its own that puts it, edited,
    into a new file (`src/newN.rs`): each missing citation's hint is in that new file."""
    base = upstream.commit(
        "base (#1)", {p: keeper(i) + "\n" + leaver(i) for i, p in enumerate(FILES)}
    )
    project.note("leaving", *(f"{base} {p}:5-8" for p in FILES))
    for i, path in enumerate(FILES):
        upstream.commit(
            f"move leaving_{i} out of {path} (#{i + 20})",
            {path: keeper(i), f"src/new{i}.rs": leaver(i, ", cursor: u32")},
        )


def test_hints_for_many_missing_citations_come_in_one_fetch(
    project: Project, upstream: Upstream, trace: Trace
) -> None:
    leave_files(project, upstream)
    publish(upstream)

    trace.start()
    report = check(project)

    missing = [r for r in report.results if r.verdict is Verdict.MISSING]
    assert sorted(c.path for r in missing for c in r.candidates) == [
        f"src/new{i}.rs" for i in range(len(FILES))
    ]
    # The clone and its trees, the cited files' versions (the walks need no others), the
    # hints' files. Not one fetch of hints per missing citation.
    assert trace.upload_packs() == 4


def edit_cited_beta(project: Project, upstream: Upstream) -> None:
    """Cite two files and edit `beta` in both at HEAD: two changed citations, once published."""
    cite_everything(project, upstream, FILES[:2])
    upstream.commit(
        "edit beta (#2)", {p: module(NAMES, salt=10 * i, beta=99) for i, p in enumerate(FILES[:2])}
    )


def test_a_stale_citations_head_is_parsed_once_for_its_verdict_and_its_walk(
    project: Project, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its walk starts from where judging placed it at HEAD; with a parse cache of one
    # file, HEAD's parse is gone by the walk (in a big run, it was often made in another
    # process), and the walk parsed HEAD again to place it.
    edit_cited_beta(project, upstream)
    upstream.commit("more (#3)", {FILES[1]: module(NAMES, salt=10, beta=98)})
    publish(upstream)
    monkeypatch.setattr(syntax, "_CACHE", syntax.Cache(budget=1))

    report = check(project)

    assert report.summary.changed == 2
    heads = [upstream.git("rev-parse", f"HEAD:{p}") for p in FILES[:2]]
    parsed = project.counts.parse.parsed_blobs
    assert [parsed.count(h) for h in heads] == [1, 1]


def test_judging_places_a_stale_citation_at_head_once(
    project: Project, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The verdict found it at HEAD; the place its walk starts from is read off that
    # verdict, not looked for again (`matching.place` is for the versions a walk judges).
    edit_cited_beta(project, upstream)
    publish(upstream)
    placed = []
    place = matching.place

    def counted(anchor: anchors.Anchor, files: Any) -> Any:
        placed.append(anchor)
        return place(anchor, files)

    monkeypatch.setattr(matching, "place", counted)
    judged = project.counts.walk.judged

    report = check(project)

    assert report.summary.changed == 2
    assert len(placed) == project.counts.walk.judged - judged > 0
