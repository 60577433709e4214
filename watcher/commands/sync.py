"""`watch sync`: create or fetch the upstream mirrors, and check nothing."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from watcher.config import load
from watcher.errors import UpstreamError
from watcher.pipeline import CheckOptions, gather, group


def sync(config_file: Path, upstream: str | None, out: TextIO) -> int:
    """`watch sync`: create or fetch the mirror of every configured upstream, and of every
    repository the notes cite without one (unless implicit upstreams are off)."""
    from watcher.mirror.mirrors import Mirror

    config = load(config_file)
    options = CheckOptions(upstream=upstream)
    inputs = gather(config, options)
    groups = [(up, items) for up, items in group(config, inputs.items, options) if up is not None]
    since = {up.repo: [i.commit for i in items] for up, items in groups}  # their trees too
    wanted = [u for u in config.upstream if upstream is None or _same(u.repo, upstream)]
    status = 0
    for up in [*wanted, *(u for u, _ in groups if config.upstream_for(u.repo) is None)]:
        mirror = Mirror(up, config.cache, config.limits)
        try:
            mirror.sync(since.get(up.repo, ()))
            out.write(f"{up.repo}: {mirror.branch} at {mirror.head()[:12]} ({mirror.path})\n")
        except UpstreamError as exc:
            out.write(f"{up.repo}: error: {str(exc).removeprefix(f'{up.repo}: ')}\n")
            status = 2
        finally:
            mirror.close()
    return status


def _same(repo: str, other: str | None) -> bool:
    return other is not None and repo.lower() == other.lower()
