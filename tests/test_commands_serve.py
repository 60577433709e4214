"""`watch serve`: schedules, one run at a time, catch-up after downtime, clean stops."""

from __future__ import annotations

import contextlib
import functools
import io
import itertools
import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.conftest import Project
from watcher.commands.serve import build_scheduler, check_upstream, serve
from watcher.config import Config, load
from watcher.errors import ConfigError
from watcher.logs import configure_logging
from watcher.schedule import next_due, trigger_for, triggers
from watcher.state.runs import Run, mark_finished, read_runs, stamp

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
    for folder in ("notes", "rules"):
        (root / folder).mkdir(exist_ok=True)
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


def test_catch_up_is_one_run_then_back_on_schedule(tmp_path: Path) -> None:
    config = load(write_config(tmp_path, {"acme/tool": "0 0 1 1 *"}))  # yearly
    long_ago = datetime.now(UTC).replace(microsecond=0) - timedelta(days=800)
    mark_finished(config.state, "acme/tool", _ran("acme/tool", long_ago), wait=0)
    job = Recorder(seconds=0)
    scheduler = build_scheduler(config, job, stopping=threading.Event())
    scheduler.start()
    try:
        job.wait_for(1)
        wait_for(lambda: scheduler.get_job("acme/tool").next_run_time is not None)
        upcoming = scheduler.get_job("acme/tool").next_run_time
    finally:
        scheduler.shutdown(wait=True)
    assert len(job.spans) == 1  # two missed new years, one run
    assert (upcoming.month, upcoming.day, upcoming.hour) == (1, 1, 0)
    assert upcoming > datetime.now(UTC)


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
    job = Recorder(seconds=1.1)
    scheduler = build_scheduler(config, job, stopping=threading.Event())
    scheduler.start()
    try:
        job.wait_for(3)
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


# --- the real check, on a schedule, against an upstream that moves -----------------

APP_V1 = 'def greet(name):\n    return "hello " + name\n\n\ndef other():\n    return 1\n'
APP_V2 = APP_V1.replace('"hello "', '"hi "')
NOTE = "app-greets"


def greeting_project(project: Project, schedule: str = "@every 1s") -> str:
    """A notes repository whose one note cites `greet` at the upstream's first commit."""
    base = project.upstream.commit("add greet", {"src/app.py": APP_V1})
    project.config(sink="files", upstream_extra=f'schedule = "{schedule}"')
    project.note(NOTE, f"{base} src/app.py:1-2")
    return base


def state_files(project: Project) -> dict[str, object]:
    """Every JSON file in state/, parsed: a half-written one fails the test here."""
    state = project.root / "state"
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in state.glob("*.json")}


def test_scheduler_runs_real_checks_as_upstream_moves(
    project: Project, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="watcher.serve")
    base = greeting_project(project)
    up = project.upstream
    stopping = threading.Event()
    heads: list[str] = []
    # After each run the upstream gains a commit: docs only, then a change to `greet`.
    moves = [
        lambda: up.commit("docs", {"README.md": "x"}),
        lambda: up.commit("greet more briefly", {"src/app.py": APP_V2}),
        lambda: None,
        stopping.set,
    ]
    runs: list[Run] = []

    def check_then_move(config: Config, repo: str) -> Run:
        heads.append(up.head())
        runs.append(check_upstream(config, repo, lock_wait=10))
        moves[len(runs) - 1]()
        return runs[-1]

    job = Recorder(seconds=1.2, then=check_then_move)  # slower than the 1s interval
    result: list[int] = []
    server = threading.Thread(
        target=lambda: result.append(serve(project.config_file, job=job, stopping=stopping))
    )
    server.start()
    server.join(60)

    assert result == [0]
    assert job.most_active == 1 and len(job.spans) == 4
    assert [r.outcome for r in runs] == ["fresh", "fresh", "stale", "stale"]
    assert [r.issues for r in runs] == [{}, {}, {"opened": 1}, {"unchanged": 1}]
    assert [r.head for r in runs] == heads and heads[0] == base and heads[2] == heads[3]
    assert [p.name for p in (project.root / "state" / "issues").iterdir()] == [f"{NOTE}.md"]
    issue = (project.root / "state" / "issues" / f"{NOTE}.md").read_text(encoding="utf-8")
    assert f"<!-- watch:note={NOTE} -->" in issue
    saved = state_files(project)
    assert saved["acme__client.json"]["head"] == up.head()  # type: ignore[index]
    record = read_runs(project.root / "state")
    assert record.serve is None and record.of(project.repo).runs == 4
    assert record.of(project.repo).running is None
    lines = [r for r in caplog.records if getattr(r, "event", None) == "run"]
    assert [getattr(r, "outcome", None) for r in lines] == ["fresh", "fresh", "stale", "stale"]
    assert "head moved from" in lines[1].getMessage()
    assert "1 issue(s) opened" in lines[2].getMessage()


class Gate:
    """A check's progress hook that holds the real check (and its state lock) until released."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    @contextlib.contextmanager
    def step(self, message: str, *, forks: bool = False) -> Iterator[None]:
        self.entered.set()
        assert self.release.wait(30)
        yield


def watch(*args: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "watcher", *args],
        cwd=cwd,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )


def _env() -> dict[str, str]:
    import watcher

    return {**os.environ, "PYTHONPATH": str(Path(watcher.__file__).parents[1])}


def test_watch_check_during_a_serve_check_fails_at_once_or_waits(project: Project) -> None:
    greeting_project(project, schedule="@every 1h")
    gate = Gate()
    stopping = threading.Event()
    job = functools.partial(check_upstream, lock_wait=10, progress=gate)
    server = threading.Thread(
        target=serve, args=(project.config_file,), kwargs={"job": job, "stopping": stopping}
    )
    server.start()
    try:
        assert gate.entered.wait(30)  # serve's first check is under way and holds the lock
        refused = watch("check", "--config", "config.toml", "--format", "json", cwd=project.root)
        out, err = refused.communicate(timeout=60)
        assert refused.returncode == 2 and out == ""
        assert "another watch run holds the state lock" in err and "--wait SECONDS" in err
        assert "Traceback" not in err

        waiting = watch(
            "check", "--config", "config.toml", "--format", "json", "--wait", "60", cwd=project.root
        )
        time.sleep(1.0)
        assert waiting.poll() is None  # still waiting for the lock
        gate.release.set()
        out, err = waiting.communicate(timeout=60)
    finally:
        gate.release.set()
        stopping.set()
        server.join(60)
    assert waiting.returncode == 0, err
    assert json.loads(out)["summary"]["fresh"] == 1
    assert read_runs(project.root / "state").of(project.repo).last.outcome == "fresh"  # type: ignore[union-attr]


# --- signals, against the real process ----------------------------------------------

# `watch serve` with the real job, whose check pauses in its progress hook: there the
# check holds the state lock, so a signal sent then arrives mid-check.
SLOW_SERVE = """\
import contextlib, functools, sys, time
from pathlib import Path
from watcher.logs import configure_logging
from watcher.commands.serve import check_upstream, serve

class Slow:
    @contextlib.contextmanager
    def step(self, message, forks=False):
        Path(sys.argv[2]).touch()
        time.sleep(1.0)
        yield

configure_logging(0, "json")
job = functools.partial(check_upstream, lock_wait=10, progress=Slow())
raise SystemExit(serve(Path(sys.argv[1]), job=job))
"""


def slow_serve(project: Project, marker: Path) -> subprocess.Popen[str]:
    script = project.root.parent / "slow_serve.py"
    script.write_text(SLOW_SERVE, encoding="utf-8")
    return subprocess.Popen(
        [sys.executable, str(script), str(project.config_file), str(marker)],
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )


def wait_for(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def json_lines(text: str) -> list[dict[str, object]]:
    """--log-format json: every line of stderr is one JSON object."""
    return [json.loads(line) for line in text.splitlines()]


def test_sigterm_mid_check_finishes_the_check_and_a_restart_carries_on(project: Project) -> None:
    greeting_project(project)
    marker = project.root.parent / "in-check"
    daemon = slow_serve(project, marker)
    wait_for(marker.exists)
    daemon.send_signal(signal.SIGTERM)
    _, err = daemon.communicate(timeout=60)

    assert daemon.returncode == 0, err
    events = [line.get("event") for line in json_lines(err)]
    assert events.index("stopping") < events.index("run") < events.index("stopped")
    record = read_runs(project.root / "state")
    assert record.serve is None and record.of(project.repo).running is None
    assert record.of(project.repo).last.outcome == "fresh"  # type: ignore[union-attr]
    assert state_files(project)["acme__client.json"]["head"] == project.upstream.head()  # type: ignore[index]

    project.upstream.commit("greet more briefly", {"src/app.py": APP_V2})
    daemon = watch("--log-format", "json", "serve", "--config", "config.toml", cwd=project.root)
    wait_for(lambda: read_runs(project.root / "state").of(project.repo).runs >= 2)
    daemon.send_signal(signal.SIGTERM)
    _, err = daemon.communicate(timeout=60)

    assert daemon.returncode == 0, err
    (run,) = [line for line in json_lines(err) if line.get("event") == "run"]
    assert run["outcome"] == "stale" and run["issues"] == {"opened": 1}
    assert (project.root / "state" / "issues" / f"{NOTE}.md").is_file()


def test_sigkill_mid_check_leaves_state_whole_and_the_next_run_says_so(project: Project) -> None:
    greeting_project(project)
    marker = project.root.parent / "in-check"
    daemon = slow_serve(project, marker)
    wait_for(marker.exists)
    daemon.kill()
    daemon.communicate(timeout=60)

    assert read_runs(project.root / "state").of(project.repo).running is not None
    state_files(project)  # whatever was written is whole
    # From here on a slow machine must not make the next run look overdue.
    project.config(sink="files", upstream_extra='schedule = "@every 1h"')
    status = watch("status", "--config", "config.toml", cwd=project.root)
    assert status.wait(60) == 2  # the run's process is gone: interrupted

    once = watch("serve", "--once", "--config", "config.toml", cwd=project.root)
    _, err = once.communicate(timeout=60)
    assert once.returncode == 0, err
    assert "the previous run was interrupted; it is checked again" in err
    entry = read_runs(project.root / "state").of(project.repo)
    assert entry.last is not None and entry.last.outcome == "fresh" and entry.last.by == "once"
    healthy = watch("status", "--config", "config.toml", cwd=project.root)
    assert healthy.wait(60) == 0


# --- logging ----------------------------------------------------------------------


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.parametrize(
    ("verbosity", "shown"),
    [
        (-2, ["error"]),
        (-1, ["warning", "error"]),
        (0, ["info", "warning", "error"]),
        (1, ["debug", "info", "warning", "error"]),
    ],
)
def test_v_and_q_pick_the_level(restore_logging: None, verbosity: int, shown: list[str]) -> None:
    stream = io.StringIO()
    configure_logging(verbosity, "json", stream)
    configure_logging(verbosity, "json", stream)  # configuring again does not double lines
    log = logging.getLogger("watcher.test")
    for level in ("debug", "info", "warning", "error"):
        getattr(log, level)("a %s line", level)
    assert [line["level"] for line in json_lines(stream.getvalue())] == shown


def test_json_log_lines_carry_the_run_fields(restore_logging: None) -> None:
    stream = io.StringIO()
    configure_logging(0, "json", stream)
    log = logging.getLogger("watcher.serve")
    log.info(
        "acme/app: stale in %.1fs",
        1.25,
        extra={"event": "run", "upstream": "acme/app", "summary": {"changed": 1}},
    )
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        log.exception("crashed")
    first, second = json_lines(stream.getvalue())
    assert first["msg"] == "acme/app: stale in 1.2s" and first["level"] == "info"
    assert (first["event"], first["upstream"], first["summary"]) == (
        "run",
        "acme/app",
        {"changed": 1},
    )
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", str(first["ts"]))
    assert "RuntimeError: boom" in str(second["exc"])


def test_quiet_serve_once_prints_only_problems(project: Project) -> None:
    greeting_project(project)
    quiet = watch("-q", "serve", "--once", "--config", "config.toml", cwd=project.root)
    _, err = quiet.communicate(timeout=60)
    assert quiet.returncode == 0 and err == ""
    chatty = watch("serve", "--once", "--config", "config.toml", cwd=project.root)
    _, err = chatty.communicate(timeout=60)
    assert chatty.returncode == 0
    assert re.search(r"acme/client: fresh in \d+\.\ds at [0-9a-f]{10}: 1 fresh", err), err
