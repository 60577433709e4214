"""A cited definition renamed after it was edited: the same item under its new name.

`locate` finds a definition under another name than the cited one only when it is
SIMILAR_IN_FILE alike the cited form whole (`matching.renamed_definition`), where under
its own name FOUND_SHARE of the cited tokens will do. A definition edited over the years
and then renamed fell between the two: mcphost's `initConfig`, edited three times, then
exported as `InitConfig` with nothing else changed, keeps 63% of its cited form at HEAD
and was `missing`. A rename is a change between the two versions its commit joins, as git
tells a file's rename, not between the baseline and HEAD: where the history walk finds
the item gone (the commit its `missing` is blamed on) and its definition's name with it,
a definition of its kind, in the same scope, that the commit wrote and the version before
did not have, at least SIMILAR_IN_FILE alike the definition that held the item just before
(and no other the commit removed as alike it), is that definition renamed. The item is
then looked for under the new name wherever its own finds nothing, in HEAD's verdict and
in each version of its walk (`Session.renamed`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from watcher.judge import classify
from watcher.judge.plan import Plan
from watcher.locate.alignment import likeness
from watcher.locate.anchors import Anchor
from watcher.locate.definitions import definition_keys, named, of_kind
from watcher.locate.matching import SIMILAR_IN_FILE, find
from watcher.mirror.mirrors import Mirror
from watcher.parse.nodes import with_attributes
from watcher.parse.syntax import Parsed, tokens_between

if TYPE_CHECKING:
    from tree_sitter import Node

Files = Sequence[tuple[str, str]]
ROUNDS = 3  # renames followed one after another (a walk each)


def found(mirror: Mirror, plan: Plan, before: Files, after: Files) -> Anchor | None:
    """Where the commit between `before` and `after` (the item's files on either side)
    made the item `missing`: the anchor under its definition's new name, when the commit
    renamed it, remembered for the run (`Session.renamed`); None when it did not. A name
    it was renamed to before is renamed from."""
    own = classify.anchor_of(mirror, plan)
    earlier = mirror.session.renamed.get(own, ())
    anchor = earlier[-1] if earlier else own
    if anchor.definition is None or anchor.start_line is None:
        return None
    kind, names = anchor.definition
    held = _held(mirror, anchor, before)
    if held is None:
        return None
    had, now = _keys(mirror, before), _keys(mirror, after)
    if anchor.definition in now:  # still there, its body moved out (gemini-cli's
        return None  # `filterFiles`, whose body went to a new `_shouldIgnore`): no rename
    best: tuple[float, tuple[str, ...], tuple[str, ...]] | None = None
    for path, blob in after:
        parsed = classify.parse_at(mirror, path, blob)
        for key, node in of_kind(parsed, kind):
            if key[:-1] != names[:-1] or (kind, key) in had:
                continue
            tokens = _tokens(parsed, node)
            ratio = likeness(held, tokens)
            if ratio >= SIMILAR_IN_FILE and (best is None or ratio > best[0]):
                best = (ratio, key, tokens)
    if best is None or _taken(mirror, anchor, before, now, best[0], best[2]):
        return None
    renamed = dataclasses.replace(anchor, definition=(kind, best[1]))
    mirror.session.renamed[own] = (*earlier, renamed)
    return renamed


def _taken(
    mirror: Mirror,
    anchor: Anchor,
    before: Files,
    now: set[tuple[str, tuple[str, ...]]],
    ratio: float,
    tokens: tuple[str, ...],
) -> bool:
    """Whether the new definition (its `tokens`, `ratio` alike the item's) may as well be
    another definition of its kind and scope that the commit removed: one as alike it as
    SIMILAR_IN_FILE. A rename is one to one, and several alike functions folded into one
    are no rename of any of them: fastmcp's tool, prompt and resource task handlers, made
    one `submit_to_docket`, 87-88% alike it each. Under its own name's rules the tool's
    handler, which git's diff pairs with it, is found there (`matching`); the others are
    gone."""
    assert anchor.definition is not None
    kind, names = anchor.definition
    for path, blob in before:
        parsed = classify.parse_at(mirror, path, blob)
        for key, node in of_kind(parsed, kind):
            if key[:-1] != names[:-1] or key == names or (kind, key) in now:
                continue
            if likeness(_tokens(parsed, node), tokens) >= min(ratio, SIMILAR_IN_FILE):
                return True
    return False


def _held(mirror: Mirror, anchor: Anchor, files: Files) -> tuple[str, ...] | None:
    """The tokens of the definition that holds the item in `files` under the anchor's
    name (its whole text, attributes included), or None where it is not there so."""
    assert anchor.definition is not None
    parsed = [(path, classify.parse_at(mirror, path, blob)) for path, blob in files]
    spot = find(anchor, parsed)
    if spot is None or spot.start_line is None:
        return None
    version = dict(parsed)[spot.path]
    for node in named(version, *anchor.definition):
        if node.start_point[0] < spot.start_line <= node.end_point[0] + 1:
            return _tokens(version, node)
    return None


def _tokens(parsed: Parsed, node: Node) -> tuple[str, ...]:
    head = with_attributes(node)
    end = max(node.end_byte, head.end_byte)
    return tuple(tokens_between(parsed, head.start_byte, end, starting=True).texts)


def _keys(mirror: Mirror, files: Files) -> set[tuple[str, tuple[str, ...]]]:
    """Every definition (kind and name path) of the files."""
    return {
        k for path, blob in files for k in definition_keys(classify.parse_at(mirror, path, blob))
    }
