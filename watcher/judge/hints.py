"""Where a maintainer should look for a missing citation: the definition that held it, by
kind and name, in the other files the commit that removed it added or changed (and where
those went since). A hint only: SPEC follows renames, not moves to unrelated files, so the
verdict stays `missing` and no candidate is chosen (`relocate` finds what is followed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from watcher.judge.relocate import Parse, choose, definitions_in
from watcher.locate.anchors import Anchor
from watcher.models import Candidate
from watcher.parse import languages

if TYPE_CHECKING:
    from watcher.judge.plan import Plan
    from watcher.mirror.mirrors import Mirror


def hint_files(mirror: Mirror, plan: Plan, anchor: Anchor, commit: str) -> list[tuple[str, str]]:
    """Where `hints` looks for a missing citation: the other files (path, blob at HEAD) the
    commit that removed it added or changed, still at HEAD. Fetch them first: many
    citations' files come in one fetch."""
    touched = _touched(mirror, plan, anchor, commit)
    if touched is None:
        return []
    at_head, paths, suffixes = touched
    followed = {p for p, _ in plan.files} | {plan.item.path}
    found = {p: at_head[p] for p in paths if p in at_head and p not in followed}
    # A file the commit added or changed that a later commit moved (fastmcp's
    # client/resources.py, made client/mixins/resources.py): where it is at HEAD.
    for path in _gone(at_head, paths, suffixes):
        for moved, blob in mirror.paths.where(commit, plan.head, path).files:
            if moved not in followed:
                found.setdefault(moved, blob)
    return sorted(found.items())


def moved_since(mirror: Mirror, plan: Plan, anchor: Anchor, commit: str) -> list[str]:
    """The files of the citation's language that `commit` added or changed and that are
    not at HEAD: `hint_files` asks where each went (`Paths.prepare` answers many at once)."""
    touched = _touched(mirror, plan, anchor, commit)
    return [] if touched is None else _gone(*touched)


def _touched(
    mirror: Mirror, plan: Plan, anchor: Anchor, commit: str
) -> tuple[dict[str, str], list[str], tuple[str, ...]] | None:
    """The files of the citation's language at HEAD (path: blob), the paths `commit`
    touched, and the language's file endings; None where no hint is looked for (no
    definition held the citation, or no grammar reads its file)."""
    language = languages.for_path(plan.item.path)
    if anchor.definition is None or language is None:
        return None
    suffixes = languages.LANGUAGES[language].extensions
    touched = sorted(mirror.paths.touched([commit])[commit])
    return mirror.files(plan.head, suffixes), touched, suffixes


def _gone(at_head: dict[str, str], paths: list[str], suffixes: tuple[str, ...]) -> list[str]:
    """Of `paths`, the files of the language that HEAD does not have."""
    return [p for p in paths if p not in at_head and p.endswith(suffixes)]


def hints(
    mirror: Mirror,
    plan: Plan,
    anchor: Anchor,
    commit: str,
    files: Sequence[tuple[str, str]],
    parse: Parse,
) -> tuple[Candidate, ...]:
    """For a missing citation, where a maintainer should look: the definition that held it,
    by kind and name, in `files` (`hint_files`: those the commit that removed it added or
    changed). A hint only: SPEC follows renames, not moves to unrelated files, so the
    verdict stays `missing` and no candidate is chosen."""
    if anchor.definition is None or not files:
        return ()
    matches = (
        definitions_in(mirror, anchor, files, parse)
        or definitions_in(mirror, anchor, files, parse, other_class=True)
        or [m for a in _exported(anchor) for m in definitions_in(mirror, a, files, parse)]
    )
    if not matches:
        return ()
    _, candidates = choose(plan.item.path, anchor.tokens, matches, f"changed by {commit[:12]}")
    return tuple(c.model_copy(update={"chosen": False}) for c in candidates)


def _exported(anchor: Anchor) -> list[Anchor]:
    """A Go definition under the name it has exported or unexported (its first letter's
    case flipped: crush's `runTool`, moved to a new file and later made `RunTool`)."""
    if anchor.definition is None or languages.for_path(anchor.path) != "go":
        return []
    kind, names = anchor.definition
    name = names[-1] if names else ""
    flipped = name[:1].swapcase() + name[1:]
    if flipped == name:
        return []
    return [replace(anchor, definition=(kind, (*names[:-1], flipped)))]
