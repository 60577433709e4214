"""The text of a state document: the layout every state file is written in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from watcher.redact import redact
from watcher.state import store
from watcher.state.store import dumps


def test_dumps_layout_one_item_per_line_sorted() -> None:
    data = {
        "schema": 3,
        "items": {"b": {"key": "k2", "result": {"z": 1, "a": "é"}}, "a": {"key": "k1"}},
        "empty": {},
        "tags": "rust-v*",
    }
    text = dumps(data)
    assert text == (
        "{\n"
        '  "empty": {},\n'
        '  "items": {\n'
        '    "a": {"key": "k1"},\n'
        '    "b": {"key": "k2", "result": {"a": "é", "z": 1}}\n'
        "  },\n"
        '  "schema": 3,\n'
        '  "tags": "rust-v*"\n'
        "}\n"
    )
    assert json.loads(text) == data
    assert dumps({}) == "{}\n"
    assert dumps({"items": {"only": 1}}) == '{\n  "items": {\n    "only": 1\n  }\n}\n'


def test_update_json_writes_item_by_item(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A state document is compared, redacted and written one entry at a time: at 5,000
    items its text as one string (and its bytes) were tens of MB at the run's peak."""
    items = {
        f"note-{n:04d}:src/lib.rs:1-9": {"key": "k" * 40, "result": {"n": n}} for n in range(500)
    }
    data = {"schema": "watch.state/1", "items": items}
    redacted: list[int] = []

    def measured(text: str) -> str:
        redacted.append(len(text))
        return redact(text)

    monkeypatch.setattr(store, "redact", measured)
    file = tmp_path / "state.json"
    assert store.update_json(file, data)
    assert file.read_text(encoding="utf-8") == dumps(data)
    entry = max(len(json.dumps({k: v})) for k, v in items.items())
    assert len(redacted) > len(items) and max(redacted) <= entry + len(",\n    ")
    assert not store.update_json(file, data)  # the same bytes: compared, not written again
    changed = {**data, "items": {**items, "note-0499:src/lib.rs:1-9": {"key": "new"}}}
    assert store.update_json(file, changed)  # differs only in its last item
    assert json.loads(file.read_text(encoding="utf-8")) == changed
    file.write_text(dumps(changed) + " ", encoding="utf-8")  # the same, and then more
    assert store.update_json(file, changed)
    assert file.read_text(encoding="utf-8") == dumps(changed)
