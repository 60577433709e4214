"""One upstream's run: the caches its stages share and the counters they add to.

A `Session` is made for each upstream a run checks and held by its `Mirror` (every
stage that judges or walks is handed the mirror), and closed with it: what a run
remembers (anchors, spots at HEAD, searches of HEAD) does not outlive it, and no caller
clears a module's memo. Its `Counts` are what the run did, summed over its upstreams and
over the pool's workers (`watcher.judge.pool`): tests and the bench pass one in
(`watcher.cli.main(counts=...)`, `run_check(counts=...)`) and read it after.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from watcher.mirror.renames import Stats as PathStats
from watcher.parse.syntax import Stats as ParseStats
from watcher.state.warm import Stats as WarmStats

if TYPE_CHECKING:
    from watcher.judge.headsearch import HeadSearch
    from watcher.judge.relocate import Key
    from watcher.locate.anchors import Anchor
    from watcher.locate.extent import Spot
    from watcher.mirror.renames import Files

AnchorKey = tuple[str, str, int | None, int | None]  # (baseline blob, path, start, end)
ANCHORS_HELD = 8192  # an anchor is the citation's tokens and text: a few KB


@dataclass
class SearchStats:
    """What repo-wide searches cost (`watcher.judge.relocate`)."""

    searches: int = 0  # word indexes built: one per (mirror, language, HEAD)
    keys: int = 0  # blobs whose definitions were listed: once each per run
    unparsed: int = 0  # candidates whose bytes cannot define the name (`definitions.may_define`)

    def reset(self) -> None:
        self.searches = self.keys = self.unparsed = 0


@dataclass
class WalkStats:
    """What history walks did (`watcher.history.walk`): versions judged (parsed) and
    followed without parsing (per item), and the versions read (each once per walk, for
    all its items)."""

    judged: int = 0
    skipped: int = 0
    quiet: int = 0  # versions a missing item was missing in, told without parsing them
    read: int = 0
    searched: int = 0  # bytes searched for an item's lines and guard words, following it
    handed: int = 0  # versions parsed from the walk's own reads, not read again from the mirror
    judged_commits: list[str] = field(default_factory=list)

    def reset(self) -> None:
        self.judged = self.skipped = self.quiet = self.read = self.searched = 0
        self.handed = 0
        self.judged_commits.clear()


@dataclass
class PoolStats:
    """What the worker processes did (`watcher.judge.pool`)."""

    by_workers: int = 0  # tasks done by workers (none when a run stays in one process)
    worker_cpu: float = 0.0  # seconds of CPU the workers' shares took, as they told it

    def reset(self) -> None:
        self.by_workers = 0
        self.worker_cpu = 0.0


@dataclass
class Counts:
    """What a run did, stage by stage: the cost model's counters."""

    parse: ParseStats = field(default_factory=ParseStats)  # parses, tokens read
    paths: PathStats = field(default_factory=PathStats)  # git logs and rename detections
    search: SearchStats = field(default_factory=SearchStats)
    walk: WalkStats = field(default_factory=WalkStats)
    pool: PoolStats = field(default_factory=PoolStats)
    warm: WarmStats = field(default_factory=WarmStats)  # runs answered from the record

    def summed(self) -> list[object]:
        """The counters a forked worker adds to and sends back (the pool's own aside:
        the parent counts what its workers did)."""
        return [getattr(self, f.name) for f in fields(self) if f.name not in ("pool", "warm")]


class Session:
    """The caches one upstream's run shares between its stages, and its counters."""

    def __init__(self, counts: Counts | None = None) -> None:
        self.counts = counts if counts is not None else Counts()
        # Anchors by (baseline blob, path, lines). A stale citation needs its anchor twice,
        # to be judged and again for its history walk, and by the walk its baseline's parse
        # has long left the parse cache: it would be parsed again only to be anchored again.
        self.anchors: OrderedDict[AnchorKey, Anchor] = OrderedDict()
        # Where a stale citation is at HEAD, told while it was judged (`history.spots`).
        self.spots: dict[tuple[Anchor, Files], Spot] = {}
        # The run's one search of HEAD per (language, HEAD) (`judge.relocate`).
        self.searches: dict[tuple[str, str], HeadSearch] = {}
        # What each candidate blob defines, by (blob, language) (`judge.relocate`).
        self.defined: dict[tuple[str, str], frozenset[Key]] = {}
        # The bytes of each of its definitions, the same way (`judge.relocate._renames`).
        self.extents: dict[tuple[str, str], tuple[tuple[Key, int, int], ...]] = {}
        # Candidate files' bytes, those read twice, up to `relocate.CANDIDATE_BYTES`, and
        # the blobs read (`relocate.candidate_source`).
        self.candidates: dict[str, bytes] = {}
        self.candidates_read: set[str] = set()
        self.candidate_bytes = 0
        # A citation's anchor under each name its definition was renamed to, in order
        # (`judge.renamed`): looked for under those where its own name finds nothing.
        self.renamed: dict[Anchor, tuple[Anchor, ...]] = {}
        # The files a citation's definition was moved into by a commit that removed a file
        # it was followed in, by item id (`judge.relocate.moved_by`): its walks follow them.
        self.moved_into: dict[str, tuple[str, ...]] = {}
        # The name path of the definition a changed citation is in at HEAD (empty: none of
        # its kind and name), told while it was judged, by its anchor and HEAD's files
        # (`history.beside`).
        self.holders: dict[tuple[Anchor, Files], tuple[str, ...] | None] = {}

    def anchor(self, key: AnchorKey) -> Anchor | None:
        """The anchor made for this key, if any (kept as the most recently used)."""
        found = self.anchors.get(key)
        if found is not None:
            self.anchors.move_to_end(key)
        return found

    def remember_anchor(self, key: AnchorKey, anchor: Anchor) -> None:
        self.anchors[key] = anchor
        if len(self.anchors) > ANCHORS_HELD:
            self.anchors.popitem(last=False)

    def judged(self) -> None:
        """Every item is judged: drop the searches of HEAD. Only judging reads them, and
        on codex the Rust one alone holds ~25 MB through the history walks after; so do
        the candidate files' bytes kept (read again, if need be, once the walks are done)."""
        self.searches.clear()
        self.candidates.clear()
        self.candidate_bytes = 0

    def walked(self) -> None:
        """Every walk is done: drop the spots no walk took (those of walks that started
        in other files)."""
        self.spots.clear()
        self.holders.clear()

    def close(self) -> None:
        """The upstream is done: drop every cache (the counts stay, to be read)."""
        self.judged()
        self.walked()
        self.anchors.clear()
        self.defined.clear()
        self.extents.clear()
        self.candidates_read.clear()
