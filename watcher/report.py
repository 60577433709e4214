"""Print a Report: a registry of formats, each writing to an injected stream."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TextIO

from watcher.models import Report, Result, Verdict


def to_json(report: Report) -> str:
    """The JSON document of SPEC 6.1; identical runs give identical results."""
    data = report.model_dump(mode="json", by_alias=True)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def render_json(report: Report, stream: TextIO) -> None:
    stream.write(to_json(report))


def render_table(report: Report, stream: TextIO) -> None:
    """One row per item, worst first, then the summary line (upstream text is never markup)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    width = Console(file=stream).width if stream.isatty() else 160
    console = Console(file=stream, highlight=False, soft_wrap=False, width=max(100, width))
    table = Table(pad_edge=False)
    for column in ("verdict", "item", "where now", "introduced by", "release", "message"):
        table.add_column(column, overflow="fold")
    for r in report.results:
        verdict = Text(r.verdict.value, style=_STYLE[r.verdict])
        cells = (r.id, _where(r), _commit(r), r.released_in or "", r.message)
        table.add_row(verdict, *(Text(c) for c in cells))
    for upstream in report.upstreams:
        head = upstream.head[:12] if upstream.head else "-"
        line = Text(f"{upstream.repo} @ {upstream.branch} {head}")
        if upstream.error:
            line.append(f"  {upstream.error}", style="red")
        console.print(line)
    console.print(table)
    console.print(Text(summary_line(report)))
    for action in report.issues:
        console.print(Text(f"issue {action.action}: {action.note} {action.url or ''}".rstrip()))


def render_markdown(report: Report, stream: TextIO) -> None:
    lines = ["## watch check", "", summary_line(report), ""]
    for upstream in report.upstreams:
        head = f"`{upstream.head[:12]}`" if upstream.head else "unreachable"
        error = f" — {upstream.error}" if upstream.error else ""
        lines.append(f"- **{upstream.repo}** `{upstream.branch}` at {head}{error}")
    lines += [
        "",
        "| verdict | item | where now | introduced by | release | message |",
        "|---|---|---|---|---|---|",
    ]
    for r in report.results:
        cells = [
            f"**{r.verdict.value}**",
            f"`{r.id}`",
            _where(r),
            _commit(r),
            r.released_in or "",
            r.message,
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    if report.issues:
        lines += ["", "### Issues", ""]
        lines += [f"- {a.action}: `{a.note}` {a.url or ''}".rstrip() for a in report.issues]
    stream.write("\n".join(lines) + "\n")


FORMATS: dict[str, Callable[[Report, TextIO], None]] = {
    "table": render_table,
    "json": render_json,
    "markdown": render_markdown,
}


def render(report: Report, fmt: str, stream: TextIO) -> None:
    FORMATS[fmt](report, stream)


def summary_line(report: Report) -> str:
    counts = report.summary.model_dump()
    parts = [f"{counts[v.value]} {v.value}" for v in Verdict if counts[v.value]]
    total = len(report.results)
    return f"{total} items: " + (", ".join(parts) if parts else "nothing tracked")


_STYLE = {
    Verdict.FRESH: "green",
    Verdict.MOVED: "cyan",
    Verdict.CHANGED: "yellow",
    Verdict.BROKEN: "bold red",
    Verdict.MISSING: "red",
    Verdict.ERROR: "bold magenta",
}


def _where(result: Result) -> str:
    if result.current is None:
        return ""
    lines = (
        f":{result.current.start_line}-{result.current.end_line}"
        if result.current.start_line
        else ""
    )
    return f"{result.current.path}{lines}"


def _commit(result: Result) -> str:
    by = result.introduced_by
    if by is None:
        return ""
    return by.commit[:10] + (f" (#{by.pr})" if by.pr else "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
