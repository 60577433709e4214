"""Notes parsed before, remembered by their bytes: a run re-reads only edited notes.

Parsing a note (YAML, then validation) is most of loading a big site, and on a warm run
every note is as it was. The memo sits next to the mirrors (`cache/notes.json`, a fact
about this machine, not state/): each entry is keyed by the note's bytes, where it is,
the limits and extra keys it was read with, and the parsing code itself, so an edited
note, a changed limit or a new watch parses afresh. Only notes that parsed without an
error are remembered; an unreadable or damaged memo only costs parsing again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path

from watcher import fingerprint, models
from watcher.errors import WatchError
from watcher.inputs import frontmatter, notes, quotes
from watcher.parse import languages
from watcher.state import store as state

FILE = "notes.json"
SCHEMA = "watch.notes-memo/1"
# The parsing code's own source: a new watch never reads an older one's notes (None when
# it cannot be read: then nothing is remembered).
CODE = fingerprint.code(m.__file__ for m in (notes, frontmatter, quotes, languages, models))


def load(cache: Path) -> dict[str, str]:
    """The remembered notes: key -> the Note as JSON."""
    if CODE is None:
        return {}
    try:
        data = state.read_json(cache / FILE)
    except WatchError:
        return {}
    found = data.get("notes") if data.get("schema") == SCHEMA else None
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(v, str)}


def save(cache: Path, before: dict[str, str], used: dict[str, str]) -> None:
    """Keep the entries this run used; written only when they changed."""
    if used == before or CODE is None:
        return
    with contextlib.suppress(WatchError, OSError):  # a read-only cache costs parsing again
        state.update_json(cache / FILE, {"schema": SCHEMA, "notes": used})


def key(raw: bytes, shown: str, max_nodes: int, extra: Iterable[str]) -> str:
    """What a parse depends on: the bytes, the file as shown, the limits, the code."""
    told = "".join(f"{part}\0" for part in (shown, str(max_nodes), "\0".join(sorted(extra))))
    return fingerprint.short(f"{CODE}{told}".encode() + raw, 32)
