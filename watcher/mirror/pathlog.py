"""Reading what `git log` and `git diff` say about paths, for path histories
(watcher.mirror.renames): a log's entries, a log of many paths shared by the walks of
each (`Logged`), and which paths a pathspec matches as it is written."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field

Entry = tuple[str, str, str | None, str]  # commit, path, blob after (None: deleted), before


def read_log(out: str) -> tuple[list[Entry], dict[str, int]]:
    """`git log --raw --format=%x00%H` read back: (commit, path, blob after, blob before)
    for each file each commit touched (blob after None: deleted), and for each commit
    the number of entries up to it (it included)."""
    found: list[Entry] = []
    after: dict[str, int] = {}
    for chunk in out.split("\x00")[1:]:
        lines = chunk.strip().splitlines()
        for raw in lines[1:]:
            meta, _, path = raw.partition("\t")
            parts = meta.split()
            if len(parts) < 5:
                continue
            blob = None if parts[4].startswith("D") else parts[3]
            found.append((lines[0], path, blob, parts[2]))
        after[lines[0]] = len(found)
    return found, after


def diffed(raw: str, commits: list[str]) -> dict[str, tuple[dict[str, str], frozenset[str]]]:
    """`git diff-tree --stdin -r -z --raw --always --diff-filter=AM` read back (each
    commit's id, then meta and path alternating): for each of `commits`, the files it
    added (path -> blob) and every file it added or changed."""
    added: dict[str, dict[str, str]] = {c: {} for c in commits}
    touched: dict[str, set[str]] = {c: set() for c in commits}
    current = None
    fields = iter(raw.split("\0"))
    for field_ in fields:
        if field_ in added:
            current = field_
        elif field_.startswith(":") and current is not None:
            parts, path = field_.split(), next(fields, "")
            if len(parts) < 5:
                continue
            touched[current].add(path)
            if parts[4].startswith("A"):
                added[current][path] = parts[3]
    return {c: (added[c], frozenset(touched[c])) for c in commits}


def prefixes(path: str) -> list[str]:
    """A logged path and the folders above it: what a literal pathspec matching it may be.
    git quotes a path with special characters; the plain folders above it read the same
    inside the quotes (and a literal path never equals a quoted one)."""
    parts = (path[1:-1] if path.startswith('"') else path).split("/")
    return ["/".join(parts[: n + 1]) for n in range(len(parts))]


def literal(path: str) -> bool:
    """Whether a log writes `path` as it is given (a literal pathspec: the file, or the
    files below it): nothing git would quote (core.quotePath is off) or normalize."""
    return (
        path.isprintable()
        and '"' not in path
        and "\\" not in path
        and all(part not in ("", ".", "..") for part in path.split("/"))
    )


@dataclass(frozen=True)
class Logged:
    """One `git log` of many paths, or of every file: its entries, and which of them each
    path's own log would list (the entries at that path or, a pathspec being a prefix,
    below it)."""

    covered: frozenset[str] | None  # None: every file (a log with no pathspec)
    entries: tuple[Entry, ...]  # those of the covered paths, in the log's order
    by_path: dict[str, list[int]]  # path (or folder) -> indexes of its entries, ascending
    after: dict[str, int] = field(default_factory=dict)  # of every file: commit -> index past it

    @classmethod
    def of(cls, paths: Sequence[str], logged: Sequence[Entry]) -> Logged:
        covered = frozenset(paths)
        entries: list[Entry] = []
        by_path: dict[str, list[int]] = {}
        for entry in logged:
            given = [g for g in prefixes(entry[1]) if g in covered]
            for path in given:
                by_path.setdefault(path, []).append(len(entries))
            if given:
                entries.append(entry)
        return cls(covered, tuple(entries), by_path)

    @classmethod
    def every(cls, logged: Sequence[Entry], after: dict[str, int]) -> Logged:
        by_path: dict[str, list[int]] = {}
        for index, entry in enumerate(logged):
            for path in prefixes(entry[1]):
                by_path.setdefault(path, []).append(index)
        return cls(None, tuple(logged), by_path, after)

    def covers(self, paths: Sequence[str]) -> bool:
        if self.covered is None:
            return all(literal(p) for p in paths)
        return self.covered.issuperset(paths)

    def read(self, paths: Sequence[str], start: int = 0) -> list[Entry]:
        """The entries a log of `paths` (all covered) lists, in this log's order, from
        the `start`th on."""
        if len(paths) == 1:
            found = self.by_path.get(paths[0], [])
            return [self.entries[i] for i in found[bisect.bisect_left(found, start) :]]
        indexes = sorted({i for p in paths for i in self.by_path.get(p, ()) if i >= start})
        return [self.entries[i] for i in indexes]
