"""`watch serve`: check each upstream on its schedule, one run at a time, until told to stop.

- One APScheduler job per upstream, on its `schedule` (`@every 30s` or 5-field cron, UTC).
- One run at a time, across all upstreams: the jobs share a one-thread executor, each
  job has `max_instances=1`, and `run_check` takes the state lock that `watch check`
  takes too, so a hand-started check and a scheduled one never overlap.
- An upstream that comes due while its own previous run goes on skips that tick; one
  that comes due during another upstream's run waits its turn (at most one waiting run
  per upstream). Missed firings (the machine slept) coalesce into one run. After
  downtime, an upstream whose run came due while `serve` was down gets one catch-up
  run at start, not a burst.
- SIGTERM/SIGINT: the running check finishes and saves its state, nothing new starts,
  and the process exits 0. A second signal exits at once; state files are written
  atomically, so even then they stay whole (the run is recorded as interrupted).
- Each run logs one line (what was checked, what changed, how long) and is recorded in
  `state/runs/`, which `watch status` reads.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from watcher.config import Config, load
from watcher.errors import ConfigError, LockedError, WatchError
from watcher.schedule import next_due, triggers
from watcher.state.runs import (
    Run,
    here,
    mark_finished,
    mark_interrupted,
    mark_started,
    parse_stamp,
    read_runs,
    run_from_error,
    run_from_report,
    updating,
    utcnow,
)

if TYPE_CHECKING:
    from apscheduler.schedulers.background import BackgroundScheduler

    from watcher.models import Report
    from watcher.pipeline import Progress

log = logging.getLogger("watcher.serve")

# How long a scheduled run waits for a hand-started `watch check` to release the lock.
DEFAULT_LOCK_WAIT = 600.0

Job = Callable[[Config, str], Run]
"""Runs and records one upstream's check; the seam tests use to wrap the real job."""


# --- one run ----------------------------------------------------------------------


def check_upstream(
    config: Config,
    repo: str,
    *,
    lock_wait: float = DEFAULT_LOCK_WAIT,
    by: str = "serve",
    progress: Progress | None = None,
) -> Run:
    """Check one upstream, record the run in `state/runs/`, log one line about it.

    Expected failures (a held lock, an unreachable upstream) become the run's outcome;
    an unexpected exception is logged with its traceback and recorded, and the daemon
    lives on to the next run.
    """
    started = here(by)
    try:
        previous = mark_started(config.state, repo, started, wait=lock_wait)
    except LockedError as exc:
        run = run_from_error(exc, started, utcnow())
        _log_run(repo, run, None)
        return run
    try:
        run = run_from_report(_run_check(config, repo, lock_wait, progress), started, utcnow())
    except WatchError as exc:
        run = run_from_error(exc, started, utcnow())
    except Exception as exc:  # a bug in a check must not end the daemon
        log.exception("%s: the check crashed; this is a bug in watch, please report it", repo)
        run = run_from_error(exc, started, utcnow())
    try:
        mark_finished(config.state, repo, run, wait=lock_wait)
    except LockedError as exc:  # the next run's start marker replaces the stale one
        log.warning("%s: the run could not be recorded: %s", repo, exc)
    _log_run(repo, run, previous)
    return run


def _run_check(config: Config, repo: str, lock_wait: float, progress: Progress | None) -> Report:
    from watcher.pipeline import CheckOptions, run_check

    return run_check(config, CheckOptions(upstream=repo, wait=lock_wait), progress)


def _log_run(repo: str, run: Run, previous: Run | None) -> None:
    """One line per run: outcome, duration, the upstream head, what changed since last time."""
    counts = ", ".join(f"{n} {v}" for v, n in run.summary.items() if n) or "nothing tracked"
    head = (run.head or "?")[:10]
    moved = previous is not None and previous.head not in (None, run.head)
    news = [f"head moved from {(previous.head or '')[:10]}"] if moved and previous else []
    if previous is not None and previous.summary and previous.summary != run.summary:
        news.append("verdicts changed")
    news += [f"{n} issue(s) {action}" for action, n in sorted(run.issues.items())]
    if run.outcome in ("fresh", "stale", "error"):
        text = f"{repo}: {run.outcome} in {run.duration_s:.1f}s at {head}: {counts}"
    else:
        text = f"{repo}: {run.outcome} after {run.duration_s:.1f}s: {run.message}"
    text += f" ({'; '.join(news)})" if news else ""
    level = logging.INFO if run.outcome in ("fresh", "stale") else logging.WARNING
    log.log(
        level,
        text,
        extra={
            "event": "run",
            "upstream": repo,
            "outcome": run.outcome,
            "duration_s": run.duration_s,
            "head": run.head,
            "summary": run.summary,
            "issues": run.issues,
        },
    )


# --- the scheduler ----------------------------------------------------------------


def build_scheduler(
    config: Config, job: Job, *, stopping: threading.Event, now: datetime | None = None
) -> BackgroundScheduler:
    """A stopped scheduler with one job per upstream; `job` is the seam tests wrap."""
    from apscheduler.executors.pool import ThreadPoolExecutor
    from apscheduler.schedulers.background import BackgroundScheduler

    now = now or utcnow()
    runs = read_runs(config.state)
    scheduler = BackgroundScheduler(
        # One worker: runs of different upstreams queue instead of overlapping.
        executors={"default": ThreadPoolExecutor(max_workers=1)},
        # None: a late firing still runs (once, coalesced) however late it is.
        job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
        timezone=UTC,
    )
    for repo, trigger in triggers(config).items():
        last = runs.of(repo).last
        due = next_due(trigger, parse_stamp(last.started_at)) if last else now
        # Every first run time is computed from `now`, never from the wall clock, so the
        # same record and the same `now` always give the same schedule.
        first = now if due is not None and due <= now else next_due(trigger, now)
        scheduler.add_job(
            _unless_stopping,
            trigger,
            args=(job, config, repo, stopping),
            id=repo,
            name=f"check {repo}",
            next_run_time=first,
        )
    return scheduler


def _unless_stopping(job: Job, config: Config, repo: str, stopping: threading.Event) -> None:
    # A run queued behind the one that was running when the signal came must not start.
    if not stopping.is_set():
        job(config, repo)


def serve(
    config_file: Path,
    *,
    once: bool = False,
    lock_wait: float = DEFAULT_LOCK_WAIT,
    job: Job | None = None,
    stopping: threading.Event | None = None,
) -> int:
    """`watch serve`: run until SIGTERM/SIGINT (or `stopping` is set); 0 on a clean stop.

    With `once`, check every upstream one after the other and exit with the worst
    exit code of the runs (0 nothing stale, 1 stale notes, 2 could not check), the
    same meaning as `watch check`: that is the form for cron.
    """
    config = load(config_file)
    if not config.upstream:
        raise ConfigError(config.file, "no [[upstream]] to serve; add one with a schedule")
    triggers(config)  # a bad schedule fails now, before anything runs
    run_job = job or functools.partial(
        check_upstream, lock_wait=lock_wait, by="once" if once else "serve"
    )
    for repo in mark_interrupted(config.state, wait=lock_wait):
        log.warning("%s: the previous run was interrupted; it is checked again", repo)
    if once:
        return max(run_job(config, u.repo).exit_code for u in config.upstream)
    stopping = stopping or threading.Event()
    _set_serve_marker(config, lock_wait, running=True)
    try:
        with _signals(stopping):
            _run_until_stopped(build_scheduler(config, run_job, stopping=stopping), stopping)
    finally:
        _set_serve_marker(config, lock_wait, running=False)
    log.info("stopped cleanly", extra={"event": "stopped"})
    return 0


def _run_until_stopped(scheduler: BackgroundScheduler, stopping: threading.Event) -> None:
    scheduler.start()
    for job in scheduler.get_jobs():
        log.info(
            "scheduled %s: %s, next run %s",
            job.id,
            job.trigger,
            job.next_run_time,
            extra={"event": "scheduled", "upstream": job.id},
        )
    # A timeout keeps the main thread waking up, so signal handlers run promptly.
    while not stopping.wait(1.0):
        pass
    log.info("stopping: letting the running check finish", extra={"event": "stopping"})
    scheduler.shutdown(wait=True)


def _set_serve_marker(config: Config, lock_wait: float, *, running: bool) -> None:
    with updating(config.state, wait=lock_wait) as box:
        box[0] = box[0].model_copy(update={"serve": here("serve") if running else None})


@contextlib.contextmanager
def _signals(stopping: threading.Event) -> Iterator[None]:
    """First SIGTERM/SIGINT: stop after the running check. Second: exit now."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may install handlers; the caller sets `stopping`
        return

    def handle(signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if stopping.is_set():
            log.warning("%s again: exiting now; state files are whole (atomic writes)", name)
            os._exit(128 + signum)
        log.info("%s: stopping after the running check", name)
        stopping.set()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
