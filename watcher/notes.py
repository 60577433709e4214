"""Read notes (SPEC 3.1): YAML front matter and the citations in its `sources`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from watcher.config import display_path
from watcher.errors import NoteError
from watcher.models import CodeCitation, IssueCitation, Note

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~10x faster

REPO_URL = re.compile(r"^https?://github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")
PERMALINK = re.compile(
    r"^https?://github\.com/([\w.-]+)/([\w.-]+)/blob/([0-9a-fA-F]{4,40})/([^#?]+)"
    r"(?:#L(\d+)(?:-L(\d+))?)?$"
)
ISSUE_URL = re.compile(r"^https?://github\.com/([\w.-]+)/([\w.-]+)/(issues|pull)/(\d+)/?$")
COMMIT = re.compile(r"^[0-9a-fA-F]{4,40}$")
LINES = re.compile(r"^(\d+)(?:-(\d+))?$")
ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class Notes:
    """The notes that loaded, and one error per note or source that did not."""

    notes: dict[str, Note]
    errors: list[NoteError]


def load_notes(folder: Path, *, display_root: Path) -> Notes:
    """Read every `*.md` below `folder`; a bad note is an error, the others still load."""
    notes: dict[str, Note] = {}
    errors: list[NoteError] = []
    for file in sorted(folder.rglob("*.md")) if folder.is_dir() else []:
        shown = display_path(file, display_root)
        try:
            note, source_errors = parse_note(file.read_bytes(), shown)
        except NoteError as exc:
            errors.append(exc)
            continue
        errors.extend(source_errors)
        if note.id in notes:
            errors.append(
                NoteError(
                    shown,
                    f"duplicate note id {note.id!r}, also in {notes[note.id].file}; "
                    "give each note its own id",
                    line=_id_line(file),
                )
            )
            continue
        notes[note.id] = note
    return Notes(notes, errors)


def parse_note(raw: bytes, file: str) -> tuple[Note, list[NoteError]]:
    """Parse one note. Raises for a note that cannot be read at all; returns source errors."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NoteError(file, f"not UTF-8 (byte {exc.start}); save the file as UTF-8") from None
    front, offset = _front_matter(text, file)
    try:
        node = yaml.compose(front, Loader=_LOADER)
        data = yaml.load(front, Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = offset + mark.line + 1 if mark else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise NoteError(file, f"front matter is not valid YAML: {problem}", line=line) from None
    if not isinstance(data, dict):
        raise NoteError(file, "front matter must be a YAML mapping of fields", line=offset + 1)
    note_id = data.get("id")
    if not isinstance(note_id, str) or not ID.match(note_id):
        raise NoteError(
            file,
            "missing or malformed `id`: add `id: some-kebab-case-id` to the front matter",
            line=_key_line(node, "id", offset) or offset,
        )
    return _build(note_id, data, node, file, offset)


def _front_matter(text: str, file: str) -> tuple[str, int]:
    """The YAML between the opening `---` and the next `---`, and its first line's offset."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise NoteError(file, "no front matter: the note must start with a line `---`", line=1)
    for number, line in enumerate(lines[1:], start=1):
        if line.strip() in ("---", "..."):
            return "\n".join(lines[1:number]), 1
    raise NoteError(file, "front matter is not closed: add a line `---` after it", line=1)


def _build(
    note_id: str, data: dict[str, Any], node: Any, file: str, offset: int
) -> tuple[Note, list[NoteError]]:
    sources = data.get("sources") or []
    errors: list[NoteError] = []
    if not isinstance(sources, list):
        errors.append(
            NoteError(file, "`sources` must be a list", line=_key_line(node, "sources", offset))
        )
        sources = []
    code: list[CodeCitation] = []
    issues: list[IssueCitation] = []
    untracked: list[str] = []
    source_nodes = _value(node, "sources")
    for index, source in enumerate(sources):
        line = _item_line(source_nodes, index, offset)
        try:
            kind = _source(note_id, index, source, file, line)
        except NoteError as exc:
            errors.append(exc)
            continue
        if isinstance(kind, CodeCitation):
            if any(c.id == kind.id for c in code):  # same lines cited at another commit
                kind = kind.model_copy(update={"suffix": f"@{kind.commit[:8]}"})
            code.append(kind)
        elif isinstance(kind, IssueCitation):
            issues.append(kind)
        else:
            untracked.append(kind)
    note = Note(
        id=note_id,
        file=file,
        title=str(data.get("title") or ""),
        clients=tuple(str(c) for c in data.get("clients") or ()),
        status=str(data.get("status") or ""),
        last_verified=str(data.get("lastVerified") or ""),
        citations=tuple(code),
        issue_citations=tuple(issues),
        untracked=tuple(untracked),
    )
    return note, errors


def _source(
    note_id: str, index: int, source: Any, file: str, line: int | None
) -> CodeCitation | IssueCitation | str:
    where = f"sources[{index}]"
    if not isinstance(source, dict):
        raise NoteError(file, f"{where} must be a mapping with url, commit, path", line=line)
    url = str(source.get("url") or "")
    title = str(source.get("title") or "")
    if match := ISSUE_URL.match(url):
        owner, name, kind, number = match.groups()
        return IssueCitation(
            note=note_id,
            repo=f"{owner}/{name}",
            kind="pull" if kind == "pull" else "issue",
            number=int(number),
            url=url,
            title=title,
            date=str(source.get("date") or ""),
        )
    if match := PERMALINK.match(url):
        owner, name, commit, path, start, end = match.groups()
        lines = f":{start}-{end or start}" if start else ""
        return _citation(
            note_id, index, f"{owner}/{name}", commit, f"{path}{lines}", title, file, line
        )
    if (match := REPO_URL.match(url)) and source.get("commit") and source.get("path"):
        owner, name = match.groups()
        return _citation(
            note_id,
            index,
            f"{owner}/{name}",
            str(source["commit"]),
            str(source["path"]),
            title,
            file,
            line,
        )
    if match and (source.get("commit") or source.get("path")):
        missing = "path" if source.get("commit") else "commit"
        raise NoteError(file, f"{where}: a code citation needs `{missing}` as well", line=line)
    return url or title or where


def _citation(
    note_id: str,
    index: int,
    repo: str,
    commit: str,
    cited: str,
    title: str,
    file: str,
    line: int | None,
) -> CodeCitation:
    where = f"sources[{index}]"
    if not COMMIT.match(commit):
        raise NoteError(file, f"{where}: commit {commit!r} is not a hex commit id", line=line)
    path, start, end = split_path(cited)
    if path is None:
        raise NoteError(
            file,
            f"{where}: path {cited!r} is not FILE, FILE:LINE or FILE:START-END "
            "(lines are 1-based and START <= END)",
            line=line,
        )
    return CodeCitation(
        note=note_id,
        repo=repo,
        commit=commit.lower(),
        path=path,
        start_line=start,
        end_line=end,
        cited=cited,
        title=title,
        index=index,
    )


def split_path(cited: str) -> tuple[str | None, int | None, int | None]:
    """`FILE:START-END` -> (FILE, START, END); (None, ...) when the line part is malformed."""
    file, sep, lines = cited.rpartition(":")
    if not sep:
        return (cited.strip() or None), None, None
    match = LINES.match(lines.strip())
    if not match:
        # A colon with no line numbers after it is a malformed citation, unless the
        # part after it has no digits at all and is plausibly part of a file name.
        if any(ch.isdigit() for ch in lines) or not lines.strip():
            return None, None, None
        return cited, None, None
    start = int(match.group(1))
    end = int(match.group(2) or start)
    if start < 1 or end < start or not file:
        return None, None, None
    return file, start, end


def _value(node: Any, key: str) -> Any:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if getattr(k, "value", None) == key:
                return v
    return None


def _key_line(node: Any, key: str, offset: int) -> int | None:
    value = _value(node, key)
    return offset + value.start_mark.line + 1 if value is not None else None


def _item_line(seq: Any, index: int, offset: int) -> int | None:
    if isinstance(seq, yaml.SequenceNode) and index < len(seq.value):
        return offset + int(seq.value[index].start_mark.line) + 1
    return None


def _id_line(file: Path) -> int | None:
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("id:"):
            return number
    return None
