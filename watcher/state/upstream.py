"""One upstream's state file, `state/OWNER__NAME.json` (SPEC 7): what its last check saw.

It names the upstream (`repo`, `url`, `branch`, `head`), keeps what later runs reuse
(`tags`: the key of the release tags; `releases`: commit -> its first release; `paths`:
where cited files went, the mirror's memo) and, in `items`, each item's result with the
key of what it was judged on. Read whole when an upstream's check starts, written whole
when it ends, and only when something changed. A value or an entry of the wrong shape
(a hand edit, a bad merge) is dropped: what it held is only recomputed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import ValidationError

from watcher.errors import WatchError
from watcher.models import Location, Result
from watcher.state import store

if TYPE_CHECKING:
    from watcher.config import Upstream

SCHEMA = "watch.state/1"
PathsMemo = dict[str, dict[str, Any]]  # the mirror's (watcher.mirror.renames.Paths.memo)
_SHAPES: dict[str, type] = {"items": dict, "paths": dict, "releases": dict, "tags": str}


class Keyed(Protocol):
    """What a saved result is valid for (`watcher.judge.classify.Plan`): its key, or the
    key that also covers searching HEAD (asked only when the first does not match)."""

    @property
    def key(self) -> str: ...

    @property
    def searched_key(self) -> str: ...


@dataclass(frozen=True)
class Memo:
    """What later runs reuse: the tags' key, each commit's first release, the paths memo."""

    tags: str
    releases: dict[str, str | None]
    paths: PathsMemo


class UpstreamState:
    """The file as the last run left it, and the one way to write it again."""

    def __init__(self, file: Path, data: dict[str, Any]) -> None:
        self.file = file
        self._data = data
        self.ours = data.get("schema") == SCHEMA
        self._entries = _usable(data) if self.ours else {}

    @classmethod
    def read(cls, state_dir: Path, repo: str) -> UpstreamState:
        """The upstream's state, without top-level values of the wrong type."""
        file = store.upstream_file(state_dir, repo)
        saved = store.read_json(file)
        return cls(file, {k: v for k, v in saved.items() if isinstance(v, _SHAPES.get(k, object))})

    @property
    def tags(self) -> object:
        """The key of the release tags the saved releases hold for (None when unknown)."""
        return self._data.get("tags")

    def releases(self) -> dict[str, str | None]:
        """Commit -> its first release, as of `tags`."""
        return dict(self._data.get("releases", {}))

    def paths(self) -> PathsMemo:
        """Where each cited file went, by (baseline, path), with the HEAD it reached."""
        return dict(self._data.get("paths", {})) if self.ours else {}

    def holds(self, item_id: str, plan: Keyed) -> bool:
        """Whether the item's saved result holds for this plan (see Plan.key_for)."""
        entry = self._entries.get(item_id)
        if entry is None:
            return False
        key = entry.get("key")
        return key == plan.key or key == plan.searched_key  # the second only when needed

    def _saved(self, item_id: str) -> dict[str, Any] | None:
        """The item's saved result as JSON, if its entry has one."""
        data = self._entries.get(item_id, {}).get("result")
        return data if isinstance(data, dict) else None

    def result(self, item_id: str, head: str) -> Result | None:
        """The item's saved result, at this HEAD (None when the entry is damaged: the item
        is judged again)."""
        data = self._saved(item_id)
        current = data.get("current") if data is not None else None
        if data is not None and isinstance(current, dict):  # at this HEAD: set, not copied
            data = {**data, "current": {**current, "commit": head}}
        try:
            return Result.model_validate(data)
        except ValidationError:
            return None

    def blamed(self, plans: Iterable[tuple[str, Keyed]]) -> list[str]:
        """The introducing commits of the saved results that hold for these plans."""
        commits = []
        for item_id, plan in plans:
            result = self._saved(item_id) if self.holds(item_id, plan) else None
            if result is None:
                continue
            history = result.get("history")
            told = [result.get("introduced_by"), *(history if isinstance(history, list) else ())]
            commits += [c["commit"] for c in told if isinstance(c, dict) and _named(c)]
        return commits

    def remembered(
        self,
        memo: Memo,
        blamed: Mapping[str, str | None],
        *,
        partial: bool,
    ) -> Memo:
        """What this run leaves for the next: `memo` as the run used it, and the releases
        of the commits its results blame. A run that checked part of the items keeps what
        the others' runs remembered; with tags that moved since, it recomputed only some
        releases, so it records neither the new tags nor their releases."""
        paths = {**self._data.get("paths", {}), **memo.paths} if partial else memo.paths
        if partial and self.tags != memo.tags:
            return Memo(str(self._data.get("tags", "")), self.releases(), paths)
        releases = {**memo.releases, **blamed} if partial else dict(blamed)
        return Memo(memo.tags, releases, paths)

    def save(
        self,
        upstream: Upstream,
        head: str,
        judged: Iterable[tuple[str, Result]],
        memo: Memo,
        *,
        prune: bool,
    ) -> None:
        """Write the file: `judged` are (key, result) of this run's items; without `prune`,
        the other items' entries stay. A run with no news leaves the file as it was."""
        items: dict[str, Any] = {} if prune else dict(self._data.get("items", {}))
        for key, result in judged:
            items[result.id] = {"key": key, "result": result.model_dump(mode="json")}
        document = {
            "schema": SCHEMA,
            "repo": upstream.repo,
            "url": upstream.display_url,
            "branch": upstream.branch,
            "head": head,
            "tags": memo.tags,
            "releases": memo.releases,
            "paths": memo.paths,
            "items": items,
        }
        store.update_json(self.file, document, known=self._data)


def _usable(saved: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The saved entries worth trusting: of the right shape (a hand-edited or damaged
    entry costs judging that item again, never a crash)."""
    items = saved.get("items")
    if not isinstance(items, dict):
        return {}
    return {
        key: entry
        for key, entry in items.items()
        if isinstance(entry, dict) and isinstance(entry.get("key"), str)
    }


def _named(blamed: dict[str, Any]) -> bool:
    return isinstance(blamed.get("commit"), str)


def last_results(state_dir: Path, repo: str, ids: Iterable[str]) -> list[Result]:
    """The results the last run saved for these items (those it judged), unchanged;
    none when the file cannot be read, and none for a damaged entry."""
    try:
        saved = UpstreamState.read(state_dir, repo)
    except WatchError:
        return []
    found = []
    for item_id in ids:
        data = saved._saved(item_id)
        if data is not None:
            with contextlib.suppress(ValidationError):
                found.append(Result.model_validate(data))
    return found


def last_baselines(state_dir: Path, repo: str, ids: Iterable[str]) -> dict[str, Location]:
    """Where the last run found these items at their baseline (those it located)."""
    saved = UpstreamState.read(state_dir, repo)
    found = {}
    for item_id in ids:
        baseline = (saved._saved(item_id) or {}).get("baseline")
        if isinstance(baseline, dict) and baseline.get("start_line"):
            with contextlib.suppress(ValidationError):
                found[item_id] = Location.model_validate(baseline)
    return found
