"""A partial citation is carried through its definition as git carries lines through a
diff (issue 35, "an item is what was cited"): the definition's lines are aligned first,
then the tokens of the lines that changed. On histories built here in the shape of the
real code where a token alignment alone answered otherwise."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.support import check_results
from watcher.gitbuild import Upstream
from watcher.locate.alignment import carry

PY = "src/tools/actions.py"
RUN = """\
class ShellAction:
    async def execute(cls, call, config, span, hooks):
        async def _run_call():
            output_text, status, meta = await cls.run(call)
            await gather(
                hooks.on_tool_end(call.tool, output_text),
                hooks.on_agent_end(call.tool, output_text),
            )

            raw_item = {"type": "shell_call_output", "call_id": call.id}
            if status:
                raw_item["status"] = status
            if meta:
                raw_item["provider_data"] = meta

            if span and config.include_sensitive_data:
                span.span_data.output = output_text

            return ToolCallOutputItem(
                agent=agent,
                output=output_text,
                raw_item=raw_item,
            )

        return await with_span(config, fn=_run_call)
"""
# The statement moved below the call, now made before the hooks run (#4257 in
# openai-agents-python's `tool_actions.py`).
COMMITTED = """\
class ShellAction:
    async def execute(cls, call, config, span, hooks, committer):
        async def _run_call():
            output_text, status, meta = await cls.run(call)
            raw_item = {"type": "shell_call_output", "call_id": call.id}
            if status:
                raw_item["status"] = status
            if meta:
                raw_item["provider_data"] = meta

            output_item = ToolCallOutputItem(
                agent=agent,
                output=output_text,
                raw_item=raw_item,
            )
            if committer:
                committer(output_item)

            await gather_with_cancel(
                hooks.on_tool_end(call.tool, output_text),
                hooks.on_agent_end(call.tool, output_text),
            )

            if span and config.include_sensitive_data:
                span.span_data.output = output_text

            return output_item

        return await with_span(config, fn=_run_call)
"""


def test_a_statement_moved_below_the_call_it_was_cited_with_is_left_behind(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """openai-agents-python's `ShellAction.execute` (tool_actions.py): the cited `if span
    and …: span.span_data.output = output_text` moved below the cited call. Token by
    token, keeping the statement or keeping the call's arguments tie (15 tokens each):
    the alignment kept the statement, then, once the statement read `span is not None`,
    the arguments, so that edit, which changed nothing the item was made of, entered its
    history. Line by line, as in git, the arguments' four lines are kept and the
    statement left behind, in every version."""
    base = upstream.commit("shell action", {PY: RUN})
    project.note("n", f"{base} {PY}:11-23")
    moved = upstream.commit("bind approvals to invocations (#4257)", {PY: COMMITTED})
    upstream.commit(
        "fix falsy optional handling (#4305)",
        {PY: COMMITTED.replace("if span and", "if span is not None and")},
    )

    result = check_results(project, capsys)[f"n:{PY}:11-23"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (6, 15)
    assert [h["commit"] for h in result["history"]] == [moved]
    assert result["introduced_by"]["commit"] == moved


def _tokens(*rows: str) -> tuple[list[str], list[tuple[int, int]]]:
    """Tokens written a line each, spaced, and each token's line (none indented)."""
    tokens = [(word, at) for at, row in enumerate(rows, 1) for word in row.split()]
    return [w for w, _ in tokens], [(at, 0) for _, at in tokens]


def test_lines_aligned_first_carry_what_the_tokens_alone_carry_where_nothing_ties() -> None:
    """The line pass changes only which of equal alignments is taken: a word renamed in
    a cited line, a line inserted between two cited ones, a cited call split over lines."""
    before, old = _tokens("def f ( ) :", "a = 1", "b = g ( x , y )", "return b")
    after, new = _tokens("def f ( ) :", "a = 1", "c = 2", "b = g (", "x , z", ")", "return b")
    for low, high in ((5, 8), (8, 16), (5, 18)):
        assert carry(before, low, high, after, (old, new)) == carry(before, low, high, after)
    assert carry(before, 8, 16, after, (old, new)) == (11, 19)
    assert carry(before, 5, 18, after, (old, new)) == (5, 21)


def test_a_line_the_line_pass_leaves_unaligned_is_carried_by_its_tokens() -> None:
    """openai-agents-python's `ViewImageTool.run` (view_image.py): the cited
    `display_path = …relative_path(…).as_posix()` went into a new `try:` above the
    `try:` that followed it. The two `try:` lines tie in the line diff; the one taken
    leaves the cited line deleted, so none of it survives there. Its tokens alone align
    it with its edited self: it is found, not missing."""
    before, old = _tokens("a = f ( x )", "b = g ( x ) . k ( )", "try :", "r = h ( a )")
    after, new = _tokens(
        "a = f ( y )", "try :", "b = g ( y ) . k ( )", "except E :", "b = None", "try :",
        "r = h ( a )",
    )  # fmt: skip
    assert carry(before, 6, 16, after, (old, new)) == (8, 18)


AUTH_PY = "src/server/auth/providers/github.py"
PROVIDER = '''\
class GitHubProvider(OAuthProxy):
    def __init__(self, *, client_id: str | None = None, timeout_seconds: int | None = None):
        """Initialize the GitHub OAuth provider.

        Args:
            client_id: GitHub OAuth app client ID, as shown on the app's settings page
            timeout_seconds: HTTP request timeout for GitHub API calls
            allowed_client_redirect_uris: List of allowed redirect URI patterns for
                MCP clients. If None, all URIs are allowed; if empty, none is.
        """
        settings = GitHubProviderSettings.model_validate(
            {"client_id": client_id, "timeout_seconds": timeout_seconds}
        )
        if not settings.client_id:
            raise ValueError("client_id is required")
        super().__init__(client_id=settings.client_id, timeout=settings.timeout_seconds or 10)
'''


def test_a_docstring_kept_while_the_statements_below_it_were_rewritten_is_most_of_it(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """fastmcp's `GitHubProvider.__init__` (auth/providers/github.py), cited from its
    docstring to its first statements: a commit dropped the settings object, rewriting
    the statements, and added "(defaults to 10)" to a line of the docstring. Counted a
    token, the docstring was one of ~40 cited tokens and the item `missing`, though git
    keeps most of its lines. Counted for its words, it is most of the citation, and
    kept but for the words added: the item is `changed`, at the docstring and the
    statements that replaced the cited ones."""
    base = upstream.commit("github provider", {AUTH_PY: PROVIDER})
    project.note("n", f"{base} {AUTH_PY}:3-15")
    rewritten = (
        PROVIDER.replace("calls\n", "calls (defaults to 10)\n")
        .replace(
            PROVIDER[PROVIDER.index("        settings =") : PROVIDER.index("        super()")],
            '        scopes = parse_scopes(None) or ["user"]\n',
        )
        .replace(
            "settings.client_id, timeout=settings.timeout_seconds or 10", "client_id, timeout=10"
        )
    )
    edit = upstream.commit("remove the provider settings classes (#2198)", {AUTH_PY: rewritten})

    result = check_results(project, capsys)[f"n:{AUTH_PY}:3-15"]

    assert result["verdict"] == "changed", result["message"]
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (3, 11)
    assert [h["commit"] for h in result["history"]] == [edit]


TEMPLATES_PY = "src/server/resources/templates.py"
CREATE = '''\
class ResourceTemplate(BaseModel):
    async def create_resource(self, uri: str, params: dict[str, Any]) -> Resource:
        """Create a resource from the template with the given parameters."""
        result = await self.fn(**params)
        return FunctionResource(uri=uri, name=self.name, fn=lambda: result)
'''


def test_a_one_line_docstring_extended_into_a_paragraph_is_changed() -> None:
    """python-sdk's `ResourceTemplate.create_resource` (resources/templates.py): its
    cited one-line docstring became the first sentence of a paragraph with a `Raises:`
    section, as the function came to return an `InputRequiredResult` too. Half its
    characters were no longer the old ones (the test it was kept by), so it was
    `missing`; every word of it is still there, in order: `changed`."""
    extended = CREATE.replace("-> Resource:", "-> Resource | InputRequiredResult:").replace(
        'parameters."""\n',
        "parameters.\n\n        An `InputRequiredResult` returned by the template function is\n"
        "        passed through unchanged; the retry's answers arrive on the context.\n\n"
        "        Raises:\n            ResourceError: If creating the resource fails.\n"
        '        """\n',
    )
    state, _, first, last = _placed(CREATE, extended, 3, 3)
    assert (state, first, last) == ("changed", 3, 10)


def test_a_docstring_reflowed_is_all_kept() -> None:
    """Whitespace inside a docstring is no change of its words: reflowed, it counts
    whole, and a statement cited with it and deleted is the smaller part."""
    wide = CREATE.replace(
        '"""Create a resource from the template with the given parameters."""',
        '"""Create a resource from the template\n        with the given parameters."""',
    ).replace("        result = await self.fn(**params)\n", "")
    state, _, first, last = _placed(CREATE, wide, 3, 4)
    assert (state, first, last) == ("changed", 3, 4)


CLEANUP = """\
class MCPServer:
    async def cleanup(self):
        async with self._cleanup_lock:
            try:
                await self.exit_stack.aclose()
            except asyncio.CancelledError as e:
                logger.debug(f"Cleanup cancelled for MCP server '{self.name}': {e}")
                raise
"""


def test_a_message_rewritten_into_a_helpers_call_keeps_its_words() -> None:
    """openai-agents-python's `MCPServer.cleanup` (mcp/server.py): the cited `try`'s
    `logger.debug(f"Cleanup cancelled for MCP server '{self.name}': {e}")` became a call
    of a logging helper taking "Cleanup cancelled for MCP server". Tokens of another
    shape replaced the call, and the message, which counts for its six words, kept
    none of them there: 18 of 40 survived, `missing`, where git keeps the `try` whole.
    Its words survive in the helper's string: `changed`."""
    helper = CLEANUP.replace(
        "                logger.debug(f\"Cleanup cancelled for MCP server '{self.name}': {e}\")\n",
        "                log_tool_action_debug(\n                    logger,\n"
        '                    server_message("Cleanup cancelled for MCP server", self),\n'
        "                    e,\n                )\n",
    )
    state, _, first, last = _placed(CLEANUP, helper, 4, 8)
    assert (state, first, last) == ("changed", 4, 12)


def _placed(
    old: str, new: str, start: int, end: int
) -> tuple[str, str | None, int | None, int | None]:
    """Where lines start..end of `old` are in `new` (`matching.place`)."""
    import hashlib

    from watcher.locate import anchors, matching
    from watcher.parse import syntax

    def parsed(text: str) -> syntax.Parsed:
        raw = text.encode()
        return syntax.parse(hashlib.sha1(raw).hexdigest(), "python", lambda: raw)

    anchor = anchors.anchor(parsed(old), TEMPLATES_PY, start, end)
    return matching.place(anchor, [(TEMPLATES_PY, parsed(new))])
