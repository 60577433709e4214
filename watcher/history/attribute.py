"""Name the upstream commit that made an item what it is at HEAD, and the release shipping it.

`introduced_by` is the first commit of the current run: walking the branch's
first-parent history back from HEAD, the commit after which the item has been in its
HEAD state (changed, broken or missing) without interruption. A change that was later
reverted is therefore not blamed. The walk visits only commits that touched the item's
files, parses only those whose diff touched the item's own lines (`watcher.history.walk`), and
judges each distinct version once.

Walks run in lock-step: each asks for the blobs it needs, and one fetch serves every
walk's request, so a cold run on a big site makes one blob round trip, not a few per
walk.

`history` is every first-parent commit since the baseline that changed a stale item
(its state, or its tokens: a rename or move is no change), oldest first. One walk back
from HEAD to the baseline finds it, and `introduced_by` is read off it (the last commit
that gave the item its HEAD state): each version is read once, for both; `watch log` and
`backtest` use the same walk.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass, replace

from watcher.errors import Unreadable, WatchError
from watcher.history import beside, stepwise, walk
from watcher.judge import classify, renamed
from watcher.judge.plan import Plan
from watcher.judge.pool import LEAST_WALKS, Pool, lockstep, spread
from watcher.locate import definitions
from watcher.locate.anchors import Found
from watcher.mirror.mirrors import Mirror
from watcher.mirror.renames import Files, Step
from watcher.models import Attribution, Candidate, Change, Result, Verdict

STALE = (Verdict.CHANGED, Verdict.BROKEN, Verdict.MISSING)
PR = re.compile(r"\(#(\d+)\)|Merge pull request #(\d+)")

Changes = list[tuple[str, str]]  # (commit, the item's state after it), oldest first


@dataclass(frozen=True)
class Told:
    """What the walks of items sharing their files found, per item: the commit that
    introduced its HEAD state, and every commit that changed it (None: not told)."""

    commits: list[str | None]
    changes: list[Changes | None]
    # A changed citation's place at HEAD, carried commit by commit (`stepwise`; None: as
    # judged).
    found: list[Found | None]


# A walk yields the blobs it needs next (the driver fetches them) and returns what it found.
Walk = Generator[list[str], None, Told]
# The same for the versions a walk reads: the item's files at the start, and each step.
Followed = Generator[list[str], None, tuple[Files, list[Step]]]


def attribute(
    mirror: Mirror,
    judged: Sequence[tuple[Plan, Result]],
    release_tags: str,
    pool: Pool | None = None,
) -> list[Result]:
    """The results with `introduced_by` and `released_in` filled in for stale verdicts.

    Items that share a baseline and files (several citations of one file, a rule and
    the citation it guards) walk that file's history together, in lock-step, so each
    version is parsed once for all of them. A big site's walks are spread over the
    pool's processes (`watcher.judge.pool`), walks of one file in one process.
    """
    groups: dict[tuple[str, str, tuple[str, ...]], list[int]] = {}
    for index, (plan, result) in enumerate(judged):
        if result.verdict in STALE:
            key = (plan.base, plan.head, tuple(_paths(plan, result)))  # one walk per key
            groups.setdefault(key, []).append(index)
    out = [result for _, result in judged]
    # Every walk's first log of its file, one `git log` per baseline for all of them.
    for head in {head for _, head, _ in groups}:
        mirror.paths.prelog(head, [(base, paths[0]) for base, at, paths in groups if at == head])
    walks = [shared_walk(mirror, [judged[i] for i in members]) for members in groups.values()]
    pool = pool or Pool(1)
    found = run_walks(mirror, walks, [paths[0] for _, _, paths in groups], pool)
    commits = [c for told in found for c in told.commits if c is not None]
    commits += [c for told in found for changes in told.changes for c, _ in changes or ()]
    mirror.releases(release_tags, commits)  # every release asked in one pass
    introduced: dict[int, str] = {}
    judged = list(judged)
    for members, told in zip(groups.values(), found, strict=True):
        if not told.commits:  # the walk was stopped: nothing told
            told = Told([None] * len(members), [None] * len(members), [None] * len(members))
        for index, commit, changes, place in zip(
            members, told.commits, told.changes, told.found, strict=True
        ):
            if _taken(out[index], changes):  # in a namesake that stood beside its own
                out[index] = classify.gone(judged[index][0], out[index])
                judged[index] = (judged[index][0], out[index])
            cut = _written_later(mirror, *judged[index], changes or [])
            if cut is not None:  # another construct, written after the cited one was gone
                changes, commit = (changes or [])[:cut], (changes or [])[cut - 1][0]
                out[index] = classify.gone(judged[index][0], out[index])
                judged[index] = (judged[index][0], out[index])
            elif place is not None:  # carried commit by commit: still changed, elsewhere
                out[index] = _carried(mirror, judged[index][0], out[index], place)
                judged[index] = (judged[index][0], out[index])
            update: dict[str, object] = {"history": history(mirror, changes or (), release_tags)}
            if commit is not None:
                introduced[index] = commit
                update |= {
                    "introduced_by": attribution(mirror, commit),
                    "released_in": mirror.first_release(commit, release_tags),
                }
            out[index] = out[index].model_copy(update=update)
    for index, commit in list(introduced.items()):
        if out[index].verdict is Verdict.MISSING and out[index].kind == "citation":
            plan = judged[index][0]
            again = _renamed(mirror, plan, out[index], commit, release_tags)
            moved = None if again else _relocated(mirror, plan, out[index], commit, release_tags)
            if moved is not None and moved[0].introduced_by is not None:
                again, introduced[index] = moved, moved[0].introduced_by.commit  # gone later
            if again is not None:  # renamed by that commit, or moved and gone later
                out[index] = again[0]
                judged[index] = (plan, again[0])
                if again[0].verdict is not Verdict.MISSING:
                    del introduced[index]  # found: no hints
    for index, candidates in _candidates(mirror, judged, introduced, pool).items():
        out[index] = out[index].model_copy(update={"candidates": candidates})
    mirror.session.walked()  # the spots of walks that started elsewhere (in other files)
    return out


def _carried(mirror: Mirror, plan: Plan, result: Result, found: Found) -> Result:
    """A changed or missing citation's result placed where `stepwise` carried it:
    changed, whatever the last step's tokens (a missing one's hints are dropped)."""
    hints = result.candidates if result.verdict is Verdict.CHANGED else ()
    placed = classify.placed(plan, classify.anchor_of(mirror, plan),
                             replace(found, identical=False), hints)  # fmt: skip
    keys = ("verdict", "current", "message", "diff", "candidates")
    return result.model_copy(update={k: getattr(placed, k) for k in keys})


def _written_later(mirror: Mirror, plan: Plan, result: Result, changes: Changes) -> int | None:
    """Where a changed citation's walk found it gone (`missing`) and then found it again,
    up to HEAD, in a definition under another name than its own: the position of that
    return in `changes`, else None. A definition renamed takes the old one's place in the
    commit that renames it; one written after the cited definition was gone is another
    construct that looks like it (rust-sdk's `test_schema_for_output_rejects_primitive`,
    deleted with others folded into one table test, and `test_schema_for_input_rejects_array`
    added later): the citation stays missing from the commit that removed it. Its own
    definition written back under its name is the citation again."""
    if result.verdict is not Verdict.CHANGED or result.kind != "citation" or not changes:
        return None
    back = next((n for n in range(len(changes) - 1, -1, -1) if changes[n][1] == "missing"), None)
    if back is None or back + 1 >= len(changes) or result.current is None:
        return None  # never missing, or missing at HEAD
    anchor = classify.anchor_of(mirror, plan)
    blob = dict(plan.files).get(result.current.path)
    if anchor.definition is None or blob is None or result.current.start_line is None:
        return None  # not told: no definition held it, or found in a file not followed
    parsed = classify.parse_at(mirror, result.current.path, blob)
    start, end = result.current.start_line, result.current.end_line or result.current.start_line
    if definitions.lines_named(parsed, anchor.definition, start, end):
        return None
    return back + 1


def history(mirror: Mirror, changes: Iterable[tuple[str, str]], tags: str) -> tuple[Change, ...]:
    """The item's changes as told in results: each commit's PR, date and first release."""
    found = []
    for commit, state in changes:
        blame = attribution(mirror, commit)
        release = mirror.first_release(commit, tags)
        found.append(Change(commit=commit, state=state, pr=blame.pr, released_in=release,
                            date=blame.date, summary=blame.summary))  # fmt: skip
    return tuple(found)


def item_history(mirror: Mirror, plan: Plan, release_tags: str) -> tuple[Change, ...]:
    """Every first-parent commit since the baseline that changed the item, oldest first
    (`watch log`): the walk `check` gives stale results, for any item."""
    if walk.judge_function(mirror, plan) is None:
        raise WatchError(f"{plan.item.id}: the rule does not hold at its baseline; run "
                         "`watch rules lint`")  # fmt: skip
    mirror.prefetch(plan.blobs)
    judged = classify.judge(mirror, plan)
    first, changes = _walked(mirror, plan, judged)
    if judged.verdict is Verdict.MISSING and judged.kind == "citation":
        commit = walk.introduced(first, changes, "missing")
        again = _renamed(mirror, plan, judged, commit, release_tags) if commit else None
        if again is None and commit:
            again = _relocated(mirror, plan, judged, commit, release_tags)
        if again is not None:  # as `check` tells it
            judged, changes = again
    cut = _written_later(mirror, plan, judged, changes)
    changes = changes if cut is None else changes[:cut]  # as `check` tells it
    mirror.releases(release_tags, (c for c, _ in changes))
    return history(mirror, changes, release_tags)


def _walked(mirror: Mirror, plan: Plan, judged: Result) -> tuple[str, Changes]:
    """One item's walk, alone: its state at the baseline and its changes."""
    judge = walk.judge_function(mirror, plan)
    assert judge is not None
    start, steps = versions(mirror, plan, judged)
    walked = [(step.commit, step.files) for step in steps]
    walks = walk.changes(mirror, start, walked, [judge])
    try:
        while True:
            mirror.prefetch(walks.send(None))
    except StopIteration as stop:
        ((first, changes),) = stop.value
    return first, stepped(mirror, plan, judged, start, walked, changes)[0]


def _renamed(
    mirror: Mirror, plan: Plan, result: Result, commit: str, release_tags: str
) -> tuple[Result, Changes] | None:
    """A missing citation's result and changes where `commit`, which it is blamed on,
    renamed its definition (`judge.renamed`): judged and walked again under the new name,
    as many renames as follow one another (up to `renamed.ROUNDS`). None: not renamed."""
    found: tuple[Result, Changes] | None = None
    for _ in range(renamed.ROUNDS):
        start, steps = versions(mirror, plan, result)
        at = next((n for n, step in enumerate(steps) if step.commit == commit), None)
        if at is None:
            break
        before = steps[at - 1].files if at else start
        if renamed.found(mirror, plan, before, steps[at].files) is None:
            break
        result = classify.judge(mirror, plan)
        first, changes = _walked(mirror, plan, result)
        blamed = walk.introduced(first, changes, _category(result.verdict))
        found = (_told(mirror, result, changes, blamed, release_tags), changes)
        if result.verdict is not Verdict.MISSING or blamed is None:
            break
        commit = blamed
    return found


def _relocated(
    mirror: Mirror, plan: Plan, result: Result, commit: str, release_tags: str
) -> tuple[Result, Changes] | None:
    """A missing citation's result and changes where `commit`, which it is blamed on,
    removed a file it was followed in and moved its definition into a file it added
    (`relocate.moved_by`): HEAD no longer has it there, so it went missing later, from
    that file, which its walks now follow too (`Session.moved_into`). None: not moved."""
    from watcher.judge import relocate  # only where a followed file was removed

    anchor = classify.anchor_of(mirror, plan)
    parse = classify.parser(mirror)
    path = relocate.moved_by(mirror, plan, anchor, commit, parse, relocate.SIMILAR_MOVED)
    if path is None:
        return None
    mirror.session.moved_into[plan.item.id] = (path,)
    try:
        first, changes = _walked(mirror, plan, result)
    except Unreadable:  # a version of that file too large, or absent: not told
        first, changes = "missing", []
    blamed = walk.introduced(first, changes, "missing")
    if blamed is None:  # there at HEAD after all (that file moved since), or not told
        del mirror.session.moved_into[plan.item.id]
        return None
    return _told(mirror, result, changes, blamed, release_tags), changes


def _told(
    mirror: Mirror, result: Result, changes: Changes, blamed: str | None, release_tags: str
) -> Result:
    """`result` with the history and blame its walk found."""
    mirror.releases(release_tags, [c for c, _ in changes])
    update: dict[str, object] = {"history": history(mirror, changes, release_tags)}
    if blamed is not None:
        update |= {
            "introduced_by": attribution(mirror, blamed),
            "released_in": mirror.first_release(blamed, release_tags),
        }
    return result.model_copy(update=update)


def _candidates(
    mirror: Mirror,
    judged: Sequence[tuple[Plan, Result]],
    introduced: dict[int, str],
    pool: Pool,
) -> dict[int, tuple[Candidate, ...]]:
    """Missing citations' hints of where they went, from the commits that removed them
    (by position in `judged`): the files each is looked for in come in one fetch for
    all, and are read on every core (`watcher.judge.pool`)."""
    removed = {
        index: commit
        for index, commit in introduced.items()
        if (result := judged[index][1]).verdict is Verdict.MISSING
        and result.kind == "citation"
        and not result.candidates
    }
    mirror.paths.touched(removed.values())  # what each commit touched: one batch for all
    # Where the files they touched that HEAD lacks went: every such file's chain followed
    # a link at a time for all of them, not one item at a time (a fetch each).
    from watcher.judge import hints

    moves: dict[str, list[tuple[str, str]]] = {}
    anchors = {i: classify.anchor_of(mirror, judged[i][0]) for i in removed}
    for index, commit in removed.items():
        plan = judged[index][0]
        moved = hints.moved_since(mirror, plan, anchors[index], commit)
        moves.setdefault(plan.head, []).extend((commit, path) for path in moved)
    for head, wanted in moves.items():
        mirror.paths.prepare(head, wanted)
    looked = {i: hints.hint_files(mirror, judged[i][0], anchors[i], c) for i, c in removed.items()}
    mirror.prefetch(blob for files in looked.values() for _, blob in files)
    found = spread(
        list(looked),
        key=lambda index: judged[index][0].item.path,
        work=lambda index: hints.hints(
            mirror,
            judged[index][0],
            anchors[index],
            introduced[index],
            looked[index],
            classify.parser(mirror),
        ),
        pool=pool,
        least=LEAST_WALKS,
    )
    return dict(zip(looked, found, strict=True))


def run_walks(mirror: Mirror, walks: Sequence[Walk], keys: Sequence[str], pool: Pool) -> list[Told]:
    """Drive walks in lock-step: each round fetches what every unfinished walk asks for
    in one batch, then lets each go on until it needs more. Spread over the pool for
    a big site (`watcher.judge.pool`): walks with the same key (file) run in one process."""
    try:
        found = lockstep(
            [_guarded(w) for w in walks],
            keys=keys,
            fetch=mirror.prefetch,
            pool=pool,
        )
    finally:
        mirror.close_batch()
    return [told or Told([], [], []) for told in found]


def _guarded(steps: Walk) -> Generator[list[str], None, Told | None]:
    """A walk stopped by a version above [limits] file_bytes, or one the upstream does
    not have, tells nothing: no blame rather than a guess."""
    try:
        return (yield from steps)
    except Unreadable:
        return None


def shared_walk(mirror: Mirror, items: Sequence[tuple[Plan, Result]]) -> Walk:
    """The walk behind `introduced_by` and `history`: back from HEAD to the baseline,
    yielding the blobs it needs before reading them, each version read once for every
    item. Only the versions whose commit touched an item's lines are judged
    (`watcher.history.walk`); `introduced_by` is read off the changes it finds."""
    plan, result = items[0]
    judges: dict[int, tuple[walk.Judge, str]] = {}
    for index, (item_plan, item_result) in enumerate(items):
        judge = walk.judge_function(mirror, item_plan)
        if judge is not None:
            judges[index] = (judge, _category(item_result.verdict))
    told = Told([None] * len(items), [None] * len(items), [None] * len(items))
    if not judges:
        return told
    start, steps = yield from following(mirror, plan, result)
    walked = [(step.commit, step.files) for step in steps]
    found = yield from walk.changes(mirror, start, walked, [j for j, _ in judges.values()])
    for (index, (_, target)), (first, changes) in zip(judges.items(), found, strict=True):
        changes, told.found[index] = stepped(mirror, *items[index], start, walked, changes)
        target = "missing" if _taken(items[index][1], changes) else target
        target = "changed" if told.found[index] is not None else target  # found again
        told.commits[index] = walk.introduced(first, changes, target)
        told.changes[index] = changes
    return told


def _taken(result: Result, changes: Changes | None) -> bool:
    """Whether a citation judged changed was told missing by its walk's end after all (it
    is in a namesake that stood beside its own definition: `beside`)."""
    last = changes[-1][1] if changes else None
    return result.verdict is Verdict.CHANGED and last == "missing"


def stepped(
    mirror: Mirror,
    plan: Plan,
    result: Result,
    start: Files,
    walked: Sequence[tuple[str, Files]],
    changes: Changes,
) -> tuple[Changes, Found | None]:
    """A changed citation's changes, and its place at HEAD, carried commit by commit
    through the commits its walk found (`stepwise`); as walked, and None, otherwise. A
    missing one's too, where steps carry it to HEAD (`stepwise.recovered`): it is
    changed there, and the result placed there (`attribute`).
    Where it is found in a namesake that stood beside its own definition (`beside`), its
    changes end with it missing, from the commit that took it there. `check`, `watch log`
    and `backtest` read a walk's changes through it alike."""
    if result.kind != "citation" or result.verdict not in (Verdict.CHANGED, Verdict.MISSING):
        return changes, None
    anchor = classify.anchor_of(mirror, plan)
    if result.verdict is Verdict.MISSING:  # lost by one jump, maybe not by steps
        carried_on = stepwise.recovered(mirror, anchor, start, walked, changes)
        return (changes, None) if carried_on is None else (carried_on.changes, carried_on.found)
    carried = stepwise.stepwise(mirror, anchor, start, walked, changes)
    if carried is not None:
        changes = carried.changes
    at = carried.found if carried is not None else result.current
    if at is not None and at.start_line is not None:
        where = (at.path, at.start_line, at.end_line or at.start_line)
        cut = beside.taken_over(mirror, anchor, start, walked, changes, where)
        if cut is not None:  # another construct that stood beside it: gone from there
            again = cut > 0 and changes[cut - 1][1] == "missing"  # not found again after all
            return [*changes[:cut], *([] if again else [(changes[cut][0], "missing")])], None
    return changes, None if carried is None else carried.found


def versions(
    mirror: Mirror, plan: Plan, result: Result, since: str | None = None
) -> tuple[Files, list[Step]]:
    """The item's files at `since` (default: its baseline), and after each first-parent
    commit up to HEAD that touched them, following the file through every rename and copy.
    A rule or citation found in a file that is not one of these (its own file gone) has
    that file followed too."""
    steps = following(mirror, plan, result, since)
    try:
        while True:
            mirror.prefetch(steps.send(None))
    except StopIteration as stop:
        found: tuple[Files, list[Step]] = stop.value
        return found


def following(mirror: Mirror, plan: Plan, result: Result, since: str | None = None) -> Followed:
    """`versions`, yielding the blobs it needs before reading them (where a file the item
    was found in came from), so that walks in lock-step fetch them together."""
    start = since or plan.base
    paths = [plan.item.path]
    if start != plan.base:  # the file's path(s) at `since`, which a rename may have changed
        earlier = mirror.paths.follow(plan.base, start, paths).at_head
        paths = [p for p, _ in earlier] or paths
    followed = mirror.paths.follow(start, plan.head, paths)
    extra = [p for p in _paths(plan, result) if p not in paths]
    came_from: list[str] = []
    if extra and not {p for p, _ in followed.at_head} >= set(extra):
        # Found in a file it was not followed to: follow that file back to where it came
        # from, so that a construct moved between files is blamed where it changed.
        for path in extra:
            came_from += yield from mirror.paths.origins(start, plan.head, path)
    else:
        extra = []
    # Moved into a file by the commit that removed its own (`_relocated`): that file from
    # there on, not where it came from (a rename of another file, which never held it).
    moved = [p for p in mirror.session.moved_into.get(plan.item.id, ()) if p not in paths]
    if extra or moved:
        wanted = list(dict.fromkeys([*paths, *came_from, *extra, *moved]))
        followed = mirror.paths.follow(start, plan.head, wanted)
    return followed.start, list(followed.steps)


def attribution(mirror: Mirror, commit: str) -> Attribution:
    info = mirror.info(commit)
    match = PR.search(info.summary) or PR.search(info.message)
    pr = int(match.group(1) or match.group(2)) if match else None
    return Attribution(
        commit=commit, date=info.date, author=info.author, summary=info.summary, pr=pr
    )


def _category(verdict: Verdict) -> str:
    return {Verdict.CHANGED: "changed", Verdict.BROKEN: "broken", Verdict.MISSING: "missing"}[
        verdict
    ]


def _paths(plan: Plan, result: Result) -> list[str]:
    paths = [plan.item.path, *(p for p, _, _ in plan.bases), *(p for p, _ in plan.files)]
    if result.current is not None:
        paths.append(result.current.path)
    return list(dict.fromkeys(paths))
