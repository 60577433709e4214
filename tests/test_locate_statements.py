"""A citation of whole statements of a function's body stays within the statements they
became: code inserted at an edge of the citation is outside it (as `git log -L`, commit
by commit, leaves it), even where the alignment of the baseline with a distant version
pairs a cited line, since rewritten, with a line of the inserted code that reads the same
(`return false;`, `}`). On histories built here in the shape of the real code."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Project
from tests.support import check_results
from watcher.gitbuild import Upstream
from watcher.locate.alignment import kept_count

TS = "src/policy/engine.ts"
HEAD_OF = """\
function matchesRule(
  rule: Rule,
  call: Call,
  server: string | undefined,
  mode: Mode,{extra}
): boolean {{
  if (rule.modes && rule.modes.length > 0) {{
    if (!rule.modes.includes(mode)) {{
      return false;
    }}
  }}

"""
NAME = """\
  if (rule.name) {
    if (rule.name.endsWith('__*')) {
      const prefix = rule.name.slice(0, -3);
      if (server !== undefined) {
        if (server !== prefix) {
          return false;
        }
      }
      if (!call.name || !call.name.startsWith(prefix + '__')) {
        return false;
      }
    } else if (call.name !== rule.name) {
      return false;
    }
  }
"""
WILDCARD = """\
  if (rule.name) {
    if (rule.name === '*') {
      // any tool
    } else if (isWildcard(rule.name)) {
      if (
        !call.name ||
        !matchesWildcard(rule.name, call.name, server)
      ) {
        return false;
      }
    } else if (call.name !== rule.name) {
      return false;
    }
  }
"""
TAIL = """\

  if (rule.args) {
    if (!call.args) {
      return false;
    }
  }

  return true;
}
"""
SERVER = """\
  const serverOk = rule.server === undefined || sameServer(rule.server, server);
  if (!serverOk) return false;

"""
AGENT = """\
  if ('agent' in rule && rule.agent) {
    if (rule.agent !== agent) {
      return false;
    }
  }

"""


def _engine(*blocks: str, extra: str = "") -> str:
    return HEAD_OF.format(extra=extra) + "".join(blocks) + TAIL


def test_statements_inserted_above_the_cited_ones_stay_outside(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """gemini-cli's `ruleMatches` (policy-engine.ts): the cited `if (rule.toolName)`,
    `if (rule.argsPattern)` and `return true;` were rewritten, then a server check and a
    subagent check were inserted above them. Aligned with the baseline directly, the
    cited `return false; } }`, since rewritten away, paired with the subagent check's,
    so the HEAD span began there and the commit that edited only that check entered the
    history. Git, commit by commit, leaves both checks outside."""
    base = upstream.commit("policy engine", {TS: _engine(NAME)})
    project.note("n", f"{base} {TS}:13-35")
    rewritten = upstream.commit("wildcards", {TS: _engine(WILDCARD)})
    upstream.commit("server identity", {TS: _engine(SERVER, WILDCARD)})
    upstream.commit(
        "subagent policies",
        {TS: _engine(AGENT, SERVER, WILDCARD, extra="\n  agent?: string,")},
    )
    upstream.commit(
        "agent policies need an agent",
        {TS: _engine(AGENT.replace("rule.agent)", "rule.agent !== undefined)"), SERVER,
                     WILDCARD, extra="\n  agent?: string,")},
    )  # fmt: skip

    result = check_results(project, capsys)[f"n:{TS}:13-35"]

    head = _engine(AGENT, SERVER, WILDCARD, extra="\n  agent?: string,").splitlines()
    start = head.index("  if (rule.name) {") + 1
    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (
        start,
        len(head) - 1,
    )
    assert [h["commit"] for h in result["history"]] == [rewritten]
    assert result["introduced_by"]["commit"] == rewritten


PY = "src/client/discovery.py"
FALLBACK = """\
def should_fall_back(response, path):
    log.debug("discovery answered %s", response)
    return not response or (
        response.status in RETRY_STATUSES and path != "/" and not settings.strict_discovery
    )
"""
SPLIT = """\
def should_fall_back(response, path):
    log.debug("discovery answered %s", response)
    if not response:
        return True
    if path == "/":
        return False
    return response.status in RETRY_STATUSES and not settings.strict_discovery
"""


def test_a_cited_statement_split_in_three_keeps_all_three(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """typescript-sdk's `shouldAttemptFallback` (auth.ts): the cited `return` became two
    `if`s and a `return`, each holding some of its tokens. The `if`s hold cited tokens
    and touch the `return` the cited one is paired with: they are the cited statement's
    parts, inside the item, as git carries a line through the lines that replaced it."""
    base = upstream.commit("fallback", {PY: FALLBACK})
    project.note("n", f"{base} {PY}:3-5")
    split = upstream.commit("fall back at the root", {PY: SPLIT})

    result = check_results(project, capsys)[f"n:{PY}:3-5"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (3, 7)
    assert [h["commit"] for h in result["history"]] == [split]


MODELS = "src/config/models.ts"
CLASSIFIER = """\
export function resolveClassifierModel(
  requested: string,
  alias: string,
  preview: boolean = false,
): string {{
{guard}  if (alias === ALIAS_FLASH) {{
    if (
      requested === DEFAULT_AUTO ||
      requested === DEFAULT_MODEL
    ) {{
      return DEFAULT_FLASH;
    }}
    if (
      requested === PREVIEW_AUTO ||
      requested === PREVIEW_MODEL
    ) {{
{preview}    }}
    return resolveModel(ALIAS_FLASH{args});
  }}
  return resolveModel(requested{args});
}}
"""
GUARD = """\
  if (config?.dynamicModels?.() === true) {
    debug(`dynamic routing of "${alias}" (for ${requested})`);
    return config.models.classifierModel(alias, requested);
  }

"""
FLAGGED = """\
      if (useNextFlash) {
        return NEXT_FLASH;
      }
      return hasPreview
        ? PREVIEW_FLASH
        : DEFAULT_FLASH;
"""


def test_a_cited_block_keeps_its_closing_brace_when_a_block_is_nested_in_it(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """gemini-cli's `resolveClassifierModel` (models.ts): the cited `if (alias ===
    FLASH) { ... }` gained an `if` nested in its second branch, and its last `return`
    took new arguments. Lines are their tokens, so every `}` read alike: the shortest
    edit script paired the cited block's closing `}` with the new inner block's, and the
    HEAD span stopped there, without the cited `return resolveModel(...)` and `}`. Git
    tells the two by their indentation, and so does watch for a line of signs alone (a
    template string's `(for ${requested})` is text, not brackets to count)."""
    before = CLASSIFIER.format(guard="", preview="      return PREVIEW_FLASH;\n",
                               args=", preview")  # fmt: skip
    base = upstream.commit("classifier routing", {MODELS: before})
    lines = before.splitlines()
    first = lines.index("  if (alias === ALIAS_FLASH) {") + 1
    project.note("n", f"{base} {MODELS}:{first}-{first + 14}")
    after = CLASSIFIER.format(guard=GUARD, preview=FLAGGED,
                              args=", false, hasPreview, config, useNextFlash")  # fmt: skip
    changed = upstream.commit("next flash behind a flag", {MODELS: after})

    result = check_results(project, capsys)[f"n:{MODELS}:{first}-{first + 14}"]

    head = after.splitlines()
    start = head.index("  if (alias === ALIAS_FLASH) {") + 1
    end = head.index("  return resolveModel(requested, false, hasPreview, config, useNextFlash);")
    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (start, end)
    assert [h["commit"] for h in result["history"]] == [changed]


CLIENT_GO = "client/client.go"
CLIENT = """\
package client

func (c *Client) ListTools(ctx context.Context) (*mcp.ListToolsResult, error) {
	response, err := c.sendRequest(ctx, "tools/list", nil)
	if err != nil {
		return nil, err
	}
	return parse[mcp.ListToolsResult](response)
}

func (c *Client) CallTool(ctx context.Context, name string) (*mcp.CallToolResult, error) {
	response, err := c.sendRequest(ctx, "tools/call", name)
	if err != nil {
		return nil, err
	}
	return mcp.ParseCallToolResult(response)
}
"""
SEND_PY = "src/mcpcli/messages/send_messages.py"
SEND = """\
async def send_tools_list(read_stream, write_stream) -> list:
    message = ToolsListMessage()
    response = await send_message(read_stream, write_stream, message)
    return response.get("result", [])


async def send_prompts_list(read_stream, write_stream) -> list:
    message = PromptsListMessage()
    response = await send_message(read_stream, write_stream, message)
    return response.get("result", [])
"""


@pytest.mark.parametrize(
    ("path", "text", "cited", "before", "after"),
    [
        (CLIENT_GO, CLIENT, "13-15", "\t\treturn nil, err\n\t}\n\treturn mcp.Parse",
         '\t\treturn nil, fmt.Errorf("tools/call: %w", err)\n\t}\n\treturn mcp.Parse'),
        (SEND_PY, SEND, "4-4", '    return response.get("result", [])\n\n\nasync def send_prompts',
         '    return response.get("result") or []\n\n\nasync def send_prompts'),
    ],
)  # fmt: skip
def test_a_statement_rewritten_in_its_function_is_not_the_same_one_in_another(
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    path: str,
    text: str,
    cited: str,
    before: str,
    after: str,
) -> None:
    """mcp-go's `CallTool`, its `if err != nil { return nil, err }` cited, and mcp-cli's
    `send_tools_list`, its `return response.get("result", [])`: a commit rewrote the cited
    statement in its own function. Another function of the file held the same statement
    at the baseline and still does; that is its own code, not the citation moved there
    (on main before: `moved` to it, with no history)."""
    base = upstream.commit("client", {path: text})
    project.note("n", f"{base} {path}:{cited}")
    rewrite = upstream.commit("wrap the errors (#320)", {path: text.replace(before, after)})

    result = check_results(project, capsys)[f"n:{path}:{cited}"]

    assert result["verdict"] == "changed", (result["message"], result["current"])
    start, end = map(int, cited.split("-"))
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (start, end)
    assert [h["commit"] for h in result["history"]] == [rewrite]


RUNTIME_RS = "crates/sdk/src/runtimes/client_runtime.rs"
RUNTIME = """\
use std::sync::Arc;

pub struct ClientRuntime {
    transport: Box<dyn Transport>,
    handler: Box<dyn ClientHandler>,
}

impl ClientRuntime {
    pub(crate) fn new(transport: Box<dyn Transport>, handler: Box<dyn ClientHandler>) -> Self {
        Self { transport, handler }
    }
}

#[async_trait]
impl Client for ClientRuntime {
    async fn start(self: Arc<Self>) -> SdkResult<()> {
        let (mut stream, error_io) = self.transport.start().await?;
        let errors = Arc::clone(&self);

        let err_task = tokio::spawn(async move {
            if let IoStream::Readable(error_input) = error_io {
                let mut reader = BufReader::new(error_input).lines();
                while let Ok(Some(message)) = reader.next_line().await {
                    errors.handler.handle_process_error(message, &*errors).await?;
                }
            }
            Ok::<(), SdkError>(())
        });

        while let Some(message) = stream.next().await {
            self.handler.handle_message(message, &*self).await?;
        }
        err_task.await??;
        Ok(())
    }

    fn client_info(&self) -> &ClientDetails {
        &self.details
    }
}
"""
STANDALONE = """\
    async fn start_standalone(self: Arc<Self>) -> SdkResult<()> {
        let (mut stream, error_io_stream) = self.transport.start().await?;
        let errors = Arc::clone(&self);

        let err_task = tokio::spawn(async move {
            if let Some(IoStream::Readable(error_input)) = error_io_stream {
                let mut reader = BufReader::new(error_input).lines();
                while let Ok(Some(message)) = reader.next_line().await {
                    errors.handler.handle_process_error(message, &*errors).await?;
                }
            }
            Ok::<(), SdkError>(())
        });

        self.run(stream, err_task).await
    }
"""


def test_statements_moved_into_a_function_split_out_of_theirs_are_found_there(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """rust-mcp-sdk's `ClientRuntime::start`: its task reading the server's error stream
    cited; a commit split the body out into a new `start_standalone` in the other impl
    block (two names edited on the way) and left `start` calling it. `start` is still
    there, but holds none of it, and the new function lies outside the stretch between
    its neighbours: the citation read `missing` from that commit, where git's blame
    sees its lines go on. A region as like it as a similar region must be, in a
    definition the baseline did not have, is where it went: `changed` there."""
    base = upstream.commit("client runtime", {RUNTIME_RS: RUNTIME})
    project.note("n", f"{base} {RUNTIME_RS}:20-28")
    first = RUNTIME.index("        let (mut stream")
    body_end = RUNTIME.index("\n    fn client_info")
    split = (
        RUNTIME[:first] + "        self.start_standalone().await\n    }\n" + RUNTIME[body_end:]
    ).replace("impl ClientRuntime {\n", "impl ClientRuntime {\n" + STANDALONE + "\n", 1)
    moved = upstream.commit("streamable HTTP client (#98)", {RUNTIME_RS: split})

    result = check_results(project, capsys)[f"n:{RUNTIME_RS}:20-28"]

    assert result["verdict"] == "changed", (result["current"], result["message"])
    current = result["current"]
    assert (current["start_line"], current["end_line"]) == (13, 21), current
    assert [h["commit"] for h in result["history"]] == [moved]


CLIENT_TS = """\
export class McpClient {
  private client: Client | null = null

  async disconnect(): Promise<void> {
    if (!this.client) {
      return
    }
    try {
      // release the transport and the caches
      this.cleanupResources()

      console.log(`Disconnected from MCP server: ${this.serverName}`)
    } catch (error) {
      console.error(`Failed to disconnect from ${this.serverName}:`, error)
      throw error
    }
  }
}
"""
CLIENT_PY = """\
class Client:
    def close(self):
        if self.session is None:
            return
        self.release(self.session)
        self.session = None
"""


@pytest.mark.parametrize(
    ("path", "text", "cited", "before", "after"),
    [
        ("src/mcpClient.ts", CLIENT_TS, "10", "      this.cleanupResources()",
         "      await this.cleanupResources()"),
        ("client.py", CLIENT_PY, "5", "        self.release(", "        return self.release("),
        ("client.py", CLIENT_PY, "5", "        self.release(", "        released = self.release("),
    ],
)  # fmt: skip
def test_a_cited_statement_wrapped_in_another_on_its_line_is_changed(
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    path: str,
    text: str,
    cited: str,
    before: str,
    after: str,
) -> None:
    """deepchat's `disconnect`: its cited `this.cleanupResources()` became `await
    this.cleanupResources()`. The cited tokens are still there verbatim, but as part of
    another statement: the statement changed (on main before: `fresh`, with no history).
    A statement written before the cited one on its line is no change of it."""
    base = upstream.commit("client", {path: text})
    project.note("n", f"{base} {path}:{cited}")
    wrapped = upstream.commit("await the cleanup (#1793)", {path: text.replace(before, after)})
    line = int(cited)
    apart = text.replace(before, before.replace(before.strip(), "pass; " + before.strip()))
    if path.endswith(".ts"):
        apart = text.replace(before, before.replace("this.", "this.flush(); this."))

    result = check_results(project, capsys)[f"n:{path}:{cited}"]

    assert_changed(result, (line, line), [wrapped])
    upstream.commit("flush first (#1800)", {path: apart})
    assert check_results(project, capsys)[f"n:{path}:{cited}"]["verdict"] == "fresh"


BUILDER_RS = """\
impl ToolRoute {
    pub fn description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
        self.attr.description = Some(description.into());
        self
    }
    pub fn parameters_value(mut self, schema: serde_json::Value) -> Self {
        self.attr.input_schema = crate::model::object(schema).into();
        self
    }
}
"""


def test_a_cited_token_that_begins_what_it_began_is_not_wrapped(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """rust-sdk's router: a builder's closing `self` cited alone, code inserted above it.
    The nearest `self` is the method's `mut self` parameter, which begins with `mut`; but
    the cited `self` began a `self`, as that one does: no construct it began is wrapped
    in another there, and the citation is not `changed` for it."""
    path = "crates/rmcp/src/handler/server/router/tool.rs"
    base = upstream.commit("router", {path: BUILDER_RS})
    project.note("n", f"{base} {path}:8")
    helper = "fn schema_for<T>() -> Schema {\n    schema_for_type::<T>()\n}\n\n"
    upstream.commit("schemas (#677)", {path: helper + BUILDER_RS})

    result = check_results(project, capsys)[f"n:{path}:8"]

    assert result["verdict"] == "moved", (result["message"], result["current"])
    assert result["history"] == []


MCP_GO = """\
package main

func mcpTools(ctx context.Context) (map[string][]mcp.Tool, error) {
	result := map[string][]mcp.Tool{}
	for sname, server := range enabledMCPs() {
		serverTools, err := mcpToolsFor(ctx, sname, server)
		if err != nil {
			return nil, err
		}
		result[sname] = append(result[sname], serverTools...)
	}
	return result, nil
}

func mcpToolsFor(ctx context.Context, name string, server MCPServerConfig) ([]mcp.Tool, error) {
	cli, err := client.NewStdioMCPClient(
		server.Command,
		append(os.Environ(), server.Env...),
		server.Args...,
	)
	if err != nil {
		return nil, fmt.Errorf("could not setup %s: %w", name, err)
	}
	defer cli.Close() //nolint:errcheck
	if _, err := cli.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		return nil, fmt.Errorf("could not setup %s: %w", name, err)
	}
	tools, err := cli.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return nil, fmt.Errorf("could not setup %s: %w", name, err)
	}
	return tools.Tools, nil
}

func toolCall(ctx context.Context, name string, data []byte) (string, error) {
	sname, tool, ok := strings.Cut(name, "_")
	if !ok {
		return "", fmt.Errorf("mcp: invalid tool name: %q", name)
	}
	return call(ctx, sname, tool, data)
}
"""
INIT_GO = """\
// initMcpClient creates and initializes an MCP client.
func initMcpClient(ctx context.Context, server MCPServerConfig) (*client.Client, error) {
	cli, err := client.NewStdioMCPClient(server.Command, os.Environ(), server.Args...)
	if err != nil {
		return nil, fmt.Errorf("failed to create MCP client: %w", err)
	}
	if _, err := cli.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		cli.Close() //nolint:errcheck,gosec
		return nil, fmt.Errorf("failed to initialize MCP client: %w", err)
	}
	return cli, nil
}

func mcpToolsFor(ctx context.Context, name string, server MCPServerConfig) ([]mcp.Tool, error) {
	cli, err := initMcpClient(ctx, server)
	if err != nil {
		return nil, fmt.Errorf("could not setup %s: %w", name, err)
	}
	defer cli.Close() //nolint:errcheck

	tools, err := cli.ListTools(ctx, mcp.ListToolsRequest{})
"""


def test_code_carried_through_its_scope_stays_in_one_definition(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """mods' `mcpToolsFor`: its `cli.Initialize` check, cited, moved into a new
    `initMcpClient` written above the function, with another message; the function kept
    its own `return nil, fmt.Errorf("could not setup ...")` below. Carried through the
    stretch between the neighbours both versions have, the cited tokens were aligned
    with both, and the span ran from the check across the function's header (on main
    before: 21-32). Code a definition held is carried into one: the check, 21-24."""
    path = "mcp.go"
    base = upstream.commit("mcp (#486)", {path: MCP_GO})
    project.note("n", f"{base} {path}:25-27")
    listing = "\ttools, err := cli.ListTools(ctx, mcp.ListToolsRequest{})\n"
    head, rest = MCP_GO.split("func mcpToolsFor")[0], MCP_GO.split(listing)[1]
    split = upstream.commit("sse and http (#565)", {path: head + INIT_GO + rest})

    result = check_results(project, capsys)[f"n:{path}:25-27"]

    assert_changed(result, (21, 24), [split])


MANAGER_PY = '''\
class SummarizingManager:
    def reduce_context(self, agent, e=None):
        """Summarize the oldest messages."""
        try:
            count = max(1, int(len(agent.messages) * self.summary_ratio))
            count = min(count, len(agent.messages) - self.preserve_recent_messages)
            if count <= 0:
                raise ContextWindowOverflowException("Cannot summarize: too few messages")
            summary = self._generate_summary(agent.messages[:count], agent)
            agent.messages[:] = [summary] + agent.messages[count:]
        except Exception as summarization_error:
            logger.error("Summarization failed: %s", summarization_error)
            raise summarization_error from e

    def _generate_summary(self, messages, agent):
        return agent.summarize(messages)
'''
MANAGER_BODY = MANAGER_PY[
    MANAGER_PY.index("            count = max") : MANAGER_PY.index("        except")
]
MANAGER_SPLIT = MANAGER_PY.replace(
    MANAGER_BODY, "            self._summarize_oldest(agent)\n"
).replace(
    "    def _generate_summary",
    "    def _summarize_oldest(self, agent):\n"
    + MANAGER_BODY.replace("            ", "        ")
    + "\n    def _generate_summary",
)


def test_a_try_whose_body_went_to_a_new_method_spans_both(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """strands' `reduce_context`: its cited `try:` statement kept its `except` and handed
    its body to a new `_summarize_oldest` below. The statement went to both: the item runs
    from its `try:` to the end of the body it handed on, as `git log -L` of its lines has
    it, and as a docstring and guard split the same way do."""
    path = "src/strands/agent/conversation_manager/summarizing_conversation_manager.py"
    base = upstream.commit("manager", {path: MANAGER_PY})
    project.note("n", f"{base} {path}:4-13")
    split = upstream.commit("proactive summarization (#2109)", {path: MANAGER_SPLIT})

    result = check_results(project, capsys)[f"n:{path}:4-13"]

    assert_changed(result, (4, 16), [split])


CLEANUP_PY = '''\
class BaseConnector:
    async def _cleanup_resources(self) -> None:
        """Clean up all resources associated with this connector."""
        errors = []

        # First close the client session
        if self.client_session:
            try:
                logger.debug("Closing client session")
                await self.client_session.__aexit__(None, None, None)
            except Exception as e:
                error_msg = f"Error closing client session: {e}"
                logger.warning(error_msg)
                errors.append(error_msg)
            finally:
                self.client_session = None

        # Then stop the connection manager
        if self._connection_manager:
            try:
                logger.debug("Stopping connection manager")
                await self._connection_manager.stop()
            except Exception as e:
                error_msg = f"Error stopping connection manager: {e}"
                logger.warning(error_msg)
                errors.append(error_msg)
            finally:
                self._connection_manager = None

        self._tools = None
'''
SESSION_BLOCK = CLEANUP_PY[
    CLEANUP_PY.index("        # First close") : CLEANUP_PY.index("        # Then stop")
]
MANAGER_BLOCK = CLEANUP_PY[
    CLEANUP_PY.index("        # Then stop") : CLEANUP_PY.index("        self._tools")
]
SWAPPED = CLEANUP_PY.replace(SESSION_BLOCK + MANAGER_BLOCK, MANAGER_BLOCK + SESSION_BLOCK.replace(
    '                logger.debug("Closing client session")\n'
    "                await self.client_session.__aexit__(None, None, None)\n",
    "                if not self._connection_manager:\n"
    '                    logger.debug("Closing client session (no connection manager)")\n'
    "                    await self.client_session.__aexit__(None, None, None)\n",
))  # fmt: skip


def test_a_block_moved_below_its_look_alike_in_its_own_function_is_found_there(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """mcp-use's `_cleanup_resources`: its cited "close the client session" block was
    moved below the "stop the connection manager" block, a guard added in it. Aligned in
    order, each block pairs with the other's shape and the citation keeps too little in
    either: `missing` (on main before). A region of its own function as like it as
    likeness asks is where it went: `changed` there."""
    path = "libraries/python/mcp_use/connectors/base.py"
    base = upstream.commit("connectors", {path: CLEANUP_PY})
    project.note("n", f"{base} {path}:7-16")
    swap = upstream.commit("fix subprocess cleanup (#231)", {path: SWAPPED})

    result = check_results(project, capsys)[f"n:{path}:7-16"]

    assert_changed(result, (19, 29), [swap])


POOL_GO = """\
package gateway

import "strings"

func (cp *clientPool) argsAndEnv(cfg Config, readOnly *bool) []string {
	var args []string

	// Volumes
	for _, mount := range eval.EvaluateList(cfg.Spec.Volumes, cfg.Config) {
		if mount == "" {
			continue
		}

		if readOnly != nil && *readOnly && !strings.HasSuffix(mount, ":ro") {
			args = append(args, "-v", mount+":ro")
		} else {
			args = append(args, "-v", mount)
		}
	}

	return args
}
"""
POOL_GO_USER = """\
package gateway

import "strings"

func (cp *clientPool) argsAndEnv(cfg Config) []string {
	var args []string

	// Volumes
	for _, mount := range eval.EvaluateList(cfg.Spec.Volumes, cfg.Config) {
		if mount == "" {
			continue
		}

		args = append(args, "-v", mount)
	}

	// User
	if cfg.User != "" {
		val := cfg.User
		if strings.Contains(val, "{{") && strings.Contains(val, "}}") {
			val = expand(val, cfg.Config)
		}
		if val != "" {
			args = append(args, "-u", val)
		}
	}

	return args
}
"""


def test_a_block_below_the_cited_loop_that_took_its_last_brace_is_outside_it(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """docker/mcp-gateway's volumes loop: its read-only `if`/`else` went, and a `// User`
    block written below the loop ends in an `if` that appends too. The alignment pairs
    the cited loop's last `}` with the new block's: a statement holding one stray cited
    token is not the citation's, and the span is the loop (it read 9-25 on main before)."""
    path = "pkg/gateway/clientpool.go"
    base = upstream.commit("pool", {path: POOL_GO})
    project.note("n", f"{base} {path}:8-19")
    drop = upstream.commit("drop read-only mounts (#306)", {path: POOL_GO_USER})

    result = check_results(project, capsys)[f"n:{path}:8-19"]

    assert_changed(result, (9, 15), [drop])


CONNECT_TS = """\
export const connectClient = async (
  client: Client,
  transport: Transport,
): Promise<Connected | undefined> => {
  const waitFor = 2500;
  const retries = 3;
  let count = 0;
  let retry = true;

  while (retry) {
    try {
      await client.connect(transport);
      return { client, cleanup: async () => transport.close() };
    } catch (error) {
      console.error(`Error connecting to the client: ${error}`);
      count++;
      retry = count < retries;
      if (retry) {
        try {
          await client.close();
        } catch {
          /* empty */
        }
        await sleep(waitFor);
      }
    }
  }
};
"""
CLOSED = """\
        try {
          await client.close();
        } catch {
          /* empty */
        }
"""
CLEANUP = """\
      if (transport) {
        try {
          await transport.close();
          console.log(`Cleaned up the transport of ${client.name}`);
        } catch (cleanupError) {
          console.error(`Error cleaning up the transport:`, cleanupError);
        }
      }
      if (client) {
        try {
          await client.close();
        } catch (cleanupError) {
          // the client may not be initialized
        }
      }
"""


def test_a_nested_statement_stays_missing_when_its_tokens_come_back_in_new_code(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """metamcp's `if (retry)` in its connect loop's `catch`: a commit took the `try {
    await client.close() }` out of it (`missing`: too little is left), and a later one
    wrote an `if (client) { try { await client.close() } ... }` above `count++` in the
    same `catch`. The alignment puts the cited tokens there, but the statements cited
    beside it in that block (`retry = ...`) bound it: it is not found again there (it
    read `changed` over both new blocks on main before)."""
    path = "apps/backend/src/lib/metamcp/client.ts"
    base = upstream.commit("client", {path: CONNECT_TS})
    project.note("n", f"{base} {path}:18-25")
    dropped = upstream.commit("2.1 (#74)", {path: CONNECT_TS.replace(CLOSED, "")})
    cleanup = CONNECT_TS.replace(CLOSED, "").replace(
        "      count++;\n", CLEANUP + "      count++;\n"
    )
    upstream.commit("fix process pool accumulation (#239)", {path: cleanup})

    result = check_results(project, capsys)[f"n:{path}:18-25"]

    assert result["verdict"] == "missing", (result["message"], result["current"])
    assert [h["commit"] for h in result["history"]] == [dropped]


def test_two_long_statements_are_compared_by_the_tokens_both_hold() -> None:
    """Pairing statements aligns each cited one with the version's; two long ones (mcphost's
    10,000 tokens of one against 150,000 of another took minutes) count the tokens both
    hold, order aside, as short ones count those kept in order."""
    swapped = ["x", "y"] * 1000, ["y", "x"] * 1000
    assert kept_count(*swapped) == 2000  # both hold all, in another order
    assert kept_count(["x", "y"], ["y", "x"]) == 1  # in order: one of the two


def assert_changed(result: dict[str, Any], span: tuple[int, int], history: list[str]) -> None:
    """`changed` at these HEAD lines, with these commits in its history."""
    assert result["verdict"] == "changed", (result["message"], result["current"])
    assert (result["current"]["start_line"], result["current"]["end_line"]) == span
    assert [h["commit"] for h in result["history"]] == history
