"""`watch log ITEM_ID`: every first-parent commit since the baseline that changed a tracked
item, token by token and through every rename, with its PR and first release: `git log -L`
for a construct rather than for lines. The walk that gives a stale result its `history`
in `watch check`, and `backtest` its transitions."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from watcher.config import load
from watcher.errors import WatchError
from watcher.history import attribute
from watcher.judge import classify
from watcher.judge.plan import Plan
from watcher.mirror.mirrors import Mirror
from watcher.pipeline import CheckOptions, gather, group
from watcher.state import aliases


def item_log(config_file: Path, item_id: str, *, offline: bool, out: TextIO) -> int:
    """Print the item's history since its baseline, oldest first."""
    config = load(config_file)
    options = CheckOptions(offline=offline, no_issues=True, issue_citations=False)
    tracked = gather(config, options).items
    items = [i for i in tracked if i.id == item_id]
    if not items and (now := aliases.resolve(config.state, item_id)) is not None:
        items = [i for i in tracked if i.id == now]
        if items:  # re-based by `watch fix` since the id was written down
            out.write(f"{item_id} was re-based by `watch fix`; it is now {now}\n")
            item_id = now
    if not items:
        raise WatchError(f"{item_id}: no tracked item has this id; `watch check` lists them")
    for upstream, group_items in group(config, items, options):
        if upstream is None:
            raise WatchError(f"{item_id}: no [[upstream]] for {items[0].repo}")
        mirror = Mirror(upstream, config.cache, config.limits)
        try:
            if not offline:
                mirror.sync(i.commit for i in group_items)
            planned = classify.plan(mirror, mirror.head(), group_items[0], offline=offline)
            if not isinstance(planned, Plan):
                out.write(f"{item_id}: error: {planned.message}\n")
                return 2
            entries = attribute.item_history(mirror, planned, upstream.release_tags)
        finally:
            mirror.close()
        out.write(f"{item_id} (note {planned.item.note}) since {planned.base[:12]}\n")
        for e in entries:
            pr = f"#{e.pr}" if e.pr else "-"
            out.write(f"  {e.date[:10]} {e.commit[:10]} {pr:>6} {e.state:<8} "
                      f"[{e.released_in or 'not in a release yet'}]  {e.summary}\n")  # fmt: skip
        if not entries:
            out.write("  no change on the first-parent history\n")
    return 0
