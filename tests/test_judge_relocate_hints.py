"""A missing citation says where to look (`hints.hints`): the definition that held it, by
kind and name, in the other files the commit that removed it changed. The verdict stays
`missing` (SPEC follows renames, not moves to unrelated files) and no candidate is chosen."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import Project
from watcher.gitbuild import Upstream

SESSION = """\
pub fn open(url: &str) -> Session {
    Session::new(url)
}

pub fn list_tools(session: &Session) -> Vec<Tool> {
    session.request("tools/list", None)
}
"""

TOOLS = """\
pub fn describe(tool: &Tool) -> String {
    tool.name.clone()
}
"""

TOOLS_WITH_LIST = (
    TOOLS
    + """
pub fn list_tools(session: &Session, cursor: Option<String>) -> Vec<Tool> {
    session.request("tools/list", cursor)
}
"""
)

UNRELATED = "pub fn list_tools() -> usize {\n    0\n}\n"


def _result(project: Project, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    _, out, _ = project.run("check", "--format", "json", capsys=capsys)
    (result,) = [r for r in json.loads(out)["results"] if r["id"] == "n:src/session.rs:5-7"]
    return result


def test_a_construct_moved_to_an_unrelated_file_is_missing_with_a_hint(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit(
        "client", {"src/session.rs": SESSION, "src/tools.rs": TOOLS, "src/count.rs": UNRELATED}
    )
    project.config(sink="files")
    project.note("n", f"{base} src/session.rs:5-7")
    moved = upstream.commit(
        "tools: list_tools takes a cursor (#7)",
        {"src/session.rs": SESSION.split("\n\n")[0] + "\n", "src/tools.rs": TOOLS_WITH_LIST},
    )

    result = _result(project, capsys)

    assert result["verdict"] == "missing", result["message"]
    assert result["introduced_by"]["commit"] == moved
    # The file the removing commit changed is named; src/count.rs, untouched by it, is not.
    assert [(c["path"], c["start_line"], c["chosen"]) for c in result["candidates"]] == [
        ("src/tools.rs", 5, False)
    ]
    assert result["candidates"][0]["found"] == f"changed by {moved[:12]}"
    issue = (project.root / "state" / "issues" / "n.md").read_text(encoding="utf-8")
    assert "src/tools.rs:5-7" in issue and "changed by" in issue


def test_a_construct_deleted_for_real_has_no_candidates(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client", {"src/session.rs": SESSION, "src/tools.rs": TOOLS})
    project.note("n", f"{base} src/session.rs:5-7")
    upstream.commit(
        "drop list_tools", {"src/session.rs": SESSION.split("\n\n")[0] + "\n",
                            "src/tools.rs": TOOLS + "\npub fn other() {}\n"}
    )  # fmt: skip

    result = _result(project, capsys)

    assert result["verdict"] == "missing"
    assert result["candidates"] == []


def test_a_construct_moved_by_a_merge_is_hinted_from_its_first_parent_diff(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client", {"src/session.rs": SESSION, "src/tools.rs": TOOLS})
    project.note("n", f"{base} src/session.rs:5-7")
    upstream.branch_off("cursor")
    upstream.commit(
        "tools: list_tools takes a cursor",
        {"src/session.rs": SESSION.split("\n\n")[0] + "\n", "src/tools.rs": TOOLS_WITH_LIST},
    )
    upstream.checkout("main")
    upstream.commit("docs", {"README.md": "client\n"})
    merge = upstream.merge("cursor", "Merge pull request #8 from cursor")

    result = _result(project, capsys)

    assert result["verdict"] == "missing"
    assert result["introduced_by"]["commit"] == merge
    assert [(c["path"], c["found"]) for c in result["candidates"]] == [
        ("src/tools.rs", f"changed by {merge[:12]}")
    ]


CLIENT_PY = '''\
class Client:
    def __init__(self, transport: Transport) -> None:
        self.transport = transport

    async def read_resource(self, uri: str) -> list[Content]:
        """Read a resource and return its contents."""
        result = await self.session.read_resource(uri)
        if result.isError:
            raise ResourceError(f"Failed to read {uri}: {result.error}")
        return result.contents
'''

MIXIN_PY = '''\
class ClientResourcesMixin:
    """Resource methods of the client."""

    async def read_resource(self: Client, uri: str) -> list[Content]:
        """Read a resource and return its contents."""
        result = await self.session.read_resource(uri, timeout=self.timeout)
        if result.isError:
            raise ResourceError(f"Failed to read {uri}: {result.error}")
        return result.contents
'''


def test_a_method_moved_to_a_mixin_in_another_file_is_hinted_where_it_is_now(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """fastmcp's `Client._read_resource_as_task` went to a `ClientResourcesMixin` in a new
    `client/resources.py`, which a later commit moved to `client/mixins/`. The hint looked
    for `Client._read_resource_as_task` by kind and whole name, and only in files still at
    HEAD where the removing commit left them: none. It looks for a method of that name in
    another class too (a mixin, a base class), and follows the files the commit made to
    where they are at HEAD."""
    base = upstream.commit("client", {"src/client/client.py": CLIENT_PY})
    project.note("n", f"{base} src/client/client.py:7-10")
    split = upstream.commit(
        "refactor Client into mixins (#2933)",
        {
            "src/client/client.py": CLIENT_PY[: CLIENT_PY.index("\n    async def")] + "\n",
            "src/client/resources.py": MIXIN_PY,
        },
    )
    upstream.commit(
        "move the mixins to a package (#2950)",
        {"src/client/resources.py": None, "src/client/mixins/resources.py": MIXIN_PY},
    )

    _, out, _ = project.run("check", "--format", "json", capsys=capsys)
    (result,) = [r for r in json.loads(out)["results"] if r["id"] == "n:src/client/client.py:7-10"]

    assert result["verdict"] == "missing", result["message"]
    assert result["introduced_by"]["commit"] == split
    assert [
        (c["path"], c["start_line"], c["end_line"], c["chosen"]) for c in result["candidates"]
    ] == [("src/client/mixins/resources.py", 6, 9, False)]


def test_a_go_function_moved_to_a_new_file_and_exported_later_is_hinted_there(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """crush's `runTool`: its file deleted by a commit that wrote it into a new one, where
    a later commit exported it as `RunTool` (Go exports a name by its first letter) and
    rewrote most of it. Missing from that commit; the hint names it under its new name."""
    run = "func runTool(ctx context.Context, name string) (Response, error) {\n"
    body = "\tc, ok := clients.Get(name)\n\tif !ok {\n\t\treturn Response{}, errUnknown\n\t}\n"
    tool = run + body + "\treturn c.CallTool(ctx, name)\n}\n"
    others = "".join(
        f"\nfunc state{n}(name string) State {{\n\treturn states.Get(name + {n!r})\n}}\n"
        for n in "abcdefgh"
    )
    base = upstream.commit("mcp", {"agent/mcp.go": f"package agent\n\n{tool}{others}"})
    project.note("n", f"{base} agent/mcp.go:3-9")
    prompts = "func listPrompts(ctx context.Context) []Prompt {\n\treturn nil\n}\n"
    upstream.commit(
        "mcp: a package of its own (#4)",
        {"agent/mcp.go": None, "agent/mcp/tools.go": f"package mcp\n\n{tool}\n{prompts}"},
    )
    exported = (
        "func RunTool(ctx context.Context, cfg *Config, name string) (Result, error) {\n"
        + body.replace("Response{}", "Result{}")
        + "\tif cfg.Disabled(name) {\n\t\treturn Result{}, errDisabled\n\t}\n"
        + "\tres, err := c.CallTool(ctx, name)\n\tif err != nil {\n\t\treturn Result{}, err\n\t}\n"
        + "\treturn Result{Text: res.Text(), Meta: res.Meta}, nil\n}\n"
        + f"\n{prompts}"
    )
    rewritten = upstream.commit(
        "mcp: RunTool (#5)", {"agent/mcp/tools.go": f"package mcp\n\n{exported}"}
    )

    _, out, _ = project.run("check", "--format", "json", capsys=capsys)
    (result,) = json.loads(out)["results"]

    assert (result["verdict"], result["introduced_by"]["commit"]) == ("missing", rewritten)
    hints = [(c["path"], c["start_line"], c["end_line"]) for c in result["candidates"]]
    assert hints == [("agent/mcp/tools.go", 3, 16)]
