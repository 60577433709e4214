"""`watch serve`: schedules, one run at a time, catch-up after downtime, clean stops."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from watcher.config import Config, load
from watcher.errors import ConfigError
from watcher.serve import build_scheduler, next_due, serve, trigger_for, triggers
from watcher.status import Run, mark_finished, read_runs, stamp

NOW = datetime(2026, 12, 2, 10, 30, tzinfo=UTC)  # a Wednesday


def write_config(
    root: Path, upstreams: dict[str, str], urls: dict[str, str] | None = None, sink: str = "files"
) -> Path:
    """config.toml with one [[upstream]] per repo -> schedule; state and cache under root."""
    lines = ['notes = "notes"', 'rules = "rules"', 'state = "state"', 'cache = "cache"']
    for repo, schedule in upstreams.items():
        url = (urls or {}).get(repo, f"file://{root}/missing/{repo}")
        lines += [
            "[[upstream]]",
            f'repo = "{repo}"',
            f'url = "{url}"',
            'branch = "main"',
            'release_tags = "v*"',
            f'schedule = "{schedule}"',
        ]
    lines += ["[issues]", f'sink = "{sink}"']
    (root / "notes").mkdir(exist_ok=True)
    file = root / "config.toml"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return file


# --- schedules --------------------------------------------------------------------

SCHEDULES = [
    ("@every 1s", "2026-12-02T10:30:01"),
    ("@every 30s", "2026-12-02T10:30:30"),
    ("@every 5m", "2026-12-02T10:35:00"),
    ("@every 2h", "2026-12-02T12:30:00"),
    ("@every 1d", "2026-12-03T10:30:00"),
    ("17 */6 * * *", "2026-12-02T12:17:00"),
    ("0 9 * * 1-5", "2026-12-03T09:00:00"),  # Thursday
    ("0 9 * * 0", "2026-12-06T09:00:00"),  # crontab 0 = Sunday (APScheduler's would be Monday)
    ("0 9 * * 7", "2026-12-06T09:00:00"),
    ("0 9 * * sat,sun", "2026-12-05T09:00:00"),
    ("0 9 * * */2", "2026-12-03T09:00:00"),  # Sun, Tue, Thu, Sat
    ("0 9 * * 1", "2026-12-07T09:00:00"),  # Monday
    ("30 10 * * *", "2026-12-03T10:30:00"),  # strictly after the previous run
]


@pytest.mark.parametrize(("schedule", "due"), SCHEDULES)
def test_next_due_after_a_run(schedule: str, due: str) -> None:
    got = next_due(trigger_for(schedule), NOW)
    assert got is not None
    assert got.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S") == due


@pytest.mark.parametrize(
    "schedule", ["@every 0s", "* * *", "0 9 * * 8", "61 * * * *", "0 9 * * 5-1", "0 9 * * */0"]
)
def test_bad_schedule_is_refused_naming_the_upstream(tmp_path: Path, schedule: str) -> None:
    with pytest.raises(ValueError):
        trigger_for(schedule)
    if len(schedule.split()) == 5 or schedule.startswith("@every"):
        config = load(write_config(tmp_path, {"acme/tool": schedule}))
        with pytest.raises(ConfigError, match=r"config.toml: upstream acme/tool: schedule"):
            triggers(config)


# --- catch-up after downtime ------------------------------------------------------


def _first_runs(config: Config, now: datetime) -> dict[str, datetime]:
    scheduler = build_scheduler(config, _never, stopping=threading.Event(), now=now)
    scheduler.start(paused=True)  # computes each job's first run time, runs nothing
    try:
        return {job.id: job.next_run_time for job in scheduler.get_jobs()}
    finally:
        scheduler.shutdown(wait=False)


def _never(config: Config, repo: str) -> Run:
    raise AssertionError("a paused scheduler ran a job")


def _ran(repo: str, started: datetime) -> Run:
    return Run(
        started_at=stamp(started),
        finished_at=stamp(started),
        duration_s=0.0,
        outcome="fresh",
        exit_code=0,
        by="serve",
    )


def test_one_catch_up_run_for_what_came_due_while_down(tmp_path: Path) -> None:
    hourly = "0 * * * *"
    config = load(
        write_config(
            tmp_path,
            {"a/recent": hourly, "a/missed": hourly, "a/days-down": hourly, "a/never": hourly},
        )
    )
    mark_finished(config.state, "a/recent", _ran("a/recent", NOW.replace(minute=5)), wait=0)
    mark_finished(config.state, "a/missed", _ran("a/missed", NOW.replace(hour=9)), wait=0)
    mark_finished(config.state, "a/days-down", _ran("a/days-down", NOW.replace(day=1)), wait=0)

    first = _first_runs(config, NOW)

    assert first["a/recent"] == NOW.replace(hour=11, minute=0)  # nothing missed: on schedule
    assert first["a/missed"] == NOW  # 10:00 was missed: one run now
    assert first["a/days-down"] == NOW  # 24 firings missed: still one run now
    assert first["a/never"] == NOW


# --- one run at a time ------------------------------------------------------------


class Recorder:
    """A stand-in job that takes `seconds` and notes when each run began and ended."""

    def __init__(self, seconds: float, then: Callable[[Config, str], Run] | None = None) -> None:
        self.seconds = seconds
        self.then = then
        self.spans: list[tuple[str, float, float]] = []
        self.active = 0
        self.most_active = 0
        self._lock = threading.Lock()
        self.changed = threading.Condition(self._lock)

    def __call__(self, config: Config, repo: str) -> Run:
        with self.changed:
            self.active += 1
            self.most_active = max(self.most_active, self.active)
            self.changed.notify_all()
        begin = time.monotonic()
        time.sleep(self.seconds)
        run = self.then(config, repo) if self.then else _ran(repo, datetime.now(UTC))
        with self.changed:
            self.active -= 1
            self.spans.append((repo, begin, time.monotonic()))
            self.changed.notify_all()
        return run

    def wait_for(self, runs: int, timeout: float = 30.0) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.spans) >= runs, timeout), self.spans


def test_runs_never_overlap_even_when_slower_than_the_interval(tmp_path: Path) -> None:
    config = load(write_config(tmp_path, {"acme/tool": "@every 1s", "acme/lib": "@every 1s"}))
    job = Recorder(seconds=1.3)
    scheduler = build_scheduler(config, job, stopping=threading.Event())
    scheduler.start()
    try:
        job.wait_for(4)
    finally:
        scheduler.shutdown(wait=True)
    assert job.most_active == 1
    spans = sorted(job.spans, key=lambda s: s[1])
    assert all(later[1] >= earlier[2] for earlier, later in itertools.pairwise(spans))
    assert {repo for repo, _, _ in spans} == {"acme/tool", "acme/lib"}


def test_stop_lets_the_running_check_finish_and_starts_nothing_new(tmp_path: Path) -> None:
    config_file = write_config(tmp_path, {"acme/tool": "@every 1s", "acme/lib": "@every 1s"})
    job = Recorder(seconds=1.0)
    stopping = threading.Event()
    result: list[int] = []
    server = threading.Thread(
        target=lambda: result.append(serve(config_file, job=job, stopping=stopping))
    )
    server.start()
    with job.changed:
        assert job.changed.wait_for(lambda: job.active == 1, 30)
    assert read_runs(tmp_path / "state").serve is not None  # the daemon is on record
    stopping.set()
    server.join(30)

    assert result == [0]
    assert job.active == 0
    assert len(job.spans) == 1  # the one that was running finished; the queued one never began
    assert read_runs(tmp_path / "state").serve is None
