"""Renames followed through time (`watcher.mirror.renames`): location and blame on real histories that
reorganize their files, with `check` and `backtest` agreeing on every one of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Project
from tests.support import check_results
from watcher.commands.backtest import replay
from watcher.config import load
from watcher.gitbuild import Upstream
from watcher.judge.classify import plan
from watcher.judge.plan import Plan
from watcher.mirror.mirrors import Mirror
from watcher.pipeline import CheckOptions, gather, group

OLD = "src/client/index.ts"
NEW = "packages/client/src/client/client.ts"


BODIES = {
    "connect": "await this.transport.start(this.options.timeout);",
    "listTools": "return this.request({ method: 'tools/list', params }, ListToolsSchema);",
    "callTool": "const reply = await this.request({ method: 'tools/call', params }); return reply;",
    "ping": "return this.notification({ method: 'ping' }) ?? null;",
    "close": "if (this.transport) { this.transport.close(); } this.closed = true;",
}


def method(name: str, body: str) -> str:
    return f"  async {name}(params: Params): Promise<Result> {{\n    {body}\n  }}\n"


def client(names: list[str], edits: dict[str, str] | None = None, extra: int = 0) -> str:
    """A TypeScript client class with one method per name (`extra` adds filler methods)."""
    edits = edits or {}
    methods = [method(n, edits.get(n, BODIES[n])) for n in names]
    filler = [method(f"helper{i}", f"return this.cache.get('k{i}') + {i};") for i in range(extra)]
    return "export class Client extends Protocol {\n" + "\n".join(methods + filler) + "}\n"


def lines_of(text: str, name: str) -> str:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if f"async {name}(" in line) + 1
    return f"{start}-{start + 2}"


NAMES = ["connect", "listTools", "callTool", "ping", "close"]
CITED = f"{OLD}:{lines_of(client(NAMES), 'listTools')}"


@dataclass(frozen=True)
class Story:
    """An upstream history after the baseline, and what a careful human concludes."""

    name: str
    build: Callable[[Upstream], dict[str, str]]  # returns labelled commits
    verdict: str
    path: str | None  # where listTools is at HEAD
    blame: str | None  # label of the introducing commit


def _monorepo_split(up: Upstream) -> dict[str, str]:
    up.move(OLD, NEW, "refactor: split into packages (#1000)")
    changed = up.commit(
        "listTools pages (#1001)", {NEW: client(NAMES, {"listTools": "return this.page();"})}
    )
    for round_ in range(1, 5):  # the file grows 5x: baseline..HEAD sees a delete and an add
        up.commit(
            f"grow (#{1001 + round_})",
            {NEW: client(NAMES, {"listTools": "return this.page();"}, 8 * round_)},
        )
    return {"change": changed}


def _rename_then_change(up: Upstream) -> dict[str, str]:
    up.move(OLD, "src/client/client.ts", "move (#1)")
    change = up.commit(
        "edit (#2)", {"src/client/client.ts": client(NAMES, {"listTools": "return 1;"})}
    )
    return {"change": change}


def _change_then_rename(up: Upstream) -> dict[str, str]:
    change = up.commit("edit (#1)", {OLD: client(NAMES, {"listTools": "return 1;"})})
    up.move(OLD, "src/client/client.ts", "move (#2)")
    return {"change": change}


def _chain(up: Upstream) -> dict[str, str]:
    up.move(OLD, "src/b.ts", "a to b (#1)")
    up.commit("edit other (#2)", {"src/b.ts": client(NAMES, {"ping": "return 0;"})})
    up.move("src/b.ts", "lib/c.ts", "b to c (#3)")
    change = up.commit(
        "edit (#4)", {"lib/c.ts": client(NAMES, {"ping": "return 0;", "listTools": "return 2;"})}
    )
    up.commit(
        "grow (#5)",
        {"lib/c.ts": client(NAMES, {"ping": "return 0;", "listTools": "return 2;"}, 30)},
    )
    return {"change": change}


def _merged_rename(up: Upstream) -> dict[str, str]:
    up.branch_off("reorg")
    up.move(OLD, "src/core/client.ts", "move on the branch")
    up.commit(
        "edit on the branch", {"src/core/client.ts": client(NAMES, {"listTools": "return 3;"})}
    )
    up.checkout("main")
    up.commit("meanwhile (#5)", {"README.md": "x\n"})
    merge = up.merge("reorg", "Merge pull request #6 from acme/reorg")
    return {"change": merge}


def _copy(up: Upstream) -> dict[str, str]:
    text = client(NAMES)
    up.commit(
        "copy into two (#1)", {OLD: None, "src/a.ts": text + "// a\n", "src/b.ts": text + "// b\n"}
    )
    up.commit("edit a (#2)", {"src/a.ts": client(NAMES, {"listTools": "return 4;"})})
    return {}


def _split(up: Upstream) -> dict[str, str]:
    first = client(["connect", "callTool", "ping"], extra=1)
    second = client(["listTools", "close"], extra=1)
    split = up.commit(
        "split (#1)", {OLD: None, "src/client/calls.ts": first, "src/client/lists.ts": second}
    )
    return {"split": split}


def _deleted(up: Upstream) -> dict[str, str]:
    gone = up.commit("drop listTools (#1)", {OLD: client([n for n in NAMES if n != "listTools"])})
    up.move(OLD, "src/client.ts", "move (#2)")
    return {"gone": gone}


STORIES = [
    Story("monorepo split, then 5x growth", _monorepo_split, "changed", NEW, "change"),
    Story("rename then change", _rename_then_change, "changed", "src/client/client.ts", "change"),
    Story("change then rename", _change_then_rename, "changed", "src/client/client.ts", "change"),
    Story("chain a->b->c with edits between", _chain, "changed", "lib/c.ts", "change"),
    Story("rename on a merged branch", _merged_rename, "changed", "src/core/client.ts", "change"),
    Story("a copy", _copy, "moved", "src/b.ts", None),
    Story("split in two", _split, "moved", "src/client/lists.ts", None),
    Story("deleted for real", _deleted, "missing", None, "gone"),
]


@pytest.mark.parametrize("story", STORIES, ids=lambda s: s.name)
def test_story(
    story: Story, project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client (#0)", {OLD: client(NAMES)})
    project.note("n", f"{base} {CITED}")
    labels = story.build(upstream)

    result = check_results(project, capsys)[f"n:{CITED}"]

    assert result["verdict"] == story.verdict, result["message"]
    where = result["current"]
    assert (where["path"] if where else None) == story.path
    if story.path is not None:
        assert where["start_line"], where
        assert f"{where['start_line']}-{where['end_line']}" == lines_of(
            upstream.read(story.path), "listTools"
        )
    blamed = result["introduced_by"]["commit"] if result["introduced_by"] else None
    assert blamed == (labels[story.blame] if story.blame else None)
    found = [(c["path"], c["found"], c["chosen"]) for c in result["candidates"]]
    if story.name == "split in two":  # git saw one half as the rename; the other was searched
        assert found == [(story.path, f"added by {labels['split'][:12]}", True)]
    else:
        assert found == []  # followed, not searched for


@pytest.mark.parametrize("story", STORIES, ids=lambda s: s.name)
def test_check_and_backtest_agree(
    story: Story, project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client (#0)", {OLD: client(NAMES)})
    project.note("n", f"{base} {CITED}")
    story.build(upstream)
    result = check_results(project, capsys)[f"n:{CITED}"]

    first, changes = _replay(project)

    final = changes[-1].after if changes else first
    expected = {"moved": "fresh"}.get(result["verdict"], result["verdict"])
    assert final == expected
    if result["introduced_by"]:
        assert changes[-1].commit == result["introduced_by"]["commit"]
    code, out, _ = project.run("backtest", "--note", "n", capsys=capsys)
    assert code == 0 and out.count(" -> ") == len(changes)


def _replay(project: Project) -> tuple[str, list[Any]]:
    config = load(project.config_file)
    options = CheckOptions(note="n", offline=True)
    ((upstream, items),) = list(group(config, gather(config, options).items, options))
    assert upstream is not None
    mirror = Mirror(upstream, config.cache)
    try:
        planned = plan(mirror, mirror.head(), items[0], offline=True)
        assert isinstance(planned, Plan)
        return replay(mirror, planned, None, upstream.release_tags)
    finally:
        mirror.close()


def test_the_split_is_a_delete_and_an_add_across_the_whole_span(upstream: Upstream) -> None:
    """The premise of the monorepo story: one diff from baseline to HEAD sees no rename."""
    base = upstream.commit("client (#0)", {OLD: client(NAMES)})
    _monorepo_split(upstream)

    status = upstream.git("diff", "--name-status", "-M", "-C", base, "HEAD")

    assert sorted(status.splitlines()) == [f"A\t{NEW}", f"D\t{OLD}"]


def test_warm_run_asks_git_nothing_and_a_new_commit_one_log(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client (#0)", {OLD: client(NAMES), "src/other.ts": client(["ping"])})
    project.note("n", f"{base} {CITED}", f"{base} src/other.ts:2-4")
    _chain(upstream)
    project.counts.paths.reset()
    first = check_results(project, capsys)
    assert first[f"n:{CITED}"]["current"]["path"] == "lib/c.ts"
    # One log for both files (the chain's first path read off it), then one per later
    # path of the chain (b, c); the two removing commits each need one similarity
    # detection. The walk for blame reuses all of it.
    assert (project.counts.paths.logs, project.counts.paths.diffs) == (3, 2)

    project.counts.paths.reset()
    assert check_results(project, capsys) == first
    assert (project.counts.paths.logs, project.counts.paths.diffs) == (0, 0)

    upstream.commit("unrelated (#9)", {"README.md": "y\n"})
    project.counts.paths.reset()
    check_results(project, capsys)
    assert (project.counts.paths.logs, project.counts.paths.diffs) == (
        1,
        0,
    )  # from the last HEAD, both files


VERSION_RULE = """\
[[rule]]
id = "latest-version"
note = "n"
path = "src/client/index.ts"
query = '''(lexical_declaration (variable_declarator name: (identifier) @n (#eq? @n "LATEST") value: (_) @v)) @target'''
[[rule.claims]]
capture = "v"
equals = "'2025-11-25'"
"""


def test_a_construct_moved_between_files_is_blamed_where_it_changed(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Like LATEST_PROTOCOL_VERSION in python-sdk: moved out of the followed file into a
    new one (and changed there), which a later commit renamed with the followed file."""
    latest = "export const LATEST = '2025-11-25';\n"
    base = upstream.commit("client (#0)", {OLD: latest + client(NAMES)})
    project.note("n", f"{base} {CITED}")
    project.rules(VERSION_RULE)
    moved = upstream.commit("versions module (#1)", {
        OLD: client(NAMES), "src/shared/version.ts": "export const KNOWN = ['2025-11-25'];\n"
        "export const LATEST = KNOWN[KNOWN.length - 1];\n"})  # fmt: skip
    upstream.commit("unrelated (#2)", {"README.md": "x\n"})
    split = upstream.commit("split into packages (#3)", {
        OLD: None, "src/shared/version.ts": None, NEW: client(NAMES),
        "packages/core/src/version.ts": upstream.read("src/shared/version.ts")})  # fmt: skip

    result = check_results(project, capsys)["latest-version"]

    assert result["verdict"] == "broken"
    assert result["current"]["path"] == "packages/core/src/version.ts"
    assert [c["found"] for c in result["candidates"]] == [f"added by {split[:12]}"]
    assert result["introduced_by"]["commit"] == moved  # not the split that moved it again


def test_watch_log_lists_every_change_through_the_renames(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client (#0)", {OLD: client(NAMES)})
    project.note("n", f"{base} {CITED}")
    upstream.commit("docs (#1)", {"README.md": "x\n"})
    first = upstream.commit("page (#2)", {OLD: client(NAMES, {"listTools": "return 1;"})})
    upstream.move(OLD, NEW, "split into packages (#3)")
    upstream.tag("v2.0.0-alpha.1")
    upstream.commit(
        "other method (#4)", {NEW: client(NAMES, {"listTools": "return 1;", "ping": "x;"})}
    )
    second = upstream.commit("page again (#5)", {NEW: client(NAMES, {"listTools": "return 2;"})})
    upstream.tag("v2.0.0")

    code, out, _ = project.run("log", f"n:{CITED}", capsys=capsys)

    assert code == 0
    lines = out.splitlines()[1:]
    assert [line.split()[1] for line in lines] == [first[:10], second[:10]]  # no move, no #4
    assert "#2 changed" in " ".join(lines[0].split()) and "[v2.0.0-alpha.1]" in lines[0]
    assert "#5 changed" in " ".join(lines[1].split()) and "[v2.0.0]" in lines[1]


def test_a_rule_whose_file_vanished_reports_every_candidate(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three LATEST declarations at HEAD, none a rename of the cited file: all reported."""
    latest = "export const LATEST = '2025-11-25';\n"
    base = upstream.commit("client (#0)", {OLD: latest + client(NAMES)})
    project.note("n", f"{base} {CITED}")
    project.rules(VERSION_RULE)
    gone = upstream.commit("rewrite the client (#1)", {
        OLD: None,
        "src/server/constants.ts": "export const LATEST = '2025-06-18';\n",  # 0.8 alike
        "src/client/constants.ts": latest,  # identical
        "src/client/transport.ts": "export function open(): void {}\n",
    })  # fmt: skip
    upstream.commit("elsewhere (#2)", {"src/examples/demo.ts": "export const LATEST = 'x';\n"})

    results = check_results(project, capsys)
    rule, cited = results["latest-version"], results[f"n:{CITED}"]

    found = [(c["path"], c["identical"], c["chosen"], c["found"]) for c in rule["candidates"]]
    assert found == [
        ("src/client/constants.ts", True, True, f"added by {gone[:12]}"),
        ("src/server/constants.ts", False, False, f"added by {gone[:12]}"),
    ]  # the commit that removed the file added both; the later demo is not searched then
    assert rule["verdict"] == "moved" and rule["current"]["path"] == "src/client/constants.ts"
    assert "2 candidates" in rule["message"] and "src/server/constants.ts" in rule["message"]
    assert cited["verdict"] == "missing"  # listTools went nowhere: no file has it
    assert cited["introduced_by"]["commit"] == gone


def test_a_file_renamed_then_removed_is_named_where_git_followed_it(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cited file is renamed (git sees it), then the renamed file is deleted with no
    successor: `git log -- OLD` shows OLD renamed, not removed, so the message names the
    path the removing commit removed."""
    base = upstream.commit("client (#0)", {OLD: client(NAMES)})
    project.note("n", f"{base} {CITED}")
    upstream.commit("move the client (#1)", {OLD: None, NEW: client(NAMES)})
    gone = upstream.commit("drop the client (#2)", {NEW: None, "src/other.ts": "export {};\n"})

    cited = check_results(project, capsys)[f"n:{CITED}"]

    assert cited["verdict"] == "missing" and cited["introduced_by"]["commit"] == gone
    assert cited["message"].startswith(
        f"{OLD}, followed to {NEW}, was removed by {gone[:12]} with no rename git could see"
    )


def test_three_changes_across_a_rename_read_the_same_in_json_issue_and_log(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Like `connect` in typescript-sdk: changed, moved by a package split, left alone by
    a commit to its file, changed twice more. The check's JSON, the issue body and
    `watch log` list the same three commits, oldest first; the move and the no-op never."""
    base = upstream.commit("client (#0)", {OLD: client(NAMES)})
    project.note("n", f"{base} {CITED}")
    project.config(sink="files")
    first = upstream.commit("page (#1591)", {OLD: client(NAMES, {"listTools": "return 1;"})})
    upstream.move(OLD, NEW, "split into packages (#1606)")
    upstream.commit("ping (#1700)", {NEW: client(NAMES, {"listTools": "return 1;", "ping": "y;"})})
    upstream.tag("v2.0.0-alpha.1")
    second = upstream.commit("page 2 (#2286)", {NEW: client(NAMES, {"listTools": "return 2;"})})
    third = upstream.commit("page 3 (#2511)", {NEW: client(NAMES, {"listTools": "return 3;"})})
    upstream.tag("v2.0.0")
    item = f"n:{CITED}"

    result = check_results(project, capsys)[item]
    body = (project.root / "state" / "issues" / "n.md").read_text(encoding="utf-8")
    _, log, _ = project.run("log", item, capsys=capsys)

    expected = [(first, 1591, "v2.0.0-alpha.1"), (second, 2286, "v2.0.0"), (third, 2511, "v2.0.0")]
    history = [(c["commit"], c["pr"], c["released_in"]) for c in result["history"]]
    assert history == expected and {c["state"] for c in result["history"]} == {"changed"}
    assert result["introduced_by"]["commit"] == first
    section = body.split("<summary>History: 3 commits changed it since the baseline</summary>")
    assert len(section) == 2, body
    listed = [line for line in section[1].split("</details>")[0].splitlines() if line]
    assert len(listed) == 3
    for line, (commit, pr, release) in zip(listed, expected, strict=True):
        assert f"`{commit[:10]}`" in line and f"/pull/{pr})" in line and f"`{release}`" in line
    assert [line.split()[1] for line in log.splitlines()[1:]] == [c[:10] for c, _, _ in expected]


TYPES = 'import json\n\nLATEST = "2025-11-25"\n\n\nclass Tool:\n    name: str\n'


def test_a_python_constant_moved_out_before_its_module_is_renamed_is_missing_from_the_move(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """python-sdk's LATEST_PROTOCOL_VERSION: annotated in types.py, moved to version.py
    with a new value while types.py stayed, then both files moved into a package of their
    own. The move is no rename: `missing` from it, as `git log -L` has it, version.py a
    hint; what the later renaming commit added is no place it went (it was followed into
    version.py before, as if that commit had moved it)."""
    base = upstream.commit("types (#0)", {"src/mcp/types.py": TYPES})
    project.note("n", f"{base} src/mcp/types.py:3")
    typed = TYPES.replace("LATEST = ", "LATEST: Final[str] = ")
    annotated = upstream.commit("annotate (#2849)", {"src/mcp/types.py": typed})
    version = 'KNOWN = ["2025-11-25"]\nLATEST: Final[str] = KNOWN[-1]\n'
    moved = upstream.commit("versions module (#2950)", {
        "src/mcp/types.py": TYPES.replace('LATEST = "2025-11-25"\n', ""),
        "src/mcp/shared/version.py": version})  # fmt: skip
    upstream.commit("own package (#2973)", {
        "src/mcp/types.py": None, "src/mcp/shared/version.py": None,
        "src/types/types/_types.py": upstream.read("src/mcp/types.py"),
        "src/types/types/version.py": version})  # fmt: skip

    result = check_results(project, capsys)["n:src/mcp/types.py:3"]

    assert result["verdict"] == "missing", result["message"]
    assert [c["commit"] for c in result["history"]] == [annotated, moved]
    assert [(c["path"], c["chosen"]) for c in result["candidates"]] == [
        ("src/types/types/version.py", False)
    ]


JS = """\
export class Client {
  async connect(transport) {
    await transport.start();
    this.transport = transport;
  }

  async listTools(params) {
    return this.request({ method: 'tools/list', params });
  }
}
"""


def test_a_javascript_file_renamed_to_typescript_is_followed(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """`client.js` -> `client.ts` (types added on the way) is a rename within one language
    family: followed, and the move is not blamed; a later edit is."""
    base = upstream.commit("client (#0)", {"src/client.js": JS})
    project.note("n", f"{base} src/client.js:7-9")
    typed = JS.replace("(transport)", "(transport: Transport)")
    upstream.commit("typescript (#1)", {"src/client.js": None, "src/client.ts": typed})
    change = upstream.commit(
        "page (#2)", {"src/client.ts": typed.replace("params });", "params, cursor });")}
    )

    result = check_results(project, capsys)["n:src/client.js:7-9"]

    assert result["verdict"] == "changed", result["message"]
    assert (result["current"]["path"], result["current"]["start_line"]) == ("src/client.ts", 7)
    assert result["introduced_by"]["commit"] == change and result["candidates"] == []


def test_constructs_moved_out_of_many_files_are_traced_back_together(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:  # fmt: skip
    # Like the test above, in three packages, each split out by a commit of its own:
    # three walks each trace a file back to where it came from, comparing blobs the
    # mirror lacks.
    names = ["a", "b", "c"]
    olds = {n: f"src/{n}/index.ts" for n in names}
    base = upstream.commit("clients (#0)", {
        olds[n]: f"export const LATEST_{n.upper()} = '2025-11-25';\n" + client(NAMES)
        for n in names})  # fmt: skip
    project.note("n", f"{base} {olds['a']}:2-4")
    project.rules("".join(
        VERSION_RULE.replace('"latest-version"', f'"latest-{n}"').replace(
            "src/client/index.ts", olds[n]).replace('"LATEST"', f'"LATEST_{n.upper()}"')
        for n in names))  # fmt: skip
    moved = {}
    for n in names:
        moved[n] = upstream.commit(f"versions module {n} (#1)", {
            olds[n]: client(NAMES), f"src/{n}/version.ts": f"export const K = ['2025-11-25'];\n"
            f"export const LATEST_{n.upper()} = K[K.length - 1];\n"})  # fmt: skip
    for n in names:  # each package split out by a commit of its own
        upstream.commit(f"split {n} into a package (#3)", {
            olds[n]: None, f"src/{n}/version.ts": None, f"packages/{n}/src/index.ts": client(NAMES),
            f"packages/{n}/src/version.ts": upstream.read(f"src/{n}/version.ts") + "// moved\n"})  # fmt: skip
    trace = tmp_path / "trace"
    trace.mkdir()
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))

    results = check_results(project, capsys)

    for n in names:
        assert results[f"latest-{n}"]["introduced_by"]["commit"] == moved[n]
    # The clone and its trees, then what rename and copy detection compares where the
    # cited files went (the commits that moved the constants out changed the cited files
    # and added files of their kind: what the walks compare to trace the files back comes
    # with it), then the blobs the verdicts read: not one fetch per walk.
    assert sum('"name":"upload-pack"' in f.read_text() for f in trace.iterdir()) == 3


def test_a_file_moved_away_and_back_is_followed_to_its_head_version(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """python-sdk's client/stdio.py: moved into a package (stdio/__init__.py), moved back
    years later, then changed. The versions after it came back are the file's own: HEAD's
    is judged, its lines told, and the change made there blamed."""
    package = "src/client/index/__init__.ts"
    base = upstream.commit("client (#0)", {OLD: client(NAMES)})
    project.note("n", f"{base} {CITED}")
    upstream.move(OLD, package, "into a package (#1)")
    upstream.move(package, OLD, "out of the package (#2)")
    moved = ["ping", *(n for n in NAMES if n != "ping")]  # ping first: its lines move down
    upstream.commit("ping first (#3)", {OLD: client(moved, {"ping": "return 0;"})})
    change = upstream.commit("page (#4)", {OLD: client(moved, {"ping": "return 0;",
                                                                "listTools": "return 1;"})})  # fmt: skip
    head = upstream.read(OLD)

    cited = check_results(project, capsys)[f"n:{CITED}"]

    assert cited["verdict"] == "changed", cited["message"]
    assert cited["current"]["path"] == OLD
    start, end = lines_of(head, "listTools").split("-")
    assert (cited["current"]["start_line"], cited["current"]["end_line"]) == (int(start), int(end))
    assert [c["commit"] for c in cited["history"]] == [change]
    assert cited["introduced_by"]["commit"] == change


CONTEXT = (
    "export class RequestContext {\n  requestId: number;\n  meta: Meta;\n  session: Session;\n}\n"
)


@pytest.mark.parametrize(
    ("elsewhere", "verdict"),
    [
        # python-sdk's RequestContext: removed with its file; client/streamable_http.py has
        # an unrelated class of that name.
        ("export class RequestContext {\n  client: HttpClient;\n  sessionId: string;\n"
         "  writer: StreamWriter;\n  metadata: Metadata;\n  retries: number;\n}\n", "missing"),
        # The same class, moved there by a later commit, one field added.
        (CONTEXT.replace("  session", "  cancelled: boolean;\n  session"), "changed"),
    ],
    ids=["namesake", "moved"],
)  # fmt: skip
def test_a_definition_of_the_same_name_elsewhere_must_be_like_the_cited_one(
    elsewhere: str,
    verdict: str,
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The cited file is removed with no successor, and a later commit adds a definition
    of the same kind and name in an unrelated file: the cited construct when it is like
    it, a namesake (listed, not chosen) when it is not."""
    base = upstream.commit("context (#0)", {"src/shared/context.ts": CONTEXT})
    cited = "src/shared/context.ts:1-5"
    project.note("n", f"{base} {cited}")
    gone = upstream.commit("drop the context (#1)", {"src/shared/context.ts": None})
    upstream.commit("http client (#2)", {"src/client/http.ts": elsewhere})

    result = check_results(project, capsys)[f"n:{cited}"]

    assert result["verdict"] == verdict, result["message"]
    (candidate,) = result["candidates"]
    assert candidate["path"] == "src/client/http.ts" and candidate["found"] == "elsewhere at HEAD"
    assert candidate["chosen"] is (verdict == "changed")
    if verdict == "missing":
        assert result["introduced_by"]["commit"] == gone
        assert "too unlike it to be it: src/client/http.ts:1-7" in result["message"]


def rust_main(name: str, steps: list[str]) -> str:
    """A binary's `main`, writing one schema; `steps` are the statements of its body."""
    body = "".join(f"    {s}\n" for s in steps)
    return f"//! Writes the {name} schema.\n\nfn main() -> Result<()> {{\n{body}    Ok(())\n}}\n"


FIXTURES = ["let out = out_dir()?;", "write_schema(&out, \"fixtures\")?;",
            "write_protocol_types(&out)?;", "println!(\"fixtures in {}\", out.display());"]  # fmt: skip
CONFIG = ["let out = out_dir()?;", "write_schema(&out, \"config\")?;",
          "println!(\"config schema in {}\", out.display());"]  # fmt: skip


def test_a_construct_found_elsewhere_when_its_file_went_is_blamed_on_the_removal(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """codex's write_schema_fixtures.rs: removed (#36212), its `main` most like the one of
    core/src/bin/config_schema.rs, a file that commit left alone. The walk did not judge
    the removal: the lines it followed were in the unchanged file, and no change was told."""
    fixtures, config = "cli/src/bin/write_fixtures.rs", "core/src/bin/config_schema.rs"
    base = upstream.commit("binaries (#1)", {fixtures: rust_main("fixtures", FIXTURES),
                                             config: rust_main("config", CONFIG)})  # fmt: skip
    project.note("n", f"{base} {fixtures}:3-9")
    upstream.commit("docs (#2)", {"README.md": "x\n"})
    removed = upstream.commit("precompute the exports (#3)", {fixtures: None})
    upstream.commit("docs (#4)", {"README.md": "y\n"})

    result = check_results(project, capsys)[f"n:{fixtures}:3-9"]

    assert result["verdict"] == "changed", result["message"]
    assert result["current"]["path"] == config
    assert result["introduced_by"]["commit"] == removed
    assert [c["commit"] for c in result["history"]] == [removed]


def ts_main(steps: list[str]) -> str:
    body = "".join(f"  {s}\n" for s in steps)
    return f"import {{ Client }} from '../client';\n\nasync function main(): Promise<void> {{\n{body}}}\n"


def test_namesakes_in_the_files_its_removal_added_are_listed_not_chosen(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """typescript-sdk's examples (#1823): each example's `main` removed by the commit that
    added new examples, each with a `main` of its own, none like it. One was chosen, the
    citation "changed" into an unrelated program."""
    cited = "src/examples/parallelClient.ts"
    steps = ["const clients = await Promise.all(urls.map(connect));",
             "const results = await Promise.all(clients.map((c) => c.callTool(call)));",
             "report(results);", "await Promise.all(clients.map((c) => c.close()));"]  # fmt: skip
    base = upstream.commit("examples (#1)", {cited: ts_main(steps)})
    project.note("n", f"{base} {cited}:3-8")
    removed = upstream.commit("restructure the examples (#2)", {
        cited: None,
        "examples/oauth/client.ts": ts_main(["const provider = new OAuthProvider(store);",
                                             "await authorize(provider, redirect);"]),
        "examples/repl/client.ts": ts_main(["const rl = createInterface({ input });",
                                            "for await (const line of rl) { await run(line); }"]),
    })  # fmt: skip

    result = check_results(project, capsys)[f"n:{cited}:3-8"]

    assert result["verdict"] == "missing", result["message"]
    assert result["introduced_by"]["commit"] == removed
    found = [(c["path"], c["chosen"], c["found"]) for c in result["candidates"]]
    assert found == [
        ("examples/oauth/client.ts", False, f"added by {removed[:12]}"),
        ("examples/repl/client.ts", False, f"added by {removed[:12]}"),
    ]


def test_one_namesake_added_by_a_removal_of_several_is_listed_not_chosen(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """inspector's v2 (#1830) removed `cli/src/index.ts` and `client/bin/start.js`, each
    with a `main` of its own, and added hundreds of files, one a test server whose `main`
    (14% alike) was the only `main` among them: the cited `main` was "changed" into it. A
    name the removal took from several files says nothing of where one of them went: the
    citation is `missing`, the namesake listed. (python-sdk's LATEST_PROTOCOL_VERSION,
    one of a kind, is still followed into the module the split added, test above.)"""
    cited = "cli/src/index.ts"
    steps = ["process.on('uncaughtException', (error) => { handleError(error); });",
             "try { const args = parseArgs(); await callMethod(args); }",
             "catch (error) { handleError(error); }"]  # fmt: skip
    start = ts_main(["const port = await findPort();", "await serve(port);"])
    base = upstream.commit("cli (#1)", {cited: ts_main(steps), "client/bin/start.ts": start})
    project.note("n", f"{base} {cited}:3-7")
    server = ["const { configPath, format } = parseArgs();",
              "if (!configPath) { console.error('usage: server --config PATH'); return; }",
              "const config = loadConfig(configPath, { format });",
              "const server = createServer(resolveConfig(config));",
              "await server.connect(new StdioServerTransport());"]  # fmt: skip
    removed = upstream.commit("v2 (#2)", {
        cited: None, "client/bin/start.ts": None, "test-servers/src/server.ts": ts_main(server),
        "clients/cli/src/cli.ts": "export async function runCli(argv: string[]) {\n  run(argv);\n}\n",
    })  # fmt: skip

    result = check_results(project, capsys)[f"n:{cited}:3-7"]

    assert result["verdict"] == "missing", result["message"]
    assert result["introduced_by"]["commit"] == removed
    assert [(c["path"], c["chosen"]) for c in result["candidates"]] == [
        ("test-servers/src/server.ts", False)
    ]


def test_a_method_renamed_then_moved_by_a_split_is_followed_there(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """fastmcp's `LocalProvider.list_tools`: renamed `_list_tools`, then its module split
    in two, git pairing the file with the half without it. The split's new module was
    searched for `list_tools` by the name it was cited under: `missing`. A definition of
    its kind and class, as like it as a rename must be, is it, renamed."""
    others = "".join(
        f"    def other{n}(self, x):\n        y = compute_{n}(x, {n})\n"
        f"        return transform_{n}(y) + {n}\n\n"
        for n in range(12)
    )  # fmt: skip
    tools = ("    def list_tools(self):\n        return [v for v in self.items.values()"
             " if isinstance(v, Tool) and self.enabled(v)]\n\n")  # fmt: skip
    base = upstream.commit("provider", {"p.py": f"class P:\n{tools}{others}"})
    project.note("n", f"{base} p.py:2-3")
    renamed = upstream.commit("private (#1)", {"p.py": f"class P:\n{tools}{others}".replace(
        "def list_tools", "def _list_tools")})  # fmt: skip
    split = upstream.commit("split (#2)", {
        "p.py": None, "pkg/q.py": f"class Q:\n{others}",
        "pkg/p.py": f"class P:\n{tools.replace('def list_tools', 'def _list_tools')}",
    })  # fmt: skip

    result = check_results(project, capsys)["n:p.py:2-3"]

    assert result["verdict"] == "changed", result["message"]
    assert (result["current"]["path"], result["current"]["start_line"]) == ("pkg/p.py", 2)
    assert [c["commit"] for c in result["history"]] == [renamed]
    assert split not in [c["commit"] for c in result["history"]]
