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
    ],
    ids=["edited", "shifted", "deleted", "neighbour deleted"],
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
