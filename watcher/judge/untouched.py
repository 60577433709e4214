"""A citation HEAD still holds byte for byte, told from the bytes without parsing HEAD.

The history walk follows an item from one version of its file to another by their bytes
(`watcher.history.follow`): where the other version holds the item's lines once, with
the code on either side of them, and each name that decides where `locate` places it
(its definition's, the first line of each definition around that one) as often, the item
is the same there, at the lines its bytes went to. The baseline and HEAD are two
versions like any others: a citation no commit since its baseline touched is placed at
HEAD that way, and HEAD is neither parsed nor searched for it. Most citations of a big
site are such: their files were edited elsewhere, or not at all.
"""

from __future__ import annotations

import bisect
import functools
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate

from watcher.history import follow
from watcher.judge.plan import Plan
from watcher.locate.anchors import Anchor, Found
from watcher.locate.extent import same_extent
from watcher.parse.diffs import differing
from watcher.parse.syntax import Parsed, Region, line_starts


@dataclass
class _Head:
    """HEAD's version of a cited file as the citations of one baseline follow into it:
    its bytes and where they differ from the baseline's (`differing`), found once for
    them all, and its lines' starts, on first need. What a citation costs is then its
    own lines' and the stretches', not the file's."""

    source: bytes
    stretches: list[Region]

    @functools.cached_property
    def starts(self) -> array[int]:
        return line_starts(self.source)

    def line(self, at: int) -> int:
        return bisect.bisect_right(self.starts, at)


def found(
    plan: Plan, anchor: Anchor, baseline: Callable[[], Parsed], read: Callable[[str], bytes]
) -> Found | None:
    """The citation at HEAD where its lines went untouched (identical); None when that is
    not shown from the bytes (then it is placed as any other). `baseline`: the parse of
    its baseline; `read`: a blob's bytes. Only a citation of lines followed into one file:
    a file and its copies are each searched (`relocate.twins`)."""
    item = plan.item
    start, end = item.start_line, item.end_line
    if item.kind != "citation" or start is None or end is None or len(plan.files) != 1:
        return None
    (path, blob), cited = plan.files[0], baseline()
    if cited.tree is None:  # a file no grammar reads: placed by its words
        return None
    extent = same_extent(cited, item.path, start, end, anchor)
    if extent is None:
        return None
    (low, high), guards = extent
    region = cited.source[low:high]
    if not region.strip() or not _alone(cited, region, low):
        return None  # lines that occur more than once could be found again elsewhere
    head = _head(cited, blob, read)
    words = tuple(g.encode() for g in guards)
    at, _ = follow.moved(cited.source, head.source, low, region, words, stretches=head.stretches)
    if at is None:
        return None
    shift = head.line(at) - bisect.bisect_right(cited.line_starts, low)
    return Found(path, start + shift, end + shift, True, anchor.text, anchor.tokens)


def _head(cited: Parsed, blob: str, read: Callable[[str], bytes]) -> _Head:
    """HEAD's version `blob` of the file `cited` is a baseline of, kept with its parse."""
    key = ("untouched at", blob)
    known = cited.derived.get(key)
    if not isinstance(known, _Head):
        source = cited.source if blob == cited.blob else read(blob)
        # As `follow.moved` reads them: HEAD's side first, the baseline's (which holds the
        # citations' lines) second.
        stretches = differing(source, cited.source, 0, len(source), 0, len(cited.source))
        known = cited.derived[key] = _Head(source, stretches)
    return known


def _alone(cited: Parsed, region: bytes, low: int) -> bool:
    """Whether the baseline holds `region`, whole lines at `low`, nowhere else: looked for
    only where the rarest of its lines starts one (`_lines`), so that a citation costs
    its own lines, not its file."""
    lines, index = region.split(b"\n"), _lines(cited)
    offsets = [0, *accumulate(len(line) + 1 for line in lines[:-1])]
    rarest = min(range(len(lines)), key=lambda k: len(index.get(lines[k], ())))
    source = cited.source
    for place in index.get(lines[rarest], ()):
        at = place - offsets[rarest]
        if (
            at != low
            and source.startswith(region, at)
            and follow.whole_lines(source, at, len(region))
        ):
            return False
    return True


def _lines(cited: Parsed) -> dict[bytes, list[int]]:
    """Where each line of the baseline starts, by its text: made once per parse."""
    key = ("untouched lines",)
    known = cited.derived.get(key)
    if isinstance(known, dict):
        return known
    index: dict[bytes, list[int]] = {}
    for line, at in zip(cited.source.split(b"\n"), cited.line_starts, strict=False):
        index.setdefault(line, []).append(at)
    cited.derived[key] = index
    return index
