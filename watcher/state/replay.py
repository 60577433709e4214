"""`watch check` when nothing changed: the last run's report again, decided before the
models are imported (make's up-to-date check).

Importing pydantic and building the models costs a warm run several times Python's own
start, so this stage runs first and imports neither. A run that may be recorded leaves,
next to the mirrors (`cache/warm-*.json`, a fact about this machine like `notes.json`), a
fingerprint of everything it read, its report as printed, its exit code, its log lines
and what it recorded in `state/runs/`. The next `watch check` with the same options
takes the state lock, fetches the same upstreams (as every check does) and fingerprints
its inputs again: the config file, every note and rule file, every file of `state/`
but the run record, each mirror's refs after the fetch, the options, the watch code and
the installed packages, the issue token, and the date when issues are filed (snoozes
end on a date). If all are the same it prints the stored report (with its own start
time), records itself in `state/runs/` and exits with the stored code; anything else
runs the whole check, which reuses the fetch. What is stored and how it is given again
is watcher.state.warm.

A fingerprint is stored only by a run that changed nothing it reads: `state/` (the run
record aside) is the same before and after it, and so are the inputs, so a run with the
same fingerprint would do and print the same. Every part is taken before the run reads
it, so whatever changes during a run shows up as a different fingerprint next time.
Nothing is stored when a run depends on more than these files: a GitHub issue sink, a
tracked GitHub issue or pull request read online, an upstream that could not be
fetched, or log lines with a traceback.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple, TextIO, cast

from watcher import redact
from watcher.errors import UpstreamError, WatchError
from watcher.state import store as state
from watcher.state.warm import Book, Tee, captured, read, replay, store

try:  # blake2b without hashlib, whose OpenSSL costs a warm run more than hashing does
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - another Python
    from hashlib import blake2b

PREFIX = "warm-"  # cache/warm-DIGEST.json: one record per config file
log = logging.getLogger("watch")


# Plain classes and tuples, not dataclasses: importing dataclasses (and inspect with
# it) is a measurable part of what this stage exists to save.
class Source(NamedTuple):
    """What a mirror reads of an [[upstream]] (watcher.config.Upstream, without pydantic)."""

    repo: str
    fetch_url: str
    branch: str
    fetch_seconds: float | None

    @property
    def display_url(self) -> str:
        return redact.strip_userinfo(self.fetch_url)


class Bounds(NamedTuple):
    """The limits a fetch obeys (watcher.config.Limits, without pydantic)."""

    fetch_seconds: float
    stall_seconds: int
    file_bytes: int = 10_000_000  # nothing is read from a mirror here


class Site(NamedTuple):
    """The paths a run reads, resolved from config.toml as watcher.config resolves them."""

    config: Path
    raw: dict[str, Any]
    notes: Path
    rules: Path
    state: Path
    cache: Path
    options: str  # the options that change what a run does or prints
    filing: bool  # issues are filed: snoozes are compared with today's date

    @property
    def record(self) -> Path:
        name = digest(str(self.config))[:16]
        return self.cache / f"{PREFIX}{name}.json"


FullRun = Callable[[dict[str, str | None], Book | None, TextIO], int]


def check(args: Any, out: TextIO, full: FullRun) -> int:
    """`watch check`: the stored report when nothing changed, else `full` (recorded).

    The state lock is held from the first fingerprint to the record's last write; the
    full run takes it again (the lock is re-entrant within a thread).
    """
    started = time.time()
    site = _site(args, out)
    if site is None:
        return full({}, None, out)
    held = contextlib.ExitStack()
    try:
        held.enter_context(state.locked(site.state, wait=args.wait))
    except WatchError:  # held by another run: the full run says so, config checked first
        return full({}, None, out)
    with held:
        return _under_lock(site, args.offline, started, Tee(out), full)


def _under_lock(site: Site, offline: bool, started: float, tee: Tee, full: FullRun) -> int:
    record = read(site.record)
    listings: Listings = {}
    try:
        before = _local(site, listings)
    except OSError:  # a file that cannot be read: the full run says which
        return full({}, None, tee.inner)
    upstreams = record.get("upstreams") if record.get("site") == before["site"] else None
    fetched, refs = _sync(site, upstreams if isinstance(upstreams, list) else [], offline)
    fingerprint = {**before, "refs": refs}
    if record.get("fingerprint") == fingerprint and not any(fetched.values()):
        replayed = replay(record, site.state, started, tee.inner)
        if replayed is not None:
            return replayed
    book = Book()
    with captured() as lines:
        code = full(fetched, book, cast(TextIO, tee))
    if book.state != site.state or book.cache != site.cache:
        return code  # resolved otherwise than watcher.config does: never answer for it
    try:
        after = {**_local(site, listings), "refs": _refs(site, book.upstreams)}
    except OSError:
        return code
    same = after == fingerprint and _covers(fetched, book)
    book.output = tee.parts
    seed = after["site"] if after["site"] == before["site"] else None
    store(site.record, book, lines, fingerprint if same else None, seed=seed)
    return code


def _covers(fetched: dict[str, str | None], book: Book) -> bool:
    """The fetch before the run was of every upstream the run checked, and all worked."""
    repos = {u["repo"] for u in book.upstreams}
    return repos == set(fetched) and all(v is None for v in fetched.values())


# --- what a run reads -------------------------------------------------------------


def _site(args: Any, out: TextIO) -> Site | None:
    """The site, when this run may be answered from a record; None runs it in full."""
    if args.note or args.rule or args.dry_run or args.verbose > args.quiet or out.isatty():
        return None  # filtered, dry, debugging, or a terminal's table: always in full
    try:
        config = args.config.resolve()
        raw = tomllib.loads(config.read_text(encoding="utf-8"))
        root = config.parent
        paths = {k: _path(root, raw.get(k, k)) for k in ("notes", "rules", "state")}
        cache = _path(root, raw["cache"]) if "cache" in raw else _default_cache()
    except (OSError, ValueError, TypeError):  # the full run explains what is wrong
        return None
    options = [args.format or "json", args.offline, args.no_issues, args.no_implicit_upstreams,
               args.upstream, args.verbose - args.quiet, args.log_format, str(config),
               *map(str, (*paths.values(), cache))]  # fmt: skip
    issues = raw.get("issues")
    sink = issues.get("sink", "none") if isinstance(issues, dict) else "none"
    filing = sink != "none" and not args.no_issues
    return Site(config, raw, cache=cache, options=json.dumps(options), filing=filing, **paths)


def _path(root: Path, value: object) -> Path:
    if not isinstance(value, str):
        raise TypeError(value)
    return (root / Path(value).expanduser()).resolve()


def _default_cache() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("watch", appauthor=False)) / "mirrors"


# A folder's files as `_listed` finds them: (path, name below the folder, what `stat`
# tells of its bytes having changed); and, by fingerprint key, a folder's listing and
# its digest.
Listed = list[tuple[str, str, tuple[int, ...]]]
Listings = dict[str, tuple[Listed, str]]


def _local(site: Site, listings: Listings) -> dict[str, str]:
    """Digests of everything a run reads but the mirrors. Each folder's files are
    read unless `listings` has them as they are on disk now (the same files, each with
    the same size, inode and modification and change times): after a run that wrote
    none of them, their digest is the one taken before it (12 MB of state at 5,000
    citations, and 500 notes and issue files, not read twice)."""
    issues = site.raw.get("issues", {})
    issues = issues if isinstance(issues, dict) else {}
    token = os.environ.get(str(issues.get("token_env", "GITHUB_TOKEN")), "")
    found = {"site": digest(site.options, site.config.read_bytes(), _code())}
    for key, folder, suffix, skip in (
        ("notes", site.notes, ".md", ()),
        ("rules", site.rules, ".toml", ()),
        ("state", site.state, "", (state.RUNS_DIR, state.LOCK_NAME)),
    ):
        files = _listed(folder, suffix, skip)
        known = listings.get(key)
        if known is None or known[0] != files:
            listings[key] = (files, _digest(files))
        found[key] = listings[key][1]
    found["env"] = digest(token, today() if site.filing else "")
    return found


def today() -> str:
    """The UTC date, as the issue sync compares snoozes with it."""
    return time.strftime("%Y-%m-%d", time.gmtime())


def digest(*parts: str | bytes) -> str:
    hashed = blake2b(digest_size=32)
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        hashed.update(len(data).to_bytes(8, "big") + data)
    return hashed.hexdigest()


def _listed(folder: Path, suffix: str, skip: tuple[str, ...]) -> Listed:
    """Every file below `folder` whose name ends with `suffix`, in order, with its name
    below it and what `stat` tells of its bytes having changed: a superset of what the
    loaders' `rglob` reads (links to folders followed, as it does)."""
    found: Listed = []
    root = str(folder)
    for top, dirs, names in os.walk(root, followlinks=True):
        dirs.sort()
        where = os.path.relpath(top, root)
        if where.split(os.sep)[0] in skip:
            dirs.clear()
            continue
        for name in sorted(names):
            if not name.endswith(suffix) or (where == "." and name in skip):
                continue
            file = os.path.join(top, name)
            with contextlib.suppress(OSError):  # as `os.path.isfile`: not a file then
                info = os.stat(file)
                if stat.S_ISREG(info.st_mode):  # as the loaders: no folder, pipe or socket
                    changed = (info.st_size, info.st_ino, info.st_mtime_ns, info.st_ctime_ns)
                    found.append((file, f"{where}/{name}", changed))
    return found


def _digest(files: Listed) -> str:
    """The names and bytes of these files."""
    hashed = blake2b(digest_size=32)
    for file, name, _ in files:
        _hash_file(hashed, file, name)
    return hashed.hexdigest()


CHUNK = 2**20  # bytes of a file hashed at a time


def _hash_file(hashed: Any, file: str, name: str) -> None:
    """Hash `NAME\0SIZE\0` and then the file's bytes, a chunk at a time: a big site's
    state file (12 MB at 5,000 citations) was read whole and copied once more, at the
    end of the run, when memory peaks."""
    with open(file, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        hashed.update(f"{name}\0{size}\0".encode())
        read = 0
        while chunk := handle.read(CHUNK):
            hashed.update(chunk)
            read += len(chunk)
    if read != size:  # changed while read: the size told must be the bytes hashed
        raise OSError(f"{file}: changed while read")


_CODE: list[str] = []


def _code() -> str:
    """This watch's own files (by name, size and modification time: installing or
    checking out another version rewrites them), Python, and the installed packages'
    versions (their metadata folders are named by version)."""
    if not _CODE:
        files = []
        for folder, dirs, names in os.walk(Path(__file__).parent.parent):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(names):
                info = os.stat(os.path.join(folder, name))
                files.append(f"{folder}/{name} {info.st_size} {info.st_mtime_ns}")
        installed = [
            name
            for entry in sys.path
            if os.path.isdir(entry)
            for name in sorted(os.listdir(entry))
            if name.endswith((".dist-info", ".egg-info", ".pth"))
        ]
        _CODE.append(digest(sys.version, sys.executable, *files, *installed))
    return _CODE[0]


# --- the mirrors ------------------------------------------------------------------


def _sync(
    site: Site, upstreams: list[dict[str, Any]], offline: bool
) -> tuple[dict[str, str | None], dict[str, str]]:
    """Fetch (or, offline, check) the mirrors the last run used: repo -> its error or
    None, and repo -> its refs after the fetch."""
    from watcher.mirror.mirrors import Mirror

    fetched: dict[str, str | None] = {}
    refs: dict[str, str] = {}
    for entry in upstreams:
        source = _source(site, entry)
        if source is None:
            continue
        mirror = Mirror(source, site.cache, Bounds(entry["fetch_seconds"], entry["stall_seconds"]))
        try:
            mirror.check_health() if offline else mirror.sync()
            fetched[source.repo] = None
        except UpstreamError as exc:
            fetched[source.repo] = str(exc)
        finally:
            mirror.close()
        refs[source.repo] = _mirror_refs(mirror.path, mirror.refs)
    return fetched, refs


def _source(site: Site, entry: dict[str, Any]) -> Source | None:
    """The upstream as the last run fetched it: its URL is read from config.toml again
    (a URL may hold a password: the record keeps only a digest of it)."""
    try:
        repo = str(entry["repo"])
        tables = site.raw.get("upstream", [])
        table: dict[str, Any] = next(
            (t for t in tables if str(t.get("repo", "")).lower() == repo.lower()), {}
        )
        url = str(table.get("url") or f"https://github.com/{repo}.git")
        source = Source(repo, url, str(entry["branch"]), float(entry["fetch_seconds"]))
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return source if digest(url) == entry.get("url") else None


def _refs(site: Site, upstreams: list[dict[str, Any]]) -> dict[str, str]:
    """The refs of the mirrors a run used, as they are now (no fetch)."""
    return {u["repo"]: _mirror_refs(_mirror_path(site, u["repo"]), None) for u in upstreams}


def _mirror_path(site: Site, repo: str) -> Path:
    from watcher.mirror.clone import mirror_path

    return mirror_path(site.cache, repo)


def _mirror_refs(path: Path, refs: tuple[tuple[str, bytes], ...] | None) -> str:
    """The refs as stored (a fetch that brought nothing leaves them byte for byte; `refs`
    when the fetch read them already), and the mirror's config (its default branch, its
    URL) and HEAD."""
    from watcher.mirror.clone import stored_refs

    found = stored_refs(path) if refs is None else refs
    files = [f"{name}\0".encode() + data for name, data in found]
    return digest(*files, *(_bytes(path / name) for name in MIRROR_FILES))


MIRROR_FILES = ("config", "HEAD")


def _bytes(file: Path) -> bytes:
    try:
        return file.read_bytes()
    except FileNotFoundError:
        return b"\0absent"
