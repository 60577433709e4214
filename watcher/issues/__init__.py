"""Stale-verification issues (SPEC 6.2): one per affected note, plus a dashboard.

`sync_issues` is the one entry point; the modules behind it are
`render` (titles, bodies, comments; markdown safety in `markdown`), `markers` (the
hidden markers that deduplicate), `lifecycle` (what to do for one note), `sinks` (the
Protocol and the registry), `github` and `files` (the sinks), and `sync` (the run).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from watcher.config import Config
from watcher.models import IssueAction, Note, Result, UpstreamStatus


def sync_issues(
    config: Config,
    notes: Mapping[str, Note],
    results: Sequence[Result],
    upstreams: Sequence[UpstreamStatus],
    *,
    dry_run: bool,
    log: Callable[[str], None],
) -> list[IssueAction]:
    """File, update, close or reopen each checked note's issue through the configured sink.

    Called with the state lock held. Only the notes present in `results` are touched.
    A failed note yields `IssueAction(action="failed")` and is retried by the next run;
    a `WatchError` is raised only when nothing can be done (e.g. a wrong `[issues] repo`).
    """
    from watcher.issues.sync import make_sink, sync

    if config.issues.sink == "none" or not results:
        return []
    sink, dry = make_sink(config, dry_run, log)
    return sync(config, notes, results, upstreams, sink=sink, dry_run=dry, log=log)
