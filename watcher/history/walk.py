"""Walk an item's file history judging only the versions that can matter.

An item occupies some lines of its file in each version (the cited tokens, the
definition that holds them, a rule's scope). Walking back from HEAD, a commit whose
previous version still holds those lines byte for byte, with the code around them, did
not touch the item: its lines are followed to where they were (as `git log -L` follows a
range) and the version is not parsed. A changed item's followed bytes take in the whole
definition that held the cited lines (`locate` chooses its lines among all of it), and it
is also judged where the version before may hold the cited tokens verbatim elsewhere
(`probes.stays_unmatched`): `locate` would place it there. Only a commit that touched
the item is judged, by the same state function a full walk uses, so the answer stays
exact: a change made, reverted and made again is blamed on the second time, and a change
merged from a branch on the merge (the history is first-parent). An item with no lines
(missing) has nothing to follow: the version before a commit is judged only when what
`locate` would read there differs from the version after (`probes.stays_missing`, from
the bytes alone).

Reading a version's bytes is cheap (one `cat-file`); parsing it is what costs, so the
versions parsed are those that touched the item, not all the versions of its file.

Why bytes, and not git's own hunks (`git log -p -U0 --first-parent`): git must read both
versions of every commit to diff them, as `git log -L` does, and the diff costs more than
the reading. On a 3,000-line file edited in 1,000 commits, `git log -p -U0` took 0.37-0.57 s
of CPU, `git log -L` 0.33 s, and `git cat-file --batch` of all 1,000 versions 0.02-0.04 s;
in a blobless mirror a diff needs the same blobs as this walk. Each step compares the two
versions once, for all the items of the walk (`_Sources.stretches`: the bytes that
differ, in one stretch or cut into several where the items would search more than the
cut costs), and following an item through it is then a few searches of those bytes at
memcmp speed: its lines, its guards counted (`follow.moved`), and a changed item's probes
(`probes.stays_unmatched`), whose places in the newer version tell those in the older.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from watcher.history import candidates, follow, spots
from watcher.inputs import quotes
from watcher.judge import classify
from watcher.judge.claims import claims
from watcher.judge.plan import Plan
from watcher.judge.pool import Last
from watcher.locate import probes
from watcher.locate.anchors import Anchor
from watcher.locate.targets import best_target, literals, targets
from watcher.locate.windows import Stretches
from watcher.mirror import objects
from watcher.mirror.mirrors import Mirror
from watcher.mirror.renames import Files
from watcher.models import Result
from watcher.parse import languages, syntax
from watcher.parse.diffs import common_ends, differing

AHEAD = 16  # versions asked of git ahead of the one being read
SPLIT_BYTES = 65_536  # bytes searched in the time `differing` takes to find a stretch
PROBES = 3  # searches a changed item's probes make, for `_weight`
MISSING = 64  # a missing item's `_weight`: cutting what differs costs less than a parse


# Whether a changed item stays without a verbatim match in the older of two versions: the
# file's language, the newer version, the older, the bytes both hold at the item's place,
# and where the two differ (`_Sources.stretches`).
Unmatched = Callable[[str, syntax.Parsed, syntax.Parsed, bytes, Stretches], bool]


@dataclass(frozen=True)
class Place:
    """An item's state in one version and the lines it occupies there (none: missing)."""

    state: str
    path: str | None = None
    start: int | None = None
    end: int | None = None
    # Texts whose count in the file must not change either: the names a rule's queries
    # insist on; a citation's definition's names, and the first line of each definition
    # around it (`spots._guards`: a rename outside the lines).
    guards: tuple[str, ...] = ()
    # The item's tokens there (None: not told, a quote): a version whose tokens differ
    # from the version before is a change of the item, even in the same state.
    tokens: tuple[str, ...] | None = None
    # Missing here: whether it is missing in an older version too, told from the two
    # versions' bytes without parsing the older one (None: judge it). Called with the
    # file's language, the newer version, the older one, where the two differ, and whether
    # the definitions it could be found in by name are the same in both (`candidates`).
    stays: Callable[[str, syntax.Parsed, syntax.Parsed, Stretches, bool], bool] | None = field(
        default=None, compare=False
    )
    # The bytes followed for it, [low, high) (None: not told): its lines and the code
    # around them (`_with_context`), read off the parse that placed it, so that following
    # them need not split the file into lines.
    span: tuple[int, int] | None = field(default=None, compare=False)
    # Changed here: whether an older version that still holds its lines holds no verbatim
    # match either, which `locate` would prefer to them (None: judge it). Called as `stays`,
    # and with the bytes both versions hold at the item's place (its followed lines).
    unmatched: Unmatched | None = field(default=None, compare=False)
    # Missing here: where, in each file, the definitions lie that `locate` could find it in
    # by name (`candidates.extents`; None: not told).
    extents: tuple[tuple[str, candidates.Extents | None], ...] | None = field(
        default=None, compare=False
    )


Read = Callable[[str], bytes]  # a blob's bytes
# The item's place in one version of its files, reading them through the walk's own
# `cat-file` (the versions it follows are there already).
Judge = Callable[[Files, Read], Place]


class _Sources(objects.Blobs):
    """Blob bytes for a walk (`watcher.mirror.objects.Blobs`), and the last two versions
    read without a tree, for `_stays`; what the walk did is counted in the run's session
    (`stats`: the walks back from HEAD behind `introduced_by`, `history`, `backtest` and
    `watch log`)."""

    def __init__(self, mirror: Mirror, size: int = 2 * AHEAD + 4) -> None:
        super().__init__(mirror, size)
        self.bare: OrderedDict[str, syntax.Parsed] = OrderedDict()
        self.counts: OrderedDict[str, dict[bytes, int]] = OrderedDict()
        self.languages: dict[str, str] = {}
        # Searches per byte the items of the step would make in what differs, and how many
        # stretches the last cut found (`stretches`).
        self.weight, self.cuts = 0, 4
        self.pairs: OrderedDict[tuple[str, str], list[tuple[int, int, int, int]]] = OrderedDict()
        self.stats = mirror.session.counts.walk
        self.parse_stats = mirror.session.counts.parse

    def unparsed(self, blob: str) -> syntax.Parsed:
        """A version with its word counts and line starts and no tree, for `_stays`: the
        last two are kept, as a walk compares each version with the one after it."""
        if blob not in self.bare:
            version = syntax.Parsed(blob, syntax.TEXT, None, self(blob), self.parse_stats)
            if self.bare:  # the version after it, whose word counts need only editing
                version.counted_from(next(reversed(self.bare.values())))
            self.bare[blob] = version
            if len(self.bare) > 2:
                self.bare.popitem(last=False)
        return self.bare[blob]

    def language(self, path: str) -> str:
        """A file's language (`languages.for_path`; TEXT for the rest), told once per walk."""
        if path not in self.languages:
            self.languages[path] = languages.for_path(path) or syntax.TEXT
        return self.languages[path]

    def stretches(self, new: str, old: str) -> list[tuple[int, int, int, int]]:
        """Where two versions differ (the older's bytes, then the newer's), found once per
        step for every item of the walk and both of their checks (following their lines,
        `_unmatched`), which search only there. One stretch, from the first byte that
        differs to the last (`common_ends`), or, where the items would search much of the
        file in it, the stretches `diffs.differing` cuts it into: a commit that edited
        codex's 150 KB config/mod.rs in four places differs in 1 KB, not in the 67 KB
        between its first edit and its last. Cutting costs about one search of
        SPLIT_BYTES per stretch found (a commit that edits thirty places of a file, 1.3 ms),
        so it is done where the items' searches of the one stretch (`weight`, searches per
        byte, set each step) would cost more, as many stretches as the last cut found."""
        key = (new, old)
        if key not in self.pairs:
            before, after = self(old), self(new)
            start, end = common_ends(after, before)
            found = [(start, len(before) - end, start, len(after) - end)]
            if start == len(before) - end == len(after) - end:
                found = []
            elif self.weight * (len(before) - end - start) > SPLIT_BYTES * self.cuts:
                found = differing(before, after, 0, len(before), 0, len(after))
                self.cuts = max(1, len(found))
            self.pairs[key] = found
            if len(self.pairs) > 4:
                self.pairs.popitem(last=False)
        return self.pairs[key]

    def checked(self, blob: str) -> bytes:
        """A version to parse: above `[limits] file_bytes`, TooLarge, as `Mirror.read`."""
        data = super().checked(blob)
        self.stats.handed += 1
        return data

    def counted(self, blob: str) -> Callable[[bytes], int]:
        """How often a word occurs in all of a version (`follow.count`), each counted
        once per version for every item of the walk: items of one file share names (the
        type whose methods they are). The last versions' counts are kept."""
        if blob not in self.counts:
            self.counts[blob] = {}
            if len(self.counts) > 4:
                self.counts.popitem(last=False)
        known, source = self.counts[blob], self(blob)

        def tell(word: bytes) -> int:
            if word not in known:
                known[word] = follow.count(source, word)
            return known[word]

        return tell


@dataclass
class _Tracked:
    """Where an item is in the version being walked: its lines' bytes, their offset in
    that version's bytes, and how often each guard word occurs in its file there."""

    judged: Place  # as last judged: its state, guards and extent
    region: bytes | None
    counts: tuple[int, ...] = ()
    path: str | None = None
    source: bytes = b""  # the version it was followed into, and its lines' offset there
    at: int = -1
    blob: str = ""  # that version's blob

    @property
    def state(self) -> str:
        return self.judged.state


def transitions(
    mirror: Mirror,
    start: Files,
    steps: Sequence[tuple[str, Files]],
    judge: Judge,
    told: Callable[[list[tuple[str, str]]], list[tuple[str, str]]] = lambda changed: changed,
) -> tuple[str, list[tuple[str, str, str]]]:
    """Forward from `start`: the item's state there, and each (commit, state before,
    state after) where a commit changed it: the state changes of `changes`, as `told`
    tells them (`check`'s own reading of a walk's changes: `attribute`)."""
    walk = changes(mirror, start, steps, [judge])
    try:
        while True:
            mirror.prefetch(walk.send(None))
    except StopIteration as stop:
        ((first, changed),) = stop.value
    changed = told(changed)
    found, state = [], first
    for commit, after in changed:
        if after != state:
            found.append((commit, state, after))
        state = after
    return first, found


def changes(
    mirror: Mirror,
    start: Files,
    steps: Sequence[tuple[str, Files]],
    judges: Sequence[Judge],
) -> Generator[list[str], None, list[tuple[str, list[tuple[str, str]]]]]:
    """For each judge: the item's state at `start`, and each (commit, state after it),
    oldest first, where a step changed the item: its state, or its tokens (a rename or
    a move leaves them as they were, and is no change). The history behind `watch log`,
    `backtest` and a stale result's `history`, and (`introduced`) its `introduced_by`.

    It walks back from HEAD, following the lines of commits that did not touch the item
    and judging the version before each one that did. A generator: it first yields every
    version's blobs, since it reads them all, in one batch with the other walks'
    requests; then it reads each version once, for all its items, asking git for the
    next ones while it scans or parses the current one."""
    found: list[tuple[str, list[tuple[str, str]]]] = []
    if not judges:
        return found
    yield Last(_blobs(start, *(files for _, files in steps)))  # the rest: computation
    read = _Sources(mirror)
    try:
        head = steps[-1][1] if steps else start
        items = [_track(read, judge(head, read.checked), head) for judge in judges]
        told: list[list[tuple[str, str]]] = [[] for _ in judges]
        asked = len(steps) - 1  # steps[asked:] have been asked of git
        for position in range(len(steps) - 1, -1, -1):
            if asked > max(0, position - AHEAD // 2):  # keep git AHEAD versions ahead
                low = max(0, position - AHEAD)
                earlier = [files for _, files in steps[low:asked]]
                read.request(_blobs(*reversed(earlier), *([start] if low == 0 else [])))
                asked = low
            before = steps[position - 1][1] if position else start
            _step(read, steps[position], before, judges, items, told)
        found = [(item.state, t[::-1]) for item, t in zip(items, told, strict=True)]
    finally:
        read.stats.read += read.count
        read.close()
    return found


def _step(
    read: _Sources,
    step: tuple[str, Files],
    before: Files,
    judges: Sequence[Judge],
    items: list[_Tracked],
    told: list[list[tuple[str, str]]],
) -> None:
    """One commit back: follow each item's lines into the version before `commit`, or
    judge that version when the commit touched them; tell the commit when the item's
    state or tokens differ there."""
    commit, files = step
    read.weight = sum(_weight(item) for item in items)
    for n, judge in enumerate(judges):
        after = items[n]
        item = _follow(read, after, before) if _alone(after, files, before) else None
        if item is not None and not _unmatched(read, item, files, before):
            item = None  # its lines are there, and maybe the cited tokens themselves too
        quiet = _stays(read, after.judged, files, before) if item is None else None
        if quiet is not None:
            read.stats.quiet += 1
            item = dataclasses.replace(after, judged=quiet)
        elif item is None:
            read.stats.judged += 1
            read.stats.judged_commits.append(commit)
            item = _track(read, judge(before, read.checked), before)
        else:
            read.stats.skipped += 1
        if (item.state, item.judged.tokens) != (after.state, after.judged.tokens):
            told[n].append((commit, after.state))
        items[n] = item


def _weight(item: _Tracked) -> int:
    """How many times following an item searches what differs: its lines, each guard, and
    a changed item's probes (a few). A missing item is searched around each stretch for
    what could bring it back, where one stretch from a commit's first edit to its last
    would take in code that neither edit touched and have the version parsed: its weight
    has what differs cut wherever it is more than a few KB (MISSING)."""
    if item.region is None:
        return MISSING if item.state == "missing" and item.judged.stays is not None else 0
    return 1 + len(item.judged.guards) + (PROBES if item.state == "changed" else 0)


def introduced(first: str, changed: Sequence[tuple[str, str]], target: str) -> str | None:
    """The first commit of the run of commits after which the item has had the state
    `target` up to HEAD, from its state at the start and its changes (oldest first): a
    change made, reverted and made again is the second time. None when it had that state
    at the start already, or has another at HEAD."""
    state, found = first, None
    for commit, after in changed:
        if after == target and state != target:
            found = commit
        state = after
    return found if state == target else None


def _blobs(*versions: Files) -> list[str]:
    return list(dict.fromkeys(blob for files in versions for _, blob in files))


def _track(read: Callable[[str], bytes], place: Place, files: Files) -> _Tracked:
    """The item's lines' bytes in `files` (what must be found unchanged in the version
    before) and its guards' counts; no bytes when it has no lines."""
    blob = dict(files).get(place.path or "")
    if blob is None or place.start is None or place.end is None:
        return _Tracked(place, None)
    source = read(blob)
    if place.span is not None:
        region = source[slice(*place.span)]
    else:
        region = b"\n".join(source.split(b"\n")[place.start - 1 : place.end])
    # Lines that occur more than once (a common statement) could be found again in the
    # wrong place: such an item is judged at every version instead.
    found = list(_line_aligned(source, region)) if region.strip() else []
    counts = _counts(source, place.guards)
    if len(found) != 1:
        return _Tracked(place, None, counts)
    return _Tracked(place, region, counts, place.path, source, found[0], blob)


def _counts(source: bytes, guards: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(follow.count(source, g.encode()) for g in guards)


def _follow(read: _Sources, item: _Tracked, before: Files) -> _Tracked | None:
    """The item in `before`, when its lines are there byte for byte, once, and its guard
    words as many times (the commit did not touch it); None when it was touched (judge
    it). A file followed into one file is compared with it, and only the bytes that
    differ are searched (`watcher.history.follow`); otherwise every file of `before` is."""
    region = item.region
    if region is None:
        return None
    if len(before) == 1 and item.source:
        path, blob = before[0]
        source = read(blob)
        words = tuple(g.encode() for g in item.judged.guards)
        stretches = read.stretches(item.blob, blob)
        at, searched = follow.moved(
            item.source, source, item.at, region, words, item.counts, read.counted(blob), stretches
        )
        read.stats.searched += searched
        if at is not None:
            return _Tracked(item.judged, region, item.counts, path, source, at, blob)
    found = [
        (path, source, at)
        for path, blob in before
        for source in [read(blob)]
        for at in _line_aligned(source, region)
    ]
    read.stats.searched += sum(len(read(b)) for _, b in before) * (1 + len(item.judged.guards))
    if len(found) != 1:  # touched, or no longer unique: judge the version
        return None
    path, source, at = found[0]
    if _counts(source, item.judged.guards) != item.counts:
        return None
    return _Tracked(item.judged, region, item.counts, path, source, at, dict(before)[path])


def _alone(item: _Tracked, after: Files, before: Files) -> bool:
    """Whether the item's place before the commit can only be where its lines are followed
    to: one file on each side, or the same files but for the one holding its lines. A file
    that comes, goes or changes beside it may hold a better place: the cited file, whose
    removal left the item found in another one, held it verbatim until then."""
    if len(after) == 1 and len(before) == 1:
        return True
    beside = [f for f in after if f[0] != item.path]
    return [p for p, _ in before] == [p for p, _ in after] and beside == [
        f for f in before if f[0] != item.path
    ]


def _stays(read: _Sources, place: Place, after: Files, before: Files) -> Place | None:
    """A missing item's place in `before` when it is missing there too, told without
    parsing it: every file the commit changed holds, in `before`, the same bytes where
    `locate` would look for the item as in `after` (`Place.stays`), and the definitions
    it could be found in by name are carried there (`candidates`). None: judge it. A
    rename or a new file is judged."""
    stays = place.stays
    if place.state != "missing" or stays is None or [p for p, _ in before] != [p for p, _ in after]:
        return None
    newer, known = dict(after), dict(place.extents or ())
    carried: list[tuple[str, candidates.Extents | None]] = []
    for path, blob in before:
        places = known.get(path)
        if blob != newer[path]:
            stretches = read.stretches(newer[path], blob)
            if places is not None:
                places = candidates.carried(places, stretches, read(newer[path]), read(blob))
            language = read.language(path)
            if not stays(
                language,
                read.unparsed(newer[path]),
                read.unparsed(blob),
                stretches,
                places is not None,
            ):
                return None
        carried.append((path, places))
    return dataclasses.replace(place, extents=tuple(carried) if place.extents else None)


def _unmatched(read: _Sources, item: _Tracked, after: Files, before: Files) -> bool:
    """Whether a changed item followed into `before` is changed there too: no file the
    commit changed holds, in `before`, a verbatim match of the cited tokens that it did
    not hold in `after` (`Place.unmatched`). A match gone, the item was there, not in
    the lines it is followed by (they may even be another construct's). The lines it was
    followed by are in both versions of its file: what they hold needs no search."""
    place = item.judged
    unmatched = place.unmatched
    if place.state != "changed" or unmatched is None:
        return True
    if len(after) == 1 and len(before) == 1:  # one file, maybe renamed
        pairs = [(after[0][1], *before[0])]
    else:  # the same files (`_alone`)
        newer = dict(after)
        pairs = [(newer[path], path, blob) for path, blob in before]
    return all(
        new == old
        or unmatched(
            read.language(path),
            read.unparsed(new),
            read.unparsed(old),
            (item.region or b"") if path == item.path else b"",
            read.stretches(new, old),
        )
        for new, path, old in pairs
    )


def _line_aligned(source: bytes, region: bytes) -> Iterable[int]:
    """Offsets where `region` occurs in `source` as whole lines."""
    at = source.find(region)
    while at >= 0:
        if follow.whole_lines(source, at, len(region)):
            yield at
        at = source.find(region, at + 1)


def _renamed(
    mirror: Mirror,
    anchor: Anchor,
    renamed: Sequence[Anchor],
    files: Files,
    parse: Callable[[str, str], syntax.Parsed],
) -> Place:
    """The item's place in a version where its own name finds nothing: under the names its
    definition was renamed to. Missing there, it is missing under every name, told from
    the bytes for each (`probes.stays_missing`)."""
    for other in renamed:
        state, path, start, end, tokens, span, guards = spots.spot(mirror, other, files, parse)
        if state != "missing":
            stays = functools.partial(probes.stays_missing, other)
            unmatched = functools.partial(probes.stays_unmatched, other)
            return Place(state, path, start, end, guards, tokens, stays, span, unmatched)

    def everywhere(*args: Any) -> bool:
        return all(probes.stays_missing(one, *args) for one in (anchor, *renamed))

    return Place("missing", tokens=(), stays=everywhere)


def judge_function(mirror: Mirror, plan: Plan) -> Judge | None:
    """The item's state and lines in one version of its files; None for a rule that does
    not hold at its baseline. Each distinct set of files is judged once."""
    rule, quote = plan.item.rule, plan.item.quote
    if quote is not None:
        quoted = classify.quote_baseline(mirror, plan, quote)
        if isinstance(quoted, Result):
            return None
        pattern = quoted[0]

        def quote_place(files: Files, read: Read) -> Place:  # no lines: judged every version
            parsed = [classify.parse_at(mirror, p, b, read=read) for p, b in files]
            return Place(quotes.category(pattern, parsed))

        return functools.cache(quote_place)
    if rule is None:
        return citation_judge(mirror, classify.anchor_of(mirror, plan))
    base = classify.rule_baseline(mirror, plan, rule)
    if isinstance(base, Result):
        return None
    compiled, target = base
    guards = tuple(literals(rule.query) + literals(rule.inside or ""))

    def rule_place(files: Files, read: Read) -> Place:
        found = best_target(
            target,
            [
                t
                for p, b in files
                for t in targets(
                    compiled, p, classify.parse_at(mirror, p, b, compiled.language, read)
                )
            ],
        )
        if found is None:
            return Place("missing", tokens=())
        if not all(c.holds for c in claims(rule, found)):
            state = "broken"
        else:
            state = "same" if found.identical else "changed"
        # The target's lines, and the names its queries insist on (renaming the function
        # it looks inside changes their count): the rest of the scope may change freely.
        return Place(state, found.path, found.start_line, found.end_line, guards, found.tokens)

    return functools.cache(rule_place)


def citation_judge(mirror: Mirror, anchor: Anchor) -> Judge:
    """A citation's place in one version of its files, found as `anchor` cites it: the
    baseline's lines, or lines a step cited anew (`history.stepwise`)."""
    stays = functools.partial(probes.stays_missing, anchor)
    unmatched = functools.partial(probes.stays_unmatched, anchor)

    renamed = mirror.session.renamed.get(anchor, ())  # its new names (`judge.renamed`)

    def citation(files: Files, read: Read) -> Place:
        parse = functools.partial(classify.parse_at, mirror, read=read)
        told = (anchor, files) in mirror.session.spots  # at HEAD: not parsed here
        state, path, start, end, tokens, span, guards = spots.spot(mirror, anchor, files, parse)
        extents = None
        if state == "missing" and renamed:
            return _renamed(mirror, anchor, renamed, files, parse)
        if state == "missing" and not told:  # the parses are at hand
            extents = tuple((p, candidates.extents(anchor, parse(p, b))) for p, b in files)
        return Place(state, path, start, end, guards, tokens, stays, span, unmatched, extents)

    return functools.cache(citation)
