"""`python -m bench.probe STATS.json ARGS...`: the `watch` command line, plus its counters.

Runs `watcher.cli.main(ARGS)` exactly as `python -m watcher ARGS` does, then writes what
only the process itself can see: how many blobs tree-sitter parsed, which ones, and
which heavy libraries ended up imported.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HEAVY = ("github", "apscheduler", "tree_sitter", "git")


def main() -> int:
    stats_path = Path(sys.argv[1])
    code = 2
    try:
        from watcher.cli import main as watch_main

        code = watch_main(sys.argv[2:])
    finally:
        # Read the counters without importing anything new: an unimported module parsed nothing.
        syntax = sys.modules.get("watcher.syntax")
        stats = getattr(syntax, "STATS", None)
        stats_path.write_text(json.dumps({
            "parses": getattr(stats, "parses", 0),
            "parsed_blobs": list(getattr(stats, "parsed_blobs", [])),
            "imported": [name for name in HEAVY if name in sys.modules],
        }))  # fmt: skip
    return code


if __name__ == "__main__":
    raise SystemExit(main())
