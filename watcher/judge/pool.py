"""Spread a run's judging and history walks over the machine's cores.

Both are pure computation over blobs the mirror holds: parsing and comparing, in Python,
one core at a time. For a big site, forked workers take part: they inherit everything
the run has read so far (plans, anchors, logs, parses, walks half done) and send back
only their answers and the counters the cost model pins. Work goes by file: the tasks
of one file are taken by one process, so each version of a file is parsed in one process
only. Files are taken one at a time, the biggest first, by whichever process is free: a
few big files do not leave one core working alone.

History walks fetch as they go. They are first driven here, in lock-step, to their last
request (`Last`: once those blobs are here, the rest is computation), so that each round
of fetches serves every walk as before; then they are finished on every core. A spread
run makes the same fetches as a run in one process.

Workers are forked, so this is for POSIX systems, from a process with one thread (a
fork copies no other thread, and a lock one held would stay held in the child): anywhere
else the work runs in this process, as it does when the site is small.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Generator, Hashable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from multiprocessing.sharedctypes import Synchronized

    from watcher.judge.session import PoolStats
    from watcher.mirror.mirrors import Mirror

T = TypeVar("T")
R = TypeVar("R")
Walk = Generator[list[str], None, R]

log = logging.getLogger("watch")
# At most this many processes unless [limits] processes says more: each one's parse
# cache and copy-on-write pages add to the run's memory (measured on 2 cores only).
MOST = 4
# Each process needs this much work for a fork (a copy of the run's memory map, a pipe
# and the answers pickled back) to pay: smaller sites run in one process.
LEAST_JUDGED = 64
LEAST_WALKS = 16


class Last(list[str]):
    """A walk's last request: once these blobs are here, the rest of it is computation."""


@dataclasses.dataclass(frozen=True)
class Pool:
    """How a run spreads its work: the processes it may use, what workers count that must
    be added up here (asked when workers start), what a worker does first (to drop what
    must not be shared, such as pipes to git), and where what the workers did is counted
    (`stats`: the run's, `watcher.judge.session.PoolStats`; None: nowhere)."""

    processes: int
    counters: Callable[[], Sequence[object]] = tuple
    forked: Callable[[], None] = lambda: None
    stats: PoolStats | None = None


def pool(mirror: Mirror, limit: int | None) -> Pool:
    """The pool of a run on `mirror`: `usable(limit)` processes, the mirror's counters
    and the stages' (`counters`), the mirror's own pipes dropped in each worker, and
    what the workers did counted in the run's session."""
    stats = mirror.session.counts.pool
    return Pool(usable(limit), functools.partial(counters, mirror), mirror.forked, stats)


def usable(limit: int | None) -> int:
    """Processes a run may use: `[limits] processes`, else one per usable core up to MOST."""
    if limit is not None:
        return limit
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(MOST, cores))


def counters(mirror: Mirror) -> list[object]:
    """What a worker counts that the run's counters must include: the mirror's git calls,
    and the stage counters of its session (parses, path histories, searches, walks)."""
    return [mirror, *mirror.session.counts.summed()]


def spread(
    tasks: Sequence[T],
    key: Callable[[T], Hashable],
    work: Callable[[T], R],
    pool: Pool,
    least: int | None = None,
) -> list[R]:
    """`work` of every task, in order, on the pool's processes. Tasks with the same key
    are done by one process, in their order; a key's tasks are taken by whichever process
    is free, the keys with most tasks first."""
    groups: dict[Hashable, list[int]] = {}
    for index, task in enumerate(tasks):
        groups.setdefault(key(task), []).append(index)
    processes = min(pool.processes, len(tasks) // (least or LEAST_JUDGED))
    if processes < 2 or not _can_fork():
        return [work(task) for task in tasks]
    import multiprocessing

    order = sorted(groups.values(), key=len, reverse=True)  # stable: ties in task order
    # Process n starts with group n; then each takes the next group not taken yet.
    taken = multiprocessing.get_context("fork").Value("i", processes)

    def run(first: int) -> dict[int, R]:
        done: dict[int, R] = {}
        group: int | None = first if first < len(order) else None
        while group is not None:
            done.update((i, work(tasks[i])) for i in order[group])
            group = _take(taken, len(order))
        return done

    counted = pool.counters()
    workers = [
        _Worker(functools.partial(run, n), counted, pool.forked, pool.stats)
        for n in range(1, processes)
    ]
    with _stopping(workers):
        started = time.process_time()
        found = run(0)
        log.debug("the main process's share took %.1f s of CPU", time.process_time() - started)
        for worker in workers:
            found.update(worker.result())
    # A worker that failed sent nothing: the groups it took are done here.
    for index in range(len(tasks)):
        if index not in found:
            found[index] = work(tasks[index])
    return [found[i] for i in range(len(tasks))]


def lockstep(
    walks: Sequence[Walk[R]],
    keys: Sequence[Hashable],
    fetch: Callable[[list[str]], None],
    pool: Pool,
) -> list[R]:
    """Drive walks to their answers in lock-step: each round fetches, in one call of
    `fetch`, the blobs every unfinished walk asks for. With a pool of processes, walks that
    reach their `Last` request wait there, and are finished on every core once the
    rounds are over (the walks with the same key by one process)."""
    spreading = min(pool.processes, len(walks) // LEAST_WALKS) > 1 and _can_fork()
    answers: dict[int, R] = {}
    wanted: dict[int, list[str]] = {}
    parked: dict[int, None] = {}  # at their last request, in the order they got there

    def advance(index: int) -> None:
        try:
            wanted[index] = asked = walks[index].send(None)
        except StopIteration as stop:
            answers[index] = stop.value
            return
        if spreading and isinstance(asked, Last):
            parked[index] = None

    for index in range(len(walks)):
        advance(index)
    while wanted:
        fetch(list(dict.fromkeys(b for blobs in wanted.values() for b in blobs)))
        going, wanted = [i for i in wanted if i not in parked], {}
        for index in going:
            advance(index)
    waiting = list(parked)
    finished = spread(
        waiting, keys.__getitem__, lambda i: _finish(walks[i], fetch), pool, least=LEAST_WALKS
    )
    answers.update(zip(waiting, finished, strict=True))
    return [answers[i] for i in range(len(walks))]


def _finish(walk: Walk[R], fetch: Callable[[list[str]], None]) -> R:
    """A walk past its last request, to its answer. Should it ask for more after all, this
    process fetches it."""
    try:
        while True:
            fetch(walk.send(None))
    except StopIteration as stop:
        found: R = stop.value
        return found


def _take(taken: Synchronized[int], count: int) -> int | None:
    """The next group for this process, or None when every group is taken."""
    with taken.get_lock():
        group = taken.value
        taken.value = group + 1
    return group if group < count else None


def _can_fork() -> bool:
    return hasattr(os, "fork") and threading.active_count() == 1


# --- workers ----------------------------------------------------------------------------


class _Worker:
    """A forked process running `job`; its answer and counters come back through a pipe."""

    def __init__(
        self,
        job: Callable[[], dict[int, Any]],
        counters: Sequence[object],
        forked: Callable[[], None],
        stats: PoolStats | None,
    ) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self.connection, theirs = context.Pipe(duplex=False)
        self.counters = counters
        self.stats = stats
        self.process = context.Process(
            target=_child, args=(job, theirs, counters, forked), daemon=True
        )
        self.process.start()
        theirs.close()

    def result(self) -> dict[int, Any]:
        """Its answers, its counters added here; none if it failed."""
        try:
            message: tuple[Any, ...] = self.connection.recv()
        except (EOFError, OSError):
            message = ("failed", "the worker process ended without an answer")
        self.stop()
        if message[0] != "done":
            log.warning("a worker process failed (%s): its share is done again here", message[1])
            return {}
        _, answer, deltas, seconds = message
        for counter, delta in zip(self.counters, deltas, strict=True):
            _add(counter, delta)
        log.debug("a worker's share took %.1f s of CPU", seconds)
        if self.stats is not None:
            self.stats.by_workers += len(answer)
            self.stats.worker_cpu += seconds
        return answer  # type: ignore[no-any-return]

    def stop(self) -> None:
        self.connection.close()
        self.process.join(timeout=1)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


@contextlib.contextmanager
def _stopping(workers: Sequence[_Worker]) -> Iterator[None]:
    """Workers are killed when the parent fails: none is left running."""
    try:
        yield
    except BaseException:
        for worker in workers:
            worker.process.kill()
            worker.stop()
        raise


def _child(
    job: Callable[[], dict[int, Any]],
    connection: Any,
    counters: Sequence[object],
    forked: Callable[[], None],
) -> None:
    """A worker's whole life: its job, then its answers and what its counters counted."""
    before = [_snapshot(c) for c in counters]
    started = time.process_time()
    try:
        forked()
        answer = job()
        deltas = [_delta(c, b) for c, b in zip(counters, before, strict=True)]
        connection.send(("done", answer, deltas, time.process_time() - started))
    except BaseException as exc:  # the parent does the share again, and says why
        connection.send(("failed", f"{type(exc).__name__}: {exc}"))
    finally:
        connection.close()


def _names(counter: object) -> list[str]:
    """A counter object's counted fields: a dataclass's fields, else those its class
    lists in COUNTED (ints are summed, lists extended, sets joined)."""
    if dataclasses.is_dataclass(counter):
        return [f.name for f in dataclasses.fields(counter)]
    return list(getattr(counter, "COUNTED", ()))


def _snapshot(counter: object) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name in _names(counter):
        value = getattr(counter, name)
        if isinstance(value, list):
            found[name] = len(value)
        elif isinstance(value, set):
            found[name] = frozenset(value)
        elif isinstance(value, int) and not isinstance(value, bool):
            found[name] = value
    return found


def _delta(counter: object, before: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, was in before.items():
        value = getattr(counter, name)
        found[name] = value[was:] if isinstance(value, list) else value - was
    return found


def _add(counter: object, delta: dict[str, Any]) -> None:
    for name, value in delta.items():
        if isinstance(value, list):
            getattr(counter, name).extend(value)
        elif isinstance(value, set):
            getattr(counter, name).update(value)
        else:
            setattr(counter, name, getattr(counter, name) + value)
