"""`watch status`: the run record read back as health, with an exit status for supervisors."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from watcher.commands.status import status
from watcher.state.runs import (
    Run,
    Started,
    here,
    mark_finished,
    mark_interrupted,
    mark_started,
    read_runs,
    runs_path,
    stamp,
    updating,
)
from watcher.state.store import dumps

NOW = datetime(2026, 12, 2, 10, 30, tzinfo=UTC)
HOURLY = "0 * * * *"


def write_config(root: Path, schedules: dict[str, str]) -> Path:
    """A config with one upstream per entry; nothing is fetched by `watch status`."""
    lines = ['notes = "notes"', 'rules = "rules"', 'state = "state"', 'cache = "cache"']
    for repo, schedule in schedules.items():
        lines += [
            "[[upstream]]",
            f'repo = "{repo}"',
            f'url = "file://{root}/{repo}"',
            f'schedule = "{schedule}"',
        ]
    for folder in ("notes", "rules"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    file = root / "config.toml"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return file


def finished(outcome: str, started: datetime, seconds: float = 2.0) -> Run:
    return Run(
        started_at=stamp(started),
        finished_at=stamp(started + timedelta(seconds=seconds)),
        duration_s=seconds,
        outcome=outcome,  # type: ignore[arg-type]
        exit_code={"fresh": 0, "stale": 1}.get(outcome, 2),
        by="serve",
        head="a" * 40,
        summary={"fresh": 3, "changed": 1 if outcome == "stale" else 0},
        message="" if outcome in ("fresh", "stale") else "upstream unreachable",
    )


def at(hour: int, minute: int = 0) -> datetime:
    return NOW.replace(hour=hour, minute=minute)


CASES = [
    # (what the record holds, the state `watch status` gives, its exit status)
    pytest.param([finished("fresh", at(10, 0))], "ok", 0, id="fresh-recent"),
    pytest.param([finished("stale", at(10, 0))], "ok", 0, id="stale-notes-are-a-success"),
    pytest.param([finished("fresh", at(9, 0))], "ok", 0, id="due-at-10-within-its-period"),
    pytest.param([finished("fresh", at(8, 0))], "overdue", 2, id="a-whole-period-missed"),
    pytest.param([finished("error", at(10, 0))], "failed", 2, id="could-not-check"),
    pytest.param([finished("locked", at(10, 0))], "failed", 2, id="lock-held-too-long"),
    pytest.param(
        [finished("fresh", at(8, 0)), finished("stale", at(10, 0))],
        "ok",
        0,
        id="the-last-run-counts",
    ),
    pytest.param(
        [finished("failed", at(9, 0)), finished("fresh", at(10, 0))], "ok", 0, id="recovered"
    ),
]


@pytest.mark.parametrize(("records", "state", "code"), CASES)
def test_health_of_last_run(tmp_path: Path, records: list[Run], state: str, code: int) -> None:
    config = write_config(tmp_path, {"acme/tool": HOURLY})
    for run in records:
        mark_finished(tmp_path / "state", "acme/tool", run, wait=0)
    out = io.StringIO()
    assert status(config, fmt="json", stream=out, now=NOW) == code
    (line,) = json.loads(out.getvalue())["upstreams"]
    assert line["state"] == state
    assert line["outcome"] == records[-1].outcome
    assert line["last_started_at"] == records[-1].started_at


def test_json_document_names_next_due_time_and_age(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"acme/tool": HOURLY, "acme/lib": "@every 30m"})
    mark_finished(tmp_path / "state", "acme/tool", finished("stale", at(10, 0)), wait=0)
    mark_finished(tmp_path / "state", "acme/lib", finished("fresh", at(10, 20)), wait=0)
    out = io.StringIO()
    assert status(config, fmt="json", stream=out, now=NOW) == 0
    doc = json.loads(out.getvalue())
    assert doc["schema"] == "watch.status/1"
    by_repo = {u["repo"]: u for u in doc["upstreams"]}
    assert by_repo["acme/tool"]["next_due_at"] == "2026-12-02T11:00:00.000000Z"
    assert by_repo["acme/tool"]["age_s"] == 1800.0
    assert by_repo["acme/lib"]["next_due_at"] == "2026-12-02T10:50:00.000000Z"


def test_table_names_each_upstream_and_the_ones_to_look_at(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"acme/tool": HOURLY, "acme/lib": HOURLY})
    mark_finished(tmp_path / "state", "acme/tool", finished("fresh", at(10, 0)), wait=0)
    mark_finished(tmp_path / "state", "acme/lib", finished("error", at(10, 0)), wait=0)
    out = io.StringIO()
    assert status(config, stream=out, now=NOW) == 2
    text = out.getvalue()
    assert "acme/tool  OK  fresh  30.0m ago  took 2.0s" in text
    assert "acme/lib  FAILED  error" in text and "upstream unreachable" in text
    assert text.endswith("1 of 2 upstreams healthy; look at: acme/lib\n")


def test_never_run_is_pending_only_while_serve_has_not_missed_a_run(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"acme/tool": HOURLY})
    state = tmp_path / "state"
    assert status(config, stream=io.StringIO(), now=NOW) == 2  # nothing runs it at all
    for serve_start, expected, code in ((at(10, 10), "pending", 0), (at(8, 10), "overdue", 2)):
        with updating(state, wait=0) as box:
            box[0] = box[0].model_copy(update={"serve": here("serve", now=serve_start)})
        out = io.StringIO()
        assert status(config, fmt="json", stream=out, now=NOW) == code
        assert json.loads(out.getvalue())["upstreams"][0]["state"] == expected


def test_a_run_in_progress_is_healthy_and_a_dead_one_is_interrupted(tmp_path: Path) -> None:
    config = write_config(tmp_path, {"acme/tool": HOURLY, "acme/lib": HOURLY})
    state = tmp_path / "state"
    mark_started(state, "acme/tool", here("serve", now=at(10, 29)), wait=0)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    gone = here("serve", now=at(10, 0)).model_copy(update={"pid": int(dead.stdout)})
    mark_started(state, "acme/lib", gone, wait=0)

    assert mark_interrupted(state, wait=0, now=NOW) == ["acme/lib"]
    out = io.StringIO()
    assert status(config, fmt="json", stream=out, now=NOW) == 2
    by_repo = {u["repo"]: u for u in json.loads(out.getvalue())["upstreams"]}
    assert by_repo["acme/tool"]["state"] == "running"
    assert by_repo["acme/lib"]["state"] == "failed"
    assert by_repo["acme/lib"]["outcome"] == "interrupted"
    assert read_runs(state).of("acme/lib").running is None


def test_record_is_sorted_json_and_counts_runs(tmp_path: Path) -> None:
    state = tmp_path / "state"
    mark_started(
        state, "acme/tool", Started(started_at=stamp(NOW), pid=1, host="h", by="serve"), wait=0
    )
    mark_finished(state, "acme/tool", finished("stale", NOW), wait=0)
    mark_finished(state, "acme/tool", finished("error", NOW), wait=0)
    text = (state / "runs" / "acme__tool.json").read_text(encoding="utf-8")  # one per upstream
    entry = json.loads(text)
    assert text == dumps(entry)  # sorted keys, one entry per line, the same bytes every time
    assert entry["repo"] == "acme/tool"
    assert (entry["runs"], entry["last"]["outcome"]) == (2, "error")
    assert entry["last_healthy_at"] == finished("stale", NOW).finished_at
    assert "running" not in entry


def test_corrupt_record_is_a_clear_error(tmp_path: Path) -> None:
    from watcher.errors import WatchError

    config = write_config(tmp_path, {"acme/tool": HOURLY})
    (tmp_path / "state" / "runs").mkdir(parents=True)
    shard = tmp_path / "state" / "runs" / "acme__tool.json"
    shard.write_text('{"repo": "acme/tool", "runs": "x"}')
    with pytest.raises(WatchError, match=r"acme__tool\.json: not a run record.*delete it"):
        status(config, stream=io.StringIO(), now=NOW)


def test_a_one_file_record_of_an_earlier_version_is_read_and_migrated(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    old = {"schema": "watch.runs/1", "upstreams": {"acme/tool": {"runs": 3}}}
    runs_path(state).write_text(json.dumps(old))

    assert read_runs(state).of("acme/tool").runs == 3
    mark_finished(state, "acme/lib", finished("fresh", NOW), wait=0)

    assert not runs_path(state).exists()
    assert sorted(p.name for p in (state / "runs").iterdir()) == [
        "acme__lib.json",
        "acme__tool.json",
    ]
    assert read_runs(state).of("acme/tool").runs == 3 and read_runs(state).of("acme/lib").runs == 1
