"""`follow.moved` answers as searching the whole older version would, or not at all."""

from __future__ import annotations

import random

from watcher.history import follow, walk
from watcher.locate.definitions import defining
from watcher.parse.diffs import differing

LINES = [b"fn a() {", b"}", b"let x = 1;", b"hot_path(x)", b"", b"hot", b"ab", b"aba", b"a.a.a"]
LINES += [b"fn hot() {", b"    hot()", b"fn  hot", b"  hot_path", b"f fn"]
GUARDS = ["hot_path", "hot", "a", "x", "aba", "a.a"]
GUARDS += [defining("fn", "hot"), defining("fn", "a"), defining("fn", "x")]


def edited(rng: random.Random, lines: list[bytes]) -> list[bytes]:
    """One to three lines added, removed or changed, anywhere."""
    lines = list(lines)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(lines) + 1)
        if at == len(lines) or rng.random() < 0.4:
            lines.insert(at, rng.choice(LINES))
        elif rng.random() < 0.5:
            del lines[at]
        else:
            lines[at] += rng.choice([b"1", b"x", b" hot", b"ab", b".a", b" fn", b"fn"])
    return lines


def test_moved_agrees_with_a_search_of_the_whole_version() -> None:
    """Lines followed into the version before are where a search of all of it finds them
    once, with each guard word as often as in the version after, on files edited at random
    (one to three edits, above, below, astride and in the lines)."""
    rng = random.Random(12)
    told = 0
    for _ in range(5000):
        lines = [
            rng.choice(LINES) + rng.choice([b"", b"1", b"2"]) for _ in range(rng.randint(1, 30))
        ]
        new = b"\n".join(lines) + rng.choice([b"", b"\n"])
        first = rng.randrange(len(lines))
        region = b"\n".join(lines[first : first + rng.randint(1, 4)])
        found = list(walk._line_aligned(new, region))
        if not region.strip() or len(found) != 1:
            continue
        guards = tuple(rng.sample(GUARDS, rng.randint(0, 2)))
        old = b"\n".join(edited(rng, lines))
        whole = list(walk._line_aligned(old, region))
        same = len(whole) == 1 and walk._counts(old, guards) == walk._counts(new, guards)
        words = tuple(g.encode() for g in guards)
        # Told how often the words occur in all of `new`, it may count them in all of `old`.
        # and counted in all of `old` by the caller (as a walk shares them between items).
        counts = walk._counts(new, guards) if rng.random() < 0.5 else None
        counted = (lambda w: follow.count(old, w)) if rng.random() < 0.5 else None  # noqa: B023
        at, _ = follow.moved(new, old, found[0], region, words, counts, counted)
        if at is not None:
            told += 1
            assert same and at == whole[0], (new, old, region, guards)
    assert told > 500  # most edits leave the lines alone, and are told without a search


def test_moved_agrees_with_a_search_of_the_whole_version_in_many_stretches() -> None:
    """The same, told where the two versions differ in many small stretches (`differing`,
    as a walk finds once per step for all its items): files of a few hundred lines, each
    edited in up to twelve places."""
    rng = random.Random(36)
    told = split = 0
    for _ in range(1500):
        lines = [
            rng.choice(LINES) + rng.choice([b"", b"1", b"2", b"  // some words to fill it"])
            for _ in range(rng.randint(30, 300))
        ]
        new = b"\n".join(lines) + rng.choice([b"", b"\n"])
        first = rng.randrange(len(lines))
        region = b"\n".join(lines[first : first + rng.randint(1, 4)])
        found = list(walk._line_aligned(new, region))
        if not region.strip() or len(found) != 1:
            continue
        guards = tuple(rng.sample(GUARDS, rng.randint(0, 2)))
        older = lines
        for _ in range(rng.randint(1, 4)):
            older = edited(rng, older)
        old = b"\n".join(older)
        whole = list(walk._line_aligned(old, region))
        same = len(whole) == 1 and walk._counts(old, guards) == walk._counts(new, guards)
        words = tuple(g.encode() for g in guards)
        counts = walk._counts(new, guards) if rng.random() < 0.5 else None
        stretches = differing(old, new, 0, len(old), 0, len(new))
        split += len(stretches) > 1
        at, _ = follow.moved(new, old, found[0], region, words, counts, None, stretches)
        if at is not None:
            told += 1
            assert same and at == whole[0], (new, old, region, guards)
    assert told > 300 and split > 300


def test_a_word_whose_occurrences_overlap_is_not_counted_in_part() -> None:
    new = b"REGION\na a.aa.a\n.a.a\na.\n"
    old = b"REGION\na a.aa.aa.a.a\na.\n"  # `a.a` overlaps itself: the counts are 1 and 0
    assert (follow.count(new, b"a.a"), follow.count(old, b"a.a")) == (1, 0)
    assert follow.moved(new, old, 0, b"REGION", (b"a.a",))[0] is None


def test_a_word_is_counted_alike_from_either_end() -> None:
    """`count` looks for a word that cannot overlap itself from the end of the file: the
    same count as a search from the start, on random text, for words that can overlap
    themselves and words that cannot, whole or in part of the file."""
    rng = random.Random(36)
    pieces = [b"hot", b"hot_path", b"a", b"ab", b"aba", b"a.a", b" ", b"\n", b"_", b"x1"]
    words = [b"hot", b"hot_path", b"aba", b"a.a", b"ab", b"a", b"x1"]
    for _ in range(3000):
        source = b"".join(rng.choice(pieces) for _ in range(rng.randrange(0, 40)))
        word = rng.choice(words)
        first, last = sorted(rng.randrange(-2, len(source) + 3) for _ in range(2))
        assert follow.count(source, word, first, last) == _from_start(source, word, first, last)


def _from_start(source: bytes, word: bytes, first: int, last: int) -> int:
    """Whole-word occurrences starting between `first` and `last`, left to right, each
    search going on after the last one found."""
    found, at = 0, max(0, first)
    stop = min(len(source), last + len(word))
    words = set(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
    while (at := source.find(word, at, stop)) >= 0:
        end = at + len(word)
        before = at > 0 and source[at - 1] in words and word[0] in words
        after = end < len(source) and source[end] in words and word[-1] in words
        found += not before and not after
        at = end
    return found


def test_a_defining_guard_counts_only_the_places_that_may_define_the_name() -> None:
    """`follow.defining`: the name after its keyword, or first on its line (where a
    comment may end before it), not where it is called or part of a longer name."""
    source = b"fn hot() {\n    hot();\n    let y = hot_path(hot);\n}\nhot\n  fn   hot\n/*x*/hot\n"
    guard = defining("fn", "hot").encode()
    # `fn hot`, the line-first `hot();` and `hot`, `fn   hot`, `*/hot`; not `(hot)`
    assert follow.count(source, guard) == 5
    assert follow.count(source, guard, 4, len(source)) == 4
    # A commit that only calls it leaves the count as it was, and is followed.
    new = source.replace(b"hot();", b"hot();\n    x = hot() + hot();")
    assert follow.count(new, guard) == 5
    region = b"\n".join(source.split(b"\n")[4:6])
    assert follow.moved(new, source, new.find(region), region, (guard,))[0] == source.find(region)
