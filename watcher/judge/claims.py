"""A rule's claims, tested on the captures of the @target it found."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from watcher.models import ClaimResult
from watcher.parse.syntax import normalize

if TYPE_CHECKING:
    from watcher.locate.anchors import Found
    from watcher.models import Rule


def claims(rule: Rule, target: Found) -> tuple[ClaimResult, ...]:
    """Each of the rule's claims, tested on the captures of its @target."""
    return tuple(
        _claim(c.capture, c.test, c.expected, c.says, target.captures.get(c.capture))
        for c in rule.claims
    )


def _claim(capture: str, test: str, expected: str, says: str, actual: str | None) -> ClaimResult:
    if actual is None:
        holds = test == "not_matches"
    elif test == "equals":
        holds = actual == normalize(expected)
    elif test == "matches":
        holds = re.search(expected, actual) is not None
    else:
        holds = re.search(expected, actual) is None
    return ClaimResult(
        capture=capture, says=says, test=test, expected=expected, actual=actual, holds=holds
    )
