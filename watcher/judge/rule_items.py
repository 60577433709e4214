"""Rules as items: a rule's baseline is the commit of its note's citation of its file;
a rule that was read but cannot be used (its query does not compile, a claim names a
capture the query lacks) is an `error` result of that rule, with its id and its note,
so the note's issue tells it, not an error of the rule file that no note owns."""

from __future__ import annotations

from dataclasses import replace

from watcher.inputs.rules import InvalidRule
from watcher.judge import classify
from watcher.judge.plan import Item
from watcher.models import ErrorCode, Note, Result, Rule


def rule_item(
    rule: Rule, notes: dict[str, Note], duplicates: dict[str, list[str]] | None = None
) -> Item | Result:
    """A rule as an item: its baseline is the commit of the note's citation of its file."""
    note = notes.get(rule.note)
    stub = Item(
        id=rule.id,
        kind="rule",
        note=rule.note,
        note_file=note.file if note else rule.file,
        repo=rule.repo or "",
        commit="",
        path=rule.path,
        rule=rule,
    )
    twins = (duplicates or {}).get(rule.note)
    if note is None and twins:
        return classify.error(
            stub,
            ErrorCode.RULE_INVALID,
            f"{classify.rule_where(rule)}: rule {rule.id}: not checked: note {rule.note!r} "
            f"is the id of {' and '.join(twins)}; give each note its own id",
        )
    if note is None:
        return classify.error(
            stub,
            ErrorCode.RULE_INVALID,
            f"{classify.rule_where(rule)}: rule {rule.id}: note {rule.note!r} does not exist; "
            "set `note` to the id of a note in the notes folder (`watch notes` lists them)",
        )
    cited = [c for c in note.citations if rule.repo in (None, c.repo)]
    source = next((c for c in cited if c.path == rule.path), cited[0] if cited else None)
    if source is None:
        return classify.error(
            stub,
            ErrorCode.RULE_BASELINE,
            f"{classify.rule_where(rule)}: rule {rule.id}: note {note.id} cites no code of "
            f"{rule.repo or 'any repository'}, so the rule has no baseline commit; "
            "add a source citing the rule's file",
        )
    return replace(
        stub, note=note.id, note_file=note.file, repo=rule.repo or source.repo,
        commit=source.commit,
    )  # fmt: skip


def unusable(err: InvalidRule, item: Item | Result) -> Result:
    """The rule's error, given what the rule would have been as an item (`rule_item`):
    an item, or already an error (its note is not there either: both are said)."""
    code = ErrorCode.QUERY_INVALID if err.query else ErrorCode.RULE_INVALID
    if isinstance(item, Result):
        return item.model_copy(update={"message": f"{err}; {item.message}", "error": code})
    return classify.error(item, code, str(err))
