"""Where in a version's bytes a match of an anchor can lie: the windows around its
rarest token's occurrences, and the lines its words vote for. Read off the bytes, so
that `locate.probes` can tell two versions' windows alike without parsing either.
"""

from __future__ import annotations

import bisect
from array import array
from collections import Counter
from collections.abc import Sequence

from watcher.locate.anchors import Anchor
from watcher.parse.syntax import WORD, Parsed

# Where two versions differ, as `differing` tells it: (old start, old end, new start, new end).
Stretches = list[tuple[int, int, int, int]]


def in_order(source: bytes, parts: Sequence[bytes], low: int, high: int) -> bool:
    """Whether source[low:high] holds the parts one after another (anything between
    them), each taken at its first place after the one before: the earliest places
    leave the most room, so this finds them in order if any places do."""
    find, at = source.find, low
    for part in parts:
        found = find(part, at, high)
        if found < 0:
            return False
        at = found + len(part)
    return True


def probe_ranges(
    anchor: Anchor, parsed: Parsed, after: tuple[Parsed, Stretches] | None = None
) -> list[tuple[int, int]]:
    """The windows a verbatim match can lie in: around each occurrence of the anchor's
    rarest token, as far as twice its length reaches, overlapping windows merged. With
    `after` (the version after this one, and where the two differ), its occurrences are
    read off that version's where the bytes are shared (`_probe_starts`)."""
    probe = (anchor.probes or anchor.tokens)[0].encode()
    reach = 2 * len(anchor.text.encode()) + 1024
    size = len(parsed.source)
    windows: list[tuple[int, int]] = []
    for at in _probe_starts(probe, parsed, after):
        low, high = max(0, at - reach), min(size, at + len(probe) + reach)
        if windows and low <= windows[-1][1]:
            windows[-1] = (windows[-1][0], high)
        else:
            windows.append((low, high))
    return windows


def _probe_starts(
    probe: bytes, parsed: Parsed, after: tuple[Parsed, Stretches] | None = None
) -> list[int]:
    """Where `probe` starts in a version's bytes, in order, found once per version. With
    `after` (the version after it and where the two differ, `differing(parsed, after)`)
    whose starts are known, only the stretches are searched: a walk asks of each version
    as the older of two and then as the newer, and a start clear of every stretch is one
    of the later version's, shifted."""
    found = parsed.starts.get(probe)
    if found is None:
        known = after[0].starts.get(probe) if after is not None else None
        if after is None or known is None:
            found = starts_in(parsed.source, probe, 0, len(parsed.source))
        else:
            found = moved_starts(known, after[1], parsed.source, probe)
        parsed.starts[probe] = found
    return found


def moved_starts(known: list[int], stretches: Stretches, source: bytes, probe: bytes) -> list[int]:
    """A probe's starts in `source` from its `known` starts in the other version of
    `stretches` (old: `source`, new: the other): those clear of every stretch shifted,
    those touching one, straddling its ends included, searched for afresh."""
    found: list[int] = []
    width = len(probe)
    at, shift = 0, 0  # known starts before stretch n shift by what the stretches before did
    for old_low, old_high, low, high in stretches:
        while at < len(known) and known[at] + width <= low:  # clear of it, before it
            found.append(known[at] + shift)
            at += 1
        while at < len(known) and known[at] < high:  # touching it: searched below
            at += 1
        start = max(found[-1] + 1 if found else 0, old_low - width + 1, 0)
        found += starts_in(source, probe, start, min(len(source), old_high + width - 1))
        shift = old_high - high
    found += [start + shift for start in known[at:]]  # clear of them all, after the last
    return found


def starts_in(source: bytes, probe: bytes, low: int, high: int) -> list[int]:
    """Where `probe` (not empty) starts within source[low:high], occurrences wholly
    inside it, overlapping ones too, in order. Searched from the end: on CPython 3.11
    `rfind` ran 2.5-4x as fast as `find` through a 1.1 MB file, for a rare probe or none."""
    found = []
    at = source.rfind(probe, low, high)
    while at >= 0:
        found.append(at)
        at = source.rfind(probe, low, at + len(probe) - 1)  # those starting before it
    found.reverse()
    return found


def line_votes(anchor: Anchor, parsed: Parsed, tries: int = 3) -> list[int]:
    """The lines where the anchor most likely starts in the file: each whole-word
    occurrence of one of its rarest words votes for the line it implies, rarest words
    first (counted in the blob's bytes, once per blob). The votes cast are bounded by the
    anchor's length, not the file's."""
    at: dict[str, list[int]] = {}
    for text, line in zip(anchor.tokens, anchor.token_lines, strict=True):
        if WORD.fullmatch(text.encode()):
            at.setdefault(text, []).append(line)
    counts, starts = parsed.word_counts, parsed.line_starts
    budget = 4 * len(anchor.tokens) + 64
    votes: Counter[int] = Counter()
    for text in sorted(at, key=lambda t: (counts.get(t.encode(), 0), t)):
        cost = counts.get(text.encode(), 0) * len(at[text])
        if cost == 0:
            continue  # not in the file
        if votes and cost > budget:
            break
        budget -= cost
        places = parsed.places(text.encode())
        lines = [bisect.bisect_right(starts, start) for start, _ in places]
        votes.update(line - own for line in lines for own in at[text])
    return [line for line, _ in votes.most_common(tries)]


def window_bytes(source: bytes, starts: array[int], line: int, anchor: Anchor) -> tuple[int, int]:
    """The bytes of the lines around a voted line: as many lines as the anchor's before it,
    and after it three times as many, or as many as hold twice its bytes (the regions
    compared start up to its length on). Read off the bytes alone, so that an older
    version can be told to hold the same windows without parsing it (`probes.stays_missing`)."""
    span = anchor.token_lines[-1] + 1

    def start_of(number: int) -> int:  # the byte where 1-based line `number` starts
        return 0 if number <= 1 else starts[number - 1] if number <= len(starts) else len(source)

    low, high = start_of(line - span), start_of(line + 3 * span)
    wanted = start_of(line) + 2 * len(anchor.text.encode())
    if high < wanted:
        end = source.find(b"\n", wanted)
        high = len(source) if end < 0 else end + 1
    return low, high
