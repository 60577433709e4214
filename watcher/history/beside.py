"""Whether the definition a changed citation is found in at HEAD stood beside its own.

Where a citation's definition is gone, `locate` looks for it in a definition of its kind
and name in another scope (`matching._moved`): a method moved to another class, a
constant lifted out of its function. The baseline file must not have had that one, or
it must since have become more like the citation's definition than like itself. A
namesake written after the baseline, beside the cited definition, passes that test in
every version after the cited one is deleted, although it is another construct that
was there all along: pydantic-ai's `MCPToolset.list_tools`, written beside
`MCPServer.list_tools` by one commit and left alone when a later one deleted
`MCPServer`. Told from the history: at the commit after which the citation is in the
namesake, the version before held both, and the namesake is no more like the
citation's definition than like itself there. The citation is then missing from that
commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from watcher.judge import classify
from watcher.locate.alignment import kept
from watcher.locate.anchors import Anchor
from watcher.locate.definitions import named, of_kind
from watcher.mirror.mirrors import Mirror
from watcher.mirror.renames import Files
from watcher.parse.nodes import with_attributes
from watcher.parse.syntax import Parsed, tokens_between

if TYPE_CHECKING:
    from tree_sitter import Node

Changes = list[tuple[str, str]]  # (commit, the item's state after it), oldest first


def taken_over(
    mirror: Mirror,
    cited: Anchor,
    start: Files,
    steps: Sequence[tuple[str, Files]],
    changes: Changes,
    where: tuple[str, int, int],
) -> int | None:
    """The position in `changes` of the commit after which the citation, found at HEAD
    at `where` (path, first and last line) in another definition than its own, is in a
    namesake that stood beside its own definition and stays more itself than the
    citation's; None where it is in its own definition, or went into the other on its
    own (the namesake was not there before, or became its likeness)."""
    if cited.definition is None or not changes:
        return None
    kind, names = cited.definition
    files = steps[-1][1] if steps else start
    path, first, last = where
    blob = dict(files).get(path)
    if blob is None:
        return None
    told = mirror.session.holders.get((cited, tuple(files)))
    if told is None:  # not told while it was judged (`watch log`, a place carried elsewhere)
        told = holder(classify.parse_at(mirror, path, blob), cited.definition, first, last)
    if not told or told == names:
        return None
    held: tuple[str, ...] = told
    position = {commit: n for n, (commit, _) in enumerate(steps)}
    for k in range(len(changes) - 1, -1, -1):
        commit = changes[k][0]
        n = position[commit]
        before, after = (steps[n - 1][1] if n else start), steps[n][1]
        own = _definitions(mirror, before, kind, names)
        if not own:
            continue  # gone before this commit: it went into the namesake earlier
        beside = _definitions(mirror, before, kind, held)
        now = _definitions(mirror, after, kind, held)
        if not beside or not now or _definitions(mirror, after, kind, names):
            return None  # the namesake came with this commit (moved there), or not told
        if kept(own[0], now[0]) > kept(beside[0], now[0]):
            return None  # rewritten into the citation's likeness: it took the citation in
        return k
    return None


def holder(
    parsed: Parsed, definition: tuple[str, tuple[str, ...]], first: int, last: int | None
) -> tuple[str, ...] | None:
    """The name path of the innermost definition of the citation's kind and last name
    holding lines first..last of a parse: its own, or a namesake's."""
    if parsed.tree is None:
        return None
    kind, names, last = definition[0], definition[1], last or first
    if any(
        _lines(node)[0] <= first and last <= _lines(node)[1] for node in named(parsed, *definition)
    ):
        return names  # its own (looked up already where it was judged: no query)
    found = [
        (node.end_byte - node.start_byte, path)
        for path, node in of_kind(parsed, kind)
        if path[-1:] == names[-1:] and _lines(node)[0] <= first and last <= _lines(node)[1]
    ]
    return min(found)[1] if found else None


def _lines(node: Node) -> tuple[int, int]:
    return with_attributes(node).start_point[0] + 1, node.end_point[0] + 1


def _definitions(
    mirror: Mirror, files: Files, kind: str, names: tuple[str, ...]
) -> list[tuple[str, ...]]:
    """The tokens of each definition of `kind` with this name path in `files`."""
    found = []
    for path, blob in files:
        parsed = classify.parse_at(mirror, path, blob)
        if parsed.tree is None:
            continue
        for node in named(parsed, kind, names):
            low = with_attributes(node).start_byte
            texts = tokens_between(parsed, low, node.end_byte, starting=True, placed=False).texts
            found.append(tuple(texts))
    return found
