"""A citation edited a little at a time, until less than half of what was cited is left,
is still the citation: carried commit by commit, as `git log -L` carries lines, it is
`changed` where it is at HEAD, not `missing` from the commit that took its share below
half. On a history built here in the shape of the real code (Roo Code's `McpHub`, whose
`new StdioClientTransport({...})` had its environment rewritten by one commit and its
command and arguments by another).

One jump from the baseline to each version tells which commits changed the item; where
it loses the item for good, the commits before are crossed one step at a time, each from
the lines the item had in the version before, and from the commit that lost it the item
is walked on as it is there. Rewritten in one commit, it is missing still, and so is
code a commit cut into helpers, found spread over them all."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.support import check_results
from watcher.gitbuild import Upstream

TS = "src/services/mcp/hub.ts"
HUB = """\
export class Hub {{
\tprivate async connect(name: string, config: ServerConfig): Promise<void> {{
\t\tlet transport: StdioClientTransport
{setup}\t\ttransport = new StdioClientTransport({{
{command}\t\t\tcwd: config.cwd,
\t\t\tenv: {{
{env}\t\t\t}},
\t\t\tstderr: "pipe",
\t\t}})
\t\tawait this.client(name).connect(transport)
\t}}
{tail}}}
"""
COMMAND = "\t\t\tcommand: config.command,\n\t\t\targs: config.args,\n"
SHORT = "\t\t\tcommand,\n\t\t\targs,\n"
ENV = (
    "\t\t\t\t...(config.env || {}),\n"
    "\t\t\t\t...(process.env.PATH ? { PATH: process.env.PATH } : {}),\n"
    "\t\t\t\t...(process.env.HOME ? { HOME: process.env.HOME } : {}),\n"
)
DEFAULTS = "\t\t\t\t...getDefaultEnvironment(),\n\t\t\t\t...(config.env || {}),\n"
WRAP = (
    '\t\tconst windows = process.platform === "win32"\n'
    '\t\tconst command = windows ? "cmd.exe" : config.command\n'
    '\t\tconst args = windows ? ["/c", config.command, ...(config.args || [])] : config.args\n'
)
CLOSE = "\n\tasync close(): Promise<void> {\n\t\tawait this.client.close()\n\t}\n"


def hub(setup: str = "", command: str = COMMAND, env: str = ENV, tail: str = "") -> str:
    return HUB.format(setup=setup, command=command, env=env, tail=tail)


def test_a_statement_edited_in_two_steps_below_half_is_changed_where_it_is(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The environment's three spreads became two, then `command` and `args` became
    shorthand for locals set above. Against the cited statement, less than half of its
    words are left; each commit kept most of what the one before left. `git log
    --first-parent -L 7,16` at HEAD lists both commits, and nothing after them."""
    base = upstream.commit("hub", {TS: hub()})
    project.note("n", f"{base} {TS}:4-14")
    defaults = upstream.commit("default environment (#1)", {TS: hub(env=DEFAULTS)})
    wrapped = upstream.commit("windows (#2)", {TS: hub(setup=WRAP, command=SHORT, env=DEFAULTS)})
    upstream.commit("close (#3)", {TS: hub(setup=WRAP, command=SHORT, env=DEFAULTS, tail=CLOSE)})

    result = check_results(project, capsys)[f"n:{TS}:4-14"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (7, 16)
    assert [h["commit"] for h in result["history"]] == [defaults, wrapped]
    assert result["introduced_by"]["commit"] == defaults  # changed since
    assert result["candidates"] == []


def edited_thrice(upstream: Upstream) -> tuple[str, list[str], str]:
    """The hub, then the two edits that take the statement below half and one more that
    edits it (`stderr`): the baseline, the three commits, and the file after them."""
    base = upstream.commit("hub", {TS: hub()})
    defaults = upstream.commit("default environment (#1)", {TS: hub(env=DEFAULTS)})
    wrapped = upstream.commit("windows (#2)", {TS: hub(setup=WRAP, command=SHORT, env=DEFAULTS)})
    piped = hub(setup=WRAP, command=SHORT, env=DEFAULTS).replace('"pipe"', '"inherit"')
    return base, [defaults, wrapped, upstream.commit("inherit stderr (#3)", {TS: piped})], piped


def test_a_statement_edited_below_half_and_then_deleted_is_missing_from_the_deletion(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same two edits, then a commit that edits the statement again and one that
    deletes it: the history has all four, and the deletion is what made it missing."""
    base, edits, piped = edited_thrice(upstream)
    project.note("n", f"{base} {TS}:4-14")
    start, end = piped.index("\t\ttransport = new"), piped.index("\t\tawait this.client(name)")
    deleted = upstream.commit("connect elsewhere (#4)", {TS: piped[:start] + piped[end:]})

    result = check_results(project, capsys)[f"n:{TS}:4-14"]

    assert result["verdict"] == "missing"
    assert [h["commit"] for h in result["history"]] == [*edits, deleted]
    assert [h["state"] for h in result["history"]] == ["changed"] * 3 + ["missing"]
    assert result["introduced_by"]["commit"] == deleted


def test_a_statement_rewritten_below_half_in_one_commit_is_missing(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both edits in one commit: no step keeps half of it, and it is missing from there
    (`git blame --reverse` sees most of its lines end there)."""
    base = upstream.commit("hub", {TS: hub()})
    project.note("n", f"{base} {TS}:4-14")
    both = upstream.commit("windows (#2)", {TS: hub(setup=WRAP, command=SHORT, env=DEFAULTS)})

    result = check_results(project, capsys)[f"n:{TS}:4-14"]

    assert result["verdict"] == "missing"
    assert [h["commit"] for h in result["history"]] == [both]
    assert result["introduced_by"]["commit"] == both


PROXY = "src/proxy/__main__.py"
MAIN = """\
import argparse
import asyncio


def main() -> None:
    \"\"\"Start the proxy.\"\"\"
    parser = argparse.ArgumentParser(description="Proxy an MCP server over SSE.")
    parser.add_argument("command", help="the server to start")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--debug", action="store_true")
{more}    args = parser.parse_args()
{rest}

if __name__ == "__main__":
    main()
"""
SERVE = """\
    level = logging.DEBUG if args.debug else logging.INFO
    logging.basicConfig(level=level)
    logger = logging.getLogger(__name__)
    params = StdioServerParameters(command=args.command, env=dict(os.environ))
    settings = ServerSettings(host=args.host, port=args.port, log_level=level)
    logger.info("serving %s on %s:%d", args.command, args.host, args.port)
    asyncio.run(run_sse_server(params, settings))
"""
MORE = """\
    parser.add_argument("--named-server-config", default=None, help="a JSON file of servers")
    parser.add_argument("--cwd", default=None, help="the working directory of the server")
    parser.add_argument("--pass-environment", action="store_true", help="pass the environment")
    parser.add_argument("--allow-origin", nargs="+", default=[], help="origins allowed")
    parser.add_argument("--stateless", action="store_true", help="serve without sessions")
    parser.add_argument("--sse-port", type=int, default=0, help="the port to listen on")
"""
NAMED = """\
    if args.debug:
        logging.basicConfig(level=logging.DEBUG)
    servers = load_named_servers(args.named_server_config) if args.named_server_config else {}
    servers["default"] = StdioServerParameters(command=args.command, cwd=args.cwd)
    settings = ServerSettings(host=args.host, port=args.port, allow_origins=args.allow_origin)
    asyncio.run(run_sse_server(servers, settings))
"""
HELPERS = """\
import argparse
import asyncio


def _parser() -> argparse.ArgumentParser:
    \"\"\"The command line.\"\"\"
    parser = argparse.ArgumentParser(description="Serve stdio MCP servers over SSE.")
    _add_server_arguments(parser)
    _add_network_arguments(parser)
    _add_more_arguments(parser)
    return parser


def _add_server_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("command", nargs="?", help="the command of the default server")
    parser.add_argument("--debug", action="store_true")


def _add_network_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sse-port", type=int, default=0)
    parser.add_argument("--host", default="127.0.0.1")


def _add_more_arguments(parser: argparse.ArgumentParser) -> None:
{MORE}

def _servers(args: argparse.Namespace) -> dict[str, StdioServerParameters]:
    servers = load_named_servers(args.named_server_config) if args.named_server_config else {}
    servers["default"] = StdioServerParameters(command=args.command, cwd=args.cwd)
    return servers


def main() -> None:
    \"\"\"Start the proxy.\"\"\"
    args = _parser().parse_args()
    if args.debug:
        logging.basicConfig(level=logging.DEBUG)
    settings = ServerSettings(host=args.host, port=args.port, allow_origins=args.allow_origin)
    asyncio.run(run_sse_server(_servers(args), settings))


if __name__ == "__main__":
    main()
""".replace("{MORE}", MORE)


def test_a_function_cut_into_helpers_is_missing_not_the_stretch_of_them_all(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """mcp-proxy's `main` with the `__main__` guard below it: its serving half rewritten
    and six arguments added, then the whole cut into helpers written above a shorter
    `main`. One jump from the baseline keeps less than half of it. Carried from what the
    rewrite left, most of its tokens are still there, spread over the helpers: the
    stretch that takes them all in is the whole file, holding six functions where the
    lines carried held one. That is code cut up, not the citation carried on: it is
    missing from the cut."""
    base = upstream.commit("proxy", {PROXY: MAIN.format(more="", rest=SERVE)})
    project.note("n", f"{base} {PROXY}:5-23")
    named = upstream.commit("named servers (#1)", {PROXY: MAIN.format(more=MORE, rest=NAMED)})
    cut = upstream.commit("split the command line (#2)", {PROXY: HELPERS})

    result = check_results(project, capsys)[f"n:{PROXY}:5-23"]

    assert result["verdict"] == "missing"
    assert [h["commit"] for h in result["history"]] == [named, cut]
    assert result["introduced_by"]["commit"] == cut


@pytest.mark.parametrize("deleted", [False, True])
def test_a_commit_inside_a_stretch_one_jump_lost_the_statement_in_is_its_change(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str], deleted: bool
) -> None:
    """The two edits that take the statement below half, then one that edits it again
    (`stderr`), then one that writes `command` and `args` back in full: one jump from the
    baseline loses it after the second and finds it again after the fourth, and judges
    none of the commits in between. Each is carried a step at a time: the third is a
    change of the statement too, not part of the second (crush's `c.Initialize(...)`
    block, lost to one jump when a look-alike above it was flattened, and edited before a
    later commit let the jump find it again). `git log --first-parent -L` at HEAD lists
    all four; deleted after them, it is missing from there, with the four before."""
    base, changes, _ = edited_thrice(upstream)
    project.note("n", f"{base} {TS}:4-14")
    restored = hub(setup=WRAP, env=DEFAULTS).replace('"pipe"', '"inherit"')
    changes.append(upstream.commit("full command (#4)", {TS: restored}))
    if deleted:
        start, end = restored.index("\t\ttransport = new"), restored.index("\t\tawait this")
        gone = restored[:start] + restored[end:]
        changes.append(upstream.commit("connect elsewhere (#5)", {TS: gone}))

    result = check_results(project, capsys)[f"n:{TS}:4-14"]

    assert result["verdict"] == ("missing" if deleted else "changed")
    assert [h["commit"] for h in result["history"]] == changes
