"""Name the upstream commit that made an item what it is at HEAD, and the release shipping it.

`introduced_by` is the first commit of the current run: walking the branch's
first-parent history back from HEAD, the commit after which the item has been in its
HEAD state (changed, broken or missing) without interruption. A change that was later
reverted is therefore not blamed. The walk visits only commits that touched the item's
files, parses only those whose diff touched the item's own lines (`watcher.walk`), judges
each distinct version once, and stops at the first commit whose parent state differs.

Walks run in lock-step: each asks for the blobs it needs next, and one fetch serves
every walk's request, so a cold run on a big site makes as many blob round trips as
its longest walk needs (one, then one per doubling of the distance), not a few per
walk.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator, Sequence

from watcher import classify
from watcher import walk as lines
from watcher.classify import Plan
from watcher.errors import TooLarge
from watcher.mirrors import Mirror
from watcher.models import Attribution, Candidate, Result, Verdict
from watcher.paths import Files, Step

STALE = (Verdict.CHANGED, Verdict.BROKEN, Verdict.MISSING)
PR = re.compile(r"\(#(\d+)\)|Merge pull request #(\d+)")

# A walk yields the blobs it needs next (the driver fetches them) and returns the commits.
Walk = Generator[list[str], None, list[str | None]]


def attribute(
    mirror: Mirror, judged: Sequence[tuple[Plan, Result]], release_tags: str
) -> list[Result]:
    """The results with `introduced_by` and `released_in` filled in for stale verdicts.

    Items that share a baseline and files (several citations of one file, a rule and
    the citation it guards) walk that file's history together, in lock-step, so each
    version is parsed once for all of them.
    """
    groups: dict[tuple[str, str, tuple[str, ...]], list[int]] = {}
    for index, (plan, result) in enumerate(judged):
        if result.verdict in STALE:
            key = (plan.base, plan.head, tuple(_paths(plan, result)))  # one walk per key
            groups.setdefault(key, []).append(index)
    out = [result for _, result in judged]
    walks = [walk(mirror, [judged[i] for i in members]) for members in groups.values()]
    found = [
        commits or [None] * len(members)  # a walk stopped by a too-large version
        for members, commits in zip(groups.values(), run_walks(mirror, walks), strict=True)
    ]
    mirror.releases(release_tags, (c for commits in found for c in commits if c is not None))
    for members, commits in zip(groups.values(), found, strict=True):
        for index, commit in zip(members, commits, strict=True):
            if commit is not None:
                out[index] = out[index].model_copy(
                    update={
                        "introduced_by": attribution(mirror, commit),
                        "released_in": mirror.first_release(commit, release_tags),
                        "candidates": _candidates(mirror, judged[index][0], out[index], commit),
                    }
                )
    return out


def _candidates(mirror: Mirror, plan: Plan, result: Result, commit: str) -> tuple[Candidate, ...]:
    """A missing citation's hints of where it went, from the commit that removed it."""
    if result.verdict is not Verdict.MISSING or result.kind != "citation" or result.candidates:
        return result.candidates
    return classify.missing_hints(mirror, plan, commit)


def released_in(mirror: Mirror, result: Result, release_tags: str) -> str | None:
    """Recompute the release for a cached result: new tags appear without new commits."""
    if result.introduced_by is None:
        return None
    return mirror.first_release(result.introduced_by.commit, release_tags)


def introduced_by(mirror: Mirror, items: Sequence[tuple[Plan, Result]]) -> list[str | None]:
    """For items with one baseline and the same files: the first commit of the run of
    commits in which each has its HEAD state (None when it cannot be told)."""
    return run_walks(mirror, [walk(mirror, items)])[0]


def run_walks(mirror: Mirror, walks: Sequence[Walk]) -> list[list[str | None]]:
    """Drive walks in lock-step: each round fetches what every unfinished walk asks for
    in one batch, then lets each go on until it needs more."""
    answers: list[list[str | None]] = [[] for _ in walks]
    wanted: dict[int, list[str]] = {}

    def advance(index: int) -> None:
        try:
            wanted[index] = walks[index].send(None)
        except StopIteration as stop:
            answers[index] = stop.value
            wanted.pop(index, None)
        except TooLarge:  # a version above [limits] file_bytes: no blame rather than a guess
            answers[index] = []
            wanted.pop(index, None)

    for index in range(len(walks)):
        advance(index)
    while wanted:
        mirror.prefetch(b for blobs in wanted.values() for b in blobs)
        for index in list(wanted):
            advance(index)
    return answers


def walk(mirror: Mirror, items: Sequence[tuple[Plan, Result]]) -> Walk:
    """The walk behind `introduced_by`, yielding the blobs it needs before reading them.
    Only the versions whose commit touched an item's lines are judged (`watcher.walk`)."""
    plan, result = items[0]
    found: list[str | None] = [None] * len(items)
    judges: dict[int, tuple[lines.Judge, str]] = {}
    for index, (item_plan, item_result) in enumerate(items):
        judge = lines.judge_function(mirror, item_plan)
        if judge is not None:
            judges[index] = (judge, _category(item_result.verdict))
    if not judges:
        return found
    start, steps = versions(mirror, plan, result)
    walked = [(step.commit, step.files) for step in steps]
    answers = yield from lines.first_of_run(mirror, start, walked, list(judges.values()))
    for index, answer in zip(judges, answers, strict=True):
        found[index] = answer
    return found


def versions(
    mirror: Mirror, plan: Plan, result: Result, since: str | None = None
) -> tuple[Files, list[Step]]:
    """The item's files at `since` (default: its baseline), and after each first-parent
    commit up to HEAD that touched them, following the file through every rename and copy.
    A rule or citation found in a file that is not one of these (its own file gone) has
    that file followed too."""
    start = since or plan.base
    paths = [plan.item.path]
    if start != plan.base:  # the file's path(s) at `since`, which a rename may have changed
        earlier = mirror.paths.follow(plan.base, start, paths).at_head
        paths = [p for p, _ in earlier] or paths
    followed = mirror.paths.follow(start, plan.head, paths)
    extra = [p for p in _paths(plan, result) if p not in paths]
    if extra and not {p for p, _ in followed.at_head} >= set(extra):
        # Found in a file it was not followed to: follow that file back to where it came
        # from, so that a construct moved between files is blamed where it changed.
        came_from = [o for p in extra for o in mirror.paths.origins(start, plan.head, p)]
        wanted = list(dict.fromkeys([*paths, *came_from, *extra]))
        followed = mirror.paths.follow(start, plan.head, wanted)
    return followed.start, list(followed.steps)


def attribution(mirror: Mirror, commit: str) -> Attribution:
    info = mirror.info(commit)
    match = PR.search(info.summary) or PR.search(info.message)
    pr = int(match.group(1) or match.group(2)) if match else None
    return Attribution(
        commit=commit, date=info.date, author=info.author, summary=info.summary, pr=pr
    )


def state_function(mirror: Mirror, plan: Plan) -> Callable[[Files], str] | None:
    """A function from the item's files at one commit to its state there: same, changed,
    broken or missing (the walk engine's judge, without the lines). Each distinct set of
    files is judged once."""
    judge = lines.judge_function(mirror, plan)
    if judge is None:
        return None
    return lambda files: judge(files).state


def _category(verdict: Verdict) -> str:
    return {Verdict.CHANGED: "changed", Verdict.BROKEN: "broken", Verdict.MISSING: "missing"}[
        verdict
    ]


def _paths(plan: Plan, result: Result) -> list[str]:
    paths = [plan.item.path, *(p for p, _, _ in plan.bases), *(p for p, _ in plan.files)]
    if result.current is not None:
        paths.append(result.current.path)
    return list(dict.fromkeys(paths))
