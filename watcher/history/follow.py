"""Follow an item's lines into the version before, looking only at the bytes that differ.

Two versions of a file on either side of one commit are mostly the same bytes: a common
start, a common end, and, when the commit edited above and below the item's lines, a
common stretch around those lines. Comparing them costs a few `memcmp`s; what lies in the
stretches that differ is all that must be searched to know that the lines are still
there once, and each guard word as often, as searching the whole version would tell.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from watcher.locate.definitions import after_keyword
from watcher.parse.diffs import common_end, common_ends, common_start
from watcher.parse.syntax import is_word_byte
from watcher.parse.words import word_places

Window = tuple[int, int, int, int]  # bytes [lo, hi) of the older version, [lo, hi) of the newer


def moved(
    new: bytes,
    old: bytes,
    at: int,
    region: bytes,
    words: tuple[bytes, ...],
    counts: tuple[int, ...] | None = None,
    counted: Callable[[bytes], int] | None = None,
    stretches: Sequence[Window] | None = None,
) -> tuple[int | None, int]:
    """Where `region`, whole lines found once in `new` at `at`, is in `old` (the version
    before), when the bytes that differ between them hold no part of it and no guard
    word: then `old` holds it once, as whole lines, and each word as often as `new` does.
    None when that is not shown (the caller searches `old` whole), and the bytes searched.
    `counts`: how often each word occurs in all of `new`, when known (`count`): where what
    differs is most of the file (a commit that edited it in many places), the words are
    counted in all of `old` instead, one search of the file rather than two (`counted`:
    how often a word occurs in all of `old`, when the caller keeps such counts).
    `stretches`: where the two differ (`diffs.differing(old, new, ...)`), when the caller
    found it already: a commit that edited thirty places of the file differs in thirty
    small stretches, not in one from its first edit to its last, and only they are
    searched."""
    if new == old:
        return at, 0
    size = len(region)
    if stretches is None:
        start, end = common_ends(new, old)
        stretches = [(start, len(old) - end, start, len(new) - end)]
    if all(high < at or low > at + size for _, _, low, high in stretches):
        # The lines and the bytes on either side of them are in what both share.
        shift = next((o_high - high for _, o_high, _, high in reversed(stretches) if high < at), 0)
        windows = _merged(stretches, max((len(w) for w in words), default=0) + 1)
        return _checked(new, old, windows, at + shift, region, words, counts, counted)
    start, end = stretches[0][0], len(old) - stretches[-1][1]
    # Edited on both sides, or in the lines: where are they in what differs? The first
    # place found there must be the only one (what lies outside is the same bytes as in
    # `new`, which holds the lines once, astride what differs).
    low, high = max(0, start - size), min(len(old), len(old) - end + size)
    found = old.find(region, low, high)
    searched = high - low
    if found < 0 or not whole_lines(old, found, size) or old.find(region, found + 1, high) >= 0:
        return None, searched
    before = min(at, found) - start  # how far back the stretch around them may reach
    after = min(len(new) - end - at - size, len(old) - end - found - size)
    if before < 0 or after < 0:
        return None, searched
    # The bytes both share around the lines, as far as a guard word could reach: past
    # that, the windows below take in shared bytes on both sides alike, which count the
    # same, and measuring them would cost more than it saves (most of the file, edited
    # on either side of the lines).
    reach = max((len(w) for w in words), default=0) + 1
    left = common_end(new, old, at, found, min(before, reach))
    right = common_start(new, old, at + size, found + size, min(after, reach))
    if any(size + left + right <= len(w) for w in words):  # the windows' reaches would meet
        return None, searched
    windows = [
        (start, found - left, start, at - left),
        (found + size + right, len(old) - end, at + size + right, len(new) - end),
    ]
    place, more = _checked(new, old, windows, found, b"", words, counts, counted)
    return place, searched + more


def _merged(stretches: Sequence[Window], gap: int) -> list[Window]:
    """The stretches, those less than `gap` bytes apart taken as one: a word counted in
    the reach of each (its length on either side) is then counted once."""
    merged: list[Window] = []
    for stretch in stretches:
        if merged and stretch[0] - merged[-1][1] <= gap:
            merged[-1] = (merged[-1][0], stretch[1], merged[-1][2], stretch[3])
        else:
            merged.append(stretch)
    return merged


def _checked(
    new: bytes,
    old: bytes,
    windows: list[Window],
    place: int,
    region: bytes,
    words: tuple[bytes, ...],
    counts: tuple[int, ...] | None = None,
    counted: Callable[[bytes], int] | None = None,
) -> tuple[int | None, int]:
    """`place` when no window of `old` holds the region but there (no region: known), and
    each guard word occurs as often in the windows of both, reaching each window's edges
    by the word's length (what lies outside is the same bytes), or, given `counts` and
    windows as large as half of `old` (an eighth, given `counted`), as often in all of
    `old` as `counts` says; and the bytes searched."""
    searched = 0
    for old_lo, old_hi, _, _ in windows:
        if not region:
            break
        low, high = max(0, old_lo - len(region)), min(len(old), old_hi + len(region))
        searched += max(0, high - low)
        if _holds(old, region, low, high, place):
            return None, searched
    # Counting in all of `old` pays where the windows are most of it, or, with counts the
    # caller shares between the items of a file (`counted`), an eighth of it.
    share = 8 if counted is not None else 2
    if words and counts is not None and share * sum(w[1] - w[0] for w in windows) >= len(old):
        searched += len(old) * len(words)
        tell = counted or (lambda word: count(old, word))
        return (place if tuple(map(tell, words)) == counts else None), searched
    for word in words:
        if word[:1] == b"\0":  # `defining`: its places' status reads back to the line start
            zones = _zones(old, new, windows, len(word.split(b"\0")[2]))
            for old_lo, old_hi, new_lo, new_hi in zones:
                searched += old_hi - old_lo + new_hi - new_lo
                if count(old, word, old_lo, old_hi) != count(new, word, new_lo, new_hi):
                    return None, searched
            continue
        for old_lo, old_hi, new_lo, new_hi in windows:
            searched += old_hi - old_lo + new_hi - new_lo + 4 * len(word)
            if _bordered(word):  # its occurrences may overlap: none may be in what differs
                if _holds(old, word, max(0, old_lo - len(word)), old_hi + len(word), -1):
                    return None, searched
                if _holds(new, word, max(0, new_lo - len(word)), new_hi + len(word), -1):
                    return None, searched
            elif count(old, word, old_lo - len(word), old_hi) != count(
                new, word, new_lo - len(word), new_hi
            ):
                return None, searched
    return place, searched


def _zones(old: bytes, new: bytes, windows: list[Window], size: int) -> list[Window]:
    """Where a `defining` guard's places may read what differs, as the first and last
    place they may start at in each version: from `size` (the name's length) before each
    window to the end of the line it ends on (a place after that line reads nothing
    before it), zones that meet taken as one."""
    zones: list[Window] = []
    for old_lo, old_hi, new_lo, new_hi in windows:
        old_end, new_end = old.find(b"\n", old_hi), new.find(b"\n", new_hi)
        zone = (
            max(0, old_lo - size),
            len(old) if old_end < 0 else old_end,
            max(0, new_lo - size),
            len(new) if new_end < 0 else new_end,
        )
        if zones and zone[0] <= zones[-1][1]:
            zone = (zones[-1][0], zone[1], zones[-1][2], zone[3])
            zones.pop()
        zones.append(zone)
    return zones


def count(source: bytes, word: bytes, first: int = 0, last: int | None = None) -> int:
    """How often `word` occurs in `source` as a whole word (`build` in `builder` or
    `build_inner` is another name), starting between `first` and `last` (inclusive).
    A word that cannot overlap itself is looked for from the end: on CPython 3.11
    `rfind` of a short word ran 2-5 times as fast as `find` through a 116 KB file."""
    if word[:1] == b"\0":  # `defining`
        _, keyword, name = word.split(b"\0")
        # To a byte past the last place's end: a place ending at the bound would be read
        # as a whole word whatever follows it.
        high = len(source) if last is None else min(len(source), last + len(name) + 1)
        places = word_places(source, name, max(0, first), high)
        return sum(after_keyword(source, at, keyword) for at, _ in places)
    size = len(word)
    low = max(0, first)
    stop = len(source) if last is None else min(len(source), last + size)
    head, tail = is_word_byte(word[0]), is_word_byte(word[-1])
    found = 0
    backward = not _bordered(word)  # then occurrences never overlap: any order finds them
    at = source.rfind(word, low, stop) if backward else source.find(word, low, stop)
    while at >= 0:
        end = at + size
        if not (head and at and is_word_byte(source[at - 1])) and not (
            tail and end < len(source) and is_word_byte(source[end])
        ):
            found += 1
        at = source.rfind(word, low, at) if backward else source.find(word, end, stop)
    return found


@functools.cache  # a few names per walk, asked of every version
def _bordered(word: bytes) -> bool:
    """Whether two occurrences of `word` can overlap (`aba` in `ababa`): a count that
    starts inside one could then differ from a count over the whole file."""
    return any(word[:k] == word[-k:] for k in range(1, len(word)))


def _holds(source: bytes, word: bytes, low: int, high: int, own: int) -> bool:
    """Whether `word` lies in source[low:high] anywhere but at `own`."""
    at = source.find(word, low, high)
    if at == own >= 0:
        at = source.find(word, at + 1, high)
    return at >= 0


def whole_lines(source: bytes, at: int, size: int) -> bool:
    """Whether bytes [at, at + size) of `source` are whole lines."""
    end = at + size
    return (at == 0 or source[at - 1] == 0x0A) and (end == len(source) or source[end] == 0x0A)
