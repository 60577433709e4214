"""A rule guards the citations its baseline target overlaps; each keeps its own verdict,
span and history, the rule only hinting where a missing citation went
(`watcher.inputs.guards`)."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.rust_client import CLIENT, INITIALIZE, LIST_TOOLS
from tests.support import check_results
from watcher.gitbuild import Upstream

LIB = "src/client.rs"
SOURCE = CLIENT
# list_tools renamed and rewritten around the match: its citation cannot be found by
# name or by likeness, but the rule's match arm is still there.
REWRITTEN = """\
pub async fn fetch_tool_page(session: &Session, mode: Mode, response: Response) -> Result<Page> {
    session.trace("tools/list").await?;
    let cursor = match mode {
        Mode::Legacy => None,
        Mode::Modern => response.next_cursor,
    };
    Ok(Page::from(session.collect(cursor).await?))
}

pub fn initialize() -> Params {
    Params::new("client").with_protocol_version(Version::V_2025_06_18)
}
"""
RULE = """\
[[rule]]
id = "legacy-arm"
note = "n"
path = "src/client.rs"
query = '''(match_arm pattern: (match_pattern) @p (#eq? @p "Mode::Legacy") value: (_) @v) @target'''
[[rule.claims]]
capture = "v"
equals = "None"
"""


def test_a_guarded_citation_keeps_its_own_verdict_and_only_overlapping_ones_are_guarded(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client", {LIB: SOURCE})
    project.note("n", f"{base} {LIB}:1-7", f"{base} {LIB}:9-11")
    project.rules(RULE)
    _, listed, _ = project.run("notes", capsys=capsys)
    assert "run `watch check` to see its lines" in listed  # not judged yet: not claimed
    rewrite = upstream.commit("page through tools (#9)", {LIB: REWRITTEN})

    results = check_results(project, capsys)
    cited = results[f"n:{LIB}:1-7"]
    assert results["legacy-arm"]["verdict"] == "moved"
    # Its own verdict: the cited function is gone; the rule's match arm is only a hint.
    assert cited["verdict"] == "missing", cited["message"]
    assert cited["current"] is None
    assert (
        f"rule legacy-arm, which guards these lines, finds its target at {LIB}:4"
        in (cited["message"])
    )
    assert cited["introduced_by"]["commit"] == rewrite
    assert results[f"n:{LIB}:9-11"]["verdict"] == "moved"
    _, listed, _ = project.run("notes", capsys=capsys)
    lines = {line.split()[3]: line for line in listed.splitlines() if "code" in line}
    assert lines[f"{LIB}:1-7"].endswith("guarded by legacy-arm")
    assert "guarded" not in lines[f"{LIB}:9-11"] and "legacy-arm" not in lines[f"{LIB}:9-11"]


# A release later: a statement appended to `list_tools` after the match, which the
# rule's target (the match arm) does not hold, and the arm moved down by a new line.
GROWN = (
    LIST_TOOLS.replace(
        "    let next = match mode {",
        '    session.trace("tools/list");\n    let next = match mode {',
    ).replace("    next\n}", "    log(next);\n    next\n}")
    + "\n"
    + INITIALIZE
)


def test_a_rule_guarding_a_longer_citation_leaves_it_its_own_span_and_history(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 35, class 1: a 7-line citation guarded by a one-line rule kept the rule's line
    and history. Each keeps its own: the citation its whole function (changed by the commit
    that grew it), the rule its arm (moved, no history of its own)."""
    base = upstream.commit("client", {LIB: SOURCE})
    project.note("n", f"{base} {LIB}:1-7")
    project.rules(RULE)
    grown = upstream.commit("trace and log the tools page (#4)", {LIB: GROWN})

    results = check_results(project, capsys)
    cited, rule = results[f"n:{LIB}:1-7"], results["legacy-arm"]
    assert rule["verdict"] == "moved"
    assert (rule["current"]["start_line"], rule["current"]["end_line"]) == (4, 4)
    assert cited["verdict"] == "changed"
    assert (cited["current"]["start_line"], cited["current"]["end_line"]) == (1, 9)
    assert cited["introduced_by"]["commit"] == grown
    assert [h["commit"] for h in cited["history"]] == [grown]
    assert "legacy-arm" not in cited["message"]
