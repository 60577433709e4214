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
fetched, or log lines with a traceback (`tell` decides, from what the full run did).

watcher.commands.check is the only way in: it passes a `Request` (the command's options,
typed) here and to the full run; config.toml's defaults come from watcher.defaults.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO, cast

from watcher import defaults, fingerprint, redact
from watcher.errors import UpstreamError, WatchError
from watcher.fingerprint import blake2b, digest
from watcher.inputs import walk
from watcher.state.store import LOCK_NAME, RUNS_DIR, locked
from watcher.state.warm import Book, Stats, Tee, captured, read, replay, store

if TYPE_CHECKING:
    from watcher.config import Config
    from watcher.models import Report
    from watcher.state.runs import Run

PREFIX = "warm-"  # cache/warm-DIGEST.json: one record per config file
log = logging.getLogger("watch")


# Plain classes and tuples, not dataclasses: importing dataclasses (and inspect with
# it) is a measurable part of what this stage exists to save.
class Request(NamedTuple):
    """What `watch check` was asked, as watcher.commands.check passes it to this stage and
    to the full run."""

    config: Path
    upstream: str | None = None
    note: tuple[str, ...] = ()
    rule: tuple[str, ...] = ()
    fmt: str | None = None  # None: table on a terminal, json when piped
    offline: bool = False
    dry_run: bool = False
    no_issues: bool = False
    implicit_upstreams: bool = True
    wait: float = 0.0  # seconds to wait for another run's state lock
    verbosity: int = 0  # -v counted up, -q down
    log_format: str = "text"

    @property
    def replayable(self) -> bool:
        """Filtered, dry or debugging runs are always run in full."""
        return not (self.note or self.rule or self.dry_run or self.verbosity > 0)


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
    file_bytes: int = defaults.FILE_BYTES  # nothing is read from a mirror here


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
    code: str  # this watch as installed (fingerprint.installed)

    @property
    def record(self) -> Path:
        name = digest(str(self.config))[:16]
        return self.cache / f"{PREFIX}{name}.json"


FullRun = Callable[[dict[str, str | None], Book | None, TextIO], int]


def check(request: Request, out: TextIO, full: FullRun, stats: Stats | None = None) -> int:
    """`watch check`: the stored report when nothing changed, else `full` (recorded).

    The state lock is held from the first fingerprint to the record's last write; the
    full run takes it again (the lock is re-entrant within a thread).
    """
    started = time.time()
    site = _site(request, out)
    if site is None:
        return full({}, None, out)
    held = contextlib.ExitStack()
    try:
        held.enter_context(locked(site.state, wait=request.wait))
    except WatchError:  # held by another run: the full run says so, config checked first
        return full({}, None, out)
    with held:
        return _under_lock(site, request.offline, started, Tee(out), full, stats)


def _under_lock(
    site: Site, offline: bool, started: float, tee: Tee, full: FullRun, stats: Stats | None
) -> int:
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
        replayed = replay(record, site.state, started, tee.inner, stats)
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
    store(site.record, book, lines, fingerprint if same else None, seed=seed, stats=stats)
    return code


def _covers(fetched: dict[str, str | None], book: Book) -> bool:
    """The fetch before the run was of every upstream the run checked, and all worked."""
    repos = {u["repo"] for u in book.upstreams}
    return repos == set(fetched) and all(v is None for v in fetched.values())


def tell(
    book: Book, config: Config, request: Request, report: Report, runs: list[tuple[str, Run]]
) -> None:
    """What a full run leaves in `book` for the record: the upstreams it fetched, the run
    records without their times, and whether the report depends on anything but files
    this stage fingerprints (only then may it be given again)."""
    from watcher.config import Upstream

    book.state, book.cache = config.state, config.cache
    book.started_at, book.code = report.started_at, report.exit_code
    fetched = [u for u in report.upstreams if u.url]
    for status in fetched:
        upstream = config.upstream_for(status.repo) or Upstream(repo=status.repo)
        seconds = config.fetch_seconds(upstream)
        stall, url = config.limits.stall_seconds, digest(upstream.fetch_url)
        book.fetched(status.repo, upstream.branch, seconds, stall, url)
    timeless = {"started_at", "finished_at", "duration_s"}
    for repo, run in runs:
        book.recorded(repo, run.model_dump(mode="json", exclude_none=True, exclude=timeless))
    filing = not request.no_issues and config.issues.sink != "none"
    online = not request.offline and any(r.kind == "issue" for r in report.results)
    book.storable = (
        not (report.errors or any(u.error for u in report.upstreams))
        and not (filing and config.issues.sink == "github")  # GitHub's issues are its truth
        and not online  # tracked issues and pull requests are read from GitHub
        and len(runs) == len(fetched)
    )


# --- what a run reads -------------------------------------------------------------


def _site(request: Request, out: TextIO) -> Site | None:
    """The site, when this run may be answered from a record; None runs it in full."""
    if not request.replayable or out.isatty():  # a terminal's table: always in full
        return None
    try:
        config = request.config.resolve()
        raw = tomllib.loads(config.read_text(encoding="utf-8"))
        found = defaults.paths(config.parent, raw)
    except (OSError, ValueError):  # the full run explains what is wrong
        return None
    paths = {k: v for k, v in found.items() if isinstance(v, Path)}
    if len(paths) != len(found):
        return None
    options = [request.fmt or "json", request.offline, request.no_issues,
               not request.implicit_upstreams, request.upstream, request.verbosity,
               request.log_format, str(config), *map(str, paths.values())]  # fmt: skip
    issues = raw.get("issues")
    sink = issues.get("sink", defaults.SINK) if isinstance(issues, dict) else defaults.SINK
    filing = sink != "none" and not request.no_issues
    return Site(config, raw, options=json.dumps(options), filing=filing,
                code=fingerprint.installed(), **paths)  # fmt: skip


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
    token = os.environ.get(str(issues.get("token_env", defaults.TOKEN_ENV)), "")
    found = {"site": digest(site.options, site.config.read_bytes(), site.code)}
    for key, folder, suffix, skip in (
        ("notes", site.notes, ".md", ()),
        ("rules", site.rules, ".toml", ()),
        ("state", site.state, "", (RUNS_DIR, LOCK_NAME)),
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


def _listed(folder: Path, suffix: str, skip: tuple[str, ...]) -> Listed:
    """Every file below `folder` whose name ends with `suffix`, in order, with its name
    below it and what `stat` tells of its bytes having changed: the files the loaders
    read, found by the same walk (watcher.inputs.walk: no link to a folder followed, no
    loop, any name)."""
    return [
        (f.path, f.name, (f.info.st_size, f.info.st_ino, f.info.st_mtime_ns, f.info.st_ctime_ns))
        for f in walk.files(folder, suffix, skip)
    ]


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
        hashed.update(os.fsencode(name) + f"\0{size}\0".encode())  # a name in any encoding
        read = 0
        while chunk := handle.read(CHUNK):
            hashed.update(chunk)
            read += len(chunk)
    if read != size:  # changed while read: the size told must be the bytes hashed
        raise OSError(f"{file}: changed while read")


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
        url = defaults.fetch_url(repo, str(table.get("url") or ""))
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
