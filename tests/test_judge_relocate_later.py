"""A definition moved into a file the commit that deleted its own file added, and later
removed from there (`relocate.moved_by`): it is missing from that later commit on, and a
namesake written afterwards in another file that commit added is not it. The shape of
mcp-proxy's `create_starlette_app`: `sse_server.py` deleted by the split that added
`mcp_server.py` and a test module, the function removed from `mcp_server.py` two commits
later, and a test helper of that name written in the test module."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.support import check_results
from watcher.gitbuild import Upstream

OLD = "src/proxy/sse_server.py"
NEW = "src/proxy/mcp_server.py"
TESTS = "tests/test_mcp_server.py"

CREATE = """\
def create_app(server, origins=None, debug=False):
    transport = SseTransport("/messages/")
    routes = [Route("/sse", endpoint=transport.handle), Mount("/messages/", app=transport)]
    middleware = [Middleware(CorsMiddleware, allow_origins=origins or [])]
    return Starlette(debug=debug, routes=routes, middleware=middleware)
"""

SSE = (
    '"""Serve a stdio server over SSE."""\n\nimport logging\n\n'
    "logger = logging.getLogger(__name__)\n\n\n"
    + CREATE
    + "\n\nasync def run_sse_server(params, settings):\n"
    "    async with stdio_client(params) as streams:\n"
    "        app = create_app(await proxy(streams), settings.origins)\n"
    "        await serve(app, settings.host, settings.port)\n"
)


def mcp_server(stateless: bool = False, with_create: bool = True) -> str:
    """The module the split added: `create_app` edited on the way (a status route), with
    much new code around it, so that git pairs it with no deleted file."""
    create = CREATE.replace(
        "    routes = [",
        "    status = {'last_activity': now()}\n"
        + ("    logger.debug('stateless: %s', stateless)\n" if stateless else "")
        + "    routes = [Route('/status', endpoint=lambda r: status), ",
    )
    if not with_create:
        create = (
            "def create_routes(server, status):\n"
            "    return [Route('/status', endpoint=lambda r: status)]\n"
        )
    handlers = "".join(
        f"\n\nasync def handle_{n}(request):\n"
        f"    session = await sessions.open(request, kind={n!r})\n"
        f"    return await session.reply(request.query_params.get({n!r}))\n"
        for n in ("sse", "http", "status", "health", "metrics", "shutdown")
    )
    return (
        '"""Serve a stdio server over SSE or streamable HTTP."""\n\n'
        "import contextlib\nimport logging\n\nlogger = logging.getLogger(__name__)\n\n\n"
        + create
        + handlers
    )


TEST_MODULE = (
    "import pytest\n\n\n"
    "async def test_create_app():\n"
    "    app = make_app(server=None)\n"
    "    assert app.routes\n"
)

HELPER = (
    "\n\ndef create_app(servers, origins=None):\n"
    "    routes = [route for server in servers for route in create_routes(server, {})]\n"
    "    return Starlette(routes=routes)\n"
)


def test_a_definition_moved_into_a_new_file_then_removed_from_it_is_missing_from_then(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("sse server (#1)", {OLD: SSE})
    project.note("n", f"{base} {OLD}:8-12")
    split = upstream.commit(
        "support streamable http (#60)", {OLD: None, NEW: mcp_server(), TESTS: TEST_MODULE}
    )
    edit = upstream.commit("pass stateless (#62)", {NEW: mcp_server(stateless=True)})
    removed = upstream.commit("serve several servers (#65)", {NEW: mcp_server(with_create=False)})
    upstream.commit("test helper (#66)", {TESTS: TEST_MODULE + HELPER})
    assert SSE.splitlines()[7].startswith("def create_app(")

    result = check_results(project, capsys)[f"n:{OLD}:8-12"]

    assert result["verdict"] == "missing", result["message"]
    assert result["introduced_by"]["commit"] == removed
    assert [(c["commit"], c["state"]) for c in result["history"]] == [
        (split, "changed"),
        (edit, "changed"),
        (removed, "missing"),
    ]
    # The test helper of that name is listed where to look, not chosen.
    assert [(c["path"], c["chosen"]) for c in result["candidates"]] == [(TESTS, False)]
    _, out, _ = project.run("log", f"n:{OLD}:8-12", "--offline", capsys=capsys)
    assert [line.split()[1] for line in out.splitlines()[1:]] == [
        c[:10] for c in (split, edit, removed)
    ]
    _, out, _ = project.run("backtest", "--note", "n", "--offline", capsys=capsys)
    assert [line.split()[1:5] for line in out.splitlines()[1:]] == [
        [split[:10], "fresh", "->", "changed"],
        [removed[:10], "changed", "->", "missing"],
    ]


def test_a_moved_into_file_grown_past_the_size_limit_tells_no_later_removal(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The file the definition went to grew past `[limits] file_bytes` before it lost
    the definition: its walk cannot read it, so the removal there is not told, and the
    citation stays missing from the commit that deleted its own file."""
    project.config(extra="[limits]\nfile_bytes = 4000\n")
    base = upstream.commit("sse server (#1)", {OLD: SSE})
    project.note("n", f"{base} {OLD}:8-12")
    split = upstream.commit(
        "support streamable http (#60)", {OLD: None, NEW: mcp_server(), TESTS: TEST_MODULE}
    )
    padding = "".join(f"\nLIMIT_{n} = {n}  # a constant\n" for n in range(200))
    upstream.commit("constants (#61)", {NEW: mcp_server() + padding})
    upstream.commit("serve several servers (#65)", {NEW: mcp_server(with_create=False) + padding})
    assert len(mcp_server()) < 4000 < len(mcp_server() + padding)

    result = check_results(project, capsys)[f"n:{OLD}:8-12"]

    assert result["verdict"] == "missing", result["message"]
    assert result["introduced_by"]["commit"] == split


LAUNCHER = "".join(
    f"    if (arg === '--{flag}') {{ options.{flag} = argv[++i]; continue; }}\n"
    for flag in ("port", "host", "env", "config", "server", "transport", "header", "timeout")
)


def test_an_unlike_namesake_the_deleting_commit_added_is_not_followed(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The shape of inspector's CLI build: the commit that deleted the compiled `bin/cli.js`
    added a web client's launcher with a `main` of its own, 15% alike the cited one, the
    only `main` there. That is no sign of where the cited one went: its later edits and
    deletion are not the citation's, which is missing from the commit that deleted its
    file."""
    cli = (
        "function parseArgs() { return { cli: process.argv.includes('--cli') }; }\n"
        "async function main() {\n"
        "  const args = parseArgs();\n"
        "  if (args.cli) { runCli(args); } else { await runWebClient(args); }\n"
        "}\n"
        "main();\n"
    )
    start = (
        "async function main() {\n  const options = {};\n  const argv = process.argv;\n"
        "  for (let i = 2; i < argv.length; i++) {\n  const arg = argv[i];\n"
        + LAUNCHER
        + "  }\n  await launch(options);\n}\nmain();\n"
    )
    base = upstream.commit("cli (#300)", {"bin/cli.js": cli})
    project.note("n", f"{base} bin/cli.js:2-5")
    deleted = upstream.commit(
        "fix the cli build (#316)", {"bin/cli.js": None, "client/bin/start.js": start}
    )
    upstream.commit("auto open (#276)", {"client/bin/start.js": start.replace("2;", "3;")})
    upstream.commit("v2 (#1830)", {"client/bin/start.js": None})

    result = check_results(project, capsys)["n:bin/cli.js:2-5"]

    assert result["verdict"] == "missing", result["message"]
    assert result["introduced_by"]["commit"] == deleted
    assert [c["commit"] for c in result["history"]] == [deleted]


MCP_PY = "pydantic_ai_slim/pydantic_ai/mcp.py"
SERVER = """\
class MCPServer(AbstractToolset):
    async def list_tools(self) -> list[Tool]:
        async with self:
            result = await self._client.list_tools()
        return result.tools

    async def call_tool(self, name: str, args: dict) -> ToolResult:
        return await self.direct_call_tool(name, args)
"""
TOOLSET = """\
class MCPToolset(AbstractToolset):
    async def list_tools(self) -> list[Tool]:
        if self.cache_tools and self._cached_tools is not None:
            return self._cached_tools
        async with self:
            tools = await self.client.list_tools()
            if self.cache_tools:
                self._cached_tools = tools
            return tools
"""


@pytest.mark.parametrize("lines", ["2-5", "3-5"])
def test_a_namesake_written_beside_a_cited_method_is_not_it_when_its_class_goes(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str], lines: str
) -> None:
    """pydantic-ai's `MCPServer.list_tools`: a commit writes a new `MCPToolset` class
    beside `MCPServer`, with a `list_tools` of its own, much like it; a later one deletes
    `MCPServer`. The cited method is gone with it: `missing` from that commit, not
    `changed` in the other class's method, which stood beside it all along and is left as
    it was."""
    base = upstream.commit("mcp servers", {MCP_PY: SERVER})
    project.note("n", f"{base} {MCP_PY}:{lines}")
    upstream.commit("MCPToolset (#5325)", {MCP_PY: SERVER + "\n\n" + TOOLSET})
    deleted = upstream.commit("Pydantic AI V2 (#5451)", {MCP_PY: TOOLSET})

    result = check_results(project, capsys)[f"n:{MCP_PY}:{lines}"]

    assert result["verdict"] == "missing"
    assert result["introduced_by"]["commit"] == deleted
    assert [h["commit"] for h in result["history"]] == [deleted]
    _, out, _ = project.run("log", f"n:{MCP_PY}:{lines}", "--offline", capsys=capsys)
    assert [line.split()[1] for line in out.splitlines()[1:]] == [deleted[:10]]
    _, out, _ = project.run("backtest", "--note", "n", "--offline", capsys=capsys)
    assert [line.split()[1:5] for line in out.splitlines()[1:]] == [
        [deleted[:10], "fresh", "->", "missing"]
    ]


CLIENT_TS = """\
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { presenter } from '@/presenter'

export class McpClient {
  private client: Client | null = null
  constructor(public serverName: string, public serverConfig: Record<string, unknown>) {}

  async listTools(): Promise<Tool[]> {
    const response = await this.client!.listTools()
    return response.tools
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<ToolCallResult> {
    return (await this.client!.callTool({ name, arguments: args })) as ToolCallResult
  }
}

export async function createMcpClient(serverName: string): Promise<McpClient> {
  const servers = await presenter.configPresenter.getMcpServers()
  const serverConfig = servers[serverName]
  if (!serverConfig) {
    throw new Error(`MCP server ${serverName} not found in configuration`)
  }
  return new McpClient(serverName, serverConfig as unknown as Record<string, unknown>)
}
"""

CLIENT_TEST = "".join(
    f"describe('{n}', () => {{\n  it('works', async () => {{\n"
    f"    const client = new McpClient('{n}', {{ command: 'node' }})\n"
    f"    expect(await client.listTools()).toEqual([])\n  }})\n}})\n\n"
    for n in ("everything", "memory", "filesystem", "fetch", "git")
)

TEST_HELPER = """\
function createMcpClient(
  serverName: string,
  serverConfig: Record<string, unknown>,
  npmRegistry: string | null = null
): McpClient {
  return new McpClient(serverName, serverConfig, npmRegistry, {
    sampling: { handleSamplingRequest: mockHandleSamplingRequest },
    completion: { generateCompletionStandalone: mockGenerateCompletion }
  })
}

"""


def test_a_namesake_written_into_a_file_the_commit_only_renamed_is_not_where_it_went(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """deepchat's `createMcpClient`: the commit that moved the client's module (a rename)
    dropped the factory from it, and moved its test module too, writing there a helper of
    the same name (0.2 alike). A file git pairs with one the parent had is no file made
    for the construct: the helper is a namesake, as in any file already there, and the
    factory is missing from that commit."""
    cited = "src/main/presenter/mcpPresenter/mcpClient.ts"
    old_test = "test/main/presenter/mcpClient.test.ts"
    base = upstream.commit("client (#1)", {cited: CLIENT_TS, old_test: CLIENT_TEST})
    project.note("n", f"{base} {cited}:18-25")
    without = CLIENT_TS[: CLIENT_TS.index("export async function")].rstrip() + "\n"
    moved = upstream.commit("realign (#1987)", {
        cited: None, old_test: None, "src/main/mcp/mcpClient.ts": without,
        "test/main/mcp/mcpClient.test.ts": TEST_HELPER + CLIENT_TEST})  # fmt: skip

    result = check_results(project, capsys)[f"n:{cited}:18-25"]

    assert result["verdict"] == "missing", result["message"]
    assert result["introduced_by"]["commit"] == moved
    assert [(c["path"], c["chosen"]) for c in result["candidates"]] == [
        ("test/main/mcp/mcpClient.test.ts", False)
    ]


MANAGER_RS = "codex-rs/codex-mcp/src/mcp_connection_manager.rs"
CONNECTIONS_RS = "codex-rs/codex-mcp/src/connection_manager.rs"
CALL_TOOL_RS = """\
    pub async fn call_tool(&self, server: &str, tool: &str) -> Result<CallToolResult> {
        let client = self.client_by_name(server).await?;
        if !client.tool_filter.allows(tool) {
            return Err(anyhow!("tool '{tool}' is disabled for MCP server '{server}'"));
        }
        client.call_tool(tool.to_string(), client.tool_timeout).await
    }
"""
OTHER_RS = "".join(
    f"""
    pub async fn list_{n}(&self) -> Vec<Item{n}> {{
        let items = self.items_{n}.lock().await;
        items.iter().filter(|item| item.enabled).cloned().collect()
    }}
"""
    for n in range(12)
)


def manager_rs(kind: str, call_tool: str = CALL_TOOL_RS, others: str = OTHER_RS) -> str:
    return f"pub struct {kind} {{\n    clients: Vec<Client>,\n}}\n\nimpl {kind} {{\n{call_tool}{others}}}\n"


def test_a_method_moved_into_a_new_file_is_followed_there_after_its_impl_is_renamed(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """codex's `McpConnectionManager::call_tool`: the split that deleted its file moved it,
    unchanged, into a new `connection_manager.rs` (git pairs no file with the old one),
    and a later commit renamed the `impl` there to `McpConnectionSet`. The method is
    followed into the new file and is `changed` there by the edit after the rename (it
    read `missing` from the split, the method offered as a hint)."""
    base = upstream.commit("manager", {MANAGER_RS: manager_rs("McpConnectionManager")})
    project.note("n", f"{base} {MANAGER_RS}:6-12")
    split = upstream.commit(
        "split MCP connection modules (#19725)",
        {MANAGER_RS: None, CONNECTIONS_RS: manager_rs("McpConnectionManager", others="")},
    )
    upstream.commit("rename (#34708)", {CONNECTIONS_RS: manager_rs("McpConnectionSet", others="")})
    edited = CALL_TOOL_RS.replace("client.tool_timeout", "None")
    edit = upstream.commit(
        "reuse connections (#34952)",
        {CONNECTIONS_RS: manager_rs("McpConnectionSet", edited, others="")},
    )
    assert manager_rs("x").splitlines()[5].strip().startswith("pub async fn call_tool")

    result = check_results(project, capsys)[f"n:{MANAGER_RS}:6-12"]

    assert result["verdict"] == "changed", result["message"]
    assert (result["current"]["path"], result["current"]["start_line"]) == (CONNECTIONS_RS, 6)
    assert [c["commit"] for c in result["history"]] == [edit]
    assert split not in [c["commit"] for c in result["history"]]


LOGS_GO = """\
package gateway

import (
	"fmt"
	"os"
	"strings"
)

func log(a ...any) {
	_, _ = fmt.Fprintln(os.Stderr, a...)
}

func logf(format string, a ...any) {
	if !strings.HasSuffix(format, "\\n") {
		format += "\\n"
	}
	_, _ = fmt.Fprintf(os.Stderr, format, a...)
}
"""
LOG_GO = """\
package log

import (
	"fmt"
	"io"
	"os"
	"strings"
)

var logWriter io.Writer = os.Stderr

// SetLogWriter sets where the gateway logs.
func SetLogWriter(w io.Writer) {
	if w != nil {
		logWriter = w
	}
}

// Log prints a message to the log output.
func Log(a ...any) {
	_, _ = fmt.Fprintln(logWriter, a...)
}

// Logf prints a formatted message to the log output.
func Logf(format string, a ...any) {
	if !strings.HasSuffix(format, "\\n") {
		format += "\\n"
	}
	_, _ = fmt.Fprintf(logWriter, format, a...)
}
"""


def test_cited_lines_as_they_were_in_a_function_renamed_and_moved_are_moved(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """docker/mcp-gateway's `logf`, moved into a new `pkg/log/log.go` as `Logf` by the
    commit that deleted its file: its cited `if` is there token for token, so it is
    `moved`, with no history (it read `changed`, and no commit changed it)."""
    old, new = "cmd/docker-mcp/internal/gateway/logs.go", "pkg/log/log.go"
    base = upstream.commit("gateway logs", {old: LOGS_GO})
    project.note("n", f"{base} {old}:14-16")
    upstream.commit("consolidate log functions in one package (#182)", {old: None, new: LOG_GO})
    assert LOG_GO.splitlines()[25].strip().startswith("if !strings.HasSuffix")

    result = check_results(project, capsys)[f"n:{old}:14-16"]

    assert result["verdict"] == "moved", result["message"]
    assert (result["current"]["path"], result["current"]["start_line"]) == (new, 26)
    assert result["history"] == []


HUB_TS = "src/services/mcp/McpHub.ts"
CONNECTION_TS = """\
export type McpConnection = {
	server: McpServer
	client: Client
	transport: StdioClientTransport | SSEClientTransport
}
"""
HUB_CLASS_TS = "".join(
    f"""
	async fetch{n}List(serverName: string): Promise<Item{n}[]> {{
		const connection = this.connections.find((conn) => conn.server.name === serverName)
		const response = await connection?.client.request({{ method: "{n.lower()}/list" }}, Schema{n})
		return response?.items || []
	}}
"""
    for n in ("Tools", "Resources", "Templates", "Prompts")
)
HUB = f'import {{ Client }} from "sdk/client"\n\n{CONNECTION_TS}\nexport class McpHub {{{HUB_CLASS_TS}}}\n'


def test_a_type_moved_out_before_its_file_is_renamed_is_missing_from_the_move_out(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """cline's `McpConnection`: a commit moved the type from `McpHub.ts` into a new
    `types.ts` (edited), keeping `McpHub.ts`; a year later another moved both files into
    `apps/vscode/` (renames git pairs). What the renaming commit added is no place the
    type went: it had left `McpHub.ts` already. It is `missing` from the first commit, as
    `git log -L` has it, and `types.ts` is a hint; before, it was `changed` there."""
    base = upstream.commit("hub (#3000)", {HUB_TS: HUB})
    project.note("n", f"{base} {HUB_TS}:3-7")
    types_ts = CONNECTION_TS.replace("SSEClientTransport", "SSEClientTransport | HttpTransport")
    hub = HUB.replace(CONNECTION_TS, 'import { McpConnection } from "./types"\n')
    split = upstream.commit("split (#3970)", {HUB_TS: hub, "src/services/mcp/types.ts": types_ts})
    upstream.commit("move to apps (#10961)", {
        HUB_TS: None, "src/services/mcp/types.ts": None,
        f"apps/vscode/{HUB_TS}": hub, "apps/vscode/src/services/mcp/types.ts": types_ts})  # fmt: skip

    result = check_results(project, capsys)[f"n:{HUB_TS}:3-7"]

    assert result["verdict"] == "missing", result["message"]
    assert result["introduced_by"]["commit"] == split
    assert [(c["path"], c["chosen"]) for c in result["candidates"]] == [
        ("apps/vscode/src/services/mcp/types.ts", False)
    ]


TOOL_API_GO = "tools/tool_api.go"
RESPONSE_GO = """\
func NewToolReponse(content ...*ToolResponseContent) *ToolResponse {
	return &ToolResponse{
		Content: content,
	}
}
"""
CONTENT_GO = "".join(
    f"""
type {kind}Content struct {{
	Text     string `json:"text" yaml:"text"`
	MimeType string `json:"mimeType,omitempty" yaml:"mimeType,omitempty"`
	Uri      string `json:"uri,omitempty" yaml:"uri,omitempty"`
}}

func New{kind}Content(text string) *{kind}Content {{
	return &{kind}Content{{Text: text, MimeType: "text/{kind.lower()}"}}
}}
"""
    for kind in ("Text", "Image", "Embedded", "Audio", "Blob", "Link")
)


def test_a_function_split_into_a_new_file_is_followed_where_a_later_commit_renamed_it(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """mcp-golang's `NewToolReponse`: a commit turned `tools/tool_api.go` into
    `server/content_api.go` (a rename git pairs) and moved the function into a new
    `server/tool_api.go`; a later one moved both files to the root. It is followed into
    the file the split added, wherever that went: `moved`, at `tool_api.go`."""
    source = f"package tools\n\n{RESPONSE_GO}{CONTENT_GO}"
    base = upstream.commit("tools (#1)", {TOOL_API_GO: source})
    project.note("n", f"{base} {TOOL_API_GO}:3-7")
    content = f"package server\n{CONTENT_GO}"
    tool_api = f"package server\n\n{RESPONSE_GO}"
    upstream.commit("prompts (#7)", {TOOL_API_GO: None, "server/content_api.go": content,
                                     "server/tool_api.go": tool_api})  # fmt: skip
    upstream.commit("hide objects (#11)", {
        "server/content_api.go": None, "server/tool_api.go": None,
        "content_api.go": content.replace("package server", "package mcp"),
        "tool_api.go": tool_api.replace("package server", "package mcp")})  # fmt: skip

    result = check_results(project, capsys)[f"n:{TOOL_API_GO}:3-7"]

    assert result["verdict"] == "moved", result["message"]
    assert (result["current"]["path"], result["current"]["start_line"]) == ("tool_api.go", 3)


CODES_PY = "".join(f"{name} = {code}\n" for name, code in (
    ("PARSE_ERROR", -32700), ("INVALID_REQUEST", -32600), ("METHOD_NOT_FOUND", -32601)))  # fmt: skip
MODELS_PY = "".join(
    f"\n\nclass {n}(BaseModel):\n    method: str\n    params: dict[str, Any] | None = None\n"
    for n in ("Request", "Notification", "Result", "ErrorData", "Tool", "Resource")
)


def test_a_constant_split_into_a_module_later_moved_is_followed_past_an_alias_in_its_place(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """python-sdk's `INVALID_REQUEST`: the commit that made `types.py` a package's
    `_types.py` (a rename) moved the error codes into a new `types/jsonrpc.py`; a later
    one moved that module into a package of its own, and a later one still wrote an
    alias module at `types/jsonrpc.py`. The codes are followed where the module went."""
    base = upstream.commit("types (#1)", {"src/mcp/types.py": CODES_PY + MODELS_PY})
    project.note("n", f"{base} src/mcp/types.py:2")
    upstream.commit("types subpackage (#1918)", {
        "src/mcp/types.py": None, "src/mcp/types/_types.py": MODELS_PY.lstrip(),
        "src/mcp/types/jsonrpc.py": '"""JSON-RPC."""\n\n' + CODES_PY})  # fmt: skip
    upstream.commit("own package (#2973)", {
        "src/mcp/types/jsonrpc.py": None, "src/mcp/types/_types.py": None,
        "src/mcp_types/jsonrpc.py": '"""JSON-RPC."""\n\n' + CODES_PY,
        "src/mcp_types/_types.py": MODELS_PY.lstrip()})  # fmt: skip
    upstream.commit(
        "alias (#3190)", {"src/mcp/types/jsonrpc.py": "from mcp_types.jsonrpc import *\n"}
    )

    result = check_results(project, capsys)["n:src/mcp/types.py:2"]

    assert result["verdict"] == "moved", result["message"]
    assert (result["current"]["path"], result["current"]["start_line"]) == (
        "src/mcp_types/jsonrpc.py",
        4,
    )


def test_a_function_split_rewritten_into_a_new_file_is_chosen_where_a_later_commit_renamed_it(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """codex's `collect_marketplace_import_sources`: the commit that renamed its file moved
    it, rewritten, into a new module (the only one of its name there, too unlike it to be
    chosen by likeness); a later one moved that module into a crate of its own. It is the
    one the split moved it into, wherever that went: `changed` there."""
    source = f"package tools\n\n{RESPONSE_GO}{CONTENT_GO}"
    base = upstream.commit("tools (#1)", {TOOL_API_GO: source})
    project.note("n", f"{base} {TOOL_API_GO}:3-7")
    rewritten = (
        "func NewToolReponse(parts ...*ToolResponseContent) (*ToolResponse, error) {\n"
        '\tif len(parts) == 0 {\n\t\treturn nil, errors.New("a tool response needs content")\n\t}\n'
        '\tlog.Printf("tool response of %d parts", len(parts))\n'
        "\treturn &ToolResponse{Content: parts, Meta: map[string]any{}}, nil\n}\n"
    )
    upstream.commit("prompts (#7)", {TOOL_API_GO: None,
                                     "server/content_api.go": f"package server\n{CONTENT_GO}",
                                     "server/tool_api.go": f"package server\n\n{rewritten}"})  # fmt: skip
    upstream.commit("own crate (#9)", {
        "server/tool_api.go": None, "mcp/tool_api.go": f"package mcp\n\n{rewritten}"})  # fmt: skip

    result = check_results(project, capsys)[f"n:{TOOL_API_GO}:3-7"]

    assert result["verdict"] == "changed", result["message"]
    assert (result["current"]["path"], result["current"]["start_line"]) == ("mcp/tool_api.go", 3)
