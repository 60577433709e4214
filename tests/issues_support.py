"""Builders shared by the issue tests: configs, notes, and one Result per verdict; and
`assert_inert`, which reads an issue body as GitHub would."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from watcher.config import Config, IssuesConfig
from watcher.models import (
    Attribution,
    ClaimResult,
    ErrorCode,
    Location,
    Note,
    Result,
    UpstreamStatus,
    Verdict,
)

BASE = "b705b6b0c1d2e3f40516273849a0b1c2d3e4f506"
HEAD = "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"
INTRO = "1234567890abcdef1234567890abcdef12345678"
REPO = "openai/codex"
PATH = "codex-rs/codex-mcp/src/rmcp_client.rs"


def config(tmp: Path, **issues: Any) -> Config:
    """A config rooted in `tmp`; `issues` overrides the [issues] table."""
    values: dict[str, Any] = {"sink": "files", "repo": "notes/site", "dashboard": False}
    values.update(issues)
    return Config(
        root=tmp,
        file=tmp / "config.toml",
        notes=tmp / "notes",
        rules=tmp / "rules",
        state=tmp / "state",
        cache=tmp / "cache",
        issues=IssuesConfig(**values),
    )


def note(note_id: str = "codex-reads-one-page-of-tools", title: str = "") -> Note:
    return Note(
        id=note_id,
        file=f"notes/{note_id}.md",
        title=title or "Codex discards the tools/list cursor unless the 2026-07-28 mode is on",
    )


def result(verdict: Verdict, note_id: str = "codex-reads-one-page-of-tools", **over: Any) -> Result:
    """A realistic Result with the given verdict; `over` replaces any field."""
    base = Location(commit=BASE, path=PATH, start_line=618, end_line=651)
    current = Location(commit=HEAD, path=PATH, start_line=640, end_line=673)
    fields: dict[str, Any] = {
        "id": f"{note_id}:{PATH}:618-651",
        "kind": "citation",
        "note": note_id,
        "note_file": f"notes/{note_id}.md",
        "repo": REPO,
        "verdict": verdict,
        "baseline": base,
        "current": current,
        "message": f"the cited lines are {verdict.value} at HEAD",
    }
    if verdict not in (Verdict.FRESH, Verdict.ERROR):
        fields["baseline_code"] = (
            "let next_cursor = match protocol_mode {\n"
            "    McpProtocolMode::Legacy => None,\n"
            "    McpProtocolMode::V20260728 => response.next_cursor,\n"
            "};"
        )
    if verdict in (Verdict.CHANGED, Verdict.BROKEN, Verdict.MISSING):
        fields["introduced_by"] = Attribution(
            commit=INTRO,
            date="2026-10-01T12:00:00Z",
            author="Jane Dev",
            summary="Gate the tools/list cursor on the protocol mode (#12345)",
            pr=12345,
        )
        fields["released_in"] = "rust-v0.163.0"
        fields["diff"] = (
            "--- baseline\n+++ HEAD\n@@ -1,3 +1,3 @@\n let next_cursor = match protocol_mode {\n"
            "-    McpProtocolMode::Legacy => None,\n"
            "+    McpProtocolMode::Legacy => response.next_cursor,\n"
            "     McpProtocolMode::V20260728 => response.next_cursor,\n"
        )
    if verdict == Verdict.BROKEN:
        fields["id"] = "codex-tools-list-cursor-gate"
        fields["kind"] = "rule"
        fields["claims"] = (
            ClaimResult(
                capture="legacy",
                says="in the default (Legacy) mode the cursor is None",
                test="equals",
                expected="None",
                actual="response.next_cursor",
                holds=False,
            ),
        )
    if verdict == Verdict.MISSING:
        fields["current"] = None
        fields["released_in"] = None
    if verdict == Verdict.ERROR:
        fields.update(
            current=None,
            error=ErrorCode.BASELINE_UNREACHABLE,
            message="commit b705b6b0 is not reachable from any upstream ref",
        )
    if verdict == Verdict.FRESH:
        fields["current"] = base.model_copy(update={"commit": HEAD})
    fields.update(over)
    return Result(**fields)


def upstreams() -> list[UpstreamStatus]:
    return [
        UpstreamStatus(
            repo=REPO,
            url=f"https://github.com/{REPO}.git",
            branch="main",
            head=HEAD,
            head_date="2026-08-22T09:30:00+00:00",
        )
    ]


class Lines:
    """A `log` callable that keeps what it was given."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, line: str) -> None:
        self.lines.append(line)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


PARSER = MarkdownIt("commonmark").enable("table")
OUR_HTML = re.compile(
    r"^(<!-- watch:(note=[\w.:/%-]+|seen=[0-9a-f,]*|dashboard|data=[\w+/=]*) -->\n?)+$"
    r"|^</?(details|summary|sub)>"
)


def assert_inert(body: str, repo: str = "openai/codex") -> None:
    """Parse as CommonMark + tables: prose pings nobody, links nothing, has no foreign HTML."""
    for token in PARSER.parse(body):
        if token.type == "html_block":
            assert OUR_HTML.match(token.content), token.content[:200]
        for child in token.children or []:
            if child.type == "html_inline":
                assert OUR_HTML.match(child.content), child.content
            if child.type == "text":
                assert not re.search(r"@[A-Za-z0-9]", child.content), child.content
                assert not re.search(r"(^|[^\w&])#\d", child.content), child.content
                assert not re.search(r"https?://|www\.", child.content), child.content
            if child.type == "link_open":
                href = str(child.attrs["href"])
                assert href.startswith(f"https://github.com/{repo}/"), href
            assert child.type != "image"
