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
        # openai-agents-js's `"zod": "3.25.40 - 3.25.67"` made `"zod": "^3.25.40"`: no
        # word of its value is left, and it is still the line of its key, edited
        (lambda t: t.replace('"1.2.3"', '">= 1.2.0 < 2"'), "changed", (3, 3)),
    ],
    ids=["edited", "shifted", "deleted", "neighbour deleted", "rewritten around it", "key kept"],
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
        assert '+  "version": "' in result["diff"]
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


GO_MOD = """\
module github.com/acme/agent

go 1.24

require (
\tgithub.com/google/uuid v1.6.0
\tgithub.com/mark3labs/mcp-go v0.37.0
\tgithub.com/muesli/termenv v0.16.0
)
"""


def test_a_dependency_replaced_on_its_line_by_another_is_missing(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """crush's `go.mod`: the cited `mcp-go` line bumped (changed: its module is still
    there), then replaced by another module on the same line, which git's diff pairs
    with it. None of its words is left: missing from the replacement, as code whose tokens
    are gone, not changed into the other module's line."""
    base = upstream.commit("deps", {"go.mod": GO_MOD})
    project.note("n", f"{base} go.mod:7")
    bumped = upstream.commit("bump mcp-go (#2)", {"go.mod": GO_MOD.replace("v0.37.0", "v0.41.1")})
    swapped = GO_MOD.replace("mark3labs/mcp-go v0.37.0", "modelcontextprotocol/go-sdk v1.0.0")
    replaced = upstream.commit("use the new mcp library (#3)", {"go.mod": swapped})
    upstream.commit("bump go-sdk (#4)", {"go.mod": swapped.replace("v1.0.0", "v1.1.0")})

    result = check_results(project, capsys)["n:go.mod:7"]

    assert result["verdict"] == "missing", result["message"]
    assert [h["commit"] for h in result["history"]] == [bumped, replaced]
    assert result["introduced_by"]["commit"] == replaced


GUIDE = """\
# Agent

## Tools

The agent lists its tools once.

## MCPs

The agent supports MCP servers through three
transport types: `stdio`, `http` and `sse`. Environment
variables are expanded with `$(echo $VAR)`.

```json
{"mcp": {}}
```
"""
REFLOWED = GUIDE.replace(
    "The agent supports MCP servers through three\ntransport types: `stdio`, `http` and `sse`. "
    "Environment\nvariables are expanded with `$(echo $VAR)`.",
    "The agent supports MCP servers through three transport types:\n`stdio`, `http` and `sse`.\n"
    "\nShell-style expansion (`$VAR`, `${VAR:-default}`) works in every field, and\n"
    "unset variables are an error.",
)


def test_a_paragraph_moved_by_a_rewrite_of_the_file_is_found_where_it_went(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """crush's README: its MCP paragraph reflowed and its last sentence rewritten into a
    paragraph of its own below; later the file is rewritten around it and the paragraph
    moves down, unchanged. The reflow is its one change, at its new lines, as `git log
    -L` lists; no word that strayed into the paragraph below takes that paragraph in."""
    base = upstream.commit("guide", {"README.md": GUIDE})
    project.note("n", f"{base} README.md:9-11")
    reflowed = upstream.commit("shell expansion (#2)", {"README.md": REFLOWED})
    upstream.commit("expansion round two (#3)", {"README.md": REFLOWED.replace("every", "any")})
    intro = "".join(f"Setting {n} is read from `crush.json` at start.\n\n" for n in range(12))
    rewritten = REFLOWED.replace("every", "any").replace(
        "## Tools\n\nThe agent lists its tools once.\n", intro
    )
    upstream.commit("crushrc (#4)", {"README.md": rewritten})

    result = check_results(project, capsys)["n:README.md:9-11"]

    assert result["verdict"] == "changed", result["message"]
    at = (
        rewritten.splitlines().index(
            "The agent supports MCP servers through three transport types:"
        )
        + 1
    )
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (at, at + 1)
    assert [h["commit"] for h in result["history"]] == [reflowed]
