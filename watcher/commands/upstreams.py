"""`watch upstreams`: the upstreams a run checks, e.g. for a GitHub Actions matrix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

from watcher.config import Config, load
from watcher.pipeline import CheckOptions, gather, group
from watcher.state.store import slug


def upstream_matrix(config: Config) -> list[dict[str, object]]:
    """Every upstream a run checks, as GitHub Actions `strategy.matrix` entries.

    Configured upstreams first, in config order, then repositories the notes cite with
    no [[upstream]] (unless implicit upstreams are off). `slug` names the mirror
    (`CACHE-DIR/SLUG.git`) and `cache_key` is the prefix of its actions/cache key,
    which workflow expressions cannot compute from `repo` themselves.
    """
    inputs = gather(config, CheckOptions())
    cited = [up for up, _items in group(config, inputs.items, CheckOptions()) if up is not None]
    implicit = [u for u in cited if config.upstream_for(u.repo) is None]
    return [
        {
            "repo": u.repo,
            "slug": slug(u.repo),
            "mirror": f"{slug(u.repo)}.git",
            "cache_key": f"watch-mirror-{slug(u.repo)}-",
            "implicit": u in implicit,
        }
        for u in [*config.upstream, *implicit]
    ]


def upstreams(config_file: Path, as_json: bool, out: TextIO) -> int:
    """`watch upstreams [--json]`: the upstreams to check, e.g. for an Actions matrix."""
    entries = upstream_matrix(load(config_file))
    if as_json:  # one line: it goes into $GITHUB_OUTPUT as it is
        out.write(json.dumps(entries, separators=(",", ":")) + "\n")
        return 0
    for entry in entries:
        out.write(
            f"{entry['repo']}  {entry['mirror']}{'  (implicit)' if entry['implicit'] else ''}\n"
        )
    return 0
