"""A rename is one to one: a definition the version has and the baseline did not is the
renamed citation's definition only if no other definition the version lost is more like
it. Several alike definitions (fastmcp's four `handle_*_as_task` functions) folded into
one (`submit_to_docket`) are the rename of the one most like it (the tool's, as git's
diff has it too); the others, a cited one among them, were deleted.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import cast

from watcher.locate.anchors import Anchor
from watcher.locate.definitions import named, of_kind
from watcher.locate.scopes import reparsed
from watcher.parse.nodes import with_attributes
from watcher.parse.syntax import Parsed, tokens_between

Sibling = tuple[tuple[str, ...], tuple[str, ...]]


def taken(anchor: Anchor, parsed: Parsed, texts: Sequence[str]) -> bool:
    """Whether the new definition whose tokens are `texts` is another's rename: a
    definition of the baseline file, of the citation's kind and container, that
    `parsed` no longer has, and more like it (difflib's ratio) than the citation's own."""
    if anchor.definition is None or not anchor.body:
        return False
    kind = anchor.definition[0]
    own = None
    for names, body in _siblings(anchor):
        if named(parsed, kind, names):
            continue  # still there: renamed into nothing
        matcher = difflib.SequenceMatcher(None, body, texts, autojunk=False)
        if own is None:
            own = difflib.SequenceMatcher(None, anchor.body, texts, autojunk=False).ratio()
        if (
            matcher.real_quick_ratio() > own
            and matcher.quick_ratio() > own
            and matcher.ratio() > own
        ):
            return True
    return False


def _siblings(anchor: Anchor) -> list[Sibling]:
    """The baseline's other definitions of the citation's kind and container, with their
    tokens (attributes included): read once per anchor."""
    key = ("siblings",)
    if key not in anchor.derived:
        found: list[Sibling] = []
        if anchor.scope is not None and anchor.definition is not None:
            kind, names = anchor.definition
            base = reparsed(anchor.scope)
            for other, node in of_kind(base, kind):
                if other[:-1] != names[:-1] or other == names:
                    continue
                head = with_attributes(node)
                body = tokens_between(base, head.start_byte, max(node.end_byte, head.end_byte),
                                      starting=True, placed=False).texts  # fmt: skip
                found.append((other, tuple(body)))
        anchor.derived[key] = found
    return cast("list[Sibling]", anchor.derived[key])
