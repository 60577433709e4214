"""A shortest edit script between two sequences (Myers's diff, as git's): the pairs of
equal items it keeps, the most there can be. Lines are aligned with it as git aligns
them (`alignment`, `scopes`): difflib's matcher takes the longest run of equal items
first, so that two lines kept together somewhere can cost three kept elsewhere.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence


def myers(a: Sequence[Hashable], b: Sequence[Hashable], limit: int) -> list[tuple[int, int]] | None:
    """The pairs (i, j) of a[i] == b[j] kept by a shortest edit script from a to b, in
    order; None when it takes more than `limit` insertions and deletions."""
    n, m = len(a), len(b)
    frontier = {1: 0}
    trace: list[dict[int, int]] = []
    for d in range(min(n + m, limit) + 1):
        trace.append(dict(frontier))
        for k in range(-d, d + 1, 2):
            down = k == -d or (k != d and frontier[k - 1] < frontier[k + 1])
            x = frontier[k + 1] if down else frontier[k - 1] + 1
            y = x - k
            while x < n and y < m and a[x] == b[y]:
                x, y = x + 1, y + 1
            frontier[k] = x
            if x >= n and y >= m:
                return _path(trace, n, m)
    return None


def _path(trace: list[dict[int, int]], x: int, y: int) -> list[tuple[int, int]]:
    """The kept pairs of the edit script `myers` found, read back from its end."""
    pairs: list[tuple[int, int]] = []
    for d in range(len(trace) - 1, -1, -1):
        frontier, k = trace[d], x - y
        down = k == -d or (k != d and frontier[k - 1] < frontier[k + 1])
        before = k + 1 if down else k - 1
        px = frontier[before]
        py = px - before
        while x > px and y > py:
            x, y = x - 1, y - 1
            pairs.append((x, y))
        x, y = px, py
    return pairs[::-1]
