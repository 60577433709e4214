"""Read notes (SPEC 3.1): YAML front matter and the citations in its `sources`."""

from __future__ import annotations

import fnmatch
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watcher.config import Limits, display_path
from watcher.errors import NoteError
from watcher.inputs import frontmatter, inside, quotes, walk
from watcher.models import CodeCitation, IssueCitation, Note

log = logging.getLogger("watcher.notes")  # the name users see in log lines

REPO_URL = re.compile(r"^https?://github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?$")
# A file on GitHub: /blob/REF/PATH, an optional query (`?plain=1`), an optional
# fragment (`#L9`, `#L9-L11`, and the column forms `#L9C1-L11C2`).
PERMALINK = re.compile(
    r"^https?://github\.com/([\w.-]+)/([\w.-]+)/blob/([^/?#]+)/([^#?]+)(?:\?[^#]*)?(?:#(.*))?$"
)
FRAGMENT = re.compile(r"^L(\d+)(?:C\d+)?(?:-L(\d+)(?:C\d+)?)?$")
# An issue or pull request, also as linked from one of its comments or tabs
# (`#issuecomment-N`, `/files`): the citation is of the thread.
ISSUE_URL = re.compile(
    r"^https?://github\.com/([\w.-]+)/([\w.-]+)/(issues|pull)/(\d+)"
    r"(?:/(?:files|commits|checks))?/?(?:[?#]\S*)?$"
)
COMMIT = re.compile(r"^[0-9a-fA-F]{4,40}$")
LINES = re.compile(r"^(\d+)(?:-(\d+))?$")
ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# One note's bytes, as shown, its YAML node limit and extra keys -> the note and its errors.
Parse = Callable[[bytes, str, int, tuple[str, ...]], tuple[Note, list[NoteError]]]


@dataclass(frozen=True)
class Notes:
    """The notes that loaded, and one error per note or source that did not."""

    notes: dict[str, Note]
    errors: list[NoteError]
    skipped: list[str] = field(default_factory=list)  # Markdown files without front matter
    duplicates: dict[str, list[str]] = field(default_factory=dict)  # id -> its files: unchecked


def load_notes(
    folder: Path,
    *,
    display_root: Path,
    limits: Limits | None = None,
    ignore: Iterable[str] = (),
    extra_keys: Iterable[str] = (),
    parse: Parse | None = None,
) -> Notes:
    """Read every `*.md` below `folder`; a bad note is an error, the others still load.

    Files matching an `ignore` glob (relative to `folder`) are not read; a file with no
    front matter at all (a README, say) is skipped with one notice for all of them.
    `parse` reads one note (`parse_note` by default; `notememo` remembers its notes)."""
    limits = limits or Limits()
    notes: dict[str, Note] = {}
    duplicated: dict[str, Note] = {}  # ids in two files or more: the first of them
    duplicates: dict[str, list[str]] = {}
    paths: dict[str, Path] = {}
    errors: list[NoteError] = []
    skipped: list[str] = []
    patterns, extra = tuple(ignore), tuple(extra_keys)
    for found in walk.files(folder, ".md"):  # any name, no loop, files only
        file, relative = Path(found.path), found.name
        if any(fnmatch.fnmatch(relative, p) for p in patterns):
            continue
        shown = display_path(file, display_root)
        try:
            raw = _read(file, shown, limits.note_bytes)
            if not _has_front_matter(raw):
                skipped.append(shown)
                continue
            note, source_errors = (parse or _parse)(raw, shown, limits.yaml_nodes, extra)
        except NoteError as exc:
            errors.append(exc)
            continue
        errors.extend(source_errors)
        first = notes.get(note.id) or duplicated.get(note.id)
        if first is not None:  # neither is checked: which one the rules mean is unknown
            errors.append(_duplicate(note.id, shown, file, first.file))
            if note.id in notes:
                errors.append(_duplicate(note.id, first.file, paths[note.id], shown))
                duplicated[note.id] = notes.pop(note.id)
            duplicates.setdefault(note.id, [first.file]).append(shown)
            continue
        notes[note.id] = note
        paths[note.id] = file
    if skipped:
        log.warning(
            "skipped %d Markdown file%s without front matter (not notes): %s; "
            "list them in notes_ignore to silence this",
            len(skipped),
            "" if len(skipped) == 1 else "s",
            ", ".join(skipped),
        )
    return Notes(notes, errors, skipped, duplicates)


def _duplicate(note_id: str, shown: str, file: Path, other: str) -> NoteError:
    return NoteError(
        shown,
        f"duplicate note id {note_id!r}, also in {other}; neither note is checked until "
        "each has its own id (rename one, and its rules' `note`)",
        line=_id_line(file),
    )


def _parse(
    raw: bytes, shown: str, max_nodes: int, extra: tuple[str, ...]
) -> tuple[Note, list[NoteError]]:
    return parse_note(raw, shown, max_nodes=max_nodes, extra_keys=extra)


def _read(file: Path, shown: str, max_bytes: int) -> bytes:
    try:
        size = file.stat().st_size
        if size > max_bytes:
            raise NoteError(
                shown,
                f"{size:,} bytes, above [limits] note_bytes ({max_bytes:,}); "
                "split the note, or raise the limit in config.toml",
            )
        return file.read_bytes()
    except OSError as exc:
        raise NoteError(shown, f"cannot read it ({exc.strerror}); check its permissions") from None


def _has_front_matter(raw: bytes) -> bool:
    """Whether the file starts with a `---` line (after an optional BOM and blank space)."""
    head = raw.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t")
    return head.startswith(b"---")


def parse_note(
    raw: bytes, file: str, *, max_nodes: int = 10_000, extra_keys: Iterable[str] = ()
) -> tuple[Note, list[NoteError]]:
    """Parse one note. Raises for a note that cannot be read at all; returns source errors."""
    from watcher.inputs import yamlfront  # YAML only when a note is parsed: see yamlfront

    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")  # editors may save a BOM
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise NoteError(
            file,
            f"not UTF-8: byte 0x{raw[exc.start]:02x} at column {column} cannot be read; "
            "save the file as UTF-8",
            line=line,
        ) from None
    front, offset = _front_matter(text, file)
    node, data = yamlfront.load_yaml(front, file, offset, max_nodes)
    if not isinstance(data, dict):
        raise NoteError(file, "front matter must be a YAML mapping of fields", line=offset + 1)
    note_id = data.get("id")
    if not isinstance(note_id, str) or not ID.match(note_id):
        raise NoteError(
            file,
            "missing or malformed `id`: add `id: some-kebab-case-id` to the front matter",
            line=yamlfront.key_line(node, "id", offset) or offset,
        )
    note, errors = _build(note_id, data, node, file, offset)
    key_errors = _key_errors(data, node, file, offset, extra_keys)
    # A misspelt key explains its source's own error ("needs `commit` as well"): one each.
    told = {f"sources[{m.group(1)}]" for e in key_errors if (m := _SOURCE_KEY.search(e.detail))}
    body, first_line = _body(text)
    note = note.model_copy(update={"quotes": quotes.extract(note_id, body, first_line)})
    return note, key_errors + [e for e in errors if e.detail.split(":")[0] not in told]


_SOURCE_KEY = re.compile(r"`sources\.(\d+)\.")


def _body(text: str) -> tuple[str, int]:
    """The Markdown after the front matter, and the file line it starts at."""
    lines = text.splitlines()
    end = next(n for n, line in enumerate(lines[1:], start=1) if line.strip() in ("---", "..."))
    return "\n".join(lines[end + 1 :]), end + 2


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
    from watcher.inputs import yamlfront

    sources = data.get("sources") or []
    errors: list[NoteError] = []
    if not isinstance(sources, list):
        errors.append(
            NoteError(
                file, "`sources` must be a list", line=yamlfront.key_line(node, "sources", offset)
            )
        )
        sources = []
    code: list[CodeCitation] = []
    issues: list[IssueCitation] = []
    untracked: list[str] = []
    # Looked up by place and id, not compared pairwise: 900 sources took a second.
    placed: dict[tuple[str, str, int | None, int | None], list[CodeCitation]] = {}
    ids: set[str] = set()
    source_nodes = yamlfront.value(node, "sources")
    for index, source in enumerate(sources):
        line = yamlfront.item_line(source_nodes, index, offset)
        item = yamlfront.item(source_nodes, index)

        def at(key: str, item: Any = item, line: int | None = line) -> int | None:
            return yamlfront.name_line(item, key, offset) or line  # the key's own line

        try:
            kind = _source(note_id, index, source, file, at)
        except NoteError as exc:
            errors.append(exc)
            continue
        if isinstance(kind, CodeCitation):
            where = (kind.repo.lower(), kind.path, kind.start_line, kind.end_line)
            if any(_same(c.commit, kind.commit) for c in placed.get(where, [])):
                continue  # the same lines at the same commit, cited again: one item
            if kind.id in ids:  # same lines cited at another commit
                kind = kind.model_copy(update={"suffix": f"@{kind.commit[:8]}"})
            code.append(kind)
            placed.setdefault(where, []).append(kind)
            ids.add(kind.id)
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
        snooze_until=str(data.get("snooze_until") or ""),
        citations=tuple(code),
        issue_citations=tuple(issues),
        untracked=tuple(untracked),
    )
    return note, errors


def _same(a: str, b: str) -> bool:
    """The same commit, written in full or abbreviated."""
    short = min(len(a), len(b))
    return a[:short] == b[:short]


def _source(
    note_id: str, index: int, source: Any, file: str, at: Callable[[str], int | None]
) -> CodeCitation | IssueCitation | str:
    """One source entry; `at(key)` is the line of its key (of the entry when absent)."""
    where = f"sources[{index}]"
    line = at("")
    if not isinstance(source, dict):
        raise NoteError(file, f"{where} must be a mapping with url, commit, path", line=line)
    url = str(source.get("url") or "")
    title = str(source.get("title") or "")
    if match := ISSUE_URL.match(url):
        owner, name, kind, number = match.groups()
        if problem := inside.repo_problem(f"{owner}/{name}"):
            raise NoteError(file, f"{where}: url: {problem}", line=at("url"))
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
        owner, name, commit, path, fragment = match.groups()
        lines = _fragment_lines(fragment, where, file, at("url"))
        if not COMMIT.match(commit):
            raise NoteError(
                file,
                f"{where}: the link names {commit!r}, not a commit; cite a commit "
                "(on GitHub, press `y` on the file for a permalink)",
                line=at("url"),
            )
        return _citation(
            note_id, index, f"{owner}/{name}", commit, f"{path}{lines}", title, file,
            lambda _key: at("url"),
        )  # fmt: skip
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
            at,
        )
    if match and (source.get("commit") or source.get("path")):
        missing = "path" if source.get("commit") else "commit"
        raise NoteError(file, f"{where}: a code citation needs `{missing}` as well", line=line)
    return url or title or where


def _fragment_lines(fragment: str | None, where: str, file: str, line: int | None) -> str:
    """`#L9C1-L11C2` -> `:9-11`; no fragment (or an empty one) -> the whole file."""
    if not fragment:
        return ""
    match = FRAGMENT.match(fragment)
    if match is None:
        raise NoteError(
            file,
            f"{where}: link fragment #{fragment} is not #L10 or #L10-L20; fix the link",
            line=line,
        )
    start, end = match.groups()
    return f":{start}-{end or start}"


def _citation(
    note_id: str,
    index: int,
    repo: str,
    commit: str,
    cited: str,
    title: str,
    file: str,
    at: Callable[[str], int | None],
) -> CodeCitation:
    where = f"sources[{index}]"
    if not COMMIT.match(commit):
        raise NoteError(
            file, f"{where}: commit {commit!r} is not a hex commit id", line=at("commit")
        )
    path, start, end = split_path(cited)
    if path is None:
        raise NoteError(
            file,
            f"{where}: path {cited!r} is not FILE, FILE:LINE or FILE:START-END "
            "(lines are 1-based and START <= END)",
            line=at("path"),
        )
    if problem := inside.repo_problem(repo):
        raise NoteError(file, f"{where}: url: {problem}", line=at("url"))
    if problem := inside.path_problem(path):
        # This citation's error alone: the note's other citations are still checked.
        mine = {"item": f"{note_id}:{cited}", "note": note_id, "repo": repo}
        raise NoteError(file, f"{where}: path {path!r} {problem}", line=at("path"), **mine)
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
        line=at("path"),
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


def _key_errors(
    data: dict[str, Any], node: Any, file: str, offset: int, extra_keys: Iterable[str]
) -> list[NoteError]:
    """Unknown keys (with a suggestion) and values of the wrong type, one error each."""
    from watcher.inputs import yamlfront

    errors: list[NoteError] = []
    seen: set[tuple[str | int, ...]] = set()
    for loc, message in frontmatter.problems(data, extra_keys):
        if loc in seen or (loc[:1] == ("sources",) and len(loc) <= 2):
            continue  # a duplicate, or a bad `sources` shape, which _build reports
        seen.add(loc)
        line = yamlfront.name_line(node, str(loc[0]), offset) if loc else None
        if len(loc) > 1 and loc[0] == "sources" and isinstance(loc[1], int):
            sources = yamlfront.value(node, "sources")
            line = yamlfront.item_line(sources, loc[1], offset) or line
            if len(loc) > 2:  # the key's own line
                item = yamlfront.item(sources, loc[1])
                line = yamlfront.name_line(item, str(loc[2]), offset) or line
        errors.append(NoteError(file, message, line=line))
    return errors


def _id_line(file: Path) -> int | None:
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("id:"):
            return number
    return None
