"""Notes are parsed again only when their bytes change (a warm run on a big site).

Pinned by counting parses, not by timings: the second load of an unchanged site parses
nothing and gives the same notes; an edited note, and only it, is parsed again; a note
with an error is never remembered, so its error is reported on every run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Project
from watcher.config import load
from watcher.inputs import notememo, notes


class Parses:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.files: list[str] = []
        real = notes.parse_note

        def counted(raw: bytes, file: str, **kwargs: Any) -> Any:
            self.files.append(file)
            return real(raw, file, **kwargs)

        monkeypatch.setattr(notes, "parse_note", counted)


def test_unchanged_notes_are_not_parsed_again(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.note("one", "abc1234 src/a.rs:1-4", "abc1234 src/b.rs:2-9")
    project.note("two", "abc1234 src/c.rs:5-6")
    bad = "---\nid: bad\nsources:\n  - url: https://github.com/a/b\n    commit: abc1234\n"
    project.note("bad", raw=bad + "    path: src/x.rs:9-2\n---\n")
    config = load(project.config_file)
    parses = Parses(monkeypatch)
    first = notememo.site_notes(config)
    assert sorted(parses.files) == ["notes/bad.md", "notes/one.md", "notes/two.md"]

    parses.files.clear()
    second = notememo.site_notes(config)
    assert parses.files == ["notes/bad.md"]  # its error is reported again, never remembered
    assert second.notes == first.notes
    assert [str(e) for e in second.errors] == [str(e) for e in first.errors]

    project.note("two", "abc1234 src/c.rs:5-7")
    parses.files.clear()
    third = notememo.site_notes(config)
    assert sorted(parses.files) == ["notes/bad.md", "notes/two.md"]
    assert third.notes["two"].citations[0].end_line == 7
    assert third.notes["one"] == first.notes["one"]


def test_a_damaged_memo_costs_only_parsing(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    project.note("one", "abc1234 src/a.rs:1-4")
    config = load(project.config_file)
    first = notememo.site_notes(config)
    memo = config.cache / "notes.json"
    data = json.loads(memo.read_text(encoding="utf-8"))
    data["notes"] = {k: v.replace('"id"', '"ident"') for k, v in data["notes"].items()}
    memo.write_text(json.dumps(data), encoding="utf-8")  # valid JSON, not a note
    parses = Parses(monkeypatch)

    assert notememo.site_notes(config).notes == first.notes
    assert parses.files == ["notes/one.md"]
    Path(memo).write_text("not json", encoding="utf-8")
    assert notememo.site_notes(config).notes == first.notes
