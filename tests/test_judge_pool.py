"""Judging and history walks spread over forked workers (`watcher.judge.pool`): the same
answers, the same fetches and the same counts as in one process, and a worker that fails
costs time, never an answer."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Generator
from dataclasses import dataclass, field

import pytest

from tests.conftest import Project
from watcher.config import load
from watcher.gitbuild import Upstream
from watcher.judge import pool as cores
from watcher.models import Report
from watcher.pipeline import CheckOptions, run_check


@dataclass
class Count:
    done: int = 0
    seen: list[int] = field(default_factory=list)
    odd: set[int] = field(default_factory=set)  # as a mirror's blobs the upstream lacks


def square(count: Count, task: int) -> tuple[int, int]:
    count.done += 1
    count.seen.append(task)
    if task % 2:
        count.odd.add(task)
    return task * task, os.getpid()


def test_spread_answers_in_order_each_key_in_one_process_and_counts_add_up() -> None:
    count = Count()
    tasks = list(range(120))

    found = cores.spread(
        tasks,
        lambda t: t // 10,
        lambda t: square(count, t),
        cores.Pool(2, lambda: [count]),
        least=1,
    )

    assert [answer for answer, _ in found] == [t * t for t in tasks]
    by_key: dict[int, set[int]] = {}
    for task, (_, pid) in zip(tasks, found, strict=True):
        by_key.setdefault(task // 10, set()).add(pid)
    assert all(len(pids) == 1 for pids in by_key.values())  # a key's tasks in one process
    assert {pid for _, pid in found} - {os.getpid()}  # a worker took part
    assert count.done == 120 and sorted(count.seen) == tasks  # its counts came back
    assert count.odd == set(tasks[1::2])  # and what it found


def fail() -> None:
    raise RuntimeError("no pipes to git here")


def die() -> None:
    os._exit(3)  # ends without a word, as a killed worker does


@pytest.mark.parametrize("forked", [fail, die])
def test_a_worker_that_fails_costs_time_not_answers(forked: Callable[[], None]) -> None:
    count = Count()
    tasks = list(range(40))

    found = cores.spread(
        tasks,
        lambda t: t % 4,
        lambda t: square(count, t),
        cores.Pool(2, lambda: [count], forked),
        least=1,
    )

    assert found == [(t * t, os.getpid()) for t in tasks]  # all done here
    assert count.done == 40


def walking(index: int) -> Generator[list[str], None, tuple[int, int]]:
    """A walk in the shape of a history walk: it follows a file (one fetch), then asks
    for every version at once (its last request) and computes."""
    yield [f"log-{index % 3}"]
    yield cores.Last([f"v-{index}", "shared"])
    return index, os.getpid()


@pytest.mark.parametrize("processes", [1, 2])
def test_walks_fetch_in_the_same_rounds_however_many_processes(processes: int) -> None:
    fetched: list[list[str]] = []
    walks = [walking(i) for i in range(40)]

    found = cores.lockstep(walks, [i % 5 for i in range(40)], fetched.append, cores.Pool(processes))

    assert [i for i, _ in found] == list(range(40))
    assert [sorted(f) for f in fetched] == [
        ["log-0", "log-1", "log-2"],
        sorted({*(f"v-{i}" for i in range(40)), "shared"}),
    ]
    workers = {pid for _, pid in found} - {os.getpid()}
    assert bool(workers) == (processes > 1)


# --- a whole check ----------------------------------------------------------------------


def fn(name: str, value: int) -> str:
    return f"pub fn {name}(input: u32) -> u32 {{\n    let value = input + {value};\n    value * 2\n}}\n"


NAMES = [f"step_{n}" for n in range(6)]
FILES = [f"src/part{n}.rs" for n in range(6)]


def source(values: dict[str, int], salt: int) -> str:
    return "\n".join(fn(n, values.get(n, salt + i)) for i, n in enumerate(NAMES))


def run(project: Project, processes: int) -> Report:
    project.config(extra=f"[limits]\nprocesses = {processes}\n")
    shutil.rmtree(project.root / "state", ignore_errors=True)  # judged afresh each time
    return run_check(load(project.config_file), CheckOptions(no_issues=True), counts=project.counts)


def test_a_spread_check_gives_the_same_report_and_counts_as_one_process(
    project: Project, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Six files of six functions, each cited; later commits change some functions, one
    # more than once, so that judging and history walks both have work on every core.
    files = {p: source({}, 10 * i) for i, p in enumerate(FILES)}
    base = upstream.commit("base (#1)", files)
    for n in range(1, 4):
        for i, path in enumerate(FILES[: 2 * n]):
            files[path] = source({NAMES[n]: 100 * n + i, NAMES[0]: n}, 10 * i)
        upstream.commit(f"edit {n} (#{n + 1})", files)
    sources = [f"{base} {p}:{1 + 5 * k}-{4 + 5 * k}" for p in FILES for k in range(len(NAMES))]
    project.note("everything", *sources)
    monkeypatch.setattr(cores, "LEAST_JUDGED", 1)
    monkeypatch.setattr(cores, "LEAST_WALKS", 1)
    counts, reports = [], []
    for processes in (1, 2):
        project.counts.pool.reset()
        project.counts.walk.reset()
        reports.append(run(project, processes))
        counts.append(
            (
                project.counts.pool.by_workers,
                project.counts.walk.judged,
                project.counts.walk.skipped,
            )
        )

    one, two = (r.model_dump(exclude={"started_at"}) for r in reports)
    assert one == two
    assert reports[0].summary.changed > 6  # walks to do, on both cores
    assert counts[0][0] == 0 and counts[1][0] > 0  # workers took part in the second run
    assert counts[1][1:] == counts[0][1:]  # and their counts came back


def test_checking_on_a_terminal_starts_no_thread_so_workers_can_fork() -> None:
    from watcher.commands.check import RichProgress

    with RichProgress().step("checking 1,000 items of openai/codex", forks=True):
        assert threading.active_count() == 1


def test_items_whose_files_are_gone_share_one_search_of_head_across_workers(
    project: Project, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Four cited files lose their functions to one new file and are deleted: each item
    # searches HEAD. The search (a word index of HEAD's files) is built once, by the one
    # process that judges all of them, while another judges the files still there.

    gone = [f"src/old{i}.rs" for i in range(4)]
    names = {p: [f"f{i}_{n}" for n in NAMES[:3]] for i, p in enumerate(gone)}
    fns = {
        p: "\n".join(fn(n, 10 * i + k) for k, n in enumerate(names[p])) for i, p in enumerate(gone)
    }
    kept = {f"src/kept{i}.rs": fn(f"kept_{i}", i) for i in range(3)}
    base = upstream.commit("base (#1)", {**fns, **kept})
    project.note("vanished", *(f"{base} {p}:1-4" for p in [*gone, *kept]))
    upstream.commit("gather (#2)", {"src/home.rs": "\n".join(fns.values())})
    upstream.commit("drop the old files (#3)", dict.fromkeys(gone))
    monkeypatch.setattr(cores, "LEAST_JUDGED", 1)
    reports = []
    for processes in (1, 2):
        project.counts.search.reset()
        project.counts.pool.reset()
        reports.append(run(project, processes))
        assert project.counts.search.searches == 1, processes

    assert project.counts.pool.by_workers > 0
    assert project.counts.pool.worker_cpu > 0  # what bench.scale tells apart from git's CPU
    one, two = (r.model_dump(exclude={"started_at"}) for r in reports)
    assert one == two
    found = {r.id.split(":")[1]: r.current.path for r in reports[1].results if r.current}
    assert found == {**dict.fromkeys(gone, "src/home.rs"), **{p: p for p in kept}}
