"""A citation rewritten in steps should be carried step by step, as `git log -L` carries
a range commit by commit: a cited statement rewritten away in one commit is not found
again, in a later version, in code inserted next to the citation that reads as it did.
On a history built here in the shape of the real code.

Today the HEAD span is found by aligning the baseline's definition with HEAD's in one
jump (`alignment.carried`, then `alignment.bounded`), and this class is open: `bounded`
cuts inserted code only where a statement holding no cited token lies between it and
the citation. Carrying the span through the versions the history walk judges (each
version's span re-cited, then found in the next) gives git's span here, but on the
differential's upstreams it changed 6 of 448 partial citations' HEAD spans: 3 to git's
(python-sdk `sse_client` 54-161 -> 54-160, which drops a commit that only added a line
below the range; gemini-cli `models.ts` 305-323 -> 305-332 and `policy-engine.ts`
253-262 -> 253-288), 1 away from it (a cited `return` replaced twice is carried by
pieces to two argument lines of the new `return`), 1 git cannot tell; and it could not
follow 12 items (files split across packages, an intermediate step keeping less than
FOUND_SHARE of the previous version's span). Not adopted: see the branch h-carry's
report."""

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


@pytest.mark.xfail(
    strict=True,
    reason="the HEAD span is carried from the baseline in one jump, not version by version",
)
def test_a_statement_rewritten_away_is_not_found_in_code_inserted_above(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cited `try` around `connect`, `encode` and size check: the `try` became a
    `with` block, then a `try` around a ping was inserted above it. Aligned with the
    baseline in one jump, the cited `try:`, `except TimeoutError:` and `return None`
    pair with the ping's, which read the same, and the HEAD span begins at the ping (a
    statement that holds those tokens, so it is not cut as code inserted at the edge).
    Git, commit by commit, carried them into the `with` block first, and leaves the
    ping outside (`git log --first-parent -L 8,12` at HEAD lists the rewrite alone and
    reaches the cited 4-10); so should watch. Watch gives 3-12, and the commit that
    inserted the ping in the history."""
    base = upstream.commit("session", {PY: HEAD_OF.format(warm="", first=CONNECT)})
    project.note("n", f"{base} {PY}:4-10")
    rewritten = upstream.commit("deadlines", {PY: HEAD_OF.format(warm="", first=DEADLINE)})
    upstream.commit("warm the stream", {PY: HEAD_OF.format(warm=PING, first=DEADLINE)})

    result = check_results(project, capsys)[f"n:{PY}:4-10"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (8, 12)
    assert [h["commit"] for h in result["history"]] == [rewritten]
