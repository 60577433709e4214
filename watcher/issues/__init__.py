"""Stale-verification issues (SPEC 6.2): one per affected note, plus a dashboard.

`sync_issues` is the one entry point; the modules behind it are
`render` (titles, bodies, comments; markdown safety in `markdown`), `markers` (the
hidden markers that deduplicate), `lifecycle` (what to do for one note), `sinks` (the
Protocol and the registry), `github` and `files` (the sinks), and `sync` (the run).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from watcher.config import Config
from watcher.models import IssueAction, Note, Result, UpstreamStatus

if TYPE_CHECKING:
    from watcher.issues.book import Scope


def sync_issues(
    config: Config,
    notes: Mapping[str, Note],
    results: Sequence[Result],
    upstreams: Sequence[UpstreamStatus],
    *,
    dry_run: bool,
    log: Callable[[str], None],
    scope: Scope | None = None,
    failures: list[str] | None = None,
) -> list[IssueAction]:
    """File, update, close or reopen each checked note's issue through the configured sink.

    Called with the state lock held. Only the notes present in `results` are touched.
    A failed note yields `IssueAction(action="failed")` and is retried by the next run;
    run-level failures are appended to `failures`. A `WatchError` is raised only when
    nothing can be done (e.g. a wrong `[issues] repo`).
    """
    from watcher.issues.sync import make_sink, sync

    if config.issues.sink == "none" or not (results or any(u.error for u in upstreams)):
        return []
    sink, dry = make_sink(config, dry_run, log)
    return sync(
        config, notes, results, upstreams, sink=sink, dry_run=dry, log=log, scope=scope,
        failures=failures,
    )  # fmt: skip


def rebuild_dashboard(config: Config, *, log: Callable[[str], None]) -> None:
    """Render the dashboard again from every bookkeeping shard (after another job's push)."""
    from watcher.issues.sync import make_sink, refresh_dashboard

    if config.issues.sink == "none" or not config.issues.dashboard:
        return
    sink, dry = make_sink(config, False, log)
    if not dry:
        refresh_dashboard(config, sink, log)
