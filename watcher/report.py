"""Print a Report: a registry of formats, each writing to an injected stream."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
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


# --- GitHub workflow commands: annotations on a pull request's diff ------------------

# `FILE:LINE: ` (or `FILE:LINE:COL: `) at the start of a message: where an input error is.
_AT = re.compile(r"^(?P<file>[^\s:]+\.(?:md|toml)):(?P<line>\d+)(?::(?P<col>\d+))?: ")
_RULE_AT = re.compile(r"(?P<file>[\w./-]+\.toml):(?P<line>\d+)")  # a rule's own place
_LEVEL = {
    Verdict.ERROR: "error",
    Verdict.BROKEN: "error",
    Verdict.MISSING: "error",
    Verdict.CHANGED: "warning",
    Verdict.MOVED: "notice",
}


def render_github(
    report: Report,
    stream: TextIO,
    root: Path | None = None,
    rules: Mapping[str, tuple[str, int | None]] | None = None,
) -> None:
    """One workflow command per item that is not fresh (`::error file=notes/x.md,line=6,
    col=5::…`), so GitHub shows it on the pull request's diff; then the summary line.
    Paths are given from the workspace (the repository's top), `root` being the folder
    the report's paths are relative to (config.toml's); `rules` says where each rule is
    (its file and `[[rule]]` line)."""
    texts: dict[str, list[str]] = {}  # the note files read, for the lines of citations
    for r in report.results:
        if r.verdict in _LEVEL:
            place = (rules or {}).get(r.id) if r.kind == "rule" else None
            file, line, col = (*place, None) if place else _place(r, root or Path(), texts)
            title = f"watch: {r.verdict.value}"
            text = f"{r.id}: {r.message}"
            stream.write(annotation(_LEVEL[r.verdict], text, file, line, col, title, root))
    for upstream in report.upstreams:
        if upstream.error:
            stream.write(annotation("error", upstream.error, title=f"watch: {upstream.repo}"))
    stream.write(summary_line(report) + "\n")


def annotation(
    level: str,
    message: str,
    file: str | None = None,
    line: int | None = None,
    col: int | None = None,
    title: str | None = None,
    root: Path | None = None,
) -> str:
    """`::LEVEL file=…,line=…,col=…,title=…::MESSAGE` with GitHub's escapes; a message
    that starts with `FILE:LINE:` is placed there, that prefix taken off."""
    if file is None and (at := _AT.match(message)):
        file, line = at["file"], int(at["line"])
        col = int(at["col"]) if at["col"] else None
        message = message[at.end() :]
    props = {
        "file": _workspace(file, root) if file else None,
        "line": line,
        "col": col,
        "title": title,
    }
    shown = ",".join(f"{k}={_escape(str(v), True)}" for k, v in props.items() if v is not None)
    return f"::{level}{' ' + shown if shown else ''}::{_escape(message, False)}\n"


def _escape(text: str, prop: bool) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def _workspace(file: str, root: Path | None) -> str:
    """`file` (relative to `root`) as GitHub names it: from the workspace's top."""
    top = Path(os.environ.get("GITHUB_WORKSPACE") or Path.cwd()).resolve()
    try:
        return ((root or Path()) / file).resolve().relative_to(top).as_posix()
    except ValueError:
        return file


def _place(
    r: Result, root: Path, texts: dict[str, list[str]]
) -> tuple[str, int | None, int | None]:
    """The file, line and column an item's annotation belongs on: an input error's own
    place, a rule's `[[rule]]`, a citation's `path:` (or link) in its note."""
    if at := _AT.match(r.message):
        return at["file"], int(at["line"]), int(at["col"]) if at["col"] else None
    if r.kind == "rule" and (at := _RULE_AT.search(r.message)):
        return at["file"], int(at["line"]), None
    if r.note_file not in texts:
        try:
            texts[r.note_file] = (root / r.note_file).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            texts[r.note_file] = []
    cited = r.id.removeprefix(f"{r.note}:").split("@")[0] if r.kind == "citation" else ""
    path = cited.split(":")[0]
    for n, line in enumerate(texts[r.note_file] if cited else [], start=1):
        if f"path: {cited}" in line or (path and path in line and "://" in line):
            return r.note_file, n, line.index(cited if cited in line else path) + 1
    return r.note_file, None, None


FORMATS: dict[str, Callable[[Report, TextIO], None]] = {
    "table": render_table,
    "json": render_json,
    "markdown": render_markdown,
    "github": render_github,
}


def render(
    report: Report,
    fmt: str,
    stream: TextIO,
    root: Path | None = None,
    rules: Mapping[str, tuple[str, int | None]] | None = None,
) -> None:
    """Print `report` as `fmt`; `root` (config.toml's folder) and `rules` (where each
    rule is) place GitHub annotations."""
    if fmt == "github":
        render_github(report, stream, root, rules)
    else:
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
