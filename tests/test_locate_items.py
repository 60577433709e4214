"""An item is what was cited (issue 35): each citation judged from its own tokens, on
histories built here in the shape of the real code where each wrong answer was seen."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import Project
from watcher.gitbuild import Upstream

PY = "src/agents/run.py"
ERRORS = """\
class RunError(Exception):
    def _error_name(self) -> str:
        return "run"


def fail(code: int) -> RunError:
    error = RunError(
        code,
        "the run failed",
    )
    return error
"""


def _results(project: Project, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    _, out, _ = project.run("check", "--format", "json", capsys=capsys)
    return {r["id"]: r for r in json.loads(out)["results"]}


def test_a_line_of_punctuation_alone_is_refused_not_matched_elsewhere(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 35, class 3: a citation of a line holding only `)` was `fresh` at
    `def _error_name(self) -> str:`. It cites no statement: `check` makes it an `error`
    item saying so, `validate` refuses it once the mirror holds the file, and the note's
    other citation is judged as usual."""
    base = upstream.commit("errors", {PY: ERRORS})
    project.note("n", f"{base} {PY}:10-10", f"{base} {PY}:7-10")
    upstream.commit("name the error", {PY: ERRORS.replace('"run"', '"run-error"')})

    results = _results(project, capsys)

    lone = results[f"n:{PY}:10-10"]
    assert lone["verdict"] == "error"
    assert lone["error"] == "lines-out-of-range"
    assert "lines 10-10 hold only `)`" in lone["message"]
    assert "cite the statement" in lone["message"]
    assert lone["current"] is None
    assert results[f"n:{PY}:7-10"]["verdict"] == "fresh"
    code, out, _ = project.run("validate", capsys=capsys)
    assert code == 2
    assert f"notes/n.md: n:{PY}:10-10: {PY}: lines 10-10 hold only `)`" in out
    assert f"{PY}:7-10" not in out
    assert str(project.root) not in out  # no local path in the message


def test_validate_accepts_a_site_whose_mirror_is_not_made_yet(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("errors", {PY: ERRORS})
    project.note("n", f"{base} {PY}:10-10")

    code, out, _ = project.run("validate", capsys=capsys)

    assert code == 0, out  # offline, and nothing to read the lines from: not known yet
