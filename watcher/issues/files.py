"""The `files` sink: each issue is a Markdown document under `state/issues/`.

A document is a small YAML header (title, state, labels, the key of the last comment,
the body's length), the issue body, then the comments in order. Every write replaces
the whole file atomically, so a crash leaves the previous or the next version.

The dashboard is one document per upstream, `_dashboard/OWNER__NAME.md` (the shard that
upstream's notes are kept in, `watcher.state.bookkeeping`): the jobs of a matrix, one per
upstream, commit `state/` back in parallel and must never write the same file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from watcher.errors import WatchError
from watcher.issues import markers
from watcher.issues.sink import IssueDoc, SinkError, State
from watcher.redact import redact
from watcher.state.store import set_aside, write_text

_SEPARATOR = "---\n"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: read on every run
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # a cold run writes hundreds
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
DASHBOARDS = "_dashboard"  # the folder of the per-upstream dashboards


@dataclass
class FilesSink:
    """Issues as files: `state/issues/NOTE_ID.md`, and `_dashboard/SHARD.md` for the
    dashboard of each upstream."""

    folder: Path
    display: Callable[[Path], str] = str
    name: str = "files"
    dashboard_per_upstream: bool = True

    def check(self) -> None:
        if self.folder.exists() and not self.folder.is_dir():
            raise WatchError(
                f"{self.display(self.folder)}: expected a folder for issue files; "
                "move the file away"
            )

    def path(self, note_id: str) -> Path:
        folder, _, name = note_id.rpartition("/")
        if folder not in ("", DASHBOARDS) or not _SAFE_NAME.match(name):
            raise SinkError(f"note id {note_id!r} cannot name an issue file")  # stay inside
        return self.folder / f"{note_id}.md"

    def dashboard(self, handle: str, recorded: Mapping[str, Any] | None) -> IssueDoc | None:
        found = self.find(handle, markers.DASHBOARD, None)
        return found[0] if found else None

    def untrusted(self, doc: IssueDoc) -> str | None:
        return None  # whoever can change a file in state/ can write to the repository

    def retire_dashboards(self, keep: Collection[str]) -> None:
        """Remove the dashboards of upstreams no longer checked (`keep`: the shards that
        remain), and the one-file dashboard of earlier versions."""
        legacy = [self.folder / f"{DASHBOARDS}.md"]
        shards = sorted((self.folder / DASHBOARDS).glob("*.md"))
        for path in [*legacy, *(p for p in shards if p.stem not in keep)]:
            if path.is_file() and not path.is_symlink():
                path.unlink()

    def find(
        self, note_id: str, marker: str, hint: str | None, *, thorough: bool = True
    ) -> list[IssueDoc]:
        loaded = self._load(note_id)
        if loaded is None or not markers.has_marker(loaded[0].body, marker):
            return []  # a hand-written or foreign file is not ours to reuse
        return [loaded[0]]

    def ensure_labels(self, names: Sequence[str]) -> None:
        return None  # files carry their labels in the header; nothing to create

    def create(self, note_id: str, title: str, body: str, labels: Sequence[str]) -> IssueDoc:
        doc = IssueDoc(
            note_id, title, body, "open", tuple(labels), self.display(self.path(note_id))
        )
        self._save(doc, {"last_comment": None}, [])
        return doc

    def comment(self, doc: IssueDoc, key: str, text: str) -> bool:
        loaded = self._load(doc.handle)
        if loaded is None:
            raise SinkError(
                f"{self.path(doc.handle)}: issue file vanished; the next run reopens it"
            )
        current, meta, comments = loaded
        if meta.get("last_comment") == key:
            return False
        self._save(current, {**meta, "last_comment": key}, [*comments, text])
        return True

    def update(
        self, doc: IssueDoc, *, title: str, body: str, labels: Sequence[str], state: State
    ) -> IssueDoc:
        loaded = self._load(doc.handle)
        meta, comments = (loaded[1], loaded[2]) if loaded else ({"last_comment": None}, [])
        new = replace(doc, title=title, body=body, labels=tuple(labels), state=state)
        self._save(new, meta, comments)
        return new

    def _save(self, doc: IssueDoc, meta: dict[str, Any], comments: list[str]) -> None:
        # Redacted last, as rendered (escaped, cut), and piece by piece: the header
        # counts the body's characters as written.
        body = redact(doc.body)
        header = {
            "title": redact(doc.title),
            "state": doc.state,
            "labels": [redact(label) for label in doc.labels],
            "body_chars": len(body),
            "last_comment": meta.get("last_comment"),
        }
        text = _SEPARATOR + yaml.dump(header, Dumper=_DUMPER, sort_keys=True, allow_unicode=True)
        text += _SEPARATOR + body
        for n, comment in enumerate(map(redact, comments), 1):
            text += f"\n\n---\n\n**Comment {n}** by watch:\n\n{comment}"
        path = self.path(doc.handle)
        try:
            write_text(path, text + "\n")
        except WatchError:  # a folder where the file goes, a file where its folder goes
            raise SinkError(
                f"{self.display(path)}: cannot be written; move away what is in its place"
            ) from None

    def _load(self, handle: str) -> tuple[IssueDoc, dict[str, Any], list[str]] | None:
        try:
            text = self.path(handle).read_text(encoding="utf-8")
            _, head, rest = text.split(_SEPARATOR, 2)
            meta = yaml.load(head, Loader=_LOADER)
            body = rest[: int(meta["body_chars"])]
            doc = IssueDoc(
                handle,
                str(meta["title"]),
                body,
                "closed" if meta["state"] == "closed" else "open",
                tuple(str(x) for x in meta.get("labels") or ()),
                self.display(self.path(handle)),
            )
        except OSError:  # absent, or a folder (or a file) where it would be: none of ours
            return None
        except IsADirectoryError:  # a folder named like the document: moved away, healed
            set_aside(self.path(handle), "a folder where an issue file belongs")
            return None
        except (ValueError, KeyError, TypeError, RecursionError, yaml.YAMLError):
            return None  # not a document we wrote: ignored, and overwritten by create
        comments = _split_comments(rest[len(body) :])
        return doc, dict(meta), comments


def _split_comments(tail: str) -> list[str]:
    """The comments after the body; each starts with the heading `_save` writes."""
    parts = tail.rstrip("\n").split("\n\n---\n\n**Comment ")
    return [p.split(" by watch:\n\n", 1)[-1] for p in parts[1:]]
