"""Where two versions of a file differ, found with memcmp-speed comparisons alone.

Two versions of a file are mostly the same bytes: a common start, a common end, and
between them stretches that differ. Parsing one from the other's tree (`syntax`),
counting its words from the other's, and following an item's lines into the version
before (`history.follow`) all read only those stretches.
"""

from __future__ import annotations

CHUNK = 4096  # bytes compared in the first step of a common start or end; each later doubles
SPLIT_BYTES = 1024  # stretches that differ shorter than this are not split further
ANCHOR_BYTES = 128  # bytes from a line's start that must be found once to split there
# Where a stretch that differs is tried for a split, as shares of it: the middle, then
# the quarters, then the eighths, until one holds an anchor. Versions far apart differ
# in most of their stretches: with fifteen tries instead of three, the edits are finer and
# reparsing the 1,010 version pairs of 1,000 codex citations took 3.4 s instead of 4.3 s.
SPLIT_AT = (1 / 2, 1 / 4, 3 / 4, *(k / 8 for k in (1, 3, 5, 7)), *(k / 16 for k in range(1, 16, 2)))


def common_ends(new: bytes, old: bytes) -> tuple[int, int]:
    """How many bytes `new` and `old` share at their start, and then at their end: a
    memcmp of what they share. A history walk measures it once per step and shares it
    between its items and their checks (`watcher.history.walk`)."""
    common = min(len(new), len(old))
    start = common_start(new, old, 0, 0, common)
    end = common_end(new, old, len(new), len(old), common - start)
    return start, end


def common_start(a: bytes, b: bytes, at_a: int, at_b: int, limit: int) -> int:
    """How many bytes a[at_a:] and b[at_b:] share from their start, at most `limit`:
    chunks that double while equal, then halves of the first unequal one."""
    view = memoryview(a)
    low, step = 0, CHUNK
    while low < limit:
        high = min(limit, low + step)
        if not b.startswith(view[at_a + low : at_a + high], at_b + low):
            break
        low, step = high, step * 2
    else:
        return limit
    while high - low > 1:  # a and b agree on [0, low) and differ within [low, high)
        middle = (low + high) // 2
        if b.startswith(view[at_a + low : at_a + middle], at_b + low):
            low = middle
        else:
            high = middle
    return low


def common_end(a: bytes, b: bytes, end_a: int, end_b: int, limit: int) -> int:
    """How many bytes a[:end_a] and b[:end_b] share at their end, at most `limit`."""
    view = memoryview(a)
    low, step = 0, CHUNK
    while low < limit:
        high = min(limit, low + step)
        if not b.startswith(view[end_a - high : end_a - low], end_b - high):
            break
        low, step = high, step * 2
    else:
        return limit
    while high - low > 1:
        middle = (low + high) // 2
        if b.startswith(view[end_a - middle : end_a - low], end_b - middle):
            low = middle
        else:
            high = middle
    return low


def differing(
    old: bytes, new: bytes, old_low: int, old_high: int, low: int, high: int, most: int = 64
) -> list[tuple[int, int, int, int]]:
    """The stretches of old[old_low:old_high] and new[low:high] that differ, in order, as
    (old start, old end, new start, new end), at most `most` of them: the common start and
    end are cut off; then a line of what is left of `new`, found once in what is left of
    `old`, splits both in two, each searched the same way. Only memcmp-speed comparisons
    and searches: versions far apart in a walk differ in many places, each small."""
    if low == old_low == 0 and (high, old_high) == (len(new), len(old)):
        start, end = common_ends(new, old)  # the whole of both
    else:
        common = min(old_high - old_low, high - low)
        start = common_start(new, old, low, old_low, common)
        end = common_end(new, old, high, old_high, common - start)
    old_low, low, old_high, high = old_low + start, low + start, old_high - end, high - end
    if most < 2 or min(old_high - old_low, high - low) < SPLIT_BYTES:
        return [(old_low, old_high, low, high)] if old_low < old_high or low < high else []
    tried = set()
    for share in SPLIT_AT:
        at = new.rfind(b"\n", low, low + int((high - low) * share)) + 1
        if at <= low or at + ANCHOR_BYTES > high or at in tried:
            continue
        tried.add(at)
        anchor = new[at : at + ANCHOR_BYTES]
        found = old.find(anchor, old_low, old_high)
        if found >= 0 and old.find(anchor, found + 1, old_high) < 0:
            before = differing(old, new, old_low, found, low, at, most // 2)
            return before + differing(old, new, found, old_high, at, high, most - len(before))
    return [(old_low, old_high, low, high)]
