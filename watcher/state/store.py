"""What the last runs saw (SPEC 7): plain JSON, sorted, written atomically under one lock.

Layout, sharded so that runs checking different upstreams never write the same file:

- `OWNER__NAME.json`: what the last check of that upstream saw (head, tags, items;
  `watcher.state.upstream`);
- `bookkeeping/OWNER__NAME.json`: the issues of the notes that upstream owns, each
  note's last status, and the upstream's last run-level failure (the dashboard is
  rebuilt from these shards, never merged as text; `watcher.state.bookkeeping`);
- `runs/OWNER__NAME.json`: the last run of that upstream (`watch status`), and
  `runs/_serve.json` while `watch serve` runs;
- `issues/`: the issue documents of the `files` sink.

A run writes a file only when its content changed, so a run with no news writes nothing.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from itertools import count
from pathlib import Path
from typing import Any

from watcher.errors import LockedError, WatchError
from watcher.redact import redact

LOCK_NAME = ".lock"
log = logging.getLogger("watch")
BOOK_DIR = "bookkeeping"
RUNS_DIR = "runs"
HOME = "_site"  # the shard of notes that cite no upstream, when no upstream is configured
_TEMPS = count()


@contextlib.contextmanager
def locked(state_dir: Path, *, wait: float = 0) -> Iterator[None]:
    """Hold the state lock that `watch check` and `watch serve` jobs share.

    `wait` is how many seconds to wait for another run to finish; 0 fails at once.
    Re-entrant within a thread: `watch check` holds it while it decides whether anything
    changed (watcher.state.replay) and, when something did, through the whole run inside.
    """
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        release = hold(state_dir / LOCK_NAME, wait=wait)
    except TimeoutError:
        raise LockedError(
            f"{state_dir}: another watch run holds the state lock ({LOCK_NAME}); "
            "wait for it to finish, or pass --wait SECONDS"
        ) from None
    except OSError as exc:
        raise _lock_error(state_dir, exc) from None
    try:
        yield
    finally:
        release()


def _lock_error(state_dir: Path, exc: OSError) -> WatchError:
    """What is wrong when the state lock cannot be taken: the folder, or the lock file."""
    lock = state_dir / LOCK_NAME
    if state_dir.is_dir() and (lock.is_dir() or lock.is_symlink()):
        what = "a folder" if lock.is_dir() else "a link"
        return WatchError(
            f"{lock}: {what} where the state lock file belongs; remove it (watch makes the "
            "lock file itself)"
        )
    if state_dir.exists() and not state_dir.is_dir():
        return WatchError(
            f"{state_dir}: a file where the state folder belongs; move it away, or set "
            "`state` in config.toml to a folder"
        )
    return WatchError(
        f"{state_dir}: cannot create or lock the state folder ({exc.strerror}); "
        "set `state` in config.toml to a writable folder"
    )


_HELD = threading.local()  # lock file -> how many holders in this thread


def hold(path: Path, *, wait: float) -> Callable[[], None]:
    """Take an exclusive `flock` on `path` (created if absent), as filelock's FileLock
    takes it on Unix; TimeoutError after `wait` seconds. Returns the release. Re-entrant
    within a thread; other threads and processes wait. Plain fcntl: importing filelock
    costs a warm run more than everything else it does before printing."""
    import fcntl

    held: dict[str, int] = _HELD.__dict__.setdefault("held", {})
    key = os.path.abspath(path)
    if key in held:
        held[key] += 1
        return lambda: held.__setitem__(key, held[key] - 1)
    fd = _flock(key, wait)
    held[key] = 1

    def release() -> None:
        if held[key] == 1:
            del held[key]
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        else:
            held[key] -= 1

    return release


def _flock(path: str, wait: float) -> int:
    """A descriptor of `path` holding its lock; a lock file replaced meanwhile is locked anew."""
    import errno
    import fcntl
    import time

    deadline = time.monotonic() + wait
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)  # never a link
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise  # not held by another: flock itself failed
            if time.monotonic() >= deadline:
                raise TimeoutError(path) from None
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
            continue
        with contextlib.suppress(FileNotFoundError):
            if os.path.samestat(os.fstat(fd), os.stat(path)):
                return fd
        os.close(fd)  # deleted or replaced while we waited: that inode locks nothing


def read_json(path: Path) -> dict[str, Any]:
    """A state file's content; `{}` when absent.

    A corrupt file (merge-conflict markers, random bytes, not an object) is set aside as
    `NAME.corrupt-TIMESTAMP` with a warning, and the run starts that file afresh: state
    is a cache of what runs saw, and issues are found again by their marker.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except IsADirectoryError:
        return _set_aside(path, "a folder where a state file belongs")
    except OSError as exc:
        raise WatchError(
            f"{path}: cannot read this state file ({exc.strerror}); "
            "fix its permissions, or move it away"
        ) from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return _set_aside(path, f"not UTF-8 (byte {exc.start})")
    except json.JSONDecodeError as exc:
        return _set_aside(path, f"not valid JSON at line {exc.lineno} ({exc.msg})")
    except RecursionError:  # json's C decoder gives up on ~100,000 nested arrays
        return _set_aside(path, "JSON nested too deep to be state")
    if not isinstance(data, dict):
        return _set_aside(path, "not a JSON object")
    return data


def dumps(data: dict[str, Any]) -> str:
    """A state document as text: sorted keys, one entry of each top-level object per line.

    `indent` would force json's pure-Python encoder (a quarter of a warm run on a big
    site); without it the C encoder writes each entry, and the layout is made here. One
    item per line keeps diffs of a committed state/ to the items that changed, and the
    same data always gives the same bytes.
    """
    return "".join(pieces(data))


def pieces(data: dict[str, Any]) -> Iterator[str]:
    """The text of `dumps(data)`, one entry at a time (each with the separator before it),
    so that a big document is written without ever being one string: at 5,000 items the
    text alone is tens of MB (two bytes a character once one is outside Latin-1)."""
    if not data:
        yield "{}\n"
        return
    encode = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode
    for n, key in enumerate(sorted(data)):
        start = ",\n  " if n else "{\n  "
        value = data[key]
        if isinstance(value, dict) and value:
            yield f"{start}{encode(key)}: {{\n"
            for m, inner in enumerate(sorted(value)):
                yield (",\n    " if m else "    ") + f"{encode(inner)}: {encode(value[inner])}"
            yield "\n  }"
        else:
            yield f"{start}{encode(key)}: {encode(value)}"
    yield "\n}\n"


def set_aside(path: Path, why: str) -> None:
    """Rename a damaged state file to `NAME.corrupt-TIMESTAMP` and say so."""
    from datetime import UTC, datetime

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    try:
        os.replace(path, aside)
    except OSError as exc:
        raise WatchError(
            f"{path}: state file is damaged ({why}) and cannot be moved away "
            f"({exc.strerror}); delete it to start afresh"
        ) from None
    log.warning(
        "%s: state file is damaged (%s); set aside as %s and started afresh "
        "(this costs repeated work, never a duplicate issue)",
        path,
        why,
        aside.name,
    )


def _set_aside(path: Path, why: str) -> dict[str, Any]:
    set_aside(path, why)
    return {}


def remove_leftovers(state_dir: Path) -> list[Path]:
    """Delete the temp files a killed run left (`.NAME.*.tmp`); call it holding the lock.

    They are never the truth (a write is a temp file, then a rename), and a GitHub Action
    that commits `state/` would otherwise commit them.
    """
    removed = []
    for tmp in state_dir.rglob(".*.tmp") if state_dir.is_dir() else []:
        if tmp.is_file():
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
                removed.append(tmp)
    if removed:
        log.info("state: removed %d temp files a killed run left", len(removed))
    return removed


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write `dumps(data)` via a temp file and os.replace: never half-written."""
    write_text(path, pieces(data))


def update_json(path: Path, data: dict[str, Any], known: dict[str, Any] | None = None) -> bool:
    """Write `data` only when the file does not already hold exactly it; True if written.

    `known` is what the caller read from the file under the same lock: when it equals
    `data`, nothing is encoded or read again (a warm run on a big site skips both).
    The text is compared and written piece by piece, never held whole.
    """
    if known is not None and known == data:
        return False
    if _holds(path, pieces(data)):
        return False
    write_text(path, pieces(data))
    return True


def _holds(path: Path, text: Iterable[str]) -> bool:
    """Whether the file's bytes are exactly these pieces' (read as far as they agree)."""
    try:
        with path.open("rb") as handle:
            for piece in text:
                expected = piece.encode()
                if handle.read(len(expected)) != expected:
                    return False
            return handle.read(1) == b""
    except OSError:  # absent or unreadable: written (and a write says why it fails)
        return False


def write_text(path: Path, text: str | Iterable[str]) -> None:
    """Write a state file atomically, from one text or its pieces (written as they come,
    never joined); secrets are redacted first (nothing in state is one). Each piece is
    redacted alone: pieces are whole JSON entries or lines, which no secret spans."""
    try:
        _make_folder(path.parent)
        tmp, fd = _temp(path)
    except OSError as exc:
        raise WatchError(
            f"{path.parent}: cannot write state here ({exc.strerror}); "
            "set `state` in config.toml to a writable folder"
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for piece in [text] if isinstance(text, str) else text:
                handle.write(redact(piece))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError):  # disk full, read-only file system
            raise WatchError(
                f"{path}: cannot write state ({exc.strerror}); free space or fix permissions; "
                "the previous version is intact"
            ) from None
        raise


def _make_folder(folder: Path) -> None:
    """Make the folder a state file goes in; a file in its place (`state/runs` written by
    hand, say) is set aside like a damaged state file, and the folder made."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        if folder.is_dir() or not folder.is_file() or folder.is_symlink():
            raise
        set_aside(folder, "a file where a folder of state belongs")
        folder.mkdir()


def _temp(path: Path) -> tuple[str, int]:
    """A new `.NAME.*.tmp` beside `path` (as remove_leftovers knows them), created
    exclusively; named by hand, not by tempfile, whose imports cost a warm run."""
    while True:
        tmp = str(path.parent / f".{path.name}.{os.getpid()}-{next(_TEMPS)}.tmp")
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # a killed process's, of the same pid: take the next
            continue


def slug(repo: str) -> str:
    """`OWNER/NAME` as a file name: `OWNER__NAME`; also a cache key in workflows."""
    return repo.replace("/", "__")


def upstream_file(state_dir: Path, repo: str) -> Path:
    """The state file of one upstream: `state/OWNER__NAME.json`."""
    return state_dir / (slug(repo) + ".json")


def shards(folder: Path) -> dict[str, Path]:
    """Every `*.json` shard in a state folder, by name without `.json`."""
    if not folder.is_dir():
        return {}
    return {p.stem: p for p in sorted(folder.glob("*.json")) if not p.name.startswith(".")}
