"""What the last runs saw (SPEC 7): plain JSON, sorted, written atomically under one lock."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from watcher.errors import LockedError, WatchError
from watcher.redact import redact

LOCK_NAME = ".lock"


@contextlib.contextmanager
def locked(state_dir: Path, *, wait: float = 0) -> Iterator[None]:
    """Hold the state lock that `watch check` and `watch serve` jobs share.

    `wait` is how many seconds to wait for another run to finish; 0 fails at once.
    """
    from filelock import FileLock, Timeout

    state_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(state_dir / LOCK_NAME)
    try:
        lock.acquire(timeout=wait)
    except Timeout:
        raise LockedError(
            f"{state_dir}: another watch run holds the state lock ({LOCK_NAME}); "
            "wait for it to finish, or pass --wait SECONDS"
        ) from None
    try:
        yield
    finally:
        lock.release()


def read_json(path: Path) -> dict[str, Any]:
    """A state file's content; `{}` when absent. A corrupt file is an error, never ignored."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise WatchError(
            f"{path}:{exc.lineno}: state file is not valid JSON ({exc.msg}); "
            "delete it to start afresh (this only costs repeated work)"
        ) from None
    if not isinstance(data, dict):
        raise WatchError(f"{path}: state file must hold a JSON object; delete it to start afresh")
    return data


def dumps(data: dict[str, Any]) -> str:
    """A state document as text: sorted keys, one entry of each top-level object per line.

    `indent` would force json's pure-Python encoder (a quarter of a warm run on a big
    site); without it the C encoder writes each entry, and the layout is made here. One
    item per line keeps diffs of a committed state/ to the items that changed, and the
    same data always gives the same bytes.
    """
    encode = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode
    lines = []
    for key in sorted(data):
        value = data[key]
        if isinstance(value, dict) and value:
            inner = ",\n".join(f"    {encode(k)}: {encode(value[k])}" for k in sorted(value))
            lines.append(f"  {encode(key)}: {{\n{inner}\n  }}")
        else:
            lines.append(f"  {encode(key)}: {encode(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n" if lines else "{}\n"


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write `dumps(data)` via a temp file and os.replace: never half-written."""
    write_text(path, dumps(data))


def write_text(path: Path, text: str) -> None:
    """Write a state file atomically; secrets are redacted first (nothing in state is one)."""
    text = redact(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def upstream_file(state_dir: Path, repo: str) -> Path:
    """The state file of one upstream: `state/OWNER__NAME.json`."""
    return state_dir / (repo.replace("/", "__") + ".json")
