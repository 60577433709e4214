"""The first release of a commit: the earliest tag, in release order, that contains it.

Release order is watcher.mirror.versions': pre-releases (semver and PEP 440) before their
release, package prefixes allowed. Answers are remembered per mirror until its next fetch
(tags may move), and can be handed over from an earlier run for the same tag set.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from watcher.fingerprint import short
from watcher.mirror.git import run

if TYPE_CHECKING:
    from watcher.mirror.mirrors import Mirror

# More commits than this to place in releases at once: one walk of the tags' history
# (two git processes) instead of one `for-each-ref --contains` each.
RELEASE_PASS = 8


class Releases:
    """The first releases of commits in one mirror, remembered until `forget`."""

    def __init__(self, mirror: Mirror) -> None:
        self.mirror = mirror
        self.known: dict[tuple[str, str], str | None] = {}  # (pattern, commit) -> tag

    def forget(self) -> None:
        """Tags may have moved (a fetch)."""
        self.known = {}

    def tags_key(self, pattern: str) -> str:
        """Changes whenever a tag matching `pattern` is added, moved or deleted, or the
        release order changes (`versions.ORDER_VERSION`)."""
        self.mirror.require()
        out = run(
            self.mirror.path,
            "for-each-ref",
            "--format=%(objectname) %(refname)",
            f"refs/tags/{pattern}",
        )
        from watcher.mirror.versions import ORDER_VERSION

        return short(f"{ORDER_VERSION}\n{out}", 16)

    def remember(self, pattern: str, known: dict[str, str | None]) -> None:
        """Take `first` answers for the current tag set from an earlier run."""
        for commit, tag in known.items():
            self.known.setdefault((pattern, commit), tag)

    def many(self, pattern: str, commits: Iterable[str]) -> dict[str, str | None]:
        """`first` of each of `commits`: many at once in one pass, each remembered."""
        wanted = sorted(set(commits))
        unknown = [c for c in wanted if (pattern, c) not in self.known]
        if len(unknown) > RELEASE_PASS:
            for commit, tag in self._pass(pattern, unknown).items():
                self.known[(pattern, commit)] = tag
        return {c: self.first(c, pattern) for c in wanted}

    def first(self, commit: str, pattern: str) -> str | None:
        """The earliest tag matching `pattern` (by version order) that contains `commit`."""
        key = (pattern, commit)
        if key not in self.known:
            self.known[key] = self._query(commit, pattern)
        return self.known[key]

    def _query(self, commit: str, pattern: str) -> str | None:
        self.mirror.release_queries += 1
        from watcher.mirror import versions

        self.mirror.require()
        out = run(
            self.mirror.path,
            "for-each-ref",
            "--contains",
            commit,
            "--format=%(refname:short)",
            f"refs/tags/{pattern}",
            env=self.mirror.env,
        )
        tags = versions.ordered(out.split())
        return tags[0] if tags else None

    def _pass(self, pattern: str, commits: list[str]) -> dict[str, str | None]:
        """The first release of each of `commits` from one walk: the tags in version order
        (the order `first` sorts by), each claiming the commits it reaches that no earlier
        tag reached. Costs one walk of the tags' history, however many commits."""
        self.mirror.release_passes += 1
        path = self.mirror.path
        listing = run(
            path,
            "for-each-ref",
            "--format=%(refname:short) %(objecttype) %(objectname) %(*objecttype) %(*objectname)",
            f"refs/tags/{pattern}",
        )
        tags = []
        for line in listing.splitlines():
            name, kind, oid, *peeled = line.split()
            if peeled[:1] == ["commit"] or (kind == "commit" and not peeled):
                tags.append((name, peeled[1] if peeled else oid))
        from watcher.mirror import versions

        order = {n: i for i, n in enumerate(versions.ordered(n for n, _ in tags))}
        # Release order, as `first`'s; a tag that reads as no version is no release.
        tags = sorted((nt for nt in tags if nt[0] in order), key=lambda nt: order[nt[0]])
        tips = "".join(f"{tip}\n" for tip in dict.fromkeys(tip for _, tip in tags))
        graph = run(path, "rev-list", "--parents", "--stdin", stdin=tips) if tips else ""
        parents = {line[:40]: line.split()[1:] for line in graph.splitlines()}
        found: dict[str, str | None] = dict.fromkeys(commits)
        left, seen = set(commits), set()
        for name, tip in tags:
            stack = [tip]
            while stack and left:
                commit = stack.pop()
                if commit not in seen:
                    seen.add(commit)
                    if commit in left:
                        found[commit] = name
                        left.discard(commit)
                    stack.extend(parents.get(commit, ()))
            if not left:
                break
        return found
