"""Carry a changed citation from version to version, as SPEC §4 says and `git log -L`
carries lines: through each commit that changed it, from the lines it had just before.

The history walk judges a version by aligning the baseline's definition with that
version's in one jump (`locate.matching`). Where the cited code was rewritten by one
commit, and code that reads as the cited code did was written beside it by a later one,
the jump pairs the cited tokens with that look-alike: the HEAD span takes it in, and the
history lists the commits that wrote it and took it out again. Carried commit by commit,
the look-alike is code inserted at the edge of what the citation had become, and stays
outside.

The walk has told which commits changed the item. Here it is carried through them: from
the version before the first, step by step to the version before each next one, and to
HEAD, each step citing anew the lines it has in one version (`anchors.anchor`) and
finding them in the next. A commit that changed none of the tokens so carried is no
change of the item. A definition cited whole is compared whole: one jump is exact for
it, and it is not stepped (but see below). A step that cannot carry it (the lines keep
less than FOUND_SHARE; they are a whole definition where the citation was part of one,
or part of a statement where whole statements were cited; a file no grammar reads)
leaves the walk's answer as it is: the item is not told
missing by a step alone (punkpeye/fastmcp's `stop`, whose cited `if` block was deleted
after a look-alike was written above it, keeps the look-alike).

The other way round, a step can find what one jump lost. Where the walk found the item
missing after a commit and found it again later, it is carried through every commit from
the first, a definition cited whole too; if each step finds it, that commit did not take
it out (a method split in two, its half in a scope the baseline file did not have), and
the commits up to the one that found it again, which the walk judged none of, are walked
from where the step found it (`_across`): one of them may have changed it. So are the
commits from the last change to HEAD: the walk followed the lines one jump placed it on,
and the steps may place it on more (openai-agents-js's three cited imports, the third
edited by a commit one jump's lines did not reach). Where
the walk found it missing for good, it is carried across the commits up to the one that
lost it (`recovered`): edited a little at a time, less than half of what was cited may be
left while each commit kept most of what the one before left, and it is walked on from
there as it is. Where a step finds nothing, or finds code cut up into new functions, the
walk's answer stands.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from watcher.history import walk
from watcher.judge import classify
from watcher.locate import definitions
from watcher.locate.anchors import Anchor, Found, LocateError, anchor
from watcher.mirror.mirrors import Mirror
from watcher.mirror.renames import Files

Changes = list[tuple[str, str]]  # (commit, the item's state after it), oldest first


@dataclass(frozen=True)
class Stepped:
    """A citation carried commit by commit: where it is at HEAD, and the commits that
    changed what was carried (its state, or its tokens)."""

    found: Found
    changes: Changes


def stepwise(
    mirror: Mirror,
    cited: Anchor,
    start: Files,
    steps: Sequence[tuple[str, Files]],
    changes: Changes,
) -> Stepped | None:
    """The citation `cited` carried through each commit of its last run of found states
    in `changes`, then to HEAD. It starts in the version before the first of them, where
    it is as cited (other code of its definition may have changed since the baseline),
    or, where it was missing before, before the second (found there by one jump). Each
    step goes from the version before one commit to the version before the next (or
    HEAD): the versions the walk judged, as no other commit between touched the item.
    Where one jump lost it and found it again, it is first carried from the first commit
    across the ones it was lost at, a definition cited whole too. None where there is
    nothing to step through, or a step cannot carry it."""
    if cited.start_line is None or not changes:
        return None
    bridged = _bridged(mirror, cited, start, steps, changes)
    if bridged is not None:  # each commit that lost it to one jump, crossed by a step
        return bridged
    if cited.whole:
        return None  # compared whole: one jump is exact where it finds it
    restart = 1 + max((n for n, (_, s) in enumerate(changes) if s == "missing"), default=-1)
    return _through(mirror, cited, start, steps, changes, restart)


def _bridged(
    mirror: Mirror,
    cited: Anchor,
    start: Files,
    steps: Sequence[tuple[str, Files]],
    changes: Changes,
) -> Stepped | None:
    """`stepwise` across the commits one jump lost the citation at before it found it
    again, from the first commit on; None where it was not lost and found again, or a
    step cannot carry it."""
    missing = [n for n, (_, s) in enumerate(changes) if s == "missing"]
    if not missing or changes[0][1] == "missing" or missing[-1] == len(changes) - 1:
        return None
    return _through(mirror, cited, start, steps, changes, 0)


@dataclass(frozen=True)
class Recovered:
    """A citation its walk lost for good, carried on: its changes, and where it is at
    HEAD (None: missing there after all, from a later commit)."""

    changes: Changes
    found: Found | None


def recovered(
    mirror: Mirror,
    cited: Anchor,
    start: Files,
    steps: Sequence[tuple[str, Files]],
    changes: Changes,
) -> Recovered | None:
    """A citation the walk found missing from a commit to HEAD, carried across that commit
    and the ones before it a step at a time, as `_through` carries one: where every step
    finds it, the commit took less than half of what was left of it, and it is still
    there (Roo Code's `new StdioClientTransport({...})`, its environment rewritten by one
    commit and its command and arguments by another). From that commit on it is walked
    as it is there (its lines cited anew), so that later commits that edit it, or delete
    it, are its history too. Where a step finds nothing, it is missing from that commit,
    and the commits before are told as `stepwise` tells them (lost to one jump and found
    again); None where they are as walked."""
    lost = _lost_at(changes)
    if lost is None or cited.start_line is None:
        return None
    at = next(n for n, (commit, _) in enumerate(steps) if commit == changes[lost][0])
    kept: Changes = []
    carried = _carry(mirror, cited, start, steps, changes[: lost + 1], steps[at][1], kept, cut=True)
    if carried is None:  # lost there: maybe lost and found again before, as `stepwise` tells
        earlier = _bridged(mirror, cited, start, steps[:at], changes[:lost])
        return None if earlier is None else Recovered([*earlier.changes, *changes[lost:]], None)
    found, files = carried
    again = _recited(mirror, cited, found, files)
    if again is None:
        return None
    rest = steps[at + 1 :]
    later = _walked(mirror, again, files, rest)
    onward = stepwise(mirror, again, files, rest, later) if later else None
    for commit, after in onward.changes if onward else later:  # against the baseline
        kept.append((commit, "missing" if after == "missing" else "changed"))
    if kept[-1][1] == "missing":
        return Recovered(kept, None)
    head = onward.found if onward else classify.find_citation(mirror, again, steps[-1][1])
    return None if head is None else Recovered(kept, head)


def _cut_up(mirror: Mirror, carried: tuple[Anchor, Files], found: tuple[Found, Files]) -> bool:
    """Whether what a step found takes in more whole functions, methods or types than the
    lines it carried held (`definitions.units_within`): code a commit cut into helpers,
    found as the stretch that takes them all in, is not the item carried on (mcp-proxy's
    `main` with the `__main__` guard below it, cut into helpers above a shorter `main`:
    the span would be most of the file)."""
    (again, before), (into, after) = carried, found
    if again.start_line is None or into.start_line is None:
        return True
    held = [
        definitions.units_within(parsed, *parsed.line_bytes(start, end or start))
        for files, path, start, end in (
            (before, again.path, again.start_line, again.end_line),
            (after, into.path, into.start_line, into.end_line),
        )
        if (parsed := classify.parse_at(mirror, path, dict(files)[path])).tree is not None
    ]
    return len(held) == 2 and len(held[1]) > len(held[0])


def _lost_at(changes: Changes) -> int | None:
    """Where the run of commits after which the item stayed missing to HEAD begins in
    `changes`; None where it is found at HEAD."""
    if not changes or changes[-1][1] != "missing":
        return None
    lost = len(changes) - 1
    while lost and changes[lost - 1][1] == "missing":
        lost -= 1
    return lost


def _walked(
    mirror: Mirror, again: Anchor, start: Files, steps: Sequence[tuple[str, Files]]
) -> Changes:
    """The changes of the lines `again` cites in `start`, walked through `steps` as the
    history walk walks a citation from its baseline (`walk.changes`)."""
    walked = walk.changes(mirror, start, steps, [walk.citation_judge(mirror, again)])
    try:
        while True:
            mirror.prefetch(walked.send(None))
    except StopIteration as stop:
        ((_, changes),) = stop.value
    return list(changes)


def _through(
    mirror: Mirror,
    cited: Anchor,
    start: Files,
    steps: Sequence[tuple[str, Files]],
    changes: Changes,
    restart: int,
) -> Stepped | None:
    """`stepwise` from `changes[restart]` on (the first commit, or the one that found it
    again after it was missing). A commit after which the walk found it missing, but
    which a step crosses, did not take it out: its state there is what the step found
    (openai-agents-js's `callTool`, split into a wrapper and `callToolResult` after its
    `session.callTool(...)` statement had been rewritten to under half its tokens: one
    jump from the baseline finds that statement in no scope the baseline file knew)."""
    stops = changes[restart:] if restart == 0 else changes[restart + 1 :]
    if not stops:
        return None  # found again, and not changed since: one jump is a step
    kept = list(changes[: len(changes) - len(stops)])
    head = steps[-1][1] if steps else start
    carried = _carry(mirror, cited, start, steps, stops, head, kept, first=restart == 0)
    if carried is None:
        return None
    found, files = carried
    return None if _recited(mirror, cited, found, files) is None else Stepped(found, kept)


def _carry(
    mirror: Mirror,
    cited: Anchor,
    start: Files,
    steps: Sequence[tuple[str, Files]],
    stops: Changes,
    end: Files,
    kept: Changes,
    first: bool = True,
    cut: bool = False,
) -> tuple[Found, Files] | None:
    """The citation carried a step at a time across each commit of `stops` (the walk's
    changes), from the version before the first to `end`, each step from its lines in the
    version before: where it is then, and in which files. The changes the steps find are
    added to `kept`. `first`: the stops begin with the item's first change, so it must be
    as cited before it, and a lone step from its definition as at the baseline is the
    walk's own jump (nothing to carry). `cut`: a step that finds it taking in functions
    the carried lines did not hold carries nothing (`_cut_up`). None where a step fails."""
    position = {commit: n for n, (commit, _) in enumerate(steps)}
    before = [steps[n - 1][1] if n else start for n in (position[c] for c, _ in stops)]
    files, found = before[0], classify.find_citation(mirror, cited, before[0])
    if found is None or (first and not found.identical):
        return None
    state = kept[-1][1] if kept else None
    for n, (commit, after) in enumerate(stops):
        into = before[n + 1] if n + 1 < len(stops) else end
        again = _recited(mirror, cited, found, files)
        if again is not None and len(stops) == 1 and first and _as_cited(again, cited):
            return None  # its definition as at the baseline: this one step is the jump
        carried = None if again is None else classify.find_citation(mirror, again, into)
        if again is None or carried is None:
            return None
        if cut and _cut_up(mirror, (again, files), (carried, into)):
            return None
        # The walk judged none of the commits up to `into` where it found the item missing,
        # and, after the last, only those that touched the lines it had placed it on: they
        # are walked from where the step found it, or it is not carried. So are the
        # commits between two changes, where a walk can follow it there: the lines carried
        # may be others than one jump's (gemini-cli's stdio branch, edited by 58df1c62
        # between two of the walk's changes, outside the lines its jumps placed it on).
        later = position[stops[n + 1][0]] if n + 1 < len(stops) else len(steps)
        gap = _between(steps, position[commit], into, later)
        mark = len(kept)
        step = steps[position[commit]]
        crossed = _across(mirror, cited, again, step, gap, after, state, kept) if gap else None
        if crossed is not None:  # a step, then a walk
            carried, state = crossed
        elif gap and (after == "missing" or n + 1 == len(stops)):
            return None
        else:  # the step alone, the commits it crosses told as the walk told them
            del kept[mark:]
            state = _crossed(cited, carried, commit, after, state, kept)
        found, files = carried, into
    return found, files


def _between(
    steps: Sequence[tuple[str, Files]], commit: int, into: Files, later: int
) -> Sequence[tuple[str, Files]]:
    """The steps after the one at `commit` up to the one whose version is `into` (the
    version before the walk's next change, at `later`, or HEAD), the last such before
    `later`: a version the history comes back to after a change is not the gap's end."""
    for n in range(later - 1, commit, -1):
        if steps[n][1] == into:
            return steps[commit + 1 : n + 1]
    return ()


def _across(
    mirror: Mirror,
    cited: Anchor,
    again: Anchor,
    step: tuple[str, Files],
    gap: Sequence[tuple[str, Files]],
    after: str,
    state: str | None,
    kept: Changes,
) -> tuple[Found, str] | None:
    """A citation (`again`, in the version before `step`) carried across that commit (the
    walk found it `after` there), then walked on through `gap`: the commits after it that
    the walk judged none of, having found it missing before and after each (crush's
    `c.Initialize(...)` block, lost to one jump when a look-alike `c.Start(...)` block
    above it was flattened, then edited by a commit of that gap), or, up to HEAD, judged
    only where they touched the lines one jump placed it on. The changes are added to
    `kept`; where it is at the gap's end, and its state there, are returned. None where
    a step or the walk loses it."""
    commit, files = step
    carried = classify.find_citation(mirror, again, files)
    walked = None if carried is None else _recited(mirror, cited, carried, files)
    if carried is None or walked is None:
        return None
    state = _crossed(cited, carried, commit, after, state, kept)
    for later, walked_after in _walked(mirror, walked, files, gap):
        state = "missing" if walked_after == "missing" else "changed"
        kept.append((later, state))
    found = classify.find_citation(mirror, walked, gap[-1][1])
    return None if found is None or state == "missing" else (found, state)


def _crossed(
    cited: Anchor, carried: Found, commit: str, after: str, state: str | None, kept: Changes
) -> str:
    """The item's state after a step across `commit` found it (`carried`), told in `kept`
    where the step changed it: what the walk found, or, where the walk lost it there,
    what the step found, against the baseline."""
    if after == "missing":
        after = "same" if tuple(carried.tokens) == cited.tokens else "changed"
    if after != state or not carried.identical:
        kept.append((commit, after))
    return after


def _as_cited(again: Anchor, cited: Anchor) -> bool:
    """Whether a citation cited anew is the baseline's, in a definition as it was there:
    carried from it, the next version is what the walk's one jump found."""
    return (again.tokens, again.body, again.offset) == (cited.tokens, cited.body, cited.offset)


def _recited(mirror: Mirror, cited: Anchor, found: Found, files: Files) -> Anchor | None:
    """The lines `found` occupies in `files`, cited there: what the next version is
    searched for. None where they are not like `cited`: a whole definition where it was
    part of one (or the other way round), but for one member left of the members cited
    (`_member_left`); a definition's lines where it was in none (or the other way round),
    part of a statement where it cited whole statements (a call's argument lines, where it
    cited the `return` around them), no code of their own."""
    blob = dict(files).get(found.path)
    if blob is None or found.start_line is None or found.end_line is None:
        return None
    parsed = classify.parse_at(mirror, found.path, blob)
    if parsed.tree is None:
        return None
    try:
        again = anchor(parsed, found.path, found.start_line, found.end_line)
    except LocateError:
        return None
    if (again.definition is None) != (cited.definition is None):
        return None
    if _member_left(again, cited) or _local_of(again, cited):
        return again
    if again.whole != cited.whole:
        return None
    if cited.cited_statements is not None and again.cited_statements is None:
        return None
    return again


def _local_of(again: Anchor, cited: Anchor) -> bool:
    """Whether lines cited anew are a whole definition only because a cited statement
    became a local declaration of the function it was part of (gemini-cli's
    `discoveredTools.push(new DiscoveredMCPTool(...))`, made `const tool = new
    DiscoveredMCPTool(...)` and a `push(tool)`): a JavaScript `const` is a definition of
    its own (found by its name), and it is the statement carried on."""
    if not again.whole or cited.whole or again.definition is None or cited.definition is None:
        return False
    kind, path = again.definition
    return kind == definitions.DECLARATOR and path[:-1] == cited.definition[1]


def _member_left(again: Anchor, cited: Anchor) -> bool:
    """Whether lines cited anew are a whole definition only because one member is all
    that is left of the members cited: two fields of a class, one of them deleted since
    (fastmcp's `ProxyPrompt.task_config` and `_client`). A member of the definition the
    citation was part of is the same item, shrunk; a definition elsewhere (a helper the
    code was cut into) is not."""
    if not again.whole or cited.whole or again.definition is None or cited.definition is None:
        return False
    return again.definition[1][:-1] == cited.definition[1] and len(again.tokens) < len(cited.tokens)
