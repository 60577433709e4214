"""The terminal table: the upstream column when there are several, ids and paths never
broken mid-word, and "1 item" / "2 items"."""

from __future__ import annotations

import io
import re

import pytest

from watcher.models import Location, Report, Result, Summary, Verdict
from watcher.report import render_markdown, render_table, summary_line

LONG = "codex-reads-one-page-of-tools"
PATH = "codex-rs/codex-mcp/src/rmcp_client.rs"


def result(repo: str, note: str, path: str, verdict: Verdict, start: int) -> Result:
    return Result(
        id=f"{note}:{path}:{start}-{start + 20}",
        kind="citation",
        note=note,
        note_file=f"notes/{note}.md",
        repo=repo,
        verdict=verdict,
        baseline=Location(commit="a" * 40, path=path, start_line=start, end_line=start + 20),
        current=Location(commit="b" * 40, path=path, start_line=start + 3, end_line=start + 23),
        message="found at HEAD but its tokens differ from the baseline; re-read the cited code",
    )


class Narrow(io.StringIO):
    """A 100-column terminal."""

    def isatty(self) -> bool:
        return True


def test_table_with_two_upstreams_keeps_every_token_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    results = (
        result("openai/codex", LONG, PATH, Verdict.CHANGED, 618),
        result(
            "modelcontextprotocol/rust-sdk",
            "rmcp-pages",
            "crates/rmcp/src/service/client.rs",
            Verdict.FRESH,
            40,
        ),
    )
    report = Report(started_at="t", results=results, summary=Summary(changed=1, fresh=1))
    out = Narrow()
    render_table(report, out)
    text = out.getvalue()
    assert "openai/codex" in text.splitlines()[3]  # the item's first line: its upstream
    for token in (
        "openai/codex",
        "modelcontextprotocol/rust-sdk",
        f"{LONG}:",
        f"{PATH}:618-638",
        ":621-641",
    ):
        assert token in text, token
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    cells = " ".join(part.strip() for line in plain.splitlines() for part in line.split("│"))
    for word in results[0].message.split():  # every word whole, in one cell line
        assert f" {word} " in f" {cells} ", word
    assert text.rstrip().endswith("2 items: 1 fresh, 1 changed")

    markdown = io.StringIO()
    render_markdown(report, markdown)
    assert "| verdict | upstream | item |" in markdown.getvalue()


def test_one_upstream_has_no_upstream_column_and_one_item_is_singular() -> None:
    results = (result("openai/codex", LONG, PATH, Verdict.FRESH, 618),)
    report = Report(started_at="t", results=results, summary=Summary(fresh=1))
    out = io.StringIO()
    render_table(report, out)
    assert "openai/codex" not in out.getvalue()
    assert summary_line(report) == "1 item: 1 fresh"
