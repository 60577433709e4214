"""Where a stale citation is at HEAD, told while it was judged (HEAD's parse at hand), so
that its history walk starts there instead of parsing HEAD again (the parse is long gone
from the cache by then, or was made in another process): kept by the run's session by
its anchor and HEAD's files. And its spot in any other version: its state, lines,
tokens, and the bytes around them that decide it (`watcher.locate.extent`).
"""

from __future__ import annotations

from collections.abc import Callable

from watcher.judge import classify
from watcher.judge.plan import Plan
from watcher.locate import matching
from watcher.locate.anchors import Anchor
from watcher.locate.extent import Spot, names_of, spotted
from watcher.mirror.mirrors import Mirror
from watcher.mirror.renames import Files
from watcher.models import Result, Verdict
from watcher.parse.syntax import Parsed


def head_spot(mirror: Mirror, plan: Plan, result: Result) -> Spot | None:
    """A stale citation's place at HEAD, to send along with its verdict; None for other
    items. Call it where the item was judged: HEAD is parsed there. Not for a whole file,
    nor for an item found in a file it was not followed to: its walk reads other files at
    HEAD. The verdict placed it already (`matching.find`, whose answer `matching.place`
    gives): only the tokens of its lines are read here."""
    item, files = plan.item, dict(plan.files)
    if item.kind != "citation" or item.start_line is None or not files:
        return None
    current = result.current
    if current is None:
        return "missing", None, None, None, (), None, names_of(classify.anchor_of(mirror, plan))
    if current.path not in files:
        return None
    state = "changed" if result.verdict is Verdict.CHANGED else "same"
    version = classify.parse_at(mirror, current.path, files[current.path])
    anchor = classify.anchor_of(mirror, plan)
    return spotted(version, state, current.path, current.start_line, current.end_line, anchor)


def remember_spot(mirror: Mirror, plan: Plan, spot: Spot | None) -> None:
    """Keep a citation's place at HEAD for its walk (see `head_spot`)."""
    if spot is not None:
        mirror.session.spots[(classify.anchor_of(mirror, plan), tuple(plan.files))] = spot


def head_holder(mirror: Mirror, plan: Plan, result: Result) -> tuple[str, ...] | None:
    """The name path of the definition a changed citation is in at HEAD (`beside.holder`;
    empty: none of its kind and name), told where it was judged, HEAD's parse at hand;
    None for other items."""
    from watcher.history import beside

    current, files = result.current, dict(plan.files)
    if result.verdict is not Verdict.CHANGED or current is None or current.path not in files:
        return None
    anchor = classify.anchor_of(mirror, plan)
    if anchor.definition is None or current.start_line is None:
        return None
    version = classify.parse_at(mirror, current.path, files[current.path])
    return beside.holder(version, anchor.definition, current.start_line, current.end_line) or ()


def remember_holder(mirror: Mirror, plan: Plan, holder: tuple[str, ...] | None) -> None:
    """Keep the definition a changed citation is in at HEAD for its walk (`head_holder`)."""
    if holder is not None:
        mirror.session.holders[(classify.anchor_of(mirror, plan), tuple(plan.files))] = holder


def spot(mirror: Mirror, anchor: Anchor, files: Files, parse: Callable[[str, str], Parsed]) -> Spot:
    """The item's spot in one version of its files: the one told at HEAD while it was
    judged (taken once), else placed in the files' parses (`parse(path, blob)`)."""
    told = mirror.session.spots.pop((anchor, files), None)
    if told is not None:
        return told
    parsed = [(p, parse(p, b)) for p, b in files]
    state, path, start, end = matching.place(anchor, parsed)
    if path is None:
        return state, path, start, end, (), None, names_of(anchor)
    return spotted(dict(parsed)[path], state, path, start, end, anchor)
