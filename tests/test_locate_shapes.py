"""Citations of what is not a function (`bench.differential --shapes`): an import line,
a module's constant. Built here in the shape of the real code where each wrong answer
was seen."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.support import check_results as _results
from watcher.gitbuild import Upstream

PY = "src/mcp/shared/errors.py"
ERRORS = """\
from __future__ import annotations

from mcp.types import URL_REQUIRED, ElicitParams, ErrorData


class McpError(Exception):
    \"\"\"An error a peer sent back.\"\"\"

    error: ErrorData

    def __init__(self, error: ErrorData):
        super().__init__(error.message)
        self.error = error


class ToolError(McpError):
    \"\"\"A tool failed.\"\"\"


class UrlRequiredError(McpError):
    \"\"\"The server wants the user to open a URL.\"\"\"

    def __init__(self, params: ElicitParams):
        super().__init__(ErrorData(code=URL_REQUIRED, message="open it"))
        self.params = params
"""


def test_an_import_above_a_renamed_class_is_carried_past_the_class(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """python-sdk's `from mcp.types import ...` at the top of `exceptions.py`: the
    definitions its scope is bounded by below were `McpError` and two of its own members,
    all gone when a commit renamed the class `MCPError`; with no neighbour left, the
    import was looked for only by likeness, and was `missing` when a later commit made
    the module `mcp_types`. The neighbours now lie apart (the classes after it), and the
    import is `changed` by both commits."""
    base = upstream.commit("errors", {PY: ERRORS})
    project.note("n", f"{base} {PY}:3-3")
    renamed = upstream.commit(
        "rename McpError to MCPError (#1956)", {PY: ERRORS.replace("McpError", "MCPError")}
    )
    split = upstream.commit(
        "split types into mcp_types (#2973)",
        {PY: upstream.read(PY).replace("from mcp.types import", "from mcp_types import")},
    )

    result = _results(project, capsys)[f"n:{PY}:3-3"]

    assert result["verdict"] == "changed", result["message"]
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (3, 3)
    assert [h["commit"] for h in result["history"]] == [split]
    assert renamed not in [h["commit"] for h in result["history"]]
    assert result["introduced_by"]["commit"] == split


def test_names_added_at_the_end_of_a_cited_import_change_it(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """python-sdk's `from mcp.types import A, B, C` became `... C, JSONRPCError`: the
    new tokens come after the last cited one, and a Python statement has no closing
    token for them to come before, so the alignment left them outside and the import
    stayed `fresh` through that commit. What follows the last cited token inside the
    statement it closed, on its line, is the item's: `changed`. A constant's value
    extended (`X = 1` to `X = 1 + 2`) is the same."""
    constants = "TIMEOUT = 30\nRETRIES = 3\n"
    base = upstream.commit(
        "errors", {PY: ERRORS.replace("\n\nclass Mcp", f"\n{constants}\n\nclass Mcp", 1)}
    )
    project.note("n", f"{base} {PY}:3-3", f"{base} {PY}:5-5")
    grew = upstream.commit(
        "flatten parameters (#1956)",
        {
            PY: upstream.read(PY)
            .replace("ErrorData\n", "ErrorData, JSONRPCError\n", 1)
            .replace("TIMEOUT = 30\n", "TIMEOUT = 30 * SECONDS\n")
        },
    )

    results = _results(project, capsys)
    for item in (f"n:{PY}:3-3", f"n:{PY}:5-5"):
        result = results[item]
        assert result["verdict"] == "changed", (item, result["message"])
        line = int(item.rsplit(":", 1)[1].split("-")[0])
        assert (result["current"]["start_line"], result["current"]["end_line"]) == (line, line)
        assert [h["commit"] for h in result["history"]] == [grew]
        assert result["introduced_by"]["commit"] == grew
