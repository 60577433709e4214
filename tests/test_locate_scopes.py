"""An item is what was cited (issue 35): cited statements that leave the definition that
held them for a new one, or that no one definition held, are carried through the stretch
of the file around them, the way git carries lines through a whole file's diff. Built
here in the shape of the real code where each wrong answer was seen."""

from __future__ import annotations

import hashlib
import textwrap

import pytest

from tests.conftest import Project
from tests.support import check_results as _results
from watcher.gitbuild import Upstream
from watcher.locate import anchors, matching
from watcher.parse import syntax

GO = "pkg/github/search_utils.go"
SEARCH = """\
package github

func hasFilter(query, filterType string) bool {
\treturn strings.Contains(query, filterType+":")
}

func hasRepoFilter(query string) bool {
\treturn hasFilter(query, "repo")
}

func searchHandler(
\tctx context.Context,
\targs map[string]any,
\tsearchType string,
) (*mcp.CallToolResult, error) {
\tquery, err := RequiredParam[string](args, "query")
\tif err != nil {
\t\treturn utils.NewToolResultError(err.Error()), nil
\t}
\tsort, err := OptionalParam[string](args, "sort")
\tif err != nil {
\t\treturn utils.NewToolResultError(err.Error()), nil
\t}
\torder, err := OptionalParam[string](args, "order")
\tif err != nil {
\t\treturn utils.NewToolResultError(err.Error()), nil
\t}
\topts := &github.SearchOptions{Sort: sort, Order: order}
\tresult, resp, err := client.Search.Issues(ctx, query, opts)
\tif err != nil {
\t\treturn ghErrors.NewGitHubAPIErrorResponse(ctx, "failed", resp, err), nil
\t}
\treturn MarshalledTextResult(result), nil
}
"""

SPLIT = """\
package github

func hasFilter(query, filterType string) bool {
\treturn strings.Contains(query, filterType+":")
}

func hasRepoFilter(query string) bool {
\treturn hasFilter(query, "repo")
}

func prepareSearchArgs(args map[string]any, searchType string) (string, *github.SearchOptions, error) {
\tquery, err := RequiredParam[string](args, "query")
\tif err != nil {
\t\treturn "", nil, err
\t}
\tsort, err := OptionalParam[string](args, "sort")
\tif err != nil {
\t\treturn "", nil, err
\t}
\torder, err := OptionalParam[string](args, "order")
\tif err != nil {
\t\treturn "", nil, err
\t}
\treturn query, &github.SearchOptions{Sort: sort, Order: order}, nil
}

func searchHandler(
\tctx context.Context,
\targs map[string]any,
\tsearchType string,
) (*mcp.CallToolResult, error) {
\tquery, opts, err := prepareSearchArgs(args, searchType)
\tif err != nil {
\t\treturn utils.NewToolResultError(fmt.Sprintf("invalid search: %v", err)), nil
\t}
\tresult, resp, err := client.Search.Issues(ctx, query, opts)
\tif err != nil {
\t\treturn ghErrors.NewGitHubAPIErrorResponse(ctx, "failed", resp, err), nil
\t}
\treturn MarshalledTextResult(result), nil
}
"""


def test_statements_moved_into_a_new_function_are_carried_there(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 35: github-mcp-server's `order, err := OptionalParam(...)` and its `if`,
    cited in `searchHandler`, stayed where they were when a commit made the function's
    header and first lines a new `prepareSearchArgs` (its returns now `return "", nil,
    err`), and `searchHandler`, rewritten, follows it. They were `missing`, as
    `searchHandler` no longer holds them: they are `changed` in `prepareSearchArgs`."""
    base = upstream.commit("search", {GO: SEARCH})
    project.note("n", f"{base} {GO}:24-27")
    split = upstream.commit("split search args (#1050)", {GO: SPLIT})
    upstream.commit(
        "match repos exactly (#1051)",
        {GO: SPLIT.replace('hasFilter(query, "repo")', 'hasFilter(query, "repo:")')},
    )

    result = _results(project, capsys)[f"n:{GO}:24-27"]

    assert result["verdict"] == "changed", result["message"]
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (20, 23)
    assert [h["commit"] for h in result["history"]] == [split]
    assert result["introduced_by"]["commit"] == split


def test_statements_deleted_from_a_function_that_stays_are_missing(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The opposite: the `order` statements deleted, the function staying as it was
    otherwise and a new function written next to it. Neither `searchHandler` nor the
    stretch around it carries them: `missing` since the deletion."""
    base = upstream.commit("search", {GO: SEARCH})
    project.note("n", f"{base} {GO}:24-27")
    order = '\torder, err := OptionalParam[string](args, "order")\n'
    order += "\tif err != nil {\n\t\treturn utils.NewToolResultError(err.Error()), nil\n\t}\n"
    edited = SEARCH.replace(order, "").replace("Order: order", 'Order: "desc"')
    edited = edited.replace(
        "func searchHandler(",
        'func searchOrder(args map[string]any) string {\n\treturn "desc"\n}\n\nfunc searchHandler(',
    )
    drop = upstream.commit("always sort descending (#7)", {GO: edited})

    result = _results(project, capsys)[f"n:{GO}:24-27"]

    assert result["verdict"] == "missing", result["message"]
    assert result["current"] is None
    assert result["introduced_by"]["commit"] == drop


PY = "src/agents/mcp/server.py"
APPROVAL = """\
from typing import TYPE_CHECKING, Literal, TypeVar, Union


class RequireApprovalToolList(TypedDict, total=False):
    tool_names: list[str]


class RequireApprovalObject(TypedDict, total=False):
    always: RequireApprovalToolList
    never: RequireApprovalToolList


RequireApprovalPolicy = Literal["always", "never"]
RequireApprovalMapping = dict[str, RequireApprovalPolicy]
if TYPE_CHECKING:
    RequireApprovalSetting = (
        RequireApprovalPolicy | RequireApprovalObject | RequireApprovalMapping | bool | None
    )
else:
    RequireApprovalSetting = Union[  # noqa: UP007
        RequireApprovalPolicy, RequireApprovalObject, RequireApprovalMapping, bool, None
    ]


T = TypeVar("T")


class MCPServer:
    def __init__(self, require_approval: RequireApprovalSetting = None) -> None:
        self.require_approval = require_approval
"""

CALLABLE = """\
if TYPE_CHECKING:
    LocalApprovalCallable = Callable[
        [RunContextWrapper[Any], "AgentBase", MCPTool],
        MaybeAwaitable[bool],
    ]
else:
    LocalApprovalCallable = Callable[..., Any]

if TYPE_CHECKING:
    RequireApprovalSetting = (
        RequireApprovalPolicy
        | RequireApprovalObject
        | RequireApprovalMapping
        | LocalApprovalCallable
        | bool
        | None
    )
else:
    RequireApprovalSetting = Union[  # noqa: UP007
        RequireApprovalPolicy,
        RequireApprovalObject,
        RequireApprovalMapping,
        LocalApprovalCallable,
        bool,
        None,
    ]
"""


def test_a_citation_no_one_definition_holds_is_carried_through_the_file(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 35: openai-agents-python's lines 54-70 of `mcp/server.py` hold a class, two
    aliases and an `if TYPE_CHECKING` union: no one definition. A commit inserted a
    `LocalMCPApprovalCallable` block among them and added it to the union, the class and
    aliases untouched: it was `missing` (only a region as long as it and 0.8 alike was
    looked for). It is `changed`, spanning the insertion, since that commit."""
    base = upstream.commit("approval", {PY: APPROVAL})
    project.note("n", f"{base} {PY}:8-22")
    old = APPROVAL[APPROVAL.index("if TYPE_CHECKING:") : APPROVAL.index("\n\nT = ")]
    change = upstream.commit(
        "callable approval policies (#2818)", {PY: APPROVAL.replace(old, CALLABLE.rstrip())}
    )
    upstream.commit(
        "document the server (#2819)",
        {
            PY: upstream.read(PY).replace(
                "class MCPServer:\n", 'class MCPServer:\n    """A server."""\n'
            )
        },
    )

    result = _results(project, capsys)[f"n:{PY}:8-22"]

    assert result["verdict"] == "changed", result["message"]
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (8, 40)
    assert [h["commit"] for h in result["history"]] == [change]
    assert result["introduced_by"]["commit"] == change


def function(name: str, value: int) -> str:
    return f"func {name}(input int) int {{\n\tscaled := input * {value}\n\treturn scaled + {value}\n}}\n"


def go_file(count: int, middle: str) -> str:
    """`count` small functions, `middle` halfway down them."""
    half = [function(f"helper{i}", i) for i in range(count // 2)]
    rest = [function(f"other{i}", i) for i in range(count // 2)]
    return "package github\n\n" + "\n".join([*half, middle, *rest])


def parsed(text: str) -> syntax.Parsed:
    raw = text.encode()
    return syntax.parse(hashlib.sha1(raw).hexdigest(), "go", lambda: raw)


def test_the_stretch_aligned_is_the_one_between_the_nearest_unchanged_neighbours() -> None:
    """What the scope costs is the stretch between the definitions nearest the citation
    that the version still has, not the file: the same tokens scanned in a file of 10
    functions and one of 2,000, at every version a walk judges."""
    costs = {}
    for count in (10, 2000):
        base = parsed(go_file(count, SEARCH.split("\n\n", 3)[3]))
        start = (
            base.text().splitlines().index('\torder, err := OptionalParam[string](args, "order")')
        )
        anchor = anchors.anchor(base, GO, start + 1, start + 4)
        head = parsed(go_file(count, SPLIT.split("\n\n", 3)[3]))
        head.stats.reset()
        state, path, first, last = matching.place(anchor, [(GO, head)])
        assert (state, path) == ("changed", GO)
        lines = head.text().splitlines()
        assert lines[first - 1] == '\torder, err := OptionalParam[string](args, "order")'
        assert lines[last - 1] == "\t}"
        assert "func prepareSearchArgs" in "\n".join(lines[first - 12 : first])
        costs[count] = head.stats.tokens_scanned
    assert costs[2000] == costs[10]


TOOL = "crates/rmcp/src/handler/server/tool.rs"
REPLIES = """\
impl<T: IntoContents> IntoReply for T {
    fn into_reply(self) -> Result<Reply, ErrorData> {
        Ok(Reply::success(self.into_contents()))
    }
}

impl<T: IntoContents, E: IntoContents> IntoReply for Result<T, E> {
    fn into_reply(self) -> Result<Reply, ErrorData> {
        match self {
            Ok(value) => Ok(Reply::success(value.into_contents())),
            Err(error) => Ok(Reply::error(error.into_contents())),
        }
    }
}

impl<T: IntoReply> IntoReply for Result<T, ErrorData> {
    fn into_reply(self) -> Result<Reply, ErrorData> {
        match self {
            Ok(value) => value.into_reply(),
            Err(error) => Err(error),
        }
    }
}
"""
# The two `Result` impls folded into one: the second's header on the third's body.
FOLDED = """\
impl<T: IntoContents> IntoReply for T {
    fn into_reply(self) -> Result<Reply, ErrorData> {
        Ok(Reply::success(self.into_contents()))
    }
}

impl IntoReply for ErrorData {
    fn into_reply(self) -> Result<Reply, ErrorData> {
        Err(self)
    }
}

impl<T: IntoReply, E: IntoReply> IntoReply for Result<T, E> {
    fn into_reply(self) -> Result<Reply, ErrorData> {
        match self {
            Ok(value) => value.into_reply(),
            Err(error) => match error.into_reply() {
                Ok(mut reply) => {
                    reply.is_error = true;
                    Ok(reply)
                }
                Err(e) => Err(e),
            },
        }
    }
}
"""


@pytest.mark.parametrize(("lines", "at"), [("17-22", (14, 25)), ("18-21", (15, 24))])
def test_a_method_whose_impl_took_a_namesake_impls_header_is_found_there(
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    lines: str,
    at: tuple[int, int],
) -> None:
    """rust-sdk's `into_call_tool_result` of the `Result<T, ErrorData>` impl: folded with
    the `Result<T, E>` impl, the method kept its body under that impl's name, which the
    baseline had for another body. The method of that name now more like the cited one
    than like its own old self is the citation, `changed`, not `missing`."""
    base = upstream.commit("replies", {TOOL: REPLIES})
    project.note("n", f"{base} {TOOL}:{lines}")
    folded = upstream.commit("unify the Result impls (#787)", {TOOL: FOLDED})

    result = _results(project, capsys)[f"n:{TOOL}:{lines}"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == at
    assert result["introduced_by"]["commit"] == folded


def test_a_namesake_that_stays_itself_does_not_take_a_deleted_method(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The `Result<T, ErrorData>` impl deleted, the `Result<T, E>` one left as it was:
    its method is its own, and the cited one is `missing`."""
    base = upstream.commit("replies", {TOOL: REPLIES})
    project.note("n", f"{base} {TOOL}:17-22")
    gone = upstream.commit(
        "drop the ErrorData impl (#9)",
        {TOOL: REPLIES[: REPLIES.index("impl<T: IntoReply>")].rstrip() + "\n"},
    )

    result = _results(project, capsys)[f"n:{TOOL}:17-22"]

    assert (result["verdict"], result["introduced_by"]["commit"]) == ("missing", gone)


OUTPUTS_PY = "python/framework/tools/tool.py"
OUTPUTS = """\
class StringToolOutput(ToolOutput):
    def __init__(self, result: str = "") -> None:
        super().__init__()
        self.result = result

    def get_text_content(self) -> str:
        return self.result


class Tool(ABC):
    def __init__(self, options: dict[str, Any] | None = None) -> None:
        self._options = options or {}


def tool(function: Callable[..., Any]) -> Tool:
    class FunctionTool(Tool):
        name = function.__name__

        def __init__(self, options: dict[str, Any] | None = None) -> None:
            super().__init__(options)
            self.emitter = Emitter.root().child(namespace=["tool", "custom", self.name])

    return FunctionTool()
"""


def test_a_namesake_only_made_shorter_does_not_take_a_constructor_gone_elsewhere(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """beeai-framework's `StringToolOutput.__init__` cited whole: one commit moved the
    class to another module and cut the nested `FunctionTool.__init__` down to
    `super().__init__(options)`, which left that one more like the cited constructor than
    like its own old self; a later commit lifted `FunctionTool` to the module. The cited
    constructor read `changed` in `FunctionTool`, first by the rule for a namesake the
    baseline had (it now holds no cited token it lacked: it only lost code), then by the
    rule for one in a new scope (`__init__` is a name the file gives several definitions:
    shared tokens tell little). `missing` from the move."""
    base = upstream.commit("tools", {OUTPUTS_PY: OUTPUTS})
    project.note("n", f"{base} {OUTPUTS_PY}:2-4")
    cls = OUTPUTS[: OUTPUTS.index("class Tool(ABC)")]
    emitter = (
        '            self.emitter = Emitter.root().child(namespace=["tool", "custom", self.name])\n'
    )
    moved = upstream.commit(
        "emitter event types (#550)",
        {
            OUTPUTS_PY: OUTPUTS.replace(cls, "").replace(emitter, ""),
            "python/framework/tools/types.py": cls,
        },
    )
    nested = upstream.read(OUTPUTS_PY)
    body = nested[
        nested.index("    class FunctionTool") : nested.index("    return FunctionTool()")
    ]
    lifted = textwrap.dedent(body) + "\n" + nested.replace(body, "")
    upstream.commit("tools as classes (#1183)", {OUTPUTS_PY: lifted})

    result = _results(project, capsys)[f"n:{OUTPUTS_PY}:2-4"]

    assert result["verdict"] == "missing", (result["current"], result["message"])
    assert result["introduced_by"]["commit"] == moved


TEMPLATE_PY = "src/resources/template.py"
TEMPLATE = """\
class Template(Component):
    @classmethod
    def from_mcp(cls, template: MCPTemplate) -> Template:
        return cls(uri=template.uri, name=template.name)

    @property
    def key(self) -> str:
        if self._key is not None:
            return self._key
        return self.uri_template


class FunctionTemplate(Template):
    fn: Callable[..., Any]
"""

REGISTER = """
    def register(self, docket: Docket) -> None:
        if self.task_config.mode is not None:
            docket.register(self.read, names=[self.key])

    async def submit(self, docket: Docket, params: dict[str, Any]) -> Execution:
        return await docket.add(self.key, self.uri_template)(params)
"""


def test_methods_written_after_a_rewritten_body_are_not_what_it_became(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """fastmcp's `ResourceTemplate.key` (resources/template.py): its cited body was
    rewritten (`missing`), then methods were written below it. Carried through the
    stretch around it, the cited tokens were aligned with the new methods' (`is not
    None :`, `self .`, `self . uri_template`), enough to be `changed` there from that
    commit on, spanning the new methods. The rewrite ends where `key` ends: `missing`
    since the rewrite, and the new methods are no commit of its history."""
    base = upstream.commit("templates", {TEMPLATE_PY: TEMPLATE})
    project.note("n", f"{base} {TEMPLATE_PY}:8-10")
    body = "        if self._key is not None:\n            return self._key\n"
    body += "        return self.uri_template\n"
    rewritten = TEMPLATE.replace(body, "        return self.make_key(self.name)\n")
    rewrite = upstream.commit("simplify .key as computed property (#2648)",
                              {TEMPLATE_PY: rewritten})  # fmt: skip
    upstream.commit(
        "add register() and submit() to all components (#2657)",
        {TEMPLATE_PY: rewritten.replace("self.make_key(self.name)\n",
                                        "self.make_key(self.name)\n" + REGISTER)},
    )  # fmt: skip

    result = _results(project, capsys)[f"n:{TEMPLATE_PY}:8-10"]

    assert result["verdict"] == "missing", result["message"]
    assert [h["commit"] for h in result["history"]] == [rewrite]
    assert result["introduced_by"]["commit"] == rewrite


SPLIT_PY = "src/server/manager.py"
HANDLER = """\
class SessionManager:
    async def run(self) -> None:
        self._task_group = create_task_group()

    async def handle_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        \"\"\"Process an ASGI request with session handling.\"\"\"
        if self._task_group is None:
            raise RuntimeError("Task group is not initialized. Make sure to use run().")
        await self._dispatch(scope, receive, send)


def helper() -> None:
    pass
"""


def test_a_body_moved_into_a_new_method_below_is_carried_there(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The other side of the rule above: python-sdk's `handle_request`
    (streamable_http_manager.py) kept its docstring and handed its body to a new
    `_handle_request` below it. The diff keeps the cited guard's lines there, past the
    end of `handle_request`: the citation is `changed`, spanning both, as in git."""
    base = upstream.commit("manager", {SPLIT_PY: HANDLER})
    project.note("n", f"{base} {SPLIT_PY}:6-8")
    split = upstream.commit(
        "wrap the app in middleware (#3095)",
        {SPLIT_PY: HANDLER.replace(
            '        """Process an ASGI request with session handling."""\n',
            '        """Process an ASGI request with session handling."""\n'
            "        await self.asgi_app(scope, receive, send)\n\n"
            "    async def _handle_request(self, scope: Scope, receive: Receive, send: Send) -> None:\n",
        )},
    )  # fmt: skip

    result = _results(project, capsys)[f"n:{SPLIT_PY}:6-8"]

    assert result["verdict"] == "changed", result["message"]
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (6, 11)
    assert [h["commit"] for h in result["history"]] == [split]


CLIENT = "packages/mcp/src/tool/client.ts"
TOOLS_INLINE = """\
export class Client {
  private async listTools(): Promise<ListToolsResult> {
    return this.request({ method: 'tools/list' });
  }

  async tools(): Promise<ToolSet> {
    const listed = await this.listTools();
    const tools: Record<string, Tool> = {};
    for (const { name, description, inputSchema } of listed.tools) {
      const self = this;
      const title = description ?? name;
      const schema = { ...inputSchema, additionalProperties: false };
      tools[name] = tool({ title, schema, execute: args => self.callTool({ name, args }) });
    }
    return tools;
  }

  private onClose(): void {
    this.closed = true;
  }
}
"""
TOOLS_SPLIT = TOOLS_INLINE.replace(
    "    const listed = await this.listTools();\n",
    "    const definitions = await this.listTools();\n"
    "    return this.toolsFromDefinitions(definitions);\n"
    "  }\n\n"
    "  toolsFromDefinitions(definitions: ListToolsResult): ToolSet {\n",
).replace("of listed.tools", "of definitions.tools")


def test_a_loop_moved_into_a_new_method_with_the_locals_around_it_is_found_there(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Vercel AI's `tools`, whose loop went into a new `toolsFromDefinitions` below it:
    the definitions nearest the cited loop header (the locals above and inside it) moved
    with it, so the stretch it is carried through is bounded by the nearest definitions
    outside `tools` (`listTools` above, `onClose` below). There the loop is found, its
    list renamed: `changed`, at its new line, as `git log -L` at HEAD carries it."""
    base = upstream.commit("client", {CLIENT: TOOLS_INLINE})
    project.note("n", f"{base} {CLIENT}:9")
    split = upstream.commit("tools from definitions (#12)", {CLIENT: TOOLS_SPLIT})

    result = _results(project, capsys)[f"n:{CLIENT}:9"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (13, 13)
    assert [h["commit"] for h in result["history"]] == [split]
