"""`watch backtest`: replay a rule (or a note's items) over the branch's first-parent history
and list each commit where its verdict would have changed, with the release that shipped it.
A rule that fires exactly at upstream behaviour changes is a rule worth keeping."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from watcher.config import load
from watcher.errors import WatchError
from watcher.history import attribute, walk
from watcher.judge import classify
from watcher.judge.plan import Plan
from watcher.judge.session import Counts, Session
from watcher.mirror.mirrors import Mirror
from watcher.models import Result, Verdict
from watcher.pipeline import CheckOptions, gather, group


@dataclass(frozen=True)
class Transition:
    commit: str
    before: str
    after: str
    release: str | None


def backtest(
    config_file: Path, rule_id: str | None, note_id: str | None, since: str | None,
    *, offline: bool, out: TextIO, counts: Counts | None = None,
) -> int:  # fmt: skip
    """Print the verdict changes of each selected item since its baseline (or `since`);
    what the walks did is counted in `counts` when given."""
    config = load(config_file)
    options = CheckOptions(rule=rule_id, note=note_id, offline=offline, citations=rule_id is None)
    inputs = gather(config, options)
    if not inputs.items:
        if unusable := [e for e in inputs.errors if rule_id and e.id == rule_id]:
            raise WatchError(unusable[0].message)  # the rule's own error says what to fix
        what = f"rule {rule_id!r}" if rule_id else f"note {note_id!r}"
        raise WatchError(f"no {what} with trackable items; `watch notes` lists them")
    status = 0
    for upstream, items in group(config, inputs.items, options):
        if upstream is None:
            continue
        mirror = Mirror(upstream, config.cache, config.limits, Session(counts))
        try:
            if not offline:
                mirror.sync([*(i.commit for i in items), *([since] if since else [])])
            head = mirror.head()
            for item in items:
                planned = classify.plan(mirror, head, item, offline=offline)
                status = max(status, _report(mirror, planned, since, upstream.release_tags, out))
        finally:
            mirror.close()
    return status


def replay(
    mirror: Mirror, planned: Plan, since: str | None, tags: str
) -> tuple[str, list[Transition]]:
    """The item's state at the start, and every commit after it where that state changed."""
    if walk.judge_function(mirror, planned) is None:
        raise WatchError(
            f"{planned.item.id}: the rule does not hold at its baseline; run `watch rules lint`"
        )
    start = mirror.resolve(since) if since else planned.base
    if start is None:
        raise WatchError(f"--since {since}: no such commit in {mirror.upstream.repo}")
    mirror.prefetch(planned.blobs)
    judged = classify.judge(mirror, planned)
    if judged.verdict is Verdict.MISSING and judged.kind == "citation":
        # As `watch check` does: a definition renamed by the commit that lost it is
        # followed under its new name (`judge.renamed`), learnt from its history.
        attribute.item_history(mirror, planned, tags)
        judged = classify.judge(mirror, planned)
    judge = walk.judge_function(mirror, planned)
    assert judge is not None
    # The same engine as `watch check`: its verdict at HEAD says which files to follow,
    # and only the commits that touched the item's lines are judged.
    initial, steps = attribute.versions(mirror, planned, judged, start)
    walked = [(step.commit, step.files) for step in steps]

    def told(changes: list[tuple[str, str]]) -> list[tuple[str, str]]:  # as `check` tells them
        return attribute.stepped(mirror, planned, judged, initial, walked, changes)[0]

    first, found = walk.transitions(mirror, initial, walked, judge, told)
    changes = [
        Transition(commit, verdict(before), verdict(after), mirror.first_release(commit, tags))
        for commit, before, after in found
    ]
    return verdict(first), changes


def verdict(state: str) -> str:
    """A replayed state in the words `watch check` uses: the walk's `same` (the cited
    tokens, wherever they are) is `fresh`; changed, broken and missing are as they are."""
    return "fresh" if state == "same" else state


def _report(
    mirror: Mirror, planned: Plan | Result, since: str | None, tags: str, out: TextIO
) -> int:
    if isinstance(planned, Result):
        out.write(f"{planned.id}: error: {planned.message}\n")
        return 2
    first, changes = replay(mirror, planned, since, tags)
    start = (since or planned.base)[:12]
    out.write(f"{planned.item.id} (note {planned.item.note}): {first} at {start}\n")
    for change in changes:
        info = mirror.info(change.commit)
        release = change.release or "not in a release yet"
        out.write(f"  {info.date[:10]} {change.commit[:10]} {change.before} -> {change.after}"
                  f"  [{release}]  {info.summary}\n")  # fmt: skip
    if not changes:
        out.write("  no change on the first-parent history\n")
    return 0
