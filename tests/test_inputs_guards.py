"""A rule guards the citations its baseline target overlaps, and a guarded citation
follows the rule's target (`watcher.inputs.guards`)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Project
from tests.rust_client import CLIENT
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


def test_a_guarded_citation_follows_its_rule_and_only_overlapping_ones_are_guarded(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client", {LIB: SOURCE})
    project.note("n", f"{base} {LIB}:1-7", f"{base} {LIB}:9-11")
    project.rules(RULE)
    _, listed, _ = project.run("notes", capsys=capsys)
    assert "run `watch check` to see its lines" in listed  # not judged yet: not claimed
    rewrite = upstream.commit("page through tools (#9)", {LIB: REWRITTEN})

    _, out, _ = project.run("check", "--format", "json", capsys=capsys)

    results = {r["id"]: r for r in json.loads(out)["results"]}
    cited = results[f"n:{LIB}:1-7"]
    assert results["legacy-arm"]["verdict"] == "moved"
    assert cited["verdict"] == "changed", cited["message"]  # not `missing`: the rule found it
    assert cited["current"] == results["legacy-arm"]["current"]
    assert "rule legacy-arm, which guards them" in cited["message"]
    assert cited["introduced_by"]["commit"] == rewrite
    assert results[f"n:{LIB}:9-11"]["verdict"] == "moved"
    _, listed, _ = project.run("notes", capsys=capsys)
    lines = {line.split()[3]: line for line in listed.splitlines() if "code" in line}
    assert lines[f"{LIB}:1-7"].endswith("guarded by legacy-arm")
    assert "guarded" not in lines[f"{LIB}:9-11"] and "legacy-arm" not in lines[f"{LIB}:9-11"]
