"""A rule that cannot be used is that rule's `error`: its id, its note, the note's issue;
`check`, `rules lint` and `fix` go on for the rest of the site."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Project
from tests.rust_client import CLIENT, CURSOR_GATE_RULE
from watcher.gitbuild import Upstream

LIB = "src/client.rs"
TYPO = CURSOR_GATE_RULE.replace('capture = "legacy"', 'capture = "legacyy"')
BAD_QUERY = CURSOR_GATE_RULE.replace("(match_expression", "(match_expresion")


def _site(project: Project, upstream: Upstream) -> str:
    base = upstream.commit("client", {LIB: CLIENT})
    project.config(sink="files")
    project.note("one-page", f"{base} {LIB}:1-7")
    project.note("other", f"{base} {LIB}:9-11")
    return base


def _results(project: Project, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, dict]]:  # type: ignore[type-arg]
    code, out, _ = project.run("check", "--format", "json", capsys=capsys)
    return code, {r["id"]: r for r in json.loads(out)["results"]}


@pytest.mark.parametrize(
    ("rule", "error", "says"),
    [
        (BAD_QUERY, "query-invalid", "rules/rules.toml:7: rule cursor-gate: query line 1 column 2"),
        (
            TYPO,
            "rule-invalid",
            "rules/rules.toml:1: rule cursor-gate: claim names capture @legacyy, which the "
            "query does not capture (it has @legacy, @p, @target, @v); did you mean @legacy?",
        ),
    ],
    ids=["query", "capture"],
)
def test_an_unusable_rule_is_its_notes_error_and_the_run_goes_on(
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    rule: str,
    error: str,
    says: str,
) -> None:
    _site(project, upstream)
    project.rules(rule)

    code, results = _results(project, capsys)

    assert code == 2
    bad = results["cursor-gate"]
    assert (bad["kind"], bad["note"], bad["note_file"], bad["verdict"], bad["error"]) == (
        "rule", "one-page", "notes/one-page.md", "error", error,
    )  # fmt: skip
    assert bad["message"].startswith(says)
    assert results[f"one-page:{LIB}:1-7"]["verdict"] == "fresh"  # the rest is checked
    assert results[f"other:{LIB}:9-11"]["verdict"] == "fresh"
    issue = (project.root / "state" / "issues" / "one-page.md").read_text(encoding="utf-8")
    assert "### 1. `cursor-gate`: error" in issue and f"Error code: `{error}`" in issue
    assert says.split(": ")[0] + ": rule cursor-gate" in issue
    assert not (project.root / "state" / "issues" / "other.md").exists()

    code, out, _ = project.run("rules", "lint", capsys=capsys)
    assert code == 2
    assert out.splitlines() == [
        f"error: {bad['message']}",
        "0 of 1 rule holds at its baseline; 1 error",
    ]

    code, out, _ = project.run("fix", capsys=capsys)
    assert code == 0, out

    code, _, err = project.run("backtest", "cursor-gate", capsys=capsys)
    assert code == 2
    assert err.strip() == f"watch: error: {bad['message']}"


def test_a_claim_typo_made_after_the_rule_compiled_is_still_caught(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """A query that compiled once is not compiled again (a warm run loads no tree-sitter):
    a claim edited afterwards must not slip past that, and stop the run when judged."""
    _site(project, upstream)
    project.rules(CURSOR_GATE_RULE)
    code, results = _results(project, capsys)
    assert (code, results["cursor-gate"]["verdict"]) == (0, "fresh")

    project.rules(TYPO)
    code, results = _results(project, capsys)

    assert code == 2
    assert results["cursor-gate"]["error"] == "rule-invalid"
    assert "did you mean @legacy?" in results["cursor-gate"]["message"]
    assert results[f"other:{LIB}:9-11"]["verdict"] == "fresh"


def test_check_rule_names_an_unusable_rule(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    _site(project, upstream)
    project.rules(BAD_QUERY)

    code, out, _ = project.run("check", "--rule", "cursor-gate", "--format", "json", capsys=capsys)

    assert code == 2
    assert [r["id"] for r in json.loads(out)["results"]] == ["cursor-gate"]


def test_a_rule_of_no_note_that_cannot_compile_says_both(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    _site(project, upstream)
    project.rules(BAD_QUERY.replace('note = "one-page"', 'note = "nobody"'))

    code, results = _results(project, capsys)

    assert code == 2
    bad = results["cursor-gate"]
    assert bad["error"] == "query-invalid"
    assert "query error" in bad["message"] and "note 'nobody' does not exist" in bad["message"]
    assert Path(bad["note_file"]).name == "rules.toml"
