"""What `watch check` stores of a run for watcher.state.replay, and how it is given again.

The record (`cache/warm-DIGEST.json`) is one line of JSON (the fingerprint, the exit
code, the log lines, the run records without their times, the upstreams to fetch) and
then the report exactly as printed. Giving it again prints that report with this run's
start time, replays the log lines and records the run in `state/runs/` as
watcher.state.runs would; nothing here imports pydantic.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from watcher import redact
from watcher.state.shard import finished, stamp
from watcher.state.store import RUNS_DIR, slug, update_json

SCHEMA = "watch.warm/1"


# Plain classes, not dataclasses: importing dataclasses (and inspect with it) costs a
# warm run more than most of what it does.
class Stats:
    """What this stage did for a run (`watcher.judge.session.Counts.warm`: tests pin it)."""

    def __init__(self) -> None:
        self.replayed = 0  # runs answered from a record
        self.stored = 0  # reports stored for the next run

    def reset(self) -> None:
        self.replayed = self.stored = 0


class Book:
    """What a full run tells this stage, filled in by `commands.check`."""

    def __init__(self) -> None:
        self.state: Path | None = None
        self.cache: Path | None = None
        self.output: list[str] = []  # the report as printed, in the pieces written
        self.started_at = ""
        self.code = 2
        self.upstreams: list[dict[str, Any]] = []  # what the next run fetches first
        self.runs: list[dict[str, Any]] = []  # run records, their times aside
        self.storable = False  # the report depends only on what is fingerprinted

    def fetched(
        self, repo: str, branch: str, fetch_seconds: float, stall_seconds: int, url: str
    ) -> None:
        """An upstream the run fetched (`url`: a digest of its fetch URL), with the limits
        it was fetched under: the next run of the site fetches it first."""
        self.upstreams.append({
            "repo": repo,
            "branch": branch,
            "fetch_seconds": fetch_seconds,
            "stall_seconds": stall_seconds,
            "url": url,
        })  # fmt: skip

    def recorded(self, repo: str, run: dict[str, Any]) -> None:
        """A run record the run wrote for `repo` (as JSON, its times aside)."""
        self.runs.append({"repo": repo, "run": run})


def read(file: Path) -> dict[str, Any]:
    """The record: one line of JSON, then the report as printed (read as it is, not
    decoded from a JSON string: it is most of the record, megabytes on a big site)."""
    try:
        raw = file.read_bytes()
        cut = raw.index(b"\n")
        data, output = json.loads(raw[:cut]), raw[cut + 1 :].decode("utf-8")
    except (OSError, ValueError, RecursionError):  # absent, cut short, not UTF-8, nested
        return {}
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        return {}
    if data.get("output_chars") != len(output):
        data.pop("fingerprint", None)  # cut short: never given again
    return data | {"output": output}


def store(
    file: Path,
    book: Book,
    lines: list[list[Any]],
    fingerprint: dict[str, Any] | None,
    *,
    seed: str | None,
    stats: Stats | None = None,
) -> None:
    """Store what the run did: the upstreams it fetched, which the next run of the same
    site (`seed`: config, options, code) fetches before deciding, and its report when it
    may be given again."""
    record: dict[str, Any] = {"schema": SCHEMA}
    if seed is not None:
        record |= {"site": seed, "upstreams": book.upstreams}
    if fingerprint is not None and book.storable and all(line[0] >= 0 for line in lines):
        if stats is not None:
            stats.stored += 1
        record |= {
            "fingerprint": fingerprint,
            "output_chars": sum(len(part) for part in book.output),
            "started_at": book.started_at,
            "code": book.code,
            "logs": lines,
            "runs": book.runs,
        }
    header = redact.redact(json.dumps(record, ensure_ascii=False))  # one line
    output = book.output if "fingerprint" in record else []
    # Beside the mirrors, not in state/ (its writes are counted, and may be committed);
    # replaced whole; a read-only cache costs only full runs.
    tmp = file.with_name(f".{file.name}.{os.getpid()}.tmp")
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("wb") as handle:  # the report is never joined into one string
            handle.write(f"{header}\n".encode())
            for part in output:
                handle.write(part.encode())
        os.replace(tmp, file)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def replay(
    record: dict[str, Any],
    state_dir: Path,
    started: float,
    out: TextIO,
    stats: Stats | None = None,
) -> int | None:
    """Print the stored report and record this run; None when the record cannot be used."""
    try:
        output, code = str(record["output"]), int(record["code"])
        logs = [(int(level), str(name), str(text)) for level, name, text in record["logs"]]
        shards = _runs(state_dir, record["runs"], started)
    except (KeyError, TypeError, ValueError):
        return None
    if shards is None:
        return None
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started))  # as run_check
    old = f'"started_at": "{record.get("started_at")}"'
    output = output.replace(old, f'"started_at": "{stamp}"', 1)
    for path, doc in shards.items():
        update_json(path, doc)
    for level, name, text in logs:
        logging.getLogger(name).log(level, "%s", text)
    out.write(output)
    out.flush()
    if stats is not None:
        stats.replayed += 1
    return code


def _runs(
    folder: Path, runs: list[dict[str, Any]], started: float
) -> dict[Path, dict[str, Any]] | None:
    """The run record (watcher.state.runs.record) of this run: one shard per upstream.

    None, for a full run to record it, when the record is not one this stage knows: the
    one-file record of earlier versions, a serve daemon's marker, a shard it cannot read.
    """
    folder = folder / RUNS_DIR
    if (folder.parent / "runs.json").exists() or (folder / "_serve.json").exists():
        return None
    for path in folder.glob("*.json") if folder.is_dir() else []:
        if not isinstance(_read_shard(path), dict):
            return None
    ended = time.time()
    docs = {}
    for entry in runs:
        repo, run = str(entry["repo"]), dict(entry["run"])
        path = folder / f"{slug(repo)}.json"
        old = _read_shard(path) if path.exists() else {"repo": repo}
        if not isinstance(old, dict) or old.get("repo") != repo:
            return None
        run |= {
            "started_at": stamp(started),
            "finished_at": stamp(ended),
            "duration_s": round(ended - started, 3),
        }
        docs[path] = {"repo": repo, **finished(old, run)}
    return docs


def _read_shard(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):  # the full run says what is wrong
        return None
    return data if isinstance(data, dict) and isinstance(data.get("repo"), str) else None


# --- what a full run printed -----------------------------------------------------


class Tee(redact.RedactingStream):
    """The output stream, keeping what went through it (redacted, as printed); the text
    itself goes out as written."""

    def __init__(self, inner: TextIO) -> None:
        super().__init__(inner)
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(redact.redact(text))
        return self.inner.write(text)


@contextlib.contextmanager
def captured() -> Iterator[list[list[Any]]]:
    """The log lines of a full run, as emitted; a line with a traceback is marked -1
    (such a run is not given again)."""
    lines: list[list[Any]] = []
    handler = _Capture(lines)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield lines
    finally:
        root.removeHandler(handler)


class _Capture(logging.Handler):
    def __init__(self, lines: list[list[Any]]) -> None:
        super().__init__()
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.lines.append([-1, record.name, ""])
        self.lines.append([record.levelno, record.name, redact.redact(record.getMessage())])
