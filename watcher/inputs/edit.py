"""Edit notes and rule files in place: only the values change, never their formatting.

`watch fix` and `watch fix --accept` write through here, so a note's diff shows exactly
the commits, lines and dates that moved, in the author's own quoting style and layout.
Line endings (CRLF stays CRLF), a UTF-8 BOM and YAML anchors stay as they were. A value
not written where it is used (an alias `*x`, a merge key `<<: *x`) is never edited: an
edit there would change every place using it, so the note is refused with the fix, and
nothing in it changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from watcher.errors import NoteError, RuleError
from watcher.inputs.notes import PERMALINK
from watcher.models import Quote

Edit = tuple[int, int, str]  # replace front[begin:end] with the text
# An anchor (`&x `) or a tag (`!!str `) written before a value: an edit keeps it.
PROPERTIES = re.compile(r"(?:[&!]\S*\s+)*")


@dataclass(frozen=True)
class Rebase:
    """A source entry's new place: commit and `FILE[:START-END]` (None: drop the entry)."""

    index: int  # in the note's sources[]
    repo: str
    commit: str | None
    cited: str | None


def read(path: Path) -> str:
    """A note or rule file's text exactly as stored, CRLF and a BOM kept (`read_text`
    turns CRLF into LF, and a fix would then rewrite every line)."""
    return path.read_bytes().decode("utf-8")


def write(path: Path, text: str) -> None:
    """Write an edited file atomically (a temp file beside it, renamed over it), with its
    permissions and the bytes given: never half-written, never redacted."""
    import os
    import tempfile

    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def newline(text: str) -> str:
    """The line ending a file uses (that of its first line): `\\r\\n` or `\\n`."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


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
    sources (`every_date`: of every source kept) set to `date`. A value that is not the
    source's own (`_Front.own`) raises NoteError, and nothing is changed."""
    start, end = front_matter(text)
    front = _Front(text[start:end], file)
    sources = front.sources()
    edits: list[Edit] = []
    dropped = {r.index for r in rebases if r.commit is None}
    if every_date:
        for index, entry in enumerate(sources.value):
            if index not in dropped:
                edits += front.date(entry, index, date)
    for rebase in rebases:
        entry = sources.value[rebase.index]
        if rebase.commit is None or rebase.cited is None:
            edits.append(front.drop(sources, rebase.index))
            continue
        edits += front.moved(entry, rebase)
        if not every_date:
            edits += front.date(entry, rebase.index, date)
    return text[:start] + _apply(front.text, edits) + text[end:]


def set_key(text: str, key: str, value: str, file: str = "") -> str:
    """The note with a top-level front-matter key set (added at the end when absent)."""
    start, end = front_matter(text)
    front = _Front(text[start:end], file)
    for k, v in front.root.value if isinstance(front.root, yaml.MappingNode) else []:
        if k.value == key and isinstance(v, yaml.ScalarNode):
            edit = front.replace(v, value, f"`{key}`", line=front.line(k))
            return text[:start] + _apply(front.text, [edit]) + text[end:]
    return text[:end] + f"{key}: {value}{newline(text)}" + text[end:]


def replace_quote(text: str, quote: Quote, new: str) -> str:
    """The note with a quote's block content replaced, indented like its fence."""
    lines = text.splitlines(keepends=True)
    opening = lines[quote.line - 1]
    indent = opening[: len(opening) - len(opening.lstrip(" "))]
    count = quote.text.count("\n")
    eol = newline(text)
    body = [f"{indent}{line}{eol}" if line else eol for line in new.rstrip("\n").split("\n")]
    return "".join([*lines[: quote.line], *body, *lines[quote.line + count :]])


def set_rule_path(path: Path, text: str, rule_id: str, new_path: str) -> str:
    """The rule file's `text` with one rule's `path` set, everything else as it was."""
    import tomlkit

    bom = "\ufeff" if text.startswith("\ufeff") else ""  # kept, but not for tomlkit to read
    doc = tomlkit.parse(text.removeprefix(bom))
    for rule in doc.get("rule", []):
        if rule.get("id") == rule_id:
            rule["path"] = new_path
            return bom + tomlkit.dumps(doc)
    raise RuleError(path, f"rule {rule_id} not found; was the file edited meanwhile?")


# --- YAML nodes ------------------------------------------------------------------------


class _Front:
    """A note's front matter as YAML nodes, with how many times each node is reached from
    the root: more than once, it is written in one place and used again through an alias,
    and an edit where it is written would change every place that uses it."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.root = yaml.compose(text, Loader=yaml.SafeLoader)
        self.uses: dict[int, int] = {}
        stack = [self.root] if self.root is not None else []
        while stack:
            node = stack.pop()
            self.uses[id(node)] = self.uses.get(id(node), 0) + 1
            if self.uses[id(node)] == 1:
                stack.extend(_children(node))
        self.starts = [0, *(n + 1 for n, char in enumerate(text) if char == "\n")]

    def line(self, node: yaml.Node) -> int:
        """The file line of a node (the front matter starts on line 2)."""
        return 2 + int(node.start_mark.line)

    def sources(self) -> yaml.SequenceNode:
        for key, value in self.root.value if isinstance(self.root, yaml.MappingNode) else []:
            if key.value == "sources" and isinstance(value, yaml.SequenceNode):
                self.own(value, "`sources`", self.line(key), whole=False)
                return value
        raise NoteError(self.file, "front matter has no `sources` list to update")

    def own(self, node: yaml.Node, what: str, line: int, *, whole: bool) -> None:
        """Refuse to edit `node` (and all below it, `whole`) unless it is used only here."""
        seen, stack = set(), [node]
        while stack:
            current = stack.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            if self.uses.get(id(current), 0) > 1:
                why = f"{what} is shared through a YAML anchor (`&x` used by `*x`)"
                raise self.refused(why, line)
            if whole:
                stack.extend(_children(current))

    def refused(self, why: str, line: int) -> NoteError:
        return NoteError(
            self.file,
            f"{why}; `watch fix` edits a value only where it is written, so it changed "
            "nothing in this note: write the value out there, without anchors, aliases or "
            "merge keys (`&`, `*`, `<<`), or edit the note by hand",
            line=line,
        )

    def value(self, entry: yaml.Node, index: int, key: str) -> yaml.Node:
        """The node of `key` written in the source itself (not merged in by `<<`)."""
        node = _values(entry).get(key)
        if node is None:
            how = "comes from a merge key (`<<`)" if "<<" in _values(entry) else "is missing"
            raise self.refused(f"sources[{index}]: `{key}` {how}", self.line(entry))
        return node

    def replace(self, node: yaml.Node, value: str, what: str, *, line: int) -> Edit:
        """Replace a scalar's text; its quotes, and an anchor or a tag before it, stay."""
        self.own(node, what, line, whole=True)
        style = node.style if isinstance(node, yaml.ScalarNode) else None
        quote = style if style in ("'", '"') else ""
        begin = node.start_mark.index
        if self.text[begin : begin + 1] in ("&", "!"):
            found = PROPERTIES.match(self.text, begin)
            begin = found.end() if found else begin
        return begin, node.end_mark.index, f"{quote}{value}{quote}"

    def moved(self, entry: yaml.Node, rebase: Rebase) -> list[Edit]:
        assert rebase.commit is not None and rebase.cited is not None
        where, line = f"sources[{rebase.index}]", self.line(entry)
        self.own(entry, where, line, whole=False)
        url = _values(entry).get("url")
        if url is not None and PERMALINK.match(str(url.value)):
            path, _, lines = rebase.cited.partition(":")
            start, _, end = lines.partition("-")
            anchor = f"#L{start}-L{end or start}" if lines else ""
            link = f"https://github.com/{rebase.repo}/blob/{rebase.commit}/{path}{anchor}"
            return [self.replace(url, link, f"{where}: `url`", line=line)]
        commit_node = self.value(entry, rebase.index, "commit")
        path_node = self.value(entry, rebase.index, "path")
        return [
            self.replace(commit_node, rebase.commit, f"{where}: `commit`", line=line),
            self.replace(path_node, rebase.cited, f"{where}: `path`", line=line),
        ]

    def date(self, entry: yaml.Node, index: int, date: str) -> list[Edit]:
        node = _values(entry).get("date")
        if not isinstance(node, yaml.ScalarNode):
            return []
        return [self.replace(node, date, f"sources[{index}]: `date`", line=self.line(entry))]

    def drop(self, sources: yaml.SequenceNode, index: int) -> Edit:
        """Remove a source's lines; refused when anything in it is used elsewhere."""
        entry = sources.value[index]
        self.own(entry, f"sources[{index}]", self.line(entry), whole=True)
        first = self.starts[entry.start_mark.line]
        following = sources.value[index + 1] if index + 1 < len(sources.value) else None
        last = following.start_mark.line if following is not None else sources.end_mark.line
        return first, self.starts[last] if last < len(self.starts) else len(self.text), ""


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _values(entry: Any) -> dict[str, yaml.Node]:
    return {k.value: v for k, v in entry.value} if isinstance(entry, yaml.MappingNode) else {}


def _apply(front: str, edits: list[Edit]) -> str:
    for begin, finish, value in sorted(edits, reverse=True):
        front = front[:begin] + value + front[finish:]
    return front
