"""`python -m bench.probe STATS.json [--time-walks] ARGS...`: `watch ARGS`, plus its counters.

Runs `watcher.cli.main(ARGS)` exactly as `python -m watcher ARGS` does, then writes what
only the process itself can see: how many blobs tree-sitter parsed, which ones, which
heavy libraries ended up imported and, with --time-walks, the seconds spent in
`introduced_by` history walks (a timer around the attribution stage; nothing else changes).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HEAVY = ("github", "apscheduler", "tree_sitter", "git", "pydantic")


def main() -> int:
    stats_path = Path(sys.argv[1])
    args = sys.argv[2:]
    walks = {"walks": 0, "walk_seconds": 0.0}
    if args[:1] == ["--time-walks"]:
        args = args[1:]
        _time_walks(walks)
    code = 2
    counted: list[Any] = []  # the full run's counts, when there is one
    try:
        from watcher.cli import main as watch_main

        _count_full_runs(counted)
        code = watch_main(args)
    finally:
        # A run answered from the warm record made no counts (and parsed nothing).
        stats = counted[0].parse if counted else None
        stats_path.write_text(json.dumps({
            "parses": getattr(stats, "parses", 0),
            "parsed_blobs": list(getattr(stats, "parsed_blobs", [])),
            "imported": [name for name in HEAVY if name in sys.modules],
            **walks,
        }))  # fmt: skip
    return code


def _count_full_runs(counted: list[Any]) -> None:
    """Give a full `check` run (`watcher.commands.check._full`) counts to fill, made when
    it starts: a warm run answered from its record imports nothing more for them."""
    from watcher.commands import check

    full: Callable[..., int] = check._full

    def counting(*args: Any) -> int:
        from watcher.judge.session import Counts

        counted.append(Counts())
        return full(*args[:4], counted[-1])

    check._full = counting  # type: ignore[assignment]


def _time_walks(totals: dict[str, Any]) -> None:
    """Wrap the attribution stage, `watcher.history.attribute.attribute` (looked up at call time:
    `check` calls it as `attribute.attribute`), with a timer."""
    from watcher.history import attribute

    stage: Callable[..., Any] | None = getattr(attribute, "attribute", None)
    if stage is None:
        totals["walks"] = -1  # renamed: the bench reports the whole process instead
        return

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return stage(*args, **kwargs)
        finally:
            totals["walks"] += 1
            totals["walk_seconds"] += time.perf_counter() - start

    attribute.attribute = timed


if __name__ == "__main__":
    raise SystemExit(main())
