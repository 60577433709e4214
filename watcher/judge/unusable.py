"""A rule that was read but cannot be used (its query does not compile, a claim names a
capture the query lacks), as an `error` result of that rule: its id, its note, so the
note's issue tells it, instead of an error of the rule file that no note owns."""

from __future__ import annotations

from watcher.inputs.rules import InvalidRule
from watcher.judge import classify
from watcher.judge.plan import Item
from watcher.models import ErrorCode, Result


def unusable(err: InvalidRule, item: Item | Result) -> Result:
    """The rule's error, given what the rule would have been as an item (`rule_item`):
    an item, or already an error (its note is not there either: both are said)."""
    code = ErrorCode.QUERY_INVALID if err.query else ErrorCode.RULE_INVALID
    if isinstance(item, Result):
        return item.model_copy(update={"message": f"{err}; {item.message}", "error": code})
    return classify.error(item, code, str(err))
