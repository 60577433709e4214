"""A file no grammar reads (JSON, TOML, YAML, Markdown, ...), compared line by line.

The cited lines are where a line diff of the baseline and the version maps them, as
git's diff maps them: kept, or edited in place (the part of a replacement their words
went to). Where that holds less than FOUND_SHARE of their words (a section a rewrite
of the file moved, its old place filled with other text), they are looked for by their
words elsewhere in the version; where no stretch holds that share, they are gone, as
code whose tokens are gone is (a `go.mod` dependency replaced by another module on its
line: missing, not changed into that module's line).
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from watcher.locate.alignment import FOUND_SHARE, line_opcodes
from watcher.locate.anchors import Anchor, Found

if TYPE_CHECKING:
    from watcher.parse.syntax import Parsed

SEARCHED = 8  # places of its rarest word around which a citation's lines are looked for


def by_lines(anchor: Anchor, path: str, parsed: Parsed) -> Found | None:
    """The cited lines in `parsed`: where the line diff maps them, else where their words
    are, changed if any was edited; None where they are gone."""
    start, end = (anchor.start_line or 1) - 1, anchor.end_line or 0
    before, after = anchor.context, parsed.line_texts()
    mapped = _mapped(before, after, start, end)
    if mapped is None or _share(before[start:end], after[mapped[0] : mapped[1] + 1]) < FOUND_SHARE:
        mapped = _searched(before, after, start, end)
    if mapped is None:
        return None  # no stretch holds half the cited words: deleted, or rewritten
    first, last = mapped[0] + 1, mapped[1] + 1
    tokens = parsed.token_texts(*parsed.token_range(first, last))  # as the anchor's
    return Found(path, first, last, tokens == anchor.tokens, parsed.lines(first, last), tokens)


Lines = tuple[int, int] | None  # the first and last line (0-based) something went to


def _mapped(before: Sequence[str], after: Sequence[str], start: int, end: int) -> Lines:
    """The lines (0-based, first and last) the line diff maps lines [start, end) to.
    Lines the versions share at their start and end are matched as they are, and only
    what lies between is diffed, as git diffs (`line_opcodes`): difflib's longest-block
    first paired inspector's cited `with:` with another step's; an edited line maps to its
    part of what replaced it (package.json's "version" to its own line)."""
    head = _common(before, after, 0, 1)
    tail = _common(before, after, head, -1)
    middle = line_opcodes(before[head : len(before) - tail], after[head : len(after) - tail])
    opcodes = [("equal", 0, head, 0, head)] if head else []
    opcodes += [(tag, i1 + head, i2 + head, j1 + head, j2 + head) for tag, i1, i2, j1, j2 in middle]
    if tail:
        opcodes.append(("equal", len(before) - tail, len(before), len(after) - tail, len(after)))
    mapped: list[int] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if (i1 < end and start < i2) or (i1 == i2 and start < i1 < end):  # inside the cited lines
            lo, hi = max(i1, start), min(i2, end)
            if tag == "equal":
                mapped += [j1 + lo - i1, j1 + hi - i1 - 1]
            elif j2 > j1 and i2 > i1:  # the part of the replacement for the cited part
                mapped += _replaced(before[i1:i2], after[j1:j2], lo - i1, hi - i1, j1)
            elif j2 > j1:
                mapped += [j1, j2 - 1]
    return (min(mapped), max(mapped)) if mapped else None


def _replaced(old: Sequence[str], new: Sequence[str], lo: int, hi: int, at: int) -> list[int]:
    """Where lines old[lo:hi] went among the lines `new` that replaced `old` (numbered from
    `at`): the lines they went to (an edited `"version": "0.16.7",` to the new
    `"version":` line, not to all fourteen that replaced two); nowhere where none went
    anywhere."""
    lines = _aligned(old, new, lo, hi)
    return [at + min(lines), at + max(lines)] if lines else []


def _aligned(
    old: Sequence[str], new: Sequence[str], lo: int, hi: int, keyed: bool = True
) -> list[int]:
    """The lines of `new` that lines old[lo:hi] went to. A line went where half its words
    went, in an alignment of the words of the two, to the lines that hold half its words
    or are mostly made of them: a word that strayed into a paragraph below (crush's
    "Environment variable expansion is supported", whose `expansion` the alignment paired
    with a new paragraph's) takes no line with it. A line that kept less went to the
    nearest line that starts as it did (`_key`: `"zod":` with a new version range after
    it, an edited line: `keyed`); else nowhere (a `go.mod` module replaced by another on
    its line)."""
    went, cited, kept = _went(old, new, lo, hi)
    held = Counter(m for m, line in enumerate(new) for _ in line.split())
    into = Counter[int]()
    for (_, m), count in went.items():
        into[m] += count
    lines = [
        m
        for (n, m), count in went.items()
        if _enough(kept[n], cited[n])
        and (count >= FOUND_SHARE * cited[n] or into[m] >= FOUND_SHARE * held[m])
    ]
    keys = [_key(line) for line in new] if keyed else []
    for n in range(lo, hi):
        if cited[n] and not _enough(kept[n], cited[n]) and _key(old[n]) in keys:
            same = [m for m, key in enumerate(keys) if key == _key(old[n])]
            lines.append(min(same, key=lambda m: abs(m - n * len(new) // max(1, len(old)))))
    return sorted(lines)


def _went(
    old: Sequence[str], new: Sequence[str], lo: int, hi: int
) -> tuple[Counter[tuple[int, int]], Counter[int], Counter[int]]:
    """How many words of each line of old[lo:hi] went to each line of `new`, in an
    alignment of the words of the two; how many words each line of `old` has; and how
    many of them went anywhere."""
    words = [(w, n) for n, line in enumerate(old) for w in line.split()]
    placed = [(w, m) for m, line in enumerate(new) for w in line.split()]
    matcher = difflib.SequenceMatcher(
        None, [w for w, _ in words], [w for w, _ in placed], autojunk=False
    )
    went = Counter(
        (words[a + k][1], placed[b + k][1])
        for a, b, size in matcher.get_matching_blocks()
        for k in range(size)
        if lo <= words[a + k][1] < hi
    )
    kept = Counter[int]()
    for (n, _), count in went.items():
        kept[n] += count
    return went, Counter(n for _, n in words), kept


def _key(line: str) -> str:
    """How a line starts: its words up to the first that holds a letter or digit (`"zod":`,
    `- run:`, a `go.mod` module path, `## Tools`); "" for a line with none."""
    key = []
    for word in line.split():
        key.append(word)
        if any(c.isalnum() for c in word):
            return " ".join(key)
    return ""


def _share(cited: Sequence[str], found: Sequence[str], keyed: bool = True) -> float:
    """How much of the cited lines the found lines hold, weighted by their words: a line
    is held where half its words are, in order, or (`keyed`) where a found line starts as
    it did."""
    _, size, kept = _went(cited, found, 0, len(cited))
    total = sum(size.values())
    if not total:
        return 1.0
    keys = {_key(line) for line in found} - {""} if keyed else set()
    held = sum(size[n] for n in size if _enough(kept[n], size[n]) or _key(cited[n]) in keys)
    return held / total


def _enough(kept: int, words: int) -> bool:
    """Whether a line that kept `kept` of its `words` words is still there: half of them,
    and two at least (a `go.mod` line whose version another module has is not that
    module's line)."""
    return kept >= FOUND_SHARE * words and kept >= min(2, words)


def _searched(before: Sequence[str], after: Sequence[str], start: int, end: int) -> Lines:
    """The stretch of `after` that holds most of the cited lines' words, in order (a
    section a rewrite moved: crush's README, its MCP paragraph reflowed, then moved down
    with the file rewritten around it), looked for around each place of the cited word
    that occurs least often (up to SEARCHED of them); None where no stretch of about the
    cited lines' length holds FOUND_SHARE of their words, and two of them at least (a
    `go.mod` line whose version another module has: not that module's line)."""
    cited, width = before[start:end], 2 * (end - start) + 2
    where: dict[str, list[int]] = {}
    for n, line in enumerate(after):
        for word in line.split():
            where.setdefault(word, []).append(n)
    places = [where[w] for line in cited for w in line.split() if w in where]
    if not places:
        return None
    total = sum(len(line.split()) for line in cited)
    best: tuple[float, int, int] | None = None
    rarest = min(places, key=lambda lines: len(lines))
    for at in sorted(set(rarest))[:SEARCHED]:
        low = max(0, at - width)
        lines = _aligned(cited, after[low : at + width], 0, len(cited), keyed=False)
        if not lines or max(lines) - min(lines) + 1 > width:  # scattered: no one stretch
            continue
        first, last = low + min(lines), low + max(lines)
        share = _share(cited, after[first : last + 1], keyed=False)
        if share < FOUND_SHARE or share * total < min(2, total):  # a version number alone
            continue
        if best is None or share > best[0]:
            best = (share, first, last)
    return None if best is None else (best[1], best[2])


def _common(a: Sequence[str], b: Sequence[str], skip: int, step: int) -> int:
    """How many lines `a` and `b` share at their start (`step` 1) or end (-1), leaving
    the first `skip` of each alone."""
    limit = min(len(a), len(b)) - skip
    n = 0
    if step > 0:
        while n < limit and a[n] == b[n]:
            n += 1
    else:
        while n < limit and a[-1 - n] == b[-1 - n]:
            n += 1
    return n
