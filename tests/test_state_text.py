"""The text of a state document: the layout every state file is written in."""

from __future__ import annotations

import json

from watcher.state import dumps


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
