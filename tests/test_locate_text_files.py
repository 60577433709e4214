"""Files no grammar reads (JSON, TOML, ...) are compared line by line by `locate`."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Project
from tests.support import check_results
from watcher.gitbuild import Upstream

PACKAGE = """\
{
  "name": "@acme/client",
  "version": "1.2.3",
  "type": "module",
  "main": "dist/index.js"
}
"""


@pytest.mark.parametrize(
    ("edit", "verdict", "lines"),
    [
        (lambda t: t.replace("1.2.3", "1.3.0"), "changed", (3, 3)),
        (lambda t: t.replace('  "name"', '  "private": true,\n  "name"'), "moved", (4, 4)),
        (lambda t: t.replace('  "version": "1.2.3",\n', ""), "missing", None),
        (lambda t: t.replace('  "type": "module",\n', ""), "fresh", (3, 3)),
        # inspector's package.json: the lines around the version rewritten with it, and
        # more of them; the version line is still its own line
        (
            lambda t: t.replace(
                '"1.2.3",\n  "type": "module",',
                '"1.3.0",\n  "keywords": [\n    "mcp",\n    "client"\n  ],\n  "type": "commonjs",',
            ),
            "changed",
            (3, 3),
        ),
    ],
    ids=["edited", "shifted", "deleted", "neighbour deleted", "rewritten around it"],
)
def test_a_json_line(
    edit: Any, verdict: str, lines: tuple[int, int] | None,
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    base = upstream.commit("package", {"package.json": PACKAGE})
    project.note("n", f"{base} package.json:3")
    change = upstream.commit("bump (#4)", {"package.json": edit(PACKAGE)})

    result = check_results(project, capsys)["n:package.json:3"]

    assert result["verdict"] == verdict, result["message"]
    where = result["current"]
    assert ((where["start_line"], where["end_line"]) if where else None) == lines
    if verdict == "changed":
        assert '-  "version": "1.2.3",' in result["diff"]
        assert '+  "version": "1.3.0",' in result["diff"]
    if verdict in ("changed", "missing"):
        assert result["introduced_by"]["commit"] == change


README = "# Client\n\nIntro.\n\n## Paging\n\nThe client sends `cursor` back.\nIt stops at the end.\n\nMore.\n"


def test_two_markdown_lines_replaced_by_two_map_line_for_line(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 35, class 4: a two-line Markdown block replaced by two lines mapped its line
    8 to 7-8; an edited line is changed at its own line."""
    base = upstream.commit("readme", {"README.md": README})
    project.note("n", f"{base} README.md:8")
    edited = README.replace("The client sends `cursor` back.\nIt stops at the end.",
                            "The client drops `cursor`.\nIt reads one page only.")  # fmt: skip
    upstream.commit("one page (#5)", {"README.md": edited})

    result = check_results(project, capsys)["n:README.md:8"]

    assert result["verdict"] == "changed", result["message"]
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (8, 8)
