"""`python -m bench.oracle [--config FILE] [--limit N]`: the history walks, checked by brute force.

The walk behind `introduced_by`, `history`, `backtest` and `watch log` judges only the
versions whose commit touched the item, and follows its lines through the others. This
judges every version of the item's files from its baseline to HEAD instead, with the
same state function, and compares: each stale citation (changed or missing) whose
history or `introduced_by` differ is printed. Offline: run `watch check` on the site
first, so that its mirror holds HEAD. Exit 1 when an answer differs.

On a real upstream this is the check of the walk's exactness that tests, on histories
they build, cannot give: `--limit` keeps a big site's run short.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from watcher import config as config_mod
from watcher.errors import TooLarge
from watcher.history import attribute, walk
from watcher.judge import classify
from watcher.judge.plan import Plan
from watcher.mirror.mirrors import Mirror
from watcher.models import Result, Verdict
from watcher.pipeline import CheckOptions, gather, group

Changes = list[tuple[str, str]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.oracle", description=__doc__)
    parser.add_argument("--config", type=Path, default=Path("config.toml"))
    parser.add_argument("--limit", type=int, default=None, help="at most N stale citations")
    args = parser.parse_args(argv)
    started, agreed, differ = time.monotonic(), 0, 0
    for result, walked, judged in answers(args.config, args.limit):
        if walked == judged:
            agreed += 1
            continue
        differ += 1
        print(f"{result.id} ({result.verdict.value})")
        for name, (introduced, changes) in (("walk", walked), ("every version", judged)):
            shown = ", ".join(f"{c[:10]} {state}" for c, state in changes)
            print(f"  {name:>13}: introduced_by {(introduced or '-')[:10]}; history {shown}")
    took = time.monotonic() - started
    print(f"{agreed + differ} stale citations: {agreed} agree, {differ} differ ({took:.0f} s)")
    return 1 if differ else 0


def answers(
    config_path: Path, limit: int | None
) -> Iterator[tuple[Result, tuple[str | None, Changes], tuple[str | None, Changes]]]:
    """Each stale citation's verdict, and (introduced_by, history) as the walk tells
    them and as judging every version does."""
    config = config_mod.load(config_path)
    options = CheckOptions(offline=True, no_issues=True, read_only=True)
    items = [i for i in gather(config, options).items if i.rule is None and i.quote is None]
    left = limit if limit is not None else len(items)
    for upstream, members in group(config, items, options):
        if upstream is None or left <= 0:
            continue
        mirror = Mirror(upstream, config.cache, config.limits)
        try:
            head = mirror.head()
            for item in members:
                plan = classify.plan(mirror, head, item, offline=True)
                result = classify.judge(mirror, plan)
                if result.verdict not in (Verdict.CHANGED, Verdict.MISSING) or left <= 0:
                    continue
                left -= 1
                try:
                    yield result, walked(mirror, plan, result), judged(mirror, plan, result)
                except TooLarge:  # a version over [limits] file_bytes: the walk tells nothing
                    continue
        finally:
            mirror.close()


def walked(mirror: Mirror, plan: Plan, result: Result) -> tuple[str | None, Changes]:
    """The walk's answer, as `check` gives it (one item walked alone)."""
    steps = attribute.shared_walk(mirror, [(plan, result)])
    try:
        while True:
            mirror.prefetch(steps.send(None))
    except StopIteration as stop:
        told: attribute.Told = stop.value
    finally:
        mirror.close_batch()
    return told.commits[0], told.changes[0] or []


def judged(mirror: Mirror, plan: Plan, result: Result) -> tuple[str | None, Changes]:
    """The answer of judging the item in every version of its files: a change wherever
    its state or its tokens differ from the version before."""
    judge = walk.judge_function(mirror, plan)
    assert judge is not None  # a citation
    start, steps = attribute.versions(mirror, plan, result)
    places = [judge(files, mirror.read) for files in [start, *(s.files for s in steps)]]
    changes = [
        (step.commit, after.state)
        for step, before, after in zip(steps, places, places[1:], strict=False)
        if (before.state, before.tokens) != (after.state, after.tokens)
    ]
    target = "missing" if result.verdict is Verdict.MISSING else "changed"
    return walk.introduced(places[0].state, changes, target), changes


if __name__ == "__main__":
    sys.exit(main())
