"""Every verdict, proven on real git histories (SPEC 4 and 5)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.conftest import Project
from tests.rust_client import CLIENT, CURSOR_GATE_RULE
from watcher.gitbuild import Upstream

LIB = "src/client.rs"
SOURCE = (
    """\
use std::collections::HashMap;

pub struct Client {
    pages: usize,
}

"""
    + CLIENT
)
CITED = f"{LIB}:7-13"  # list_tools

RULE = CURSOR_GATE_RULE


def _edit(old: str, new: str) -> Callable[[Upstream], None]:
    def apply(up: Upstream) -> None:
        up.commit(f"edit {old[:20]}", {LIB: up.read(LIB).replace(old, new)})

    return apply


def _rename(new: str, edit: tuple[str, str] | None = None) -> Callable[[Upstream], None]:
    def apply(up: Upstream) -> None:
        up.move(LIB, new, "move the client")
        if edit:
            up.commit("edit after move", {new: up.read(new).replace(*edit)})

    return apply


@dataclass(frozen=True)
class Case:
    name: str
    change: Callable[[Upstream], None]
    citation: str  # expected verdict of the citation of list_tools
    rule: str  # expected verdict of the cursor-gate rule
    current: str | None = None  # expected `path:start-end` of the citation at HEAD


CASES = [
    Case(
        "unchanged", lambda up: up.commit("nothing", {"README.md": "hi\n"}), "fresh", "fresh", CITED
    ),
    Case(
        "reformat only: same lines",
        _edit("let next = match mode {", "let next   =   match mode{"),
        "fresh",
        "fresh",
        CITED,
    ),
    Case(
        "reformat only: lines split",
        _edit(
            "pub fn list_tools(mode: Mode, response: Response)",
            "pub fn list_tools(\n    mode: Mode,\n    response: Response\n)",
        ),
        "moved",
        "moved",
        f"{LIB}:7-16",
    ),
    Case(
        "a trailing comma is a token",
        _edit("response: Response)", "response: Response,)"),
        "changed",
        "fresh",
        CITED,
    ),
    Case(
        "comment added inside",
        _edit("    next\n}", "    // the cursor is gone here\n    next\n}"),
        "moved",
        "fresh",
        f"{LIB}:7-14",
    ),
    Case(
        "moved down the file",
        _edit("pub struct Client {", "pub fn helper() {}\n\npub struct Client {"),
        "moved",
        "moved",
        f"{LIB}:9-15",
    ),
    Case(
        "body changed, claim holds",
        _edit("    next\n}", "    log(&next);\n    next\n}"),
        "changed",
        "fresh",
        f"{LIB}:7-14",
    ),
    Case(
        "claimed value flipped",
        _edit("Mode::Legacy => None,", "Mode::Legacy => response.next_cursor,"),
        "changed",
        "broken",
        CITED,
    ),
    Case(
        "function deleted",
        lambda up: up.commit("drop", {LIB: SOURCE.split("pub fn list_tools")[0]}),
        "missing",
        "missing",
        None,
    ),
    Case("file deleted", lambda up: up.commit("drop", {LIB: None}), "missing", "missing", None),
    Case("file renamed", _rename("src/mcp/client.rs"), "moved", "moved", "src/mcp/client.rs:7-13"),
    Case(
        "file renamed and function moved in it",
        _rename(
            "src/mcp/client.rs",
            ("pub struct Client {", "pub fn helper() {}\n\npub struct Client {"),
        ),
        "moved",
        "moved",
        "src/mcp/client.rs:9-15",
    ),
    Case(
        "file renamed and claim flipped",
        _rename("src/mcp/client.rs", ("Mode::Legacy => None,", "Mode::Legacy => Some(x),")),
        "changed",
        "broken",
        "src/mcp/client.rs:7-13",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_verdict(
    case: Case, project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client", {LIB: SOURCE})
    project.note("one-page", f"{base[:8]} {CITED}")
    project.rules(RULE)
    case.change(upstream)

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    report = json.loads(out)
    verdicts = {r["id"]: r for r in report["results"]}
    citation = verdicts[f"one-page:{CITED}"]
    assert (citation["verdict"], verdicts["cursor-gate"]["verdict"]) == (
        case.citation,
        case.rule,
    ), err
    where = citation["current"]
    assert (
        f"{where['path']}:{where['start_line']}-{where['end_line']}" if where else None
    ) == case.current
    assert citation["baseline"]["commit"] == base
    stale = {case.citation, case.rule} - {"fresh", "moved"}
    assert code == (1 if stale else 0)


def test_whole_file_citation(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client", {LIB: SOURCE, "src/other.rs": "fn a() {}\n"})
    project.note("files", f"{base} {LIB}", f"{base} src/other.rs")
    upstream.commit("reformat", {LIB: SOURCE.replace("    next\n", "        next\n")})
    upstream.commit("change", {"src/other.rs": "fn a() { b() }\n"})

    _, out, _ = project.run("check", "--format", "json", capsys=capsys)

    verdicts = {r["id"]: r["verdict"] for r in json.loads(out)["results"]}
    assert verdicts == {f"files:{LIB}": "fresh", "files:src/other.rs": "changed"}


def test_non_code_file_is_compared_word_by_word(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("docs", {"docs/mcp.md": "# MCP\n\nThe client reads one page.\n\nEnd.\n"})
    project.note("docs", f"{base} docs/mcp.md:3")
    upstream.commit(
        "reflow", {"docs/mcp.md": "# MCP\n\nIntro.\n\nThe client   reads one page.\n\nEnd.\n"}
    )

    _, out, _ = project.run("check", "--format", "json", capsys=capsys)

    [result] = json.loads(out)["results"]
    assert (result["verdict"], result["current"]["start_line"]) == ("moved", 5)


@pytest.mark.parametrize(
    ("source", "code", "hint"),
    [
        (
            "0123456789abcdef0123456789abcdef01234567 src/client.rs:7-13",
            "baseline-unreachable",
            "commit",
        ),
        ("BASE src/nowhere.rs:1-2", "file-missing-at-baseline", "src/nowhere.rs"),
        ("BASE src/client.rs:70-80", "lines-out-of-range", "past the end"),
        ("BASE src/client.rs:2", "lines-out-of-range", "no code"),
    ],
)
def test_citation_errors(
    source: str,
    code: str,
    hint: str,
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = upstream.commit("client", {LIB: SOURCE})
    project.note("bad", source.replace("BASE", base[:10]))
    project.note("good", f"{base} {CITED}")

    exit_code, out, _ = project.run("check", "--format", "json", capsys=capsys)

    results = {r["note"]: r for r in json.loads(out)["results"]}
    assert (results["bad"]["verdict"], results["bad"]["error"]) == ("error", code)
    assert hint in results["bad"]["message"]
    assert results["good"]["verdict"] == "fresh"  # the rest of the run goes on
    assert exit_code == 2


@pytest.mark.parametrize(
    ("query", "claim", "hint"),
    [
        ('(match_expression value: (identifier) @v (#eq? @v "nope")) @target', "", "matches 0"),
        ("(match_arm) @target", "", "matches 2"),
        (
            '(match_arm pattern: (match_pattern) @p (#eq? @p "Mode::Legacy") value: (_) @legacy) @target',
            'capture = "legacy"\nequals = "Some(x)"',
            "claim on @legacy fails",
        ),
    ],
    ids=["no target", "two targets", "claim fails"],
)
def test_rule_baseline_errors(
    query: str,
    claim: str,
    hint: str,
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = upstream.commit("client", {LIB: SOURCE})
    project.note("one-page", f"{base} {CITED}")
    claims = f"[[rule.claims]]\n{claim}\n" if claim else ""
    project.rules(
        f'[[rule]]\nid = "r"\nnote = "one-page"\npath = "{LIB}"\n'
        f"query = '''{query}'''\n{claims}"
    )

    exit_code, out, _ = project.run("check", "--format", "json", capsys=capsys)

    rule = next(r for r in json.loads(out)["results"] if r["id"] == "r")
    assert (rule["verdict"], rule["error"], exit_code) == ("error", "rule-baseline", 2)
    assert hint in rule["message"]


def test_rule_target_found_repo_wide(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client", {LIB: SOURCE, "src/other.rs": "fn other() {}\n"})
    project.note("one-page", f"{base} {CITED}")
    project.rules(RULE)
    # list_tools moves to a new module and the old file goes: no rename git can see.
    tools = "pub fn list_tools" + SOURCE.split("pub fn list_tools")[1].split("pub fn initialize")[0]
    upstream.commit("split", {LIB: None, "src/tools/list.rs": "use a::b;\n\n" + tools})

    _, out, _ = project.run("check", "--format", "json", capsys=capsys)

    rule = next(r for r in json.loads(out)["results"] if r["id"] == "cursor-gate")
    assert rule["verdict"] == "moved"
    assert rule["current"]["path"] == "src/tools/list.rs"


def test_abbreviated_and_permalink_citations(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client", {LIB: SOURCE})
    link = f"https://github.com/{project.repo}/blob/{base}/{LIB}#L15-L17"
    project.note(
        "p",
        raw=f"---\nid: p\nsources:\n  - url: {link}\n  - url: https://github.com/"
        f"{project.repo}.git\n    commit: {base[:7]}\n    path: {CITED}\n---\n",
    )

    _, out, _ = project.run("check", "--format", "json", capsys=capsys)

    verdicts = {r["id"]: r["verdict"] for r in json.loads(out)["results"]}
    assert verdicts == {f"p:{LIB}:15-17": "fresh", f"p:{CITED}": "fresh"}


ATTRIBUTED = """\
/// How a session speaks MCP.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Mode {
    Legacy,
    Modern,
}

pub fn other() {}
"""


@pytest.mark.parametrize(
    ("cited", "change", "verdict", "current"),
    [
        ("1-7", lambda s: s, "fresh", "1-7"),  # the doc comment line has no tokens
        ("1-7", lambda s: "use a::b;\n\n" + s, "moved", "3-9"),  # and it moves along
        ("2-7", lambda s: s.replace("Modern,", "Modern,\n    Next,"), "changed", "2-8"),
        ("2-7", lambda s: s.replace("Copy, ", ""), "changed", "2-7"),  # the attribute is the enum's
        (
            "2-7",
            lambda s: s.replace("Modern,", "Modern,\n    A,\n    B,\n    C,\n    D,"),
            "changed",
            "2-11",
        ),
    ],
    ids=[
        "doc comment, unchanged",
        "doc comment, moved",
        "derive, variant added",
        "derive changed",
        "derive, enum grown",
    ],
)
def test_comments_and_attributes_around_a_definition(
    cited: str, change: Callable[[str], str], verdict: str, current: str,
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    base = upstream.commit("mode", {"src/mode.rs": ATTRIBUTED})
    project.note("n", f"{base} src/mode.rs:{cited}")
    upstream.commit("edit", {"src/mode.rs": change(ATTRIBUTED)})

    _, out, _ = project.run("check", "--format", "json", capsys=capsys)

    [result] = json.loads(out)["results"]
    where = result["current"]
    assert (result["verdict"], f"{where['start_line']}-{where['end_line']}") == (verdict, current)


def test_same_lines_cited_at_two_commits_are_two_items(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    first = upstream.commit("client", {LIB: SOURCE})
    second = upstream.commit("touch", {LIB: SOURCE.replace("    next\n}", "    next.clone()\n}")})
    project.note("n", f"{first} {CITED}", f"{second} {CITED}")
    project.run("check", "--format", "json", capsys=capsys)
    project.counts.parse.reset()

    _, out, _ = project.run("check", "--format", "json", capsys=capsys)

    verdicts = {r["id"]: r["verdict"] for r in json.loads(out)["results"]}
    assert verdicts == {f"n:{CITED}": "changed", f"n:{CITED}@{second[:8]}": "fresh"}
    assert project.counts.parse.parses == 0  # both stay cached: neither overwrites the other


def test_a_file_the_upstream_lacks_is_an_error_of_its_own_items_alone(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """A copy of an upstream that lacks a blob (a snapshot without its largest vendored
    files): the items that cite that file are `baseline-unreachable`, the message names
    the blob and the upstream; the others are judged as ever, and the run is not failed."""
    vendored = "vendor/big.rs"
    base = upstream.commit("client", {LIB: SOURCE, vendored: "pub fn v() -> u32 {\n    1\n}\n"})
    project.note("n", f"{base} {CITED}", f"{base} {vendored}:1-3")
    upstream.commit("touch", {LIB: SOURCE.replace("    next\n}", "    next.clone()\n}")})
    blob = upstream.git("rev-parse", f"{base}:{vendored}")
    (upstream.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()

    code, out, _ = project.run("check", "--format", "json", capsys=capsys)

    report = json.loads(out)
    results = {r["id"]: r for r in report["results"]}
    assert results[f"n:{CITED}"]["verdict"] == "changed"
    lacked = results[f"n:{vendored}:1-3"]
    assert (lacked["verdict"], lacked["error"]) == ("error", "baseline-unreachable")
    assert f"{vendored}: blob {blob[:12]} is not on the upstream" in lacked["message"]
    assert [u["error"] for u in report["upstreams"]] == [None]
    assert code == 2


def test_a_lacked_blob_beside_a_moved_file_leaves_the_move_followed(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The commit that moves the cited file also adds a vendored file the copy lacks
    (docker/mcp-gateway's snapshot, its vendored sqlite): rename detection compares
    what it has; the run is not failed, and the item is followed to its new path."""
    base = upstream.commit("client", {LIB: SOURCE})
    project.note("n", f"{base} {CITED}")
    moved, vendored = "src/core/client.rs", "vendor/big.rs"
    edited = SOURCE.replace("    next\n}", "    next.clone()\n}")
    upstream.commit("move", {LIB: None, moved: edited, vendored: "pub fn v() {}\n"})
    blob = upstream.git("rev-parse", f"HEAD:{vendored}")
    (upstream.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()

    _, out, err = project.run("check", "--format", "json", capsys=capsys)

    report = json.loads(out)
    [result] = report["results"]
    assert (result["verdict"], result["current"]["path"]) == ("changed", moved)
    assert [u["error"] for u in report["upstreams"]] == [None]
    told = [line for line in err.splitlines() if "the upstream lacks" in line]
    assert len(told) == 1 and f"lacks 1 blob(s) the run asked for ({blob[:12]})" in told[0]


def test_ambiguous_abbreviated_commit_lists_the_candidates(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: dict[str, str] = {}
    for n in range(2000):  # pinned dates: the same ids, so the same collision, every run
        sha = upstream.commit(f"c{n}", {LIB: SOURCE} if n == 0 else None)
        if sha[:4] in seen:
            break
        seen[sha[:4]] = sha
    project.note("n", f"{sha[:4]} {CITED}")

    code, out, _ = project.run("check", "--format", "json", capsys=capsys)

    [result] = json.loads(out)["results"]
    assert (code, result["error"]) == (2, "baseline-unreachable")
    assert f"commit {sha[:4]} is ambiguous" in result["message"]
    assert seen[sha[:4]][:12] in result["message"] and sha[:12] in result["message"]


def test_a_commit_off_the_branch_is_fetched_by_its_full_id_only(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    # A commit on a pull request's branch: GitHub serves it by its full id, and an
    # abbreviated one can only be looked up among what the mirror has (the branch).
    upstream.commit("client", {LIB: SOURCE})
    upstream.branch_off("pr")
    side = upstream.commit("on the pull request", {"README.md": "x\n"})
    upstream.checkout("main")
    upstream.commit("main moves on", {"CHANGELOG.md": "y\n"})
    project.note("short", f"{side[:12]} {CITED}")

    _, out, _ = project.run("check", "--format", "json", capsys=capsys)

    (result,) = json.loads(out)["results"]
    assert result["error"] == "baseline-unreachable"
    assert "cite it by its full 40-character id" in result["message"]

    project.note("full", f"{side} {CITED}")
    _, out, _ = project.run("check", "--format", "json", capsys=capsys)

    results = {r["note"]: r["verdict"] for r in json.loads(out)["results"]}
    assert results == {"full": "fresh", "short": "fresh"}  # fetched: now in the mirror


def test_offline_a_commit_off_the_branch_not_fetched_yet_says_to_go_online(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client", {LIB: SOURCE})
    project.note("main", f"{base} {CITED}")
    project.run("check", "--format", "json", capsys=capsys)  # the mirror, without the PR
    upstream.branch_off("pr")
    side = upstream.commit("on the pull request", {"README.md": "x\n"})
    upstream.checkout("main")
    project.note("full", f"{side} {CITED}")

    _, out, _ = project.run("check", "--format", "json", "--offline", capsys=capsys)

    result = next(r for r in json.loads(out)["results"] if r["note"] == "full")
    assert result["error"] == "baseline-unreachable"
    assert "run without --offline to fetch it" in result["message"]
