"""Whole statements stay whole statements: where a citation is whole statements of one
block, the block's statements at the baseline are paired with the version's, and what
`alignment.carried` found is bounded by them (`bounded`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from watcher.locate.alignment import FOUND_SHARE, chain, kept_count
from watcher.locate.anchors import Anchor


def bounded(
    anchor: Anchor,
    found: tuple[tuple[int, int], list[tuple[int, int]]],
    statements: Sequence[tuple[int, int]],
    after: Sequence[str],
) -> tuple[int, int] | None:
    """The span `carried` found for a citation of whole statements (`Anchor.statements`)
    without what lies past a statement inserted at its edge: the baseline's statements are
    paired with the version's in order (`_paired`); past the pair of the first (last) cited
    statement, one that holds no cited token is code inserted at the edge, and one beyond
    it is none of the cited code either, however like a cited line it reads (a rewritten
    `return false;` paired with a new one above it). One next to the pair made of cited
    tokens (HELD_SHARE) may be part of a cited one split in two, and stays (a `raise
    ValueError(f"...")` made `msg = f"..."` and a `raise` that ends in its `)`); one with
    a stray cited token does not (docker/mcp-gateway's `// User` block below a loop whose
    `if` went, holding that `if`). What the statements cited beside it became bounds it
    too, where that holds none of it and is still as like them as FOUND_SHARE (metamcp's
    `if (retry)` after `retry = ...`; not fast-agent's `return None` in a new `if not
    isinstance(...): return None`). None when most of where the cited tokens went is then
    outside it: they went into others' code, and it is not here."""
    (start, end), held = found
    cited = anchor.cited_statements
    spanned = [k for k, (a, b) in enumerate(statements) if a < end and b > start]
    if cited is None or not spanned:
        return start, end

    def holds(k: int, share: float = HELD_SHARE) -> bool:  # cited tokens, that share of it
        a, b = statements[k]
        return sum(max(0, min(b, y) - max(a, x)) for x, y in held) > share * (b - a)

    if all(holds(k) for k in spanned):
        return start, end  # no statement of the span is code inserted in it
    # The cited statements and their neighbours, paired with the span's statements and
    # their neighbours: what lies farther does not bound it, and pairing a long block costs.
    olds = range(max(0, cited[0] - 1), min(len(anchor.statements), cited[1] + 2))
    news = range(max(0, spanned[0] - 1), min(len(statements), spanned[-1] + 2))
    if len(olds) * len(news) > MAX_PAIRS:
        return start, end
    some = [anchor.statements[i] for i in olds]
    paired = _paired(anchor.body, some, after, [statements[j] for j in news])
    pairs = {olds[i]: news[j] for i, j in paired.items()}
    first, last = pairs.get(cited[0]), pairs.get(cited[1])
    bounds = {
        i: j
        for i, j in pairs.items()
        if not holds(j, 0) and _bounds(anchor, i, after, statements[j])
    }
    low = max([start, *(statements[j][1] for i, j in bounds.items() if i < cited[0])])
    high = min([end, *(statements[j][0] for i, j in bounds.items() if i > cited[1])])
    if first is not None:
        k = first - 1
        while k >= 0 and statements[k][1] > low and holds(k):
            k -= 1
        if k >= 0 and statements[k][1] > low:
            low = statements[k + 1][0]
    if last is not None:
        k = last + 1
        while k < len(statements) and statements[k][0] < high and holds(k):
            k += 1
        if k < len(statements) and statements[k][0] < high:
            high = statements[k - 1][1]
    inside = sum(max(0, min(high, y) - max(low, x)) for x, y in held)
    kept = inside >= FOUND_SHARE * sum(y - x for x, y in held)
    return (low, high) if kept and low < high else None


HELD_SHARE = 0.1  # of a statement's tokens, cited ones: part of the citation (`bounded`)
MAX_PAIRS = 2500  # statements before × after: past it, a span is left as `carry` found it


def _paired(
    before: Sequence[str],
    old: Sequence[tuple[int, int]],
    after: Sequence[str],
    new: Sequence[tuple[int, int]],
) -> dict[int, int]:
    """Each statement of `old` paired with one of `new`, in order, the pairs keeping the
    most tokens in all (each keeping FOUND_SHARE of its old statement's at least)."""
    bags = [Counter(after[a:b]) for a, b in new]
    share: dict[tuple[int, int], float] = {}
    for i, (a, b) in enumerate(old):
        tokens, bag = before[a:b], Counter(before[a:b])
        for j, (c, d) in enumerate(new):
            if sum((bag & bags[j]).values()) < FOUND_SHARE * len(tokens):
                continue  # the tokens both hold, order aside, bound those kept
            kept = kept_count(tokens, after[c:d])
            if kept >= FOUND_SHARE * len(tokens):
                share[i, j] = kept / len(tokens)
    return chain(share, len(old), len(new))


def _bounds(anchor: Anchor, i: int, after: Sequence[str], new: tuple[int, int]) -> bool:
    """Whether statement `i` of the baseline's block is still itself in the version, at
    `new`: as like it as FOUND_SHARE both ways (a new statement that merely ends as it
    did is not)."""
    a, b = anchor.statements[i]
    old, now = anchor.body[a:b], after[new[0] : new[1]]
    return 2 * kept_count(old, now) >= FOUND_SHARE * (len(old) + len(now))
