"""Path histories: where a cited file went, commit by commit, along the first-parent history.

A file is followed forward from a baseline the way `git log --follow` follows it back:
every first-parent commit that touched the followed path is listed (its diff taken
against its first parent, so a rename merged from a side branch counts at the merge),
and where a commit removes the path, git's own similarity detection (`-M -C`), run on
that commit against its parent, names where it went: renames first, then copies. Each
successor is followed in turn. A chain A -> B -> C is found however much the file
changed in between, which one diff from baseline to HEAD cannot do.

Cost: one `git log` per link of the chain (the first one shared by every path of a
baseline: `prepare` and `prelog` log them all at once and each walk reads its own there),
one `git diff` of trees and one of content per removing commit, whose blobs come in one
batch (for all the items `prepare` is given, one batch per link of their chains). What a
run learned is remembered by (baseline, HEAD, path): a warm run asks git nothing, and a
moved HEAD continues from the last one.
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from watcher.errors import UpstreamError
from watcher.mirror import pathlog
from watcher.mirror.pathlog import Entry, Logged
from watcher.parse.languages import kin

if TYPE_CHECKING:
    from watcher.mirror.mirrors import Mirror

log = logging.getLogger("watch")

# How files are followed, in state/: an entry written another way is followed again
# (2: renames and copies; entries without it followed renames only).
FOLLOWS = 2
Files = tuple[tuple[str, str], ...]  # (path, blob) of a followed file, best first
# Past this many paths, one log of every file is cheaper than git matching each path in
# every commit (a pathspec of one path diffs only the trees on its way, or reads the
# commit-graph's Bloom filters where the mirror has them).
WHOLE_LOG = 32


@dataclass
class Stats:
    """What path histories asked git, for the cost model (tests read it, then reset it)."""

    logs: int = 0  # `git log` calls: one per link of a chain, or per baseline in a batch
    diffs: int = 0  # similarity detections: one per commit that removed a followed path

    def reset(self) -> None:
        self.logs = self.diffs = 0


@dataclass(frozen=True)
class Link:
    """A followed path that a first-parent commit removed, and where git says it went."""

    commit: str
    old: str
    new: str
    kind: Literal["rename", "copy"]
    similarity: int  # git's score, 0-100
    kept: bool = False  # a copy of a file the commit kept (changed, not removed)


@dataclass(frozen=True)
class Step:
    """A first-parent commit that touched the followed file, and the file after it."""

    commit: str
    files: Files  # empty when the file is gone after this commit


@dataclass(frozen=True)
class History:
    """A followed file from `base` to `head`: its versions and the links between its paths."""

    base: str
    head: str
    start: Files  # at the baseline
    steps: tuple[Step, ...]  # oldest first
    links: tuple[Link, ...] = ()
    removed: tuple[tuple[str, str], ...] = ()  # (path, commit): deleted, no successor found

    @property
    def at_head(self) -> Files:
        return self.steps[-1].files if self.steps else self.start

    def where(self) -> Where:
        """What location needs of this history: the file at HEAD and how it got there."""
        path, gone = self.removed[-1] if self.removed and not self.at_head else (None, None)
        return Where(self.head, self.at_head, self.links, gone, path)


@dataclass(frozen=True)
class Where:
    """A followed file at HEAD: its path(s) and blobs, the links, and, when it is gone,
    the commit that removed it with no rename git could see, and the path it removed (the
    cited one, or where git followed it to)."""

    head: str
    files: Files
    links: tuple[Link, ...] = ()
    removed_by: str | None = None
    removed_path: str | None = None

    @property
    def removals(self) -> tuple[str, ...]:
        """The commits that removed a followed path (renamed, copied away, or deleted)."""
        found = [link.commit for link in self.links if not link.kept]
        return tuple(dict.fromkeys([*found, *([self.removed_by] if self.removed_by else [])]))

    def similarity(self, path: str) -> int:
        """How alike git found `path` and the file it came from (100 when never moved)."""
        scores = [link.similarity for link in self.links if link.new == path]
        return min(scores) if scores else 100

    def dump(self) -> dict[str, Any]:
        return {
            "head": self.head,
            "files": [list(f) for f in self.files],
            "links": [_dumped(k) for k in self.links],
            "removed_by": self.removed_by,
            "removed_path": self.removed_path,
            "follows": FOLLOWS,
        }

    @classmethod
    def load(cls, data: dict[str, Any]) -> Where:
        return cls(
            str(data["head"]),
            tuple((str(p), str(b)) for p, b in data["files"]),
            tuple(Link(k[0], k[1], k[2], k[3], int(k[4]), bool(k[5:])) for k in data["links"]),
            data.get("removed_by"),
            data.get("removed_path"),
        )


@dataclass
class Paths:
    """Path histories of one mirror, remembered by (baseline, path) with the HEAD they
    reached; `memo` is what state/ keeps between runs."""

    mirror: Mirror
    memo: dict[str, dict[str, Any]] = field(default_factory=dict)
    _histories: dict[tuple[str, str, tuple[str, ...]], History] = field(default_factory=dict)
    _order: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)
    _ancestry: dict[tuple[str, str], bool] = field(default_factory=dict)
    _added: dict[str, dict[str, str]] = field(default_factory=dict)
    _touched: dict[str, frozenset[str]] = field(default_factory=dict)
    _logged: dict[tuple[str, str], list[Logged]] = field(default_factory=dict)
    _every: dict[str, list[Logged]] = field(default_factory=dict)  # by HEAD: logs of every file
    _moves: dict[tuple[str, str, str], list[tuple[Link, str]]] = field(default_factory=dict)
    _kin: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)  # `_candidates`

    def recall(self, memo: dict[str, dict[str, Any]]) -> None:
        """Start from what state/ kept of an earlier run (`remembered` gave it): the
        entries this way of following files wrote (older ones did not follow copies)."""
        self.memo = {k: v for k, v in memo.items() if v.get("follows") == FOLLOWS}

    def where(self, base: str, head: str, path: str) -> Where:
        """The file `path` at `base`, followed to `head` (see `prepare` to batch the work)."""
        key = f"{base}:{path}"
        known = self.memo.get(key)
        if known is not None and known.get("head") == head:
            return Where.load(known)
        since, paths, links = self._origin(base, path, head)
        later = self.follow(since, head, paths).where()
        found = Where(head, later.files, links + later.links, later.removed_by, later.removed_path)
        self.memo[key] = found.dump()
        return found

    def prepare(self, head: str, wanted: Iterable[tuple[str, str]]) -> None:
        """Answer `where` for many (base, path) pairs with one `git log` per starting point
        (a baseline, or the HEAD an earlier run reached): only the paths that log shows
        removed, or changed by a commit that added a file of their kind (a copy, maybe),
        are followed further, by `where`."""
        groups: dict[str, list[tuple[str, list[str], tuple[Link, ...]]]] = {}
        for base, path in dict.fromkeys(wanted):
            known = self.memo.get(f"{base}:{path}")
            if known is None or known.get("head") != head:
                since, paths, links = self._origin(base, path, head)
                groups.setdefault(since, []).append((f"{base}:{path}", paths, links))
        removals: list[tuple[str, str, str]] = []  # (commit, path, blob before)
        # One log per starting point (a path alone is logged as `where` would), then what
        # every listed commit added, in one batch for all of them.
        logs: dict[str, list[Entry]] = {}
        for since, members in groups.items():
            every = list(dict.fromkeys(p for _, paths, _ in members for p in paths))
            logs[since] = self._shared(since, head, every)
        self._diff_all(c for logged in logs.values() for c, _, _, old in logged if _existed(old))
        for since, members in groups.items():
            # Removed, or changed by a commit that added a file of its kind (a copy, maybe).
            gone = [(c, path, old) for c, path, blob, old in logs[since] if _existed(old)
                    and (blob is None or self._candidates(c, path))]  # fmt: skip
            removals += gone
            removed = {path for _, path, _ in gone}
            for key, paths, links in members:
                if removed.isdisjoint(paths):
                    files = tuple((p, b) for p in paths if (b := self.mirror.blob_id(head, p)))
                    self.memo[key] = Where(head, files, links).dump()
        self._chase(head, removals)

    def _chase(self, head: str, removals: list[tuple[str, str, str]]) -> None:
        """Where the removed files went, for every item at once, one link of the chains at
        a time: what similarity detection reads at each link comes in one fetch for all
        the removing commits, not one per item when `where` follows them (it finds the
        successors and logs found here)."""
        chased: set[tuple[str, str]] = set()
        while removals:
            self._detect_all(removals)
            later: list[tuple[str, str, str]] = []
            for commit, path, old in removals:
                for link, _ in self._successors(commit, path, old):
                    if (commit, link.new) not in chased:
                        chased.add((commit, link.new))
                        found = self._log(commit, head, [link.new])
                        # Each change of the new path too, as `follow` asks of it: one
                        # that added a file of its kind may have copied it.
                        later += [(c, p, before) for c, p, _, before in found if _existed(before)]
            removals = later

    def prelog(self, head: str, wanted: Iterable[tuple[str, str]]) -> None:
        """Log many (starting point, path) pairs to `head` with one `git log` per starting
        point, for the walks to come: each walk's first log of a path is read there."""
        groups: dict[str, list[str]] = {}
        for since, path in dict.fromkeys(wanted):
            if pathlog.literal(path) and self._answer(since, head, [path]) is None:
                groups.setdefault(since, []).append(path)
        for since, paths in groups.items():
            if len(paths) > 1:  # one path: the walk's own log costs the same
                self._shared(since, head, paths)

    def _shared(self, since: str, head: str, paths: list[str]) -> list[Entry]:
        """The entries of the logs of `paths` (each path's in log order), from one `git
        log` kept for the logs of fewer paths to read: of every file, read here by path,
        when there are many. Paths git would not read as they are get a log of their own."""
        literal = [p for p in paths if pathlog.literal(p)]
        others = [p for p in paths if not pathlog.literal(p)]
        found = self._log(since, head, others) if others else []
        if not literal:
            return found
        if (known := self._answer(since, head, literal)) is None and len(literal) > WHOLE_LOG:
            every = Logged.every(*self._run(since, head, []))
            self._logged.setdefault((since, head), []).append(every)
            self._every.setdefault(head, []).append(every)
            known = every.read(literal)
        return found + (known if known is not None else self._log(since, head, literal))

    def _answer(self, since: str, head: str, paths: Sequence[str]) -> list[Entry] | None:
        """What `git log` would say of `paths`, read off a shared log that covered them:
        one from `since`, or one of every file from further back, past `since` (a
        first-parent commit it lists: those after it are all of since..HEAD)."""
        for shared in self._logged.get((since, head), ()):
            if shared.covers(paths):
                return shared.read(paths)
        for every in self._every.get(head, ()):
            if since in every.after and every.covers(paths):
                return every.read(paths, every.after[since])
        return None

    def _origin(self, base: str, path: str, head: str) -> tuple[str, list[str], tuple[Link, ...]]:
        """Where a walk to `head` starts: at the HEAD an earlier run reached, when `head`
        descends from it and the file was still there, else at the baseline."""
        known = self.memo.get(f"{base}:{path}")
        if known is not None:
            earlier = Where.load(known)
            if earlier.files and self._descends(earlier.head, head):
                return earlier.head, [p for p, _ in earlier.files], earlier.links
        return base, [path], ()

    def follow(self, base: str, head: str, paths: Sequence[str]) -> History:
        """Every version of the files at `paths` (at `base`; a path may also appear later)
        from `base` to `head`, through every rename and copy."""
        key = (base, head, tuple(paths))
        if key not in self._histories:
            self._histories[key] = self._follow(base, head, list(paths))
        return self._histories[key]

    # --- the walk -----------------------------------------------------------------

    def _follow(self, base: str, head: str, paths: list[str]) -> History:
        start = {p: b for p in paths if (b := self.mirror.blob_id(base, p)) is not None}
        rank = {p: (i, 0) for i, p in enumerate(paths)}  # lower ranks first in Files
        events: list[tuple[str, str, str | None]] = []  # (commit, path, blob after it)
        links: list[Link] = []
        removed: list[tuple[str, str]] = []
        queue = [(base, paths)]
        seen = set(paths)
        away: set[str] = set()  # followed paths renamed away: one coming back is followed again
        parallel = len(paths) > 1  # chains live at once: their events need sorting
        while queue:
            since, followed = queue.pop(0)
            found = self._log(since, head, followed)
            # What each commit added, in one process; then every similarity detection's
            # blobs in one batch: of each removal, and of each change that added files
            # (a copy, git's `C`), not one fetch per commit.
            self._diff_all(c for c, _, _, old in found if _existed(old))
            self._detect_all((c, p, old) for c, p, _, old in found if _existed(old))
            renamed: list[Link] = []  # by this chain's commits: its log's later entries
            for commit, path, blob, old in found:
                if path in self._stopped(renamed, commit):
                    continue  # renamed away earlier: a new file at the old path is not ours
                events.append((commit, path, blob))
                moves = self._successors(commit, path, old) if _existed(old) else []
                if blob is None and not moves:
                    removed.append((path, commit))
                # Several successors, or a copy beside the file itself: chains live at once.
                parallel = parallel or len(moves) > 1 or (blob is not None and bool(moves))
                for link, new_blob in moves:
                    links.append(link)
                    renamed.append(link)
                    if link.kind == "rename":
                        away.add(path)
                    events.append((commit, link.new, new_blob))
                    parent_rank = rank.get(path, (len(rank), 0))
                    rank.setdefault(link.new, (parent_rank[0], len(rank)))
                    if link.new not in seen or link.new in away:  # new, or back from away
                        seen.add(link.new)
                        away.discard(link.new)
                        queue.append((commit, [link.new]))
        if parallel and links:
            events = self._sorted(base, head, events)
        return History(base, head, _ordered(start, rank), self._steps(events, start, rank),
                       tuple(links), tuple(removed))  # fmt: skip

    @staticmethod
    def _stopped(links: list[Link], commit: str) -> set[str]:
        return {link.old for link in links if link.kind == "rename" and link.commit != commit}

    def _steps(
        self, events: list[tuple[str, str, str | None]], start: dict[str, str],
        rank: dict[str, tuple[int, int]],
    ) -> tuple[Step, ...]:  # fmt: skip
        files = dict(start)
        steps: list[Step] = []
        for index, (commit, path, blob) in enumerate(events):
            files.pop(path, None)
            if blob is not None:
                files[path] = blob
            if index + 1 == len(events) or events[index + 1][0] != commit:
                steps.append(Step(commit, _ordered(files, rank)))
        return tuple(steps)

    def _sorted(
        self, base: str, head: str, events: list[tuple[str, str, str | None]]
    ) -> list[tuple[str, str, str | None]]:
        """Events of several chains in first-parent order (one rev-list, only when a file
        went to more than one place)."""
        if (base, head) not in self._order:
            out = self.mirror.git("rev-list", "--first-parent", "--reverse", f"{base}..{head}")
            self._order[(base, head)] = {c: i for i, c in enumerate(out.split())}
        order = self._order[(base, head)]
        return sorted(events, key=lambda e: order.get(e[0], -1))  # stable within a commit

    def _log(self, since: str, head: str, paths: Sequence[str]) -> list[Entry]:
        """(commit, path, blob after, blob before) for each first-parent commit in
        since..head touching `paths` (every file when none), oldest first; blob after is
        None for a deletion. Read off a shared log of these paths when there is one, and
        kept for the logs to come."""
        if paths and (known := self._answer(since, head, paths)) is not None:
            return known
        found, _ = self._run(since, head, paths)
        if paths and all(pathlog.literal(p) for p in paths):
            self._logged.setdefault((since, head), []).append(Logged.of(paths, found))
        return found

    def _run(
        self, since: str, head: str, paths: Sequence[str]
    ) -> tuple[list[Entry], dict[str, int]]:
        """`git log` of `paths` (every file when none): its entries, and for each commit
        listed the number of entries up to it (it included)."""
        self.mirror.session.counts.paths.logs += 1
        out = self.mirror.git(
            "log", "--first-parent", "--diff-merges=first-parent", "--reverse", "--raw",
            "--no-abbrev", "--no-renames", "--format=%x00%H", f"{since}..{head}",
            *(["--", *paths] if paths else []),
        )  # fmt: skip
        return pathlog.read_log(out)

    def _candidates(self, commit: str, path: str) -> dict[str, str]:
        """The files `commit` added that `path` may have gone (or been copied) to
        (languages.family)."""
        added = self.added(commit)
        if not added:  # most commits add no file: the path's kind is not even asked
            return {}
        same = kin(path)
        # By (commit, kind): a commit's followed paths share them, and on a big site the
        # kinds of a commit's added files were told again for each (43,000 times, a
        # second of a cold run of 1,000 codex citations).
        if (commit, same) not in self._kin:
            self._kin[(commit, same)] = {p: b for p, b in added.items() if kin(p) == same}
        return self._kin[(commit, same)]

    def _compared(self, commit: str, path: str, old_blob: str) -> list[str]:
        """The blobs similarity detection reads where `commit` removed `path`."""
        candidates = self._candidates(commit, path)
        return [old_blob, *candidates.values()] if candidates else []

    def _successors(self, commit: str, path: str, old_blob: str) -> list[tuple[Link, str]]:
        """Where `commit` moved or copied `path` (with the new blob), best first: a path
        it removed may have been renamed or copied, one it changed copied (git's `-C`
        finds copies of the files a commit changed)."""
        self._detect_all([(commit, path, old_blob)])
        return self._moves[(commit, path, old_blob)]

    def _detect_all(self, removals: Iterable[tuple[str, str, str]]) -> None:
        """`_successors` of many removals at once: the blobs similarity detection compares
        come in one fetch for all, and the diffs run side by side."""
        wanted = [r for r in dict.fromkeys(removals) if r not in self._moves]
        if not wanted:
            return
        self._diff_all(commit for commit, _, _ in wanted)
        self.mirror.prefetch(b for c, p, old in wanted for b in self._compared(c, p, old))
        # A blob the upstream lacks is left out of the comparison: git would try to fetch
        # it, and fail the diff of every path the commit moved.
        absent = self.mirror.absent
        held = {r: {p: b for p, b in self._candidates(r[0], r[1]).items() if b not in absent}
                for r in wanted if r[2] not in absent}  # fmt: skip
        asked = {r: found for r, found in held.items() if found}
        by_commit: dict[str, list[tuple[str, str, str]]] = {}
        for removal in asked:  # one diff per commit, whatever the paths it removed or changed
            by_commit.setdefault(removal[0], []).append(removal)
        self.mirror.session.counts.paths.diffs += len(by_commit)
        outs = self.mirror.gits([
            _similarity(c, [p for _, p, _ in group], {n for r in group for n in asked[r]})
            for c, group in by_commit.items()
        ])  # fmt: skip
        self._moves |= {removal: [] for removal in wanted}
        for (commit, group), out in zip(by_commit.items(), outs, strict=True):
            for removal in group:
                self._moves[removal] = self._moved(commit, removal[1], asked[removal], out)

    def _moved(
        self, commit: str, path: str, candidates: dict[str, str], out: str
    ) -> list[tuple[Link, str]]:
        """The renames and copies of `path` a similarity diff names (`_similarity`), best first."""
        moves = []
        for line in out.splitlines():
            status, old, new = ([*line.split("\t"), "", ""])[:3]
            if old == path and new in candidates:
                kind: Literal["rename", "copy"] = "rename" if status[0] == "R" else "copy"
                moves.append(Link(commit, path, new, kind, int(status[1:] or 0)))
        if not any(m.kind == "rename" for m in moves):  # git renames a removed file first
            moves = [replace(m, kept=True) for m in moves]
        moves.sort(key=lambda k: (k.kind != "rename", -k.similarity, k.new))
        log.debug("%s: %s went to %s", commit[:12], path, [m.new for m in moves] or "nowhere")
        return [(m, candidates[m.new]) for m in moves]

    def _descends(self, older: str, newer: str) -> bool:
        if (older, newer) not in self._ancestry:
            try:
                self.mirror.git("merge-base", "--is-ancestor", older, newer)
                self._ancestry[(older, newer)] = True
            except UpstreamError:  # not an ancestor (exit 1), or unknown here
                self._ancestry[(older, newer)] = False
        return self._ancestry[(older, newer)]

    def origins(
        self, base: str, head: str, path: str, limit: int = 4
    ) -> Generator[list[str], None, list[str]]:
        """Where git says `path` came from since `base`, newest first: for the commit that
        added it, the file it was renamed or copied from; and so on back (`--follow`,
        run for a file an item was found in without being followed there). Yields the
        blobs each similarity detection compares before it runs: the caller fetches
        them, with what other walks need."""
        found: list[str] = []
        while len(found) < limit:
            self.mirror.session.counts.paths.logs += 1
            added = self.mirror.git("log", "--first-parent", "--diff-filter=A", "--format=%H",
                                    f"{base}..{head}", "--", path).split()  # fmt: skip
            source = (yield from self._source(added[0], path)) if added else None
            if source is None or source in found:
                break
            found.append(source)
            path, head = source, f"{added[0]}^1"
        return found

    def source(self, commit: str, path: str) -> str | None:
        """The file `commit` renamed or copied into `path` (`_source`); None: it is new."""
        asking = self._source(commit, path)
        try:
            self.mirror.prefetch(next(asking))
            next(asking)
        except StopIteration as stop:
            found: str | None = stop.value
            return found
        return None  # not reached: `_source` yields once

    def _source(self, commit: str, path: str) -> Generator[list[str], None, str | None]:
        """The file `commit` renamed or copied into `path`, by git's similarity detection
        among the files it deleted or modified (their blobs yielded, then fetched if the
        caller did not)."""
        raw = self.mirror.git("diff", "--raw", "-z", "--no-abbrev", "--no-renames",
                              "--diff-filter=DMA", f"{commit}^1", commit)  # fmt: skip
        fields = raw.split("\0")
        same = kin(path)
        blobs: dict[str, str] = {}  # path -> the blob compared
        for meta, name in zip(fields[::2], fields[1::2], strict=False):
            parts = meta.split()
            if len(parts) < 5:
                continue
            if name == path:
                blobs[name] = parts[3]
            elif parts[4][0] in "DM" and kin(name) == same:
                blobs[name] = parts[2]
        if not blobs.keys() - {path}:
            return None
        self.mirror.session.counts.paths.diffs += 1
        yield list(blobs.values())
        self.mirror.prefetch(blobs.values())
        held = [p for p, b in blobs.items() if b not in self.mirror.absent]  # `_detect_all`
        sources = [p for p in held if p != path]
        if path not in held or not sources:
            return None
        out = self.mirror.git("diff", "--name-status", "-M", "-C", "--diff-filter=RC",
                              f"{commit}^1", commit, "--", path, *sources)  # fmt: skip
        moves = []
        for line in out.splitlines():
            status, old, new = ([*line.split("\t"), "", ""])[:3]
            if new == path and old in sources:
                moves.append((status[0] != "R", -int(status[1:] or 0), old))
        return min(moves)[2] if moves else None

    def remembered(self, keys: Iterable[tuple[str, str]]) -> dict[str, dict[str, Any]]:
        """The memo entries of these (base, path) pairs, for state/."""
        return {k: self.memo[k] for b, p in keys if (k := f"{b}:{p}") in self.memo}

    def added(self, commit: str) -> dict[str, str]:
        """The files a commit added against its first parent: path -> blob (none for a
        root commit)."""
        self._diff_all([commit])
        return self._added[commit]

    def touched(self, commits: Iterable[str]) -> dict[str, frozenset[str]]:
        """The files each commit added or changed against its first parent (a root
        commit: every file), for many commits in two git processes in all: one `git
        diff` per missing citation cost a second of a 5,000-citation run."""
        self._diff_all(commits)
        return {c: self._touched[c] for c in dict.fromkeys(commits)}

    def _diff_all(self, commits: Iterable[str]) -> None:
        """What each commit added, and added or changed (`added`, `touched`), against its
        first parent, for many commits in two git processes whatever their number."""
        wanted = [c for c in dict.fromkeys(commits) if c not in self._touched]
        if not wanted:
            return
        parents = self.mirror.git("rev-list", "--no-walk=unsorted", "--parents", "--stdin",
                                  stdin="".join(f"{c}\n" for c in wanted))  # fmt: skip
        pairs = [line.split()[:2] for line in parents.splitlines()]
        raw = self.mirror.git("diff-tree", "--stdin", "-r", "-z", "--raw", "--no-abbrev",
                              "--always", "--root", "--no-renames", "--diff-filter=AM",
                              stdin="".join(" ".join(p) + "\n" for p in pairs))  # fmt: skip
        for commit, (added, touched) in pathlog.diffed(raw, wanted).items():
            self._added[commit], self._touched[commit] = added, touched


def _similarity(commit: str, paths: Iterable[str], candidates: Iterable[str]) -> tuple[str, ...]:
    """The diff in which git's similarity detection tells where `commit` moved or copied
    each of `paths` among `candidates` (files it added)."""
    return ("diff", "--name-status", "-M", "-C", "--diff-filter=RC", f"{commit}^1", commit,
            "--", *paths, *sorted(candidates))  # fmt: skip


def _dumped(link: Link) -> list[Any]:
    """A link as state/ keeps it (`kept` only when true: older entries read the same)."""
    kept = [True] if link.kept else []
    return [link.commit, link.old, link.new, link.kind, link.similarity, *kept]


def _existed(blob: str) -> bool:
    """Whether a log entry's blob before its commit is a file (not git's zero id: added)."""
    return bool(blob.strip("0"))


def _ordered(files: dict[str, str], rank: dict[str, tuple[int, int]]) -> Files:
    """The best path first: the cited one, then renames before copies, by similarity."""
    return tuple(sorted(files.items(), key=lambda pb: (rank.get(pb[0], (99, 99)), pb[0])))
