"""Where a missing item could be found by name, kept through the commits that did not
touch those places: the definitions `locate` would weigh for it (`matching._carried`:
its name path, its name in another scope; `renamed_definition`: a name of its scope the
baseline file did not have), each as the bytes from its first decorator to the next line
of code after it.

A walk back from HEAD through a missing item's versions parses none of them when no
commit could have brought the item back (`probes.stays_missing`). Its name is written in
most versions that once held it (python-sdk's `__init__`, a method of another class, a
helper added since): told from the bytes alone, any of those could be it, and each
version was judged. Known from the last version judged, and carried back through each
commit's stretches as a line range is, these places are the same bytes in the version
before, in the same scopes, unless a stretch touched one of them or changed which
definitions there are (`_redefines`). For Python, whose scopes are its lines'
indentation.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from dataclasses import dataclass

from watcher.locate.anchors import Anchor
from watcher.locate.definitions import of_kind
from watcher.locate.windows import Stretches
from watcher.parse.nodes import with_attributes
from watcher.parse.syntax import Parsed

LANGUAGES = frozenset({"python"})
# A definition's line: its indentation, its keyword and its name.
_HEADER = re.compile(rb"^([ \t]*)(?:async[ \t]+)?(def|class)\b[ \t]*(\w*)", re.MULTILINE)
_CODE = re.compile(rb"^[ \t]*[^ \t\r\n#]", re.MULTILINE)
_SCOPED = frozenset({"function_definition", "class_definition"})


@dataclass(frozen=True)
class Extents:
    """Where, in one version of a file, the missing item could be found by name: bytes
    [start, end) of each definition `locate` would weigh for it; and the item's kind and
    name path, which tell the definitions a commit wrote that could be it."""

    places: tuple[tuple[int, int], ...]
    kind: str
    names: tuple[str, ...]


def extents(anchor: Anchor, parsed: Parsed) -> Extents | None:
    """The places in one parsed version where `locate` could find the missing item by
    name; None where that is not told (another language, no tree, no definition)."""
    if parsed.language not in LANGUAGES or parsed.tree is None or anchor.definition is None:
        return None
    kind, names = anchor.definition
    found = []
    for key, node in of_kind(parsed, kind):
        same_name = key[-1:] == names[-1:]
        renamed = key[:-1] == names[:-1] and (kind, key) not in anchor.known
        if same_name or renamed:
            head = with_attributes(node)
            start = parsed.source.rfind(b"\n", 0, head.start_byte) + 1
            found.append((start, _next_code(parsed.source, max(node.end_byte, head.end_byte))))
    return Extents(tuple(sorted(found)), kind, tuple(names))


def _next_code(source: bytes, end: int) -> int:
    """Where the first line holding code after `end` starts (or the file's end): lines
    written between a definition and it, blank or comments only until then, may be
    taken into the definition by a parse (statements appended to a Python function)."""
    line = source.find(b"\n", end)
    if line < 0:
        return len(source)
    code = _CODE.search(source, line + 1)
    return len(source) if code is None else code.start()


def carried(known: Extents, stretches: Stretches, newer: bytes, older: bytes) -> Extents | None:
    """The places in the older version, where no stretch (where the two differ: the
    older's bytes, then the newer's) touches one of them in the newer version and none
    changes which definitions there are (`_redefines`); else None (judge it)."""
    shifted, shift, index = [], 0, 0
    ordered = stretches  # in the order of the bytes, as `diffs.differing` finds them
    for start, end in known.places:
        # A stretch on the line that ends before it or the one it ends at touches it too:
        # what a commit wrote there may be aligned with either (a decorator added above,
        # a statement appended below, read as written after the next line's indentation).
        while index < len(ordered) and ordered[index][3] < start - 1:
            if _redefines(known, ordered[index], newer, older):
                return None
            old_lo, old_hi, new_lo, new_hi = ordered[index]
            shift += (old_hi - old_lo) - (new_hi - new_lo)
            index += 1
        line_end = newer.find(b"\n", end)
        if index < len(ordered) and ordered[index][2] <= (len(newer) if line_end < 0 else line_end):
            return None  # a stretch touches it
        shifted.append((start + shift, end + shift))
    if any(_redefines(known, stretch, newer, older) for stretch in ordered[index:]):
        return None
    return dataclasses.replace(known, places=tuple(shifted))


def _redefines(
    known: Extents, stretch: tuple[int, int, int, int], newer: bytes, older: bytes
) -> bool:
    """Whether a stretch may change which definitions `locate` could find the item in,
    other than those at its places (which it does not touch): where the definitions'
    lines it touches differ in the two versions (an edit of a signature leaves them as
    they were), one of them may be the item under its own name, or renamed in its
    scope, or take code after the stretch into its scope. None can when they have other
    names, the definition the item was in is nowhere in either version (fastmcp's
    `MountedServer`, gone with its `__init__`), and each one's scope ends within the
    stretch (a method added or removed whole)."""
    old_lo, old_hi, new_lo, new_hi = stretch
    before, after = _headers(older, old_lo, old_hi), _headers(newer, new_lo, new_hi)
    if [h[1:] for h in before] == [h[1:] for h in after]:
        return False
    if known.kind not in _SCOPED or len(known.names) < 2:
        return True
    own = known.names[-1].encode()
    if any(name == own for _, _, _, name in before + after):
        return True
    scope = re.compile(rb"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+%s\b" % re.escape(
        known.names[-2].encode()), re.MULTILINE)  # fmt: skip
    if scope.search(older) or scope.search(newer):
        return True
    return _reaching(before, after, older, old_hi) or _reaching(after, before, newer, new_hi)


def _headers(source: bytes, low: int, high: int) -> list[tuple[int, int, bytes, bytes]]:
    """The definitions' lines among the lines that bytes [low, high) touch: where each
    starts, and its indentation, keyword and name."""
    start = source.rfind(b"\n", 0, low) + 1
    end = source.find(b"\n", high)
    end = len(source) if end < 0 else end
    found = _HEADER.finditer(source, start, end)
    return [(m.start(), len(m[1]), m[2], m[3]) for m in found]


def _reaching(
    own: list[tuple[int, int, bytes, bytes]],
    other: list[tuple[int, int, bytes, bytes]],
    source: bytes,
    high: int,
) -> bool:
    """Whether a definition's line of one version's stretch (`own`, in `source`, the
    stretch ending at byte `high`) that the other's does not have opens a scope that
    runs on past the stretch: the first line of code after it that is no deeper starts
    after `high`."""
    unmatched = Counter(h[1:] for h in other)
    for at, indent, keyword, name in own:
        if unmatched[(indent, keyword, name)] > 0:
            unmatched[(indent, keyword, name)] -= 1
            continue
        line = source.find(b"\n", at)
        closing = re.compile(rb"^[ \t]{0,%d}[^ \t\r\n#]" % indent, re.MULTILINE)
        found = closing.search(source, len(source) if line < 0 else line + 1)
        if (len(source) if found is None else found.start()) > high:
            return True
    return False
