"""The text of the JSON report: one top-level key per line, one list element per line."""

from __future__ import annotations

import io
import json

from watcher.models import Report, UpstreamStatus
from watcher.report import render_json, to_json


def test_to_json_layout() -> None:
    upstreams = (
        UpstreamStatus(repo="acme/a", url="u", branch="main"),
        UpstreamStatus(repo="acme/b", url="u", branch="dev"),
    )
    report = Report(started_at="2026-12-03T00:00:00Z", upstreams=upstreams, errors=("x",))
    lines = to_json(report).split("\n")
    assert lines[:4] == [
        "{",
        '  "schema": "watch.check/1",',
        '  "started_at": "2026-12-03T00:00:00Z",',
        '  "upstreams": [',
    ]
    assert lines[4] == "    " + upstreams[0].model_dump_json(by_alias=True) + ","
    assert lines[5] == "    " + upstreams[1].model_dump_json(by_alias=True)
    assert lines[6:9] == ["  ],", '  "results": [],', '  "issues": [],']
    assert lines[9].startswith('  "summary": {') and lines[9].endswith("},")
    assert lines[10:] == ['  "errors": [', '    "x"', "  ]", "}", ""]
    assert json.loads(to_json(report))["upstreams"][1]["branch"] == "dev"


def test_render_json_prints_one_element_per_write() -> None:
    """A big report is printed element by element, never joined into one string first
    (at 5,000 citations that string was tens of MB at the run's peak of memory)."""
    upstreams = tuple(
        UpstreamStatus(repo=f"acme/r{n}", url="https://example.com/" + "x" * 50, branch="main")
        for n in range(200)
    )
    report = Report(started_at="2026-12-03T00:00:00Z", upstreams=upstreams)

    class Writes(io.StringIO):
        def __init__(self) -> None:
            super().__init__()
            self.sizes: list[int] = []

        def write(self, text: str) -> int:
            self.sizes.append(len(text))
            return super().write(text)

    stream = Writes()
    render_json(report, stream)
    assert stream.getvalue() == to_json(report)
    element = len(upstreams[0].model_dump_json(by_alias=True))
    assert len(stream.sizes) > len(upstreams)
    assert max(stream.sizes) <= element + len(',\n    "upstreams": [')
