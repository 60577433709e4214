"""Print a Report: a registry of formats, each writing to an injected stream."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import TextIO

from pydantic import BaseModel

from watcher.models import Report, Result, Verdict, span


def to_json(report: Report) -> str:
    """The JSON document of SPEC 6.1; identical runs give identical results.

    One top-level key per line and one element of each list (a result, an upstream, an
    issue) per line: `indent` would force json's pure-Python encoder, whose cost grows
    with the site (seconds at 5,000 citations). Each element is written by pydantic's
    own JSON serializer instead, and the layout is made here.
    """
    return "".join(json_pieces(report))


def json_pieces(report: Report) -> Iterator[str]:
    """The text of `to_json`, one element at a time (each with the separator before it):
    printed as it comes, a big report is never one string (tens of MB at 5,000
    citations, two bytes a character once one is outside Latin-1)."""
    encode = json.JSONEncoder(ensure_ascii=False).encode
    for n, (name, field) in enumerate(Report.model_fields.items()):
        key = (",\n  " if n else "{\n  ") + f"{encode(field.serialization_alias or name)}: "
        value = getattr(report, name)
        if isinstance(value, tuple) and value:
            yield key + "["
            for m, element in enumerate(value):
                yield (",\n    " if m else "\n    ") + _element(element, encode)
            yield "\n  ]"
        else:
            yield key + _element(value, encode)
    yield "\n}\n"


def _element(value: object, encode: Callable[[object], str]) -> str:
    if isinstance(value, BaseModel):
        return value.model_dump_json(by_alias=True)
    return encode(value)


def render_json(report: Report, stream: TextIO) -> None:
    for piece in json_pieces(report):
        stream.write(piece)


def render_table(report: Report, stream: TextIO) -> None:
    """One row per item, worst first, then the summary line (upstream text is never markup)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    several = len({r.repo.lower() for r in report.results if r.repo}) > 1
    columns = ("verdict", "item", "where now", "introduced by", "release", "message")
    rows = [
        [
            r.verdict.value,
            (f"{r.repo}\n" if several else "") + _item(r),
            _where(r, short=True),
            _commit(r),
            r.released_in or "",
            r.message,
        ]
        for r in report.results
    ]
    # No id, path or word is ever broken mid-word: every column is as wide as its longest
    # word and the message takes what is left; a terminal too narrow for that gets
    # longer lines rather than broken ids.
    widths = [
        max([len(c), *(len(w) for row in rows for w in row[i].split())])
        for i, c in enumerate(columns)
    ]
    frame = 3 * len(columns) + 1  # borders and padding
    width = Console(file=stream).width if stream.isatty() else 160
    widths[-1] = max(widths[-1], max(100, width) - frame - sum(widths[:-1]))
    console = Console(file=stream, highlight=False, soft_wrap=False, width=sum(widths) + frame)
    table = Table(pad_edge=False)
    for column, exact in zip(columns, widths, strict=True):
        table.add_column(column, overflow="fold", width=exact)
    for r, row in zip(report.results, rows, strict=True):
        table.add_row(Text(row[0], style=_STYLE[r.verdict]), *(Text(c) for c in row[1:]))
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
    several = len({r.repo.lower() for r in report.results if r.repo}) > 1
    lines += [
        "",
        "| verdict |" + (" upstream |" if several else "")
        + " item | where now | introduced by | release | message |",
        "|---|---|---|---|---|---|" + ("---|" if several else ""),
    ]  # fmt: skip
    for r in report.results:
        cells = [
            f"**{r.verdict.value}**",
            *([r.repo] if several else []),
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


def plural(count: int, noun: str) -> str:
    """`1 rule`, `2 rules`: every count a user reads goes through here."""
    return f"{count} {noun}" + ("" if count == 1 else "s")


def summary_line(report: Report) -> str:
    counts = report.summary.model_dump()
    parts = [f"{counts[v.value]} {v.value}" for v in Verdict if counts[v.value]]
    total = len(report.results)
    return f"{plural(total, 'item')}: " + (", ".join(parts) if parts else "nothing tracked")


_STYLE = {
    Verdict.FRESH: "green",
    Verdict.MOVED: "cyan",
    Verdict.CHANGED: "yellow",
    Verdict.BROKEN: "bold red",
    Verdict.MISSING: "red",
    Verdict.ERROR: "bold magenta",
}


def _item(result: Result) -> str:
    """A citation's id on two lines, `NOTE:` then `FILE:LINES`, so the table can wrap it."""
    if result.kind == "citation" and result.note and result.id.startswith(f"{result.note}:"):
        return f"{result.note}:\n{result.id.removeprefix(result.note + ':')}"
    return result.id


def _where(result: Result, *, short: bool = False) -> str:
    """Where the item is at HEAD; with `short`, only the lines when the file is the same."""
    if result.current is None:
        return ""
    lines = span(result.current.start_line, result.current.end_line)
    same = result.baseline is not None and result.baseline.path == result.current.path
    if short and same and lines:
        return lines
    return f"{result.current.path}{lines}"


def _commit(result: Result) -> str:
    by = result.introduced_by
    if by is None:
        return ""
    return by.commit[:10] + (f" (#{by.pr})" if by.pr else "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
