"""A citation rewritten in steps is carried step by step, as `git log -L` carries a
range commit by commit: a cited statement rewritten away in one commit is not found
again, in a later version, in code inserted next to the citation that reads as it did.
On a history built here in the shape of the real code (kubernetes-mcp-server's
`accesscontrol_round_tripper.go`, punkpeye/fastmcp's `FastMCP.ts`, scriv's imports).

The walk judges each version against the baseline in one jump; `history.stepwise` then
carries the citation through the commits it found, each from its lines in the version
before, and that decides the HEAD span and which commits changed the item."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.support import check_results
from watcher.gitbuild import Upstream

PY = "src/transport/session.py"
HEAD_OF = """\
class Session:
    def deliver(self, message, timeout):
{warm}        self.log.debug("delivering %s", message.id)
{first}        payload = self.codec.encode(message)
        if len(payload) > self.limit:
            raise PayloadTooLarge(message.id, len(payload))
        return self.stream.send(payload)
"""
CONNECT = """\
        try:
            self.stream.connect(timeout)
        except TimeoutError:
            return None
"""
DEADLINE = """\
        with self.deadline(timeout):
            self.stream.open()
"""
PING = """\
        try:
            self.stream.ping(timeout)
        except TimeoutError:
            return None
"""


def test_a_statement_rewritten_away_is_not_found_in_code_inserted_above(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cited `try` around `connect`, `encode` and size check: the `try` became a
    `with` block, then a `try` around a ping was inserted above it. Aligned with the
    baseline in one jump, the cited `try:`, `except TimeoutError:` and `return None`
    pair with the ping's, which read the same, and the HEAD span would begin at the ping
    (3-12), with the commit that inserted it in the history. Git, commit by commit,
    carried them into the `with` block first, and leaves the ping outside (`git log
    --first-parent -L 8,12` at HEAD lists the rewrite alone and reaches the cited 4-10);
    so does watch."""
    base = upstream.commit("session", {PY: HEAD_OF.format(warm="", first=CONNECT)})
    project.note("n", f"{base} {PY}:4-10")
    rewritten = upstream.commit("deadlines", {PY: HEAD_OF.format(warm="", first=DEADLINE)})
    upstream.commit("warm the stream", {PY: HEAD_OF.format(warm=PING, first=DEADLINE)})

    result = check_results(project, capsys)[f"n:{PY}:4-10"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (8, 12)
    assert [h["commit"] for h in result["history"]] == [rewritten]


COLLECT = "src/scriv/collect.py"
MODULE = """\
\"\"\"Collect fragments into the changelog.\"\"\"

import datetime
import logging

import click
{logs}
from .scriv import Scriv

logger = logging.getLogger()


def collect(add, edit, version):
    return Scriv().collect(version, when=datetime.date.today())
"""


def test_an_import_written_beside_a_cited_one_after_its_neighbour_went_is_no_change(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """scriv's `collect.py`: `import click` and `import click_log` cited together; the
    second deleted, then `from .config import Config` written where it was, and
    removed again. Aligned with the baseline in one jump, the new import pairs with the
    deleted one (both `import` lines), so the commits that wrote and removed it changed
    the item. Carried commit by commit, the citation is `import click` alone once its
    neighbour went, and the import written below it is outside: the deletion is the
    item's one change, and `git log --first-parent -L 6,6` at HEAD lists none of the
    two."""
    base = upstream.commit("collect", {COLLECT: MODULE.format(logs="import click_log\n")})
    project.note("n", f"{base} {COLLECT}:6-7")
    dropped = upstream.commit("drop click_log", {COLLECT: MODULE.format(logs="")})
    upstream.commit("config", {COLLECT: MODULE.format(logs="from .config import Config\n")})
    upstream.commit("config elsewhere", {COLLECT: MODULE.format(logs="")})

    result = check_results(project, capsys)[f"n:{COLLECT}:6-7"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (6, 6)
    assert [h["commit"] for h in result["history"]] == [dropped]


PLAN = "packages/core/src/tools/exit-plan-mode.ts"
INVOCATION = """\
export class ExitPlanModeInvocation extends BaseToolInvocation {
  getDescription(): string {
    return 'Exit plan mode';
  }

  private getResolvedPlanPath(): string {
BODY  }

  async execute(_signal: AbortSignal): Promise<ToolResult> {
    const resolvedPlanPath = this.getResolvedPlanPath();
    return { llmContent: resolvedPlanPath };
  }
}
"""


def test_a_cited_statement_is_not_carried_into_part_of_another(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """gemini-cli's `getResolvedPlanPath`: the cited `return path.resolve(...)` became a
    `const` and a `return path.join(...)`, then one `return` of a call over five lines.
    Carried from the two statements, the cited tokens fall on two of the call's argument
    lines: part of a statement, where a whole one was cited. That step is not taken;
    the one jump from the baseline, which holds the whole `return`, stands."""
    one = "    return path.resolve(this.config.getTargetDir(), this.params.plan_path);\n"
    base = upstream.commit("plan path", {PLAN: INVOCATION.replace("BODY", one)})
    project.note("n", f"{base} {PLAN}:7-7")
    two = ("    const safeFilename = path.basename(this.params.plan_filename);\n"
           "    return path.join(this.config.storage.getPlansDir(), safeFilename);\n")  # fmt: skip
    upstream.commit("plans dir", {PLAN: INVOCATION.replace("BODY", two)})
    call = ("    return resolveAndValidatePlanPath(\n"
            "      this.params.plan_filename,\n"
            "      this.config.storage.getPlansDir(),\n"
            "      this.config.getProjectRoot(),\n"
            "    );\n")  # fmt: skip
    upstream.commit("validate plan paths", {PLAN: INVOCATION.replace("BODY", call)})

    result = check_results(project, capsys)[f"n:{PLAN}:7-7"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (7, 11)


TRIPPER = "pkg/kubernetes/accesscontrol_round_tripper.go"
STRUCT = """\
package kubernetes

// AccessControlRoundTripper enforces access control on requests.
type AccessControlRoundTripper struct {
\tdelegate                http.RoundTripper
\trestMapperProvider      func() meta.RESTMapper
PREFIX\tvalidationEnabled       bool
\tvalidators              []api.HTTPValidator
}

func (rt *AccessControlRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
\treturn rt.delegate.RoundTrip(req)
}
"""


def test_a_field_written_above_a_cited_one_before_it_went_is_not_the_citation(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """kubernetes-mcp-server's `AccessControlRoundTripper`: `validationEnabled bool` and
    `validators` cited; a commit writes `apiPathPrefix string` above them, a later one
    deletes `validationEnabled`. The walk tells one change, the deletion, and in one
    jump from the baseline the deleted field pairs with the new one, which reads like
    it (a name and a type): the HEAD span would take it in. Carried from the version
    before the deletion, where the citation is as cited, the new field is code above
    it: the HEAD span is `validators` alone."""
    fields = "\tvalidationEnabled       bool\n"
    base = upstream.commit("round tripper", {TRIPPER: STRUCT.replace("PREFIX", "")})
    project.note("n", f"{base} {TRIPPER}:7-8")
    prefix = "\tapiPathPrefix           string\n"
    upstream.commit("api path prefix", {TRIPPER: STRUCT.replace("PREFIX", prefix)})
    gone = STRUCT.replace("PREFIX", prefix).replace(fields, "")
    deleted = upstream.commit("confirmation rules", {TRIPPER: gone})

    result = check_results(project, capsys)[f"n:{TRIPPER}:7-8"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (8, 8)
    assert [h["commit"] for h in result["history"]] == [deleted]


TS = "src/server/stdio.ts"
SERVER = """\
export class StdioServer {
  async callTool(name: string, args: Record<string, unknown>) {
    const response = await this.session.callTool({ name, arguments: args ?? {} }, undefined, { timeout: this.timeout });
    return response.content;
  }
}
"""
REWRITTEN = "    const response = await this.session.callTool(params, undefined, options);\n"
SPLIT = """\
  async callTool(name: string, args: Record<string, unknown>) {
    return (await this.callToolResult(name, args)).content;
  }

  async callToolResult(name: string, args: Record<string, unknown>) {
    const params = { name, arguments: args };
    const options = this.requestOptions();
{call}    return response;
  }
"""


def test_a_declaration_split_into_a_new_method_is_carried_across_the_split(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """openai-agents-js's `callTool`: its `const response = ...` rewritten to under half
    its tokens (found all the same, by its name path), then `callTool` split into a
    wrapper and `callToolResult`, which took the declaration unchanged. One jump from the
    baseline finds it in no scope the baseline had and misses it there; a step from the
    version before the split finds it as it was. The split is no change of it."""
    first = SERVER
    base = upstream.commit("v1", {TS: first})
    project.note("n", f"{base} {TS}:3")
    old = first.splitlines(keepends=True)[2]
    rewritten = upstream.commit("request options (#1)", {TS: first.replace(old, REWRITTEN)})
    split = "export class StdioServer {\n" + SPLIT.replace("{call}", REWRITTEN) + "}\n"
    upstream.commit("expose the full result (#2)", {TS: split})
    timed = "    const response = await this.session.callTool(params, undefined, { timeout: this.timeout });\n"
    again = upstream.commit("timeouts again (#3)", {TS: split.replace(REWRITTEN, timed)})

    result = check_results(project, capsys)[f"n:{TS}:3"]

    assert result["verdict"] == "changed"
    assert [c["commit"] for c in result["history"]] == [rewritten, again]
    assert result["introduced_by"]["commit"] == rewritten
    assert result["current"]["start_line"] == 9


PY_PROXY = "src/server/proxy.py"
PROXY = """\
class ProxyTool(Tool):
    task_config: TaskConfig = TaskConfig(mode="forbidden")
    _client: Client

    def __init__(self, client: Client, **kwargs):
        super().__init__(**kwargs)
        self._client = client


class ProxyPrompt(Prompt):
    \"\"\"A prompt rendered by a remote server.\"\"\"

    task_config: TaskConfig = TaskConfig(mode="forbidden")
    _client: Client

    def __init__(self, client: Client, **kwargs):
        super().__init__(**kwargs)
        self._client = client
"""


@pytest.mark.parametrize("moved", [False, True])
def test_a_field_left_alone_of_two_cited_is_the_item_without_the_one_after_it(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str], moved: bool
) -> None:
    """fastmcp's `ProxyPrompt`, its `task_config` and `_client` fields cited: a commit
    writes `_backend_name` below them (outside the item), and a later one deletes
    `_client` (and, in the real history, moved the class to `providers/proxy.py`). One
    jump from the baseline pairs the deleted field with `_backend_name`, and the HEAD
    span took it in; carried from the version before, the item is `task_config` alone,
    a whole field now, which a step used to refuse as a definition cited whole where
    part of one was (on main before: 13-14)."""
    base = upstream.commit("proxy", {PY_PROXY: PROXY})
    project.note("n", f"{base} {PY_PROXY}:13-14")
    beside = "    _client: Client\n    _backend_name: str | None = None\n\n    def __init__"
    named = PROXY.replace("    _client: Client\n\n    def __init__", beside)
    upstream.commit("backend names (#2648)", {PY_PROXY: named})
    factory = named.replace("    _client: Client\n", "").replace(
        "client: Client", "factory: Factory"
    )
    path = "src/providers/proxy.py" if moved else PY_PROXY
    files = {PY_PROXY: None, path: factory} if moved else {path: factory}
    dropped = upstream.commit("proxy provider (#2669)", files)

    result = check_results(project, capsys)[f"n:{PY_PROXY}:13-14"]

    assert result["verdict"] == "changed", result["message"]
    current = result["current"]
    assert (current["path"], current["start_line"], current["end_line"]) == (path, 13, 13)
    assert [h["commit"] for h in result["history"]] == [dropped]


TOOLS = "src/tools/client.ts"
DISCOVER = """\
export async function discoverTools(server: string, config: Config, client: Client) {
  const found: Tool[] = [];
  for (const decl of await client.listTools()) {
    if (!isEnabled(decl, server, config)) {
      continue;
    }
{body}  }
  return found;
}
"""
PUSHED = """\
    found.push(
      new DiscoveredTool(
        callable,
        server,
        decl.name,
        config.timeout ?? DEFAULT_TIMEOUT,
        config.trust,
      ),
    );
"""
LOCAL = """\
    const tool = new DiscoveredTool(
      callable,
      server,
      decl.name,
      config.timeout ?? DEFAULT_TIMEOUT,
      config.trust,
      undefined,
      context.messageBus,
    );
    found.push(tool);
"""
DECLARED = """\
    const callable = new CallableTool(
      client,
      decl,
      config.timeout ?? DEFAULT_TIMEOUT,
    );
    const tool = new DiscoveredTool(
      callable,
      server,
      decl.name,
      config.trust,
      undefined,
      context.messageBus,
    );
    found.push(tool);
"""
NORMALIZED = """\
    if (decl.schema) {
      try {
        decl.schema = normalize(decl.schema);
      } catch (error) {
        report(
          error,
          server,
        );
      }
    }
"""


def test_a_call_rewritten_into_a_local_declaration_stays_there_when_code_is_added_above(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """gemini-cli's `discoveredTools.push(new DiscoveredMCPTool(...))` in `discoverTools`:
    made `const tool = new DiscoveredMCPTool(...)` (with more arguments) and a
    `push(tool)`, then given a new `McpCallableTool` above it that took its timeout
    argument, then a schema fix written above both. Carried commit by commit, as `git log
    -L` carries it, the item is the `const tool` statement, and the fix is no change of
    it. A JavaScript `const` is a definition of its own, not the cited statement's kind:
    no step was taken past it, and one jump from the baseline, which took in the
    `CallableTool` above at the rework and not once the fix stood above that, blamed the
    fix."""

    def discover(body: str) -> dict[str, str]:
        return {TOOLS: DISCOVER.replace("{body}", body)}

    base = upstream.commit("v1", discover(PUSHED))
    project.note("n", f"{base} {TOOLS}:7-15")
    declared = upstream.commit("name the tool (#1)", discover(LOCAL))
    reworked = upstream.commit("rework discovery (#2)", discover(DECLARED))
    upstream.commit("normalize schemas (#3)", discover(NORMALIZED + DECLARED))

    result = check_results(project, capsys)[f"n:{TOOLS}:7-15"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (22, 29)
    assert [h["commit"] for h in result["history"]] == [declared, reworked]


TRANSPORT = "src/client/transport.py"
BY_URL = """\
    if config.url:
        check_url(config.url)
        log.info("connecting")
        metrics.count("connect")
        return HttpTransport(config.url)
"""
BY_COMMAND = """\
    if config.command:
{env}        transport = StdioTransport(config.command, config.args{extra})
        if debug:
            transport.on_stderr(log.debug)
        return transport
"""
ENV = """\
        env = sanitize(os.environ)
        env.update(config.env or {})
"""


def test_a_commit_between_two_changes_is_in_the_history_where_only_the_steps_reach_it(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """gemini-cli's stdio branch of `createTransport`: an environment built at its top,
    then the branch moved above the URL branch, whose logging went into it; one jump from
    the baseline pairs the logging lines and leaves the `if` and the environment out,
    while the steps keep them. A commit that then edited the environment alone changed
    none of the jump's lines and lay between two of its changes: it was in no step's walk
    either, and the history left it out (`git log -L` of the HEAD span lists it)."""

    def create(*branches: str) -> dict[str, str]:
        body = "".join(branches)
        return {TRANSPORT: f'def create(config, debug):\n{body}    raise ValueError("no")\n'}

    base = upstream.commit("v1", create(BY_URL, BY_COMMAND.format(env="", extra="")))
    project.note("n", f"{base} {TRANSPORT}:7-11")
    command = BY_COMMAND.format(env=ENV, extra=", env=env")
    built = upstream.commit("sanitize (#1)", create(BY_URL, command))
    logged = ENV + '        log.info("connecting")\n        metrics.count("connect")\n'
    short_url = "    if config.url:\n        return HttpTransport(config.url)\n"
    moved = upstream.commit(
        "stdio first (#2)", create(BY_COMMAND.format(env=logged, extra=", env=env"), short_url)
    )
    strict = logged.replace("sanitize(os.environ)", "sanitize(os.environ, strict=True)")
    edited = upstream.commit(
        "strict env (#3)", create(BY_COMMAND.format(env=strict, extra=", env=env"), short_url)
    )
    warned = BY_COMMAND.format(env=strict, extra=", env=env").replace("log.debug", "log.warning")
    last = upstream.commit("warn (#4)", create(warned, short_url))

    result = check_results(project, capsys)[f"n:{TRANSPORT}:7-11"]

    assert (result["current"]["start_line"], result["current"]["end_line"]) == (2, 10)
    assert [h["commit"] for h in result["history"]] == [built, moved, edited, last]
