"""Edit notes and rule files in place: only the values change, never their formatting.

`watch fix` and `watch fix --accept` write through here, so a note's diff shows exactly
the commits, lines and dates that moved, in the author's own quoting style and layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from watcher.errors import NoteError, RuleError
from watcher.inputs.notes import PERMALINK
from watcher.models import Quote


@dataclass(frozen=True)
class Rebase:
    """A source entry's new place: commit and `FILE[:START-END]` (None: drop the entry)."""

    index: int  # in the note's sources[]
    repo: str
    commit: str | None
    cited: str | None


def front_matter(text: str) -> tuple[int, int]:
    """Character offsets [start, end) of the YAML between the `---` lines."""
    offset = 0
    for number, line in enumerate(text.splitlines(keepends=True)):
        if number and line.strip() in ("---", "..."):
            return len(text.splitlines(keepends=True)[0]), offset
        offset += len(line)
    raise NoteError("", "front matter is not closed")


def rebase_sources(
    text: str, rebases: list[Rebase], date: str, file: str, *, every_date: bool = False
) -> str:
    """The note with each listed source moved (or dropped), and the `date:` of those
    sources (`every_date`: of every source kept) set to `date`."""
    start, end = front_matter(text)
    front = text[start:end]
    sources = _sources(front, file)
    edits: list[tuple[int, int, str]] = []
    lines = _line_starts(front)
    dropped = {r.index for r in rebases if r.commit is None}
    if every_date:
        edits += [
            e for i, n in enumerate(sources.value) if i not in dropped for e in _date(n, date)
        ]
    for rebase in rebases:
        entry = sources.value[rebase.index]
        if rebase.commit is None or rebase.cited is None:
            first = lines[entry.start_mark.line]
            nxt = rebase.index + 1
            last_line = (
                sources.value[nxt].start_mark.line
                if nxt < len(sources.value)
                else sources.end_mark.line
            )
            edits.append((first, lines[last_line] if last_line < len(lines) else len(front), ""))
            continue
        edits += _moved(entry, rebase)
        if not every_date:
            edits += _date(entry, date)
    return text[:start] + _apply(front, edits) + text[end:]


def set_key(text: str, key: str, value: str) -> str:
    """The note with a top-level front-matter key set (added at the end when absent)."""
    start, end = front_matter(text)
    front = text[start:end]
    node = yaml.compose(front, Loader=yaml.SafeLoader)
    for k, v in node.value if isinstance(node, yaml.MappingNode) else []:
        if k.value == key and isinstance(v, yaml.ScalarNode):
            return text[:start] + _apply(front, [_replace(v, value)]) + text[end:]
    return text[:end] + f"{key}: {value}\n" + text[end:]


def replace_quote(text: str, quote: Quote, new: str) -> str:
    """The note with a quote's block content replaced, indented like its fence."""
    lines = text.splitlines(keepends=True)
    opening = lines[quote.line - 1]
    indent = opening[: len(opening) - len(opening.lstrip(" "))]
    count = quote.text.count("\n")
    body = [f"{indent}{line}\n" if line else "\n" for line in new.rstrip("\n").split("\n")]
    return "".join([*lines[: quote.line], *body, *lines[quote.line + count :]])


def set_rule_path(path: Path, rule_id: str, new_path: str) -> str:
    """The rule file's text with one rule's `path` set, everything else as it was."""
    import tomlkit

    doc = tomlkit.parse(path.read_text(encoding="utf-8"))
    for rule in doc.get("rule", []):
        if rule.get("id") == rule_id:
            rule["path"] = new_path
            return tomlkit.dumps(doc)
    raise RuleError(path, f"rule {rule_id} not found; was the file edited meanwhile?")


# --- YAML nodes ------------------------------------------------------------------------


def _sources(front: str, file: str) -> yaml.SequenceNode:
    node = yaml.compose(front, Loader=yaml.SafeLoader)
    for key, value in node.value if isinstance(node, yaml.MappingNode) else []:
        if key.value == "sources" and isinstance(value, yaml.SequenceNode):
            return value
    raise NoteError(file, "front matter has no `sources` list to update")


def _values(entry: Any) -> dict[str, yaml.Node]:
    return {k.value: v for k, v in entry.value} if isinstance(entry, yaml.MappingNode) else {}


def _moved(entry: yaml.Node, rebase: Rebase) -> list[tuple[int, int, str]]:
    assert rebase.commit is not None and rebase.cited is not None
    values = _values(entry)
    url = values.get("url")
    if url is not None and PERMALINK.match(str(url.value)):
        path, _, lines = rebase.cited.partition(":")
        start, _, end = lines.partition("-")
        anchor = f"#L{start}-L{end or start}" if lines else ""
        link = f"https://github.com/{rebase.repo}/blob/{rebase.commit}/{path}{anchor}"
        return [_replace(url, link)]
    return [_replace(values["commit"], rebase.commit), _replace(values["path"], rebase.cited)]


def _date(entry: yaml.Node, date: str) -> list[tuple[int, int, str]]:
    node = _values(entry).get("date")
    return [_replace(node, date)] if isinstance(node, yaml.ScalarNode) else []


def _replace(node: yaml.Node, value: str) -> tuple[int, int, str]:
    style = node.style if isinstance(node, yaml.ScalarNode) else None
    quote = style if style in ("'", '"') else ""
    return node.start_mark.index, node.end_mark.index, f"{quote}{value}{quote}"


def _apply(front: str, edits: list[tuple[int, int, str]]) -> str:
    for begin, finish, value in sorted(edits, reverse=True):
        front = front[:begin] + value + front[finish:]
    return front


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for number, char in enumerate(text):
        if char == "\n":
            starts.append(number + 1)
    return starts
