"""The run record (`state/runs/`): what every run of each upstream did, for `watch status`.

Every run records itself here, under the state lock, one file per upstream
(`runs/OWNER__NAME.json`, so parallel jobs never write the same file): `watch serve`
(scheduled, or `--once` from cron) marks its start and its end, `watch check` and
`watch action` their end.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import Field, ValidationError

from watcher.errors import WatchError
from watcher.models import Frozen, Report
from watcher.state.shard import HEALTHY as HEALTHY
from watcher.state.shard import STAMP, finished
from watcher.state.store import RUNS_DIR, locked, read_json, shards, slug, update_json

M = TypeVar("M", bound=Frozen)
RUNS_FILE = "runs.json"  # the one-file record of earlier versions, read and migrated
SERVE = "_serve"
SCHEMA = "watch.runs/1"

Outcome = Literal["fresh", "stale", "error", "failed", "locked", "interrupted"]
_OUTCOME_BY_EXIT: dict[int, Outcome] = {0: "fresh", 1: "stale", 2: "error"}


class Started(Frozen):
    """A run in progress: if its process is gone, the run was interrupted."""

    started_at: str
    pid: int
    host: str
    by: str


class Run(Frozen):
    """What one finished run of one upstream did."""

    started_at: str
    finished_at: str
    duration_s: float
    outcome: Outcome
    exit_code: int
    by: str  # serve | once | action
    head: str | None = None
    summary: dict[str, int] = Field(default_factory=dict)
    issues: dict[str, int] = Field(default_factory=dict)  # issue action -> count
    message: str = ""


class UpstreamRuns(Frozen):
    last: Run | None = None
    running: Started | None = None
    last_healthy_at: str | None = None
    runs: int = 0


class Runs(Frozen):
    """The whole `state/runs.json` document."""

    schema_: str = Field(SCHEMA, alias="schema")
    serve: Started | None = None
    upstreams: dict[str, UpstreamRuns] = Field(default_factory=dict)

    def of(self, repo: str) -> UpstreamRuns:
        return self.upstreams.get(repo, UpstreamRuns())


# --- time -------------------------------------------------------------------------


def utcnow() -> datetime:
    return datetime.now(UTC)


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(STAMP)


def parse_stamp(text: str) -> datetime:
    return datetime.strptime(text, STAMP).replace(tzinfo=UTC)


# --- the record -------------------------------------------------------------------


def runs_path(state_dir: Path) -> Path:
    return state_dir / RUNS_FILE


def read_runs(state_dir: Path) -> Runs:
    """The run record, from every shard; empty when absent. A bad shard is an error."""
    runs = _validated(runs_path(state_dir), Runs, read_json(runs_path(state_dir)))
    for name, path in shards(state_dir / RUNS_DIR).items():
        data = read_json(path)
        if name == SERVE:
            serve = data.get("serve")
            marker = _validated(path, Started, serve) if serve else None
            runs = runs.model_copy(update={"serve": marker})
        elif data.get("repo"):
            entry = _validated(path, UpstreamRuns, {k: v for k, v in data.items() if k != "repo"})
            runs = _with(runs, str(data["repo"]), entry)
    return runs


def _validated(path: Path, model: type[M], data: Any) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise WatchError(
            f"{path}: not a run record ({exc.error_count()} problems); delete it to start afresh"
        ) from None


def _write_runs(state_dir: Path, runs: Runs, before: Runs) -> None:
    """Write the shards whose content changed; the old one-file record is migrated away."""
    folder = state_dir / RUNS_DIR
    for repo, entry in runs.upstreams.items():
        if before.upstreams.get(repo) != entry or runs_path(state_dir).exists():
            doc = {"repo": repo, **entry.model_dump(mode="json", exclude_none=True)}
            update_json(folder / f"{slug(repo)}.json", doc)
    if runs.serve is not None:
        update_json(folder / f"{SERVE}.json", {"serve": runs.serve.model_dump(mode="json")})
    else:
        (folder / f"{SERVE}.json").unlink(missing_ok=True)
    runs_path(state_dir).unlink(missing_ok=True)


@contextmanager
def updating(state_dir: Path, *, wait: float) -> Iterator[list[Runs]]:
    """Read-modify-write the record under the state lock: `box[0] = new` to change it."""
    with locked(state_dir, wait=wait):
        box = [read_runs(state_dir)]
        before = box[0]
        yield box
        if box[0] != before:
            _write_runs(state_dir, box[0], before)


def here(by: str, now: datetime | None = None) -> Started:
    """A marker for a run (or a daemon) starting now in this process."""
    return Started(
        started_at=stamp(now or utcnow()), pid=os.getpid(), host=socket.gethostname(), by=by
    )


def mark_started(state_dir: Path, repo: str, started: Started, *, wait: float) -> Run | None:
    """Record that a run of `repo` began; return the upstream's previous run, if any."""
    with updating(state_dir, wait=wait) as box:
        entry = box[0].of(repo)
        box[0] = _with(box[0], repo, entry.model_copy(update={"running": started}))
    return entry.last


def mark_finished(state_dir: Path, repo: str, run: Run, *, wait: float) -> None:
    with updating(state_dir, wait=wait) as box:
        old = box[0].of(repo).model_dump(mode="json", exclude_none=True)
        fields = finished(old, run.model_dump(mode="json", exclude_none=True))
        box[0] = _with(box[0], repo, UpstreamRuns.model_validate(fields))  # running: none


def mark_interrupted(state_dir: Path, *, wait: float, now: datetime | None = None) -> list[str]:
    """Close the records of runs whose process died (killed, crashed); return their upstreams."""
    now = now or utcnow()
    closed: list[str] = []
    with updating(state_dir, wait=wait) as box:
        for repo, entry in box[0].upstreams.items():
            if entry.running is None or process_alive(entry.running):
                continue
            run = Run(
                started_at=entry.running.started_at,
                finished_at=stamp(now),
                duration_s=seconds_since(entry.running.started_at, now),
                outcome="interrupted",
                exit_code=2,
                by=entry.running.by,
                message=stopped(entry.running),
            )
            closed.append(repo)
            box[0] = _with(box[0], repo, entry.model_copy(update={"last": run, "running": None}))
    return closed


def stopped(started: Started) -> str:
    return f"process {started.pid} on {started.host} stopped mid-run"


def _with(runs: Runs, repo: str, entry: UpstreamRuns) -> Runs:
    return runs.model_copy(update={"upstreams": {**runs.upstreams, repo: entry}})


def process_alive(started: Started) -> bool:
    if started.host != socket.gethostname():
        return True  # another machine's process: we cannot tell, so we do not judge it
    try:
        os.kill(started.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def seconds_since(since: str, now: datetime) -> float:
    return round((now - parse_stamp(since)).total_seconds(), 3)


def run_from_report(report: Report, started: Started, now: datetime) -> Run:
    """The record of a run that produced a report (whatever it found)."""
    issues: dict[str, int] = {}
    for action in report.issues:
        issues[action.action] = issues.get(action.action, 0) + 1
    upstream_errors = [u.error for u in report.upstreams if u.error] + list(report.errors)
    return Run(
        started_at=started.started_at,
        finished_at=stamp(now),
        duration_s=seconds_since(started.started_at, now),
        outcome=_OUTCOME_BY_EXIT[report.exit_code],
        exit_code=report.exit_code,
        by=started.by,
        head=next((u.head for u in report.upstreams if u.head), None),
        summary=report.summary.model_dump(),
        issues=issues,
        message="; ".join(upstream_errors),
    )


def record(
    state_dir: Path, report: Report, started: Started, *, wait: float
) -> list[tuple[str, Run]]:
    """Record a `watch check` or `watch action` run: one run per upstream it checked;
    the runs recorded, by upstream."""
    now = utcnow()
    recorded = []
    for upstream in report.upstreams:
        if not upstream.url:
            continue  # cited but not configured, and implicit upstreams refused
        repo = upstream.repo.lower()
        part = report.model_copy(
            update={
                "upstreams": (upstream,),
                "results": tuple(r for r in report.results if r.repo.lower() in ("", repo)),
            }
        )
        run = run_from_report(part, started, now)
        try:
            mark_finished(state_dir, upstream.repo, run, wait=wait)
            recorded.append((upstream.repo, run))
        except WatchError as exc:  # held by the next run already: not worth failing for
            import logging

            logging.getLogger("watcher.status").warning("run not recorded: %s", exc)
    return recorded


def run_from_error(error: Exception, started: Started, now: datetime) -> Run:
    """The record of a run that could not check at all."""
    from watcher.errors import LockedError

    return Run(
        started_at=started.started_at,
        finished_at=stamp(now),
        duration_s=seconds_since(started.started_at, now),
        outcome="locked" if isinstance(error, LockedError) else "failed",
        exit_code=2,
        by=started.by,
        message=str(error) or type(error).__name__,
    )
