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
before, in the same scopes, unless a stretch touched one of them or wrote or removed a
definition's line (`def`, `class`: what could also change a definition's scope). For
Python, whose scopes are its lines' indentation.
"""

from __future__ import annotations

import re

from watcher.locate.anchors import Anchor
from watcher.locate.definitions import of_kind
from watcher.locate.windows import Stretches
from watcher.parse.nodes import with_attributes
from watcher.parse.syntax import Parsed

Extents = tuple[tuple[int, int], ...]  # bytes [start, end) of one version of a file

LANGUAGES = frozenset({"python"})
_DEFINING = re.compile(rb"^[ \t]*(?:async[ \t]+)?(?:def|class)\b", re.MULTILINE)
_CODE = re.compile(rb"^[ \t]*[^ \t\r\n#]", re.MULTILINE)


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
    return tuple(sorted(found))


def _next_code(source: bytes, end: int) -> int:
    """Where the first line holding code after `end` starts (or the file's end): lines
    written between a definition and it, blank or comments only until then, may be
    taken into the definition by a parse (statements appended to a Python function)."""
    line = source.find(b"\n", end)
    if line < 0:
        return len(source)
    code = _CODE.search(source, line + 1)
    return len(source) if code is None else code.start()


def carried(places: Extents, stretches: Stretches, newer: bytes, older: bytes) -> Extents | None:
    """The places in the older version, where no stretch (where the two differ: the
    older's bytes, then the newer's) touches one of them in the newer version and none
    writes or removes a definition's line; else None (judge it)."""
    shifted, shift, index = [], 0, 0
    ordered = stretches  # in the order of the bytes, as `diffs.differing` finds them
    for start, end in places:
        while index < len(ordered) and ordered[index][3] < start:
            old_lo, old_hi, new_lo, new_hi = ordered[index]
            if _defining(older, old_lo, old_hi) or _defining(newer, new_lo, new_hi):
                return None
            shift += (old_hi - old_lo) - (new_hi - new_lo)
            index += 1
        if index < len(ordered) and ordered[index][2] <= end:
            return None  # a stretch touches it (or starts right where it ends)
        shifted.append((start + shift, end + shift))
    for old_lo, old_hi, new_lo, new_hi in ordered[index:]:
        if _defining(older, old_lo, old_hi) or _defining(newer, new_lo, new_hi):
            return None
    return tuple(shifted)


def _defining(source: bytes, low: int, high: int) -> bool:
    """Whether the lines that bytes [low, high) touch hold a definition's line."""
    start = source.rfind(b"\n", 0, low) + 1
    end = source.find(b"\n", high)
    return _DEFINING.search(source, start, len(source) if end < 0 else end) is not None
