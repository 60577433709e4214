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


def _tokens(*rows: str) -> tuple[list[str], list[int]]:
    """Tokens written a line each, spaced, and each token's line."""
    tokens = [(word, at) for at, row in enumerate(rows, 1) for word in row.split()]
    return [w for w, _ in tokens], [at for _, at in tokens]


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
