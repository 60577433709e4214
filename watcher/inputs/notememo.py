"""A site's notes, as `notes` reads them, remembered by their bytes: a run re-reads only
edited notes.

Parsing a note (YAML, then validation) is most of loading a big site, and on a warm run
every note is as it was. The memo sits next to the mirrors (`cache/notes.json`, a fact
about this machine, not state/): each entry is keyed by the note's bytes, where it is,
the limits and extra keys it was read with, and the parsing code itself, so an edited
note, a changed limit or a new watch parses afresh. Only notes that parsed without an
error are remembered; an unreadable or damaged memo only costs parsing again.
"""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from watcher import fingerprint, models
from watcher.config import Config
from watcher.errors import NoteError, WatchError
from watcher.inputs import frontmatter, notes, quotes
from watcher.parse import languages
from watcher.state import store

FILE = "notes.json"
SCHEMA = "watch.notes-memo/1"
# The parsing code's own source: a new watch never reads an older one's notes (None when
# it cannot be read: then nothing is remembered). `yamlfront` is found, not imported: a run
# whose notes are all remembered imports no YAML.
CODE = fingerprint.code(
    [
        *(m.__file__ for m in (notes, frontmatter, quotes, languages, models)),
        getattr(importlib.util.find_spec("watcher.inputs.yamlfront"), "origin", None),
    ]
)


def site_notes(config: Config) -> notes.Notes:
    """The notes of a site, read as its config says (limits, ignored files, extra keys);
    notes whose bytes are as a run on this machine saw them are not parsed again."""
    memo = Memo.load(config.cache)
    found = notes.load_notes(
        config.notes,
        display_root=config.root,
        limits=config.limits,
        ignore=config.notes_ignore,
        extra_keys=config.notes_extra_keys,
        parse=memo.parse,
    )
    memo.save(config.cache)
    return found


@dataclass
class Memo:
    """The notes parsed before (`remembered`, by `key`) and those this load used."""

    remembered: dict[str, str]
    used: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, cache: Path) -> Memo:
        """The remembered notes: key -> the Note as JSON."""
        if CODE is None:
            return cls({})
        try:
            data = store.read_json(cache / FILE)
        except WatchError:
            return cls({})
        found = data.get("notes") if data.get("schema") == SCHEMA else None
        if not isinstance(found, dict):
            return cls({})
        return cls({k: v for k, v in found.items() if isinstance(v, str)})

    def save(self, cache: Path) -> None:
        """Keep the entries this load used; written only when they changed."""
        if self.used == self.remembered or CODE is None:
            return
        with contextlib.suppress(WatchError, OSError):  # a read-only cache costs parsing again
            store.update_json(cache / FILE, {"schema": SCHEMA, "notes": self.used})

    def parse(
        self, raw: bytes, shown: str, max_nodes: int, extra: tuple[str, ...]
    ) -> tuple[models.Note, list[NoteError]]:
        """`notes.parse_note`, or the note as remembered from the same bytes."""
        found = key(raw, shown, max_nodes, extra)
        if found in self.remembered:
            with contextlib.suppress(ValidationError):  # damaged: parsed again below
                note = models.Note.model_validate_json(self.remembered[found])
                self.used[found] = self.remembered[found]
                return note, []
        note, errors = notes.parse_note(raw, shown, max_nodes=max_nodes, extra_keys=extra)
        if not errors:
            self.used[found] = note.model_dump_json()
        return note, errors


def key(raw: bytes, shown: str, max_nodes: int, extra: Iterable[str]) -> str:
    """What a parse depends on: the bytes, the file as shown, the limits, the code."""
    told = "".join(f"{part}\0" for part in (shown, str(max_nodes), "\0".join(sorted(extra))))
    return fingerprint.short(f"{CODE}{told}".encode() + raw, 32)
