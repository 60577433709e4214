"""`watch log ITEM_ID`: every first-parent commit since the baseline that changed a tracked
item, token by token and through every rename, with its PR and first release: `git log -L`
for a construct rather than for lines. The same engine as `watch check` and `backtest`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from watcher import attribute, classify, locate
from watcher import config as config_mod
from watcher.check import CheckOptions, gather, group
from watcher.classify import Plan
from watcher.errors import WatchError
from watcher.mirrors import Mirror
from watcher.models import Result
from watcher.paths import Files

BATCH = 64  # versions fetched per round trip

# (state, the item's tokens) at one commit: a change of either is a change of the item.
Look = tuple[str, tuple[str, ...]]


@dataclass(frozen=True)
class Entry:
    commit: str
    state: str  # same, changed, broken or missing, against the baseline
    pr: int | None
    release: str | None
    summary: str
    date: str


def item_log(config_file: Path, item_id: str, *, offline: bool, out: TextIO) -> int:
    """Print the item's history since its baseline, oldest first."""
    config = config_mod.load(config_file)
    options = CheckOptions(offline=offline, no_issues=True, issue_citations=False)
    items = [i for i in gather(config, options).items if i.id == item_id]
    if not items:
        raise WatchError(f"{item_id}: no tracked item has this id; `watch check` lists them")
    for upstream, group_items in group(config, items, options):
        if upstream is None:
            raise WatchError(f"{item_id}: no [[upstream]] for {items[0].repo}")
        mirror = Mirror(upstream, config.cache, config.limits)
        try:
            if not offline:
                mirror.sync()
            planned = classify.plan(mirror, mirror.head(), group_items[0], offline=offline)
            if not isinstance(planned, Plan):
                out.write(f"{item_id}: error: {planned.message}\n")
                return 2
            entries = history(mirror, planned, upstream.release_tags)
        finally:
            mirror.close()
        out.write(f"{item_id} (note {planned.item.note}) since {planned.base[:12]}\n")
        for e in entries:
            pr = f"#{e.pr}" if e.pr else "-"
            out.write(f"  {e.date[:10]} {e.commit[:10]} {pr:>6} {e.state:<8} "
                      f"[{e.release or 'not in a release yet'}]  {e.summary}\n")  # fmt: skip
        if not entries:
            out.write("  no change on the first-parent history\n")
    return 0


def history(mirror: Mirror, plan: Plan, release_tags: str) -> list[Entry]:
    """Every first-parent commit since the baseline after which the item differs from
    before it, oldest first."""
    mirror.prefetch(plan.blobs)
    look = _look_function(mirror, plan)
    start, steps = attribute.versions(mirror, plan, classify.judge(mirror, plan))
    mirror.prefetch(b for _, b in start)
    previous = look(start)
    changed = []
    for index, step in enumerate(steps):
        if index % BATCH == 0:
            mirror.prefetch(b for s in steps[index : index + BATCH] for _, b in s.files)
        current = look(step.files)
        if current != previous:
            changed.append((step.commit, current[0]))
        previous = current
    releases = mirror.releases(release_tags, (c for c, _ in changed))
    entries = []
    for commit, state in changed:
        blame = attribute.attribution(mirror, commit)
        entries.append(Entry(commit, state, blame.pr, releases[commit], blame.summary, blame.date))
    return entries


def _look_function(mirror: Mirror, plan: Plan) -> Callable[[Files], Look]:
    """The item's state and tokens in one version of its files (each version once)."""
    rule = plan.item.rule
    if rule is None:
        anchor = classify.anchor_of(mirror, plan)

        def citation(files: Files) -> Look:
            found = locate.find(anchor, [(p, classify.parse_at(mirror, p, b)) for p, b in files])
            if found is None:
                return "missing", ()
            return ("same" if found.identical else "changed"), found.tokens

        return functools.cache(citation)
    state = attribute.state_function(mirror, plan)
    base = classify.rule_baseline(mirror, plan, rule)
    if state is None or isinstance(base, Result):
        raise WatchError(f"{plan.item.id}: the rule does not hold at its baseline; run "
                         "`watch rules lint`")  # fmt: skip
    compiled, target = base

    def rule_look(files: Files) -> Look:
        found = locate.best_target(target, [
            t for p, b in files
            for t in locate.targets(compiled, p, classify.parse_at(mirror, p, b, compiled.language))
        ])  # fmt: skip
        return state(files), found.tokens if found else ()

    return functools.cache(rule_look)
