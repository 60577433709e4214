"""Schedules: when each upstream's check comes due (`@every 30s` or 5-field cron, UTC).

`watch serve` runs checks on these triggers; `watch status` tells from them whether a
run is overdue.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from watcher.config import EVERY_RE, Config
from watcher.errors import ConfigError

if TYPE_CHECKING:
    from apscheduler.triggers.base import BaseTrigger

_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def trigger_for(schedule: str) -> BaseTrigger:
    """The trigger for `@every N[smhd]` or a 5-field cron line; ValueError says what is wrong.

    Cron is read as crontab(5) and GitHub Actions read it: UTC, day of week 0 or 7 =
    Sunday. APScheduler 3 counts weekdays from Monday, so that field goes in as names.
    """
    from apscheduler.triggers.cron import CronTrigger
    from apscheduler.triggers.interval import IntervalTrigger

    every = EVERY_RE.match(schedule.strip())
    if every:
        if int(every.group(1)) < 1:
            raise ValueError(f"{schedule!r}: the interval must be at least 1")
        return IntervalTrigger(timezone=UTC, **{_UNITS[every.group(2)]: int(every.group(1))})
    fields = schedule.split()
    if len(fields) != 5:
        raise ValueError(f"{schedule!r}: expected 5 cron fields or '@every 30s'")
    fields[4] = _day_of_week(fields[4])
    return CronTrigger.from_crontab(" ".join(fields), timezone=UTC)


def _day_of_week(field: str) -> str:
    """Crontab's day-of-week field (lists, ranges, steps; 0/7 = Sunday) as day names."""
    if field in ("*", "?"):
        return "*"
    days: set[int] = set()
    for part in field.lower().split(","):
        span, _, step_text = part.partition("/")
        step = int(step_text) if step_text.isdigit() else 0
        if span == "*":
            first, last = 0, 6
        else:
            low, _, high = span.partition("-")
            first = _day_number(low)
            last = _day_number(high) if high else (6 if step_text else first)
        if (step_text and step < 1) or last < first:
            raise ValueError(f"day of week {field!r}: bad range or step in {part!r}")
        days.update(d % 7 for d in range(first, last + 1, step or 1))
    return ",".join(_DAYS[d] for d in sorted(days))


def _day_number(text: str) -> int:
    if text in _DAYS:
        return _DAYS.index(text)
    if text.isdigit() and int(text) <= 7:
        return int(text)
    raise ValueError(f"day of week {text!r}: expected 0-7 or sun..sat")


def next_due(trigger: BaseTrigger, after: datetime) -> datetime | None:
    """The first firing strictly after `after` (the start of a previous run)."""
    due: datetime | None = trigger.get_next_fire_time(after, after + timedelta(microseconds=1))
    return due


def triggers(config: Config) -> dict[str, BaseTrigger]:
    """Every upstream's trigger; a bad schedule is a ConfigError naming the upstream."""
    found: dict[str, BaseTrigger] = {}
    for upstream in config.upstream:
        try:
            found[upstream.repo] = trigger_for(upstream.schedule)
        except ValueError as exc:
            raise ConfigError(
                config.file, f"upstream {upstream.repo}: schedule {exc}; use cron or '@every 30s'"
            ) from None
    return found


def due(schedule: str, since: datetime, now: datetime) -> tuple[datetime | None, bool]:
    """The first firing of `schedule` after `since`, and whether it is overdue at `now`:
    a whole schedule period has passed after the time it was due."""
    trigger = trigger_for(schedule)
    first = next_due(trigger, since)
    if first is None:
        return None, False
    after = next_due(trigger, first)
    period = (after - first) if after else timedelta(0)
    return first, now > first + period
