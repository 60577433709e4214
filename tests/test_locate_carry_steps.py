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
