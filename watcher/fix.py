"""`watch fix`: for `moved` citations, show (or write into the notes) the new commit and path.

Only the source entries in the front matter change, each value in place and in its own
quoting style, so the rest of the note (and its diff) stays as the author wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import yaml

from watcher import config as config_mod
from watcher.check import CheckOptions, run_check
from watcher.errors import NoteError
from watcher.models import CodeCitation, Note, Result, Verdict
from watcher.notes import PERMALINK, site_notes


@dataclass(frozen=True)
class Fix:
    note: Note
    citation: CodeCitation
    commit: str
    cited: str  # FILE:START-END at the new commit


def fix(config_file: Path, *, write: bool, offline: bool, out: TextIO) -> int:
    """Print every moved citation's update; with `write`, apply them to the notes."""
    config = config_mod.load(config_file)
    options = CheckOptions(offline=offline, no_issues=True, issue_citations=False)
    report = run_check(config, options)
    notes = site_notes(config).notes
    fixes = [f for r in report.results if (f := _fix_for(r, notes)) is not None]
    for item in fixes:
        old = f"{item.citation.commit[:12]} {item.citation.cited}"
        out.write(f"{item.note.file}: {old} -> {item.commit[:12]} {item.cited}\n")
    if write:
        for file, group in _by_file(fixes).items():
            path = config.root / file
            path.write_text(apply(path.read_text(encoding="utf-8"), group, file), encoding="utf-8")
        out.write(f"updated {len(fixes)} citations in {len(_by_file(fixes))} notes\n")
    elif fixes:
        out.write("run `watch fix --write` to update these citations\n")
    else:
        out.write("no moved citations\n")
    return 0


def _fix_for(result: Result, notes: dict[str, Note]) -> Fix | None:
    if result.kind != "citation" or result.verdict is not Verdict.MOVED or result.current is None:
        return None
    note = notes.get(result.note)
    citation = next((c for c in note.citations if c.id == result.id), None) if note else None
    if note is None or citation is None:
        return None
    where = result.current
    lines = f":{where.start_line}" if where.start_line else ""
    lines += f"-{where.end_line}" if where.end_line != where.start_line else ""
    return Fix(note, citation, where.commit, f"{where.path}{lines}")


def _by_file(fixes: list[Fix]) -> dict[str, list[Fix]]:
    groups: dict[str, list[Fix]] = {}
    for item in fixes:
        groups.setdefault(item.note.file, []).append(item)
    return groups


def apply(text: str, fixes: list[Fix], file: str) -> str:
    """The note's text with each fixed source's commit and path (or permalink) replaced."""
    start = text.index("\n") + 1
    end = text.find("\n---", start)
    front = text[start:end]
    sources = _sources_node(front, file)
    edits: list[tuple[int, int, str]] = []
    for item in fixes:
        entry = sources.value[item.citation.index]
        edits += _edits(entry, item)
    for begin, finish, value in sorted(edits, reverse=True):
        front = front[:begin] + value + front[finish:]
    return text[:start] + front + text[end:]


def _sources_node(front: str, file: str) -> yaml.SequenceNode:
    node = yaml.compose(front, Loader=yaml.SafeLoader)
    for key, value in node.value if isinstance(node, yaml.MappingNode) else []:
        if key.value == "sources" and isinstance(value, yaml.SequenceNode):
            return value
    raise NoteError(file, "front matter has no `sources` list to update")


def _edits(entry: yaml.Node, item: Fix) -> list[tuple[int, int, str]]:
    values = {k.value: v for k, v in entry.value}
    url = values.get("url")
    if url is not None and PERMALINK.match(url.value):
        owner_repo = item.citation.repo
        path, _, lines = item.cited.partition(":")
        start, _, end = lines.partition("-")
        anchor = f"#L{start}-L{end}" if lines else ""
        link = f"https://github.com/{owner_repo}/blob/{item.commit}/{path}{anchor}"
        return [_replace(url, link)]
    return [_replace(values["commit"], item.commit), _replace(values["path"], item.cited)]


def _replace(node: yaml.Node, value: str) -> tuple[int, int, str]:
    style = node.style if isinstance(node, yaml.ScalarNode) else None
    quote = style if style in ("'", '"') else ""
    return node.start_mark.index, node.end_mark.index, f"{quote}{value}{quote}"
