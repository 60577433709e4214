"""`watch status`: each upstream's last run read back as health, for supervisors.

Per upstream the last run (watcher.state.runs), its outcome and age, and whether the
next run is overdue. The exit status is 0 when every upstream is healthy and 2 when the
last run of one failed, was interrupted, or is overdue, so a supervisor or monitoring
check can use it.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, TextIO

from watcher import schedule
from watcher.config import Upstream
from watcher.models import Frozen
from watcher.report import plural
from watcher.state.runs import (
    HEALTHY,
    Runs,
    parse_stamp,
    process_alive,
    read_runs,
    seconds_since,
    stamp,
    stopped,
    utcnow,
)


class Health(Frozen):
    """One upstream's line in `watch status`."""

    repo: str
    schedule: str
    state: Literal["ok", "running", "failed", "overdue", "never", "pending"]
    outcome: str | None = None
    last_started_at: str | None = None
    age_s: float | None = None
    duration_s: float | None = None
    next_due_at: str | None = None
    message: str = ""

    @property
    def healthy(self) -> bool:
        return self.state in ("ok", "running", "pending")


def health(upstream: Upstream, runs: Runs, now: datetime) -> Health:
    """Judge one upstream from its record: last outcome, and whether a run is overdue.

    A run is overdue when a whole schedule period has passed after the time it was due.
    An upstream that never ran is measured from when `watch serve` started, if it did.
    """
    entry = runs.of(upstream.repo)
    base = Health(repo=upstream.repo, schedule=upstream.schedule, state="never")
    if entry.running is not None:
        alive = process_alive(entry.running)
        return base.model_copy(update={
            "state": "running" if alive else "failed",
            "outcome": None if alive else "interrupted",
            "last_started_at": entry.running.started_at,
            "message": "" if alive else stopped(entry.running),
        })  # fmt: skip
    last = entry.last
    since = last.started_at if last else (runs.serve.started_at if runs.serve else None)
    if since is None:
        return base.model_copy(update={"message": "no run recorded yet"})
    due, overdue = schedule.due(upstream.schedule, parse_stamp(since), now)
    update: dict[str, Any] = {"next_due_at": stamp(due) if due else None}
    if last is not None:
        update |= {
            "outcome": last.outcome,
            "last_started_at": last.started_at,
            "age_s": seconds_since(last.started_at, now),
            "duration_s": last.duration_s,
            "message": last.message,
        }
    if last is not None and last.outcome not in HEALTHY:
        update["state"] = "failed"
    elif overdue:
        update["state"] = "overdue"
    else:
        update["state"] = "ok" if last else "pending"
    return base.model_copy(update=update)


def status(
    config_file: Path,
    *,
    fmt: str = "table",
    stream: TextIO | None = None,
    now: datetime | None = None,
) -> int:
    """`watch status`: print each upstream's health; 0 if all are healthy, else 2."""
    import sys

    from watcher.config import load

    config = load(config_file)
    now = now or utcnow()
    runs = read_runs(config.state)
    lines = [health(u, runs, now) for u in config.upstream]
    out = stream or sys.stdout
    if fmt == "json":
        doc = {
            "schema": "watch.status/1",
            "now": stamp(now),
            "serve": runs.serve.model_dump() if runs.serve else None,
            "upstreams": [h.model_dump() for h in lines],
        }
        out.write(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    else:
        _table(lines, out)
    return 0 if all(h.healthy for h in lines) else 2


def _table(lines: list[Health], out: TextIO) -> None:
    for h in lines:
        age = f"{_human(h.age_s)} ago" if h.age_s is not None else "-"
        took = f"took {h.duration_s:.1f}s" if h.duration_s is not None else ""
        due = f"next due {h.next_due_at}" if h.next_due_at else ""
        parts = [h.repo, h.state.upper(), h.outcome or "-", age, took, due, h.message]
        out.write("  ".join(p for p in parts if p) + "\n")
    bad = [h.repo for h in lines if not h.healthy]
    out.write(
        f"{len(lines) - len(bad)} of {plural(len(lines), 'upstream')} healthy"
        + (f"; look at: {', '.join(bad)}\n" if bad else "\n")
    )


def _human(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f}{unit}"
    return f"{seconds:.0f}s"
