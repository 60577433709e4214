"""Issue bookkeeping, sharded by upstream (`state/bookkeeping/OWNER__NAME.json`).

Each note belongs to one shard, its *owner*: the first upstream, in config order, that
the note cites. A run writes only the shards of the upstreams it checked, so jobs that
check different upstreams in parallel never write the same file, and the dashboard is
rebuilt from every shard instead of merging text. A shard holds, per note, where its
issue is (a cache: the marker in the issue body is the truth), its last status and
where it was last seen fresh; and the upstream's last run-level failure, for the
dashboard's banner. Nothing in it changes unless something happened, so a run with no
news leaves it byte-identical.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

from watcher.errors import WatchError
from watcher.state import store

if TYPE_CHECKING:
    from watcher.config import Config
    from watcher.models import Note, UpstreamStatus

SCHEMA = "watch.bookkeeping/1"
LEGACY = "issues.json"  # the one-file bookkeeping of earlier versions, read as a hint


class Seen(TypedDict):
    """Where a note was last seen fresh at one upstream: its head then, and that date."""

    commit: str | None
    date: str | None


class OpenIssue(TypedDict):
    url: str | None
    number: int | None


class Entry(TypedDict, total=False):
    """A note's row: its last status and title, where it was last seen fresh (by
    upstream), its open issue, the sink's handle of that issue, what the issue's body was
    rendered from (`watcher.issues.lifecycle.recorded`), and until when it is snoozed."""

    status: str
    title: str
    fresh: dict[str, Seen]
    issue: OpenIssue
    handle: str
    rendered: dict[str, str]
    snooze_until: str


class Board(TypedDict, total=False):
    """Where the dashboard issue watch opened is, and the account that opened it: an
    issue someone else opened is never taken for the dashboard."""

    handle: str
    url: str | None
    author: str | None


@dataclass(frozen=True)
class Scope:
    """What one run may write: its shards, the owner of every note, and whether to prune.

    `shards` maps each shard this run writes to the run-level failure of its upstream
    (None when it was checked). With `prune` (the run saw every note), entries of notes
    that no longer exist, or that another shard owns now, are dropped.
    """

    owners: Mapping[str, str] = field(default_factory=dict)
    shards: Mapping[str, str | None] = field(default_factory=lambda: {store.HOME: None})
    repos: Mapping[str, str] = field(default_factory=dict)  # shard -> upstream OWNER/NAME
    prune: bool = False
    complete: bool = False  # the run checked everything: shards it does not write are stale

    def owner(self, note_id: str) -> str:
        return self.owners.get(note_id) or next(iter(self.shards))


def run_scope(
    config: Config,
    notes: Mapping[str, Note],
    statuses: Sequence[UpstreamStatus],
    *,
    upstream: str | None,
    partial: bool,
    filtered: bool,
) -> Scope:
    """Which shards a run writes, and which shard owns each note.

    A note's owner is the first upstream it cites (config order, then by name), so
    that jobs of a matrix over upstreams never file the same note's issue twice.
    `upstream` is the one upstream the run checks (`--upstream`); a `partial` run checks
    part of each upstream's items (prunes nothing), a `filtered` one part of the items.
    """

    def canonical(repo: str) -> str:
        return _canonical(config, repo)

    home = canonical(config.upstream[0].repo) if config.upstream else ""
    owners = {note.id: note_shard(config, note) for note in notes.values()}
    repos = {store.slug(canonical(s.repo)): canonical(s.repo) for s in statuses}
    failure = {store.slug(canonical(s.repo)): s.error for s in statuses}
    if upstream is not None:
        shards = {store.slug(canonical(upstream)): None}
    else:
        shards = dict.fromkeys(sorted({*owners.values(), *repos}))
        if not shards:
            shards = {store.slug(home) or store.HOME: None}
    return Scope(
        owners=owners,
        shards={name: failure.get(name) for name in shards},
        repos=repos,
        prune=not partial,
        complete=not filtered,
    )


def note_shard(config: Config, note: Note) -> str:
    """The shard that owns a note: its first cited upstream's, in config order (then by
    name; an alias counts as the upstream it names), else the first upstream's."""
    order = {u.repo.lower(): n for n, u in enumerate(config.upstream)}
    repos = [c.repo for c in note.citations] + [c.repo for c in note.issue_citations]
    cited = {_canonical(config, repo) for repo in repos}
    first = min(cited, key=lambda r: (order.get(r.lower(), len(order)), r.lower()), default="")
    if not first and config.upstream:
        first = _canonical(config, config.upstream[0].repo)
    return store.slug(first) if first else store.HOME


def _canonical(config: Config, repo: str) -> str:
    configured = config.upstream_for(repo)
    return configured.repo if configured else repo.lower()


def shard_of(config: Config, repo: str) -> str:
    """The shard of upstream `repo` (`OWNER__NAME`), as `run_scope` names it."""
    return store.slug(_canonical(config, repo))


@dataclass
class Book:
    """Every shard as read at the start of the run; this run's shards are rewritten."""

    folder: Path
    shards: dict[str, dict[str, Any]]

    @classmethod
    def load(cls, state_dir: Path, log: Callable[[str], None]) -> Book:
        folder = state_dir / store.BOOK_DIR
        shards: dict[str, dict[str, Any]] = {}
        legacy = state_dir / LEGACY
        for name, path in [("", legacy), *store.shards(folder).items()]:
            try:
                data = store.read_json(path)
            except WatchError as exc:  # corrupt cache: markers still find every issue
                log(f"issues: {exc}; starting that shard afresh")
                data = {}
            if data and not isinstance(data.setdefault("notes", {}), dict):
                store.set_aside(path, "`notes` is not an object")  # valid JSON, wrong shape
                data = {}
            if data:
                shards[name] = data
        return cls(folder, shards)

    def copy(self) -> Book:
        """A copy whose `update` leaves this book as it is."""
        return Book(self.folder, {k: dict(v) for k, v in self.shards.items()})

    def entry(self, note_id: str, owner: str) -> Entry:
        """The note's entry: from its owner's shard, else from any shard that has one."""
        mine = self.shards.get(owner, {}).get("notes", {}).get(note_id)
        if isinstance(mine, dict):
            return cast(Entry, mine)
        for shard in self.shards.values():
            other = shard.get("notes", {}).get(note_id)
            if isinstance(other, dict):
                return cast(Entry, other)
        return {}

    def board(self) -> Board | None:
        """Where the dashboard is, as recorded by the run that opened or last found it."""
        for _, shard in sorted(self.shards.items()):
            board = shard.get("dashboard")
            if isinstance(board, dict) and board.get("handle"):
                return cast(Board, board)
        return None

    def rows(self, owners: Mapping[str, str], only: str | None = None) -> dict[str, Entry]:
        """Every note's entry across the shards (or in shard `only`); a note's owner wins
        over stale copies."""
        rows: dict[str, Entry] = {}
        for name, shard in sorted(self.shards.items()):
            if only is not None and name != only:
                continue
            for note_id, entry in (shard.get("notes") or {}).items():
                if not isinstance(entry, dict) or "status" not in entry:
                    continue
                if only is not None and owners.get(note_id, name) != name:
                    continue  # a stale copy: its owner's dashboard shows it
                if note_id not in rows or owners.get(note_id) == name:
                    rows[note_id] = cast(Entry, entry)
        return rows

    def failures(self, only: str | None = None) -> dict[str, str]:
        """Upstream -> its last run-level failure (of shard `only`), for the banner."""
        found: dict[str, str] = {}
        for name, shard in self.shards.items():
            if only is not None and name != only:
                continue
            failure = shard.get("failure")
            if isinstance(failure, dict) and failure.get("repo"):
                found[str(failure["repo"])] = str(failure.get("message", ""))
        return found

    def update(
        self,
        scope: Scope,
        entries: Mapping[str, Entry],
        dashboard: Board | None,
    ) -> None:
        """Fold this run's entries into its own shards (in memory)."""
        for name, failure in scope.shards.items():
            old = self.shards.get(name, {})
            notes: dict[str, Any] = dict(old.get("notes") or {})
            if scope.prune:
                notes = {n: e for n, e in notes.items() if scope.owners.get(n) == name}
            notes |= {n: e for n, e in entries.items() if scope.owner(n) == name}
            doc: dict[str, Any] = {"schema": SCHEMA, "notes": dict(sorted(notes.items()))}
            board = dashboard or old.get("dashboard")
            if board:
                doc["dashboard"] = board
            if failure is not None:
                doc["failure"] = {"repo": scope.repos.get(name, name), "message": failure}
            self.shards[name] = doc

    def save(self, scope: Scope) -> int:
        """Write this run's shards that changed; the number of files written."""
        written = 0
        for name in scope.shards:
            if name in self.shards:
                written += store.update_json(self.folder / f"{name}.json", self.shards[name])
        if scope.complete:  # upstreams no note cites any more
            for name, path in store.shards(self.folder).items():
                if name not in scope.shards:
                    path.unlink()
        return written
