"""Item ids that `watch fix` retired, and the ids they became: `state/aliases/OWNER__NAME.json`.

A citation's id carries its lines (`NOTE:FILE:START-END`), so re-basing it (`fix
--accept`, or a moved citation written by `fix --write`) gives it a new id. Issues and
comments written before still name the old one; `watch log OLD_ID` follows this map to
the item as it is cited now. Chains are kept short: when an id is re-based again, every
old id that led to it is pointed at the newest. Sharded per upstream, as all state is.
"""

from __future__ import annotations

from pathlib import Path

from watcher.state.store import read_json, shards, slug, update_json

FOLDER = "aliases"


def record(state_dir: Path, repo: str, renamed: dict[str, str]) -> None:
    """Remember `old id -> new id` for one upstream's items (ids that did not change are
    left out); written atomically, and only when something is new."""
    renamed = {old: new for old, new in renamed.items() if old != new}
    if not renamed:
        return
    path = state_dir / FOLDER / f"{slug(repo)}.json"
    known = read_json(path)
    merged = {old: renamed.get(new, new) for old, new in known.items()} | renamed
    merged = {old: new for old, new in merged.items() if old != new}  # re-based back: no alias
    path.parent.mkdir(parents=True, exist_ok=True)
    update_json(path, dict(sorted(merged.items())), known)


def resolve(state_dir: Path, item_id: str) -> str | None:
    """The id an old item id became, from any upstream's map; None when it was never
    retired."""
    for path in shards(state_dir / FOLDER).values():
        new = read_json(path).get(item_id)
        if isinstance(new, str):
            return new
    return None
