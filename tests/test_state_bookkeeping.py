"""Which shard owns a note: one rule for the run's bookkeeping and for the ticks a matrix
job carries out, so two jobs never act on the same note and none forgets it."""

from __future__ import annotations

from pathlib import Path

from watcher.config import load
from watcher.inputs.notes import parse_note
from watcher.models import Note
from watcher.state.bookkeeping import note_shard, run_scope


def _config(tmp_path: Path) -> Path:
    file = tmp_path / "config.toml"
    (tmp_path / "notes").mkdir()
    (tmp_path / "rules").mkdir()
    file.write_text(
        '[[upstream]]\nrepo = "acme/server"\nurl = "file:///nowhere/server"\n\n'
        '[[upstream]]\nrepo = "acme/client"\nurl = "file:///nowhere/client"\n'
    )
    return file


def _note(note_id: str, *repos: str) -> Note:
    sources = "".join(
        f"  - url: https://github.com/{repo}\n    commit: abc1234\n    path: src/lib.rs:1\n"
        for repo in repos
    )
    note, errors = parse_note(f"---\nid: {note_id}\nsources:\n{sources}---\n".encode(), "n.md")
    assert errors == []
    return note


def test_a_note_is_owned_by_its_first_upstream_in_config_order(tmp_path: Path) -> None:
    config = load(_config(tmp_path))
    notes = {
        n.id: n
        for n in (
            _note("both", "Acme/Client", "acme/server"),  # the note lists the client first
            _note("client", "acme/client"),
            _note("other", "someone/else"),
            _note("none"),
        )
    }

    owners = {i: note_shard(config, n) for i, n in notes.items()}

    assert owners == {
        "both": "acme__server",
        "client": "acme__client",
        "other": "someone__else",
        "none": "acme__server",
    }
    scope = run_scope(config, notes, [], upstream=None, partial=False, filtered=False)
    assert dict(scope.owners) == owners
