"""One upstream's shard of the run record (`state/runs/OWNER__NAME.json`) as plain data:
its time stamps, which outcomes are healthy, and what a finished run makes of it.

Plain Python: a warm run records itself without pydantic (watcher.state.warm), a full
run through its models (watcher.state.runs); both write the same shard from here.
"""

from __future__ import annotations

import time
from typing import Any

# Outcomes after which the watcher did its job: it checked, whatever it found.
HEALTHY: frozenset[str] = frozenset({"fresh", "stale"})
# A time in the record: UTC, to the microsecond (`stamp`), as `time.strftime` and
# `datetime.strftime` both write it.
STAMP = "%Y-%m-%dT%H:%M:%S.%fZ"


def stamp(moment: float) -> str:
    """`moment` (seconds since the epoch) as the record writes times."""
    seconds, micro = divmod(round(moment * 1_000_000), 1_000_000)
    return time.strftime(STAMP.replace("%f", f"{micro:06d}"), time.gmtime(seconds))


def finished(old: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """The shard's fields after `run` (a finished run, as JSON) on top of `old` (the
    shard as read, or {}): it is the last run, one more run, and the last healthy time
    moves to its end when it did its job."""
    healthy = run["finished_at"] if run["outcome"] in HEALTHY else old.get("last_healthy_at")
    fields = {"last": run, "runs": int(old.get("runs", 0)) + 1}
    return fields | ({"last_healthy_at": healthy} if healthy else {})
