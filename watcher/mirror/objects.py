"""Reading a mirror's objects: which it holds, and the bytes of its blobs.

Every blob is read through one long-lived `git cat-file --batch` per mirror and process
(`Batch`), shared by everything that reads: one blob (`read`), many at once
(`contents`), and the history walks, each of which asks ahead of its reading (`Blobs`).
Answers are read in the reading thread itself, as they are needed.
"""

from __future__ import annotations

import binascii
import codecs
import logging
import os
import re
import subprocess
from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import IO, TYPE_CHECKING

from watcher.errors import Absent, TooLarge, UpstreamError
from watcher.mirror.git import NO_PROMPT

if TYPE_CHECKING:
    from watcher.mirror.mirrors import Mirror

UNANSWERED = 512  # requests out at once: 512 ids take at most 33 KB of git's 64 KB stdin
PIPE_BYTES = 2**20
CHUNK = 2**20  # bytes of a blob too large to keep read at a time, and dropped
ABSENT_MOST = 64  # blobs set aside as not on the upstream before a run gives up on it
NOT_OURS = re.compile(r"not our ref ([0-9a-f]{40,64})")  # upload-pack lacks that object

log = logging.getLogger("watch")

Answer = bytes | TooLarge | None  # None: git has no such blob


class Presence:
    """Which objects the mirror holds, read from its pack indexes: asking git would fetch."""

    def __init__(self, objects: Path) -> None:
        from gitdb.db.loose import LooseObjectDB
        from gitdb.db.pack import PackedDB

        self.packs = PackedDB(str(objects / "pack"))
        self.loose = LooseObjectDB(str(objects))

    def has(self, blob: str) -> bool:
        binsha = binascii.unhexlify(blob)
        # Packs first: after the first fetch nearly every object is in one, and a loose
        # lookup costs a file system call per object (a long walk asks about thousands).
        return bool(self.packs.has_object(binsha) or self.loose.has_object(binsha))

    def refresh(self) -> None:
        self.packs.update_cache(force=True)


class Asker:
    """One reader's side of a `Batch`: what it asked for and what has arrived for it."""

    def __init__(self) -> None:
        self.pending: set[str] = set()  # asked for, not read yet
        self.arrived: dict[str, Answer] = {}  # read, not used yet
        self.closed = False


class Batch:
    """One `git cat-file --batch` of a mirror, shared by this process's readers. Git answers
    in the order asked; an answer is read when a reader needs it, or one asked after it,
    and kept for the reader that asked. Git inflates the versions asked ahead while the
    walks scan or parse, as many as its widened pipe holds (`_widen`). (A process per walk
    cost 2.6 ms of CPU each: 759 walks at 5,000 codex citations. A reader thread handing
    each answer over made a walk through 1,200 versions 10% slower.)

    At most UNANSWERED requests are out at once: their text then always fits in git's
    stdin, so writing one never waits on git, which may itself be waiting for its answers
    to be read."""

    def __init__(self, path: Path, env: dict[str, str] | None = None) -> None:
        self.pid = os.getpid()  # a forked worker starts its own
        self.process = subprocess.Popen(
            ["git", "-C", str(path), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=None if env is None else {**os.environ, **env, **NO_PROMPT},
        )
        _widen(self.process)
        # Not answered yet, oldest first, with the size above which the bytes are dropped.
        self.asked: deque[tuple[Asker, str, int | None]] = deque()
        self.alive = True

    def ask(self, walk: Asker, blobs: list[str], limit: int | None = None) -> None:
        """Ask for these blobs; one larger than `limit` is answered TooLarge."""
        assert self.process.stdin is not None
        for low in range(0, len(blobs), UNANSWERED):
            chunk = blobs[low : low + UNANSWERED]
            while self.alive and self.asked and len(self.asked) + len(chunk) > UNANSWERED:
                self._answer()  # git gone: the write below fails, as it would have
            walk.pending.update(chunk)
            self.asked.extend((walk, blob, limit) for blob in chunk)
            self.process.stdin.write("".join(f"{b}\n" for b in chunk).encode())
            self.process.stdin.flush()

    def wait(self, walk: Asker, blob: str) -> Answer:
        """The blob's bytes once git has answered for it (None: git has no such blob, or
        stopped): the answers asked before it are read first, for their readers."""
        while blob not in walk.arrived and blob in walk.pending and self.alive:
            self._answer()
        return walk.arrived.pop(blob, None)

    def _answer(self) -> None:
        """Read git's next answer and keep it for the reader that asked (unless it closed)."""
        assert self.process.stdout is not None
        stdout = self.process.stdout
        header = stdout.readline().split()
        if not header:  # git stopped: nothing more will come
            self.alive = False
            return
        walk, blob, limit = self.asked.popleft()
        data: Answer = None
        if len(header) == 3:
            size = int(header[2])
            if limit is not None and size > limit:
                _skip(stdout, size)  # git answers in order: what it sent must be read
                data = TooLarge(size, limit)
            else:
                data = stdout.read(size)
            stdout.read(1)  # the newline after each object
        walk.pending.discard(blob)
        if not walk.closed:
            walk.arrived[blob] = data

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.kill()  # read-only: nothing to finish, and nobody reads what is left
        self.process.wait()


def _skip(stream: IO[bytes], size: int) -> None:
    """Read `size` bytes of `stream` a chunk at a time, keeping none."""
    while size > 0:
        got = len(stream.read(min(size, CHUNK)))
        if not got:
            return
        size -= got


def _widen(process: subprocess.Popen[bytes]) -> None:
    """A larger pipe for git's answers (Linux): git can then inflate a few big versions
    ahead of the reader instead of stopping at the first 64 KB."""
    try:
        import fcntl

        assert process.stdout is not None
        fcntl.fcntl(process.stdout.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except (ImportError, OSError):
        pass


def set_aside(failure: str, wanted: list[str], absent: set[str], repo: str) -> bool:
    """Whether a fetch of `wanted` failed for a blob the upstream does not have (git's `not
    our ref` names it: a copy without its largest blobs, a rewritten history): it is moved
    from `wanted` to `absent`, up to ABSENT_MOST a run, for the fetch to be made again.
    Reading it then raises Absent, for the items that need it alone."""
    lacked = NOT_OURS.search(failure)
    if lacked is None or lacked[1] not in wanted or len(absent) >= ABSENT_MOST:
        return False
    log.debug("%s: the upstream lacks blob %s", repo, lacked[1])  # told once (`Mirror.close`)
    absent.add(lacked[1])
    wanted.remove(lacked[1])
    return True


def tell_absent(absent: set[str], repo: str) -> None:
    """Say once a run which blobs the upstream lacked (`set_aside`), not once a blob: a
    copy without its largest files (the vendored sources of docker/mcp-gateway) lacks
    dozens, and each item that needs one says so itself."""
    if not absent:
        return
    shown = ", ".join(b[:12] for b in sorted(absent)[:3])
    more = "" if len(absent) <= 3 else f" and {len(absent) - 3} more"
    log.warning(
        "%s: the upstream lacks %d blob(s) the run asked for (%s%s): items that read them are "
        "errors, and no move into such a file is seen; is the url in config.toml a copy "
        "without its largest files?", repo, len(absent), shown, more,
    )  # fmt: skip


def read(batch: Batch, blob: str, limit: int, repo: str) -> bytes:
    """One blob's bytes; above `limit`, TooLarge (its bytes read a chunk at a time and
    dropped). One request to git per blob: the size comes with the bytes."""
    asker = Asker()
    batch.ask(asker, [blob], limit)
    data = batch.wait(asker, blob)
    if isinstance(data, TooLarge):
        raise data
    if data is None:
        raise UpstreamError(f"{repo}: cannot read blob {blob}")
    return data


def commit_fields(raw: bytes) -> tuple[str, str, str]:
    """A raw commit object's committer date (ISO 8601, its own offset), author name and
    message, read as git stores them (the `encoding` header names the message's charset)."""
    head, _, body = raw.partition(b"\n\n")
    fields: dict[bytes, bytes] = {}
    for line in head.split(b"\n"):
        if line[:1] != b" ":  # a line starting with a space continues a multi-line header
            key, _, value = line.partition(b" ")
            fields.setdefault(key, value)
    encoding = fields.get(b"encoding", b"utf-8").decode("ascii", "replace")
    try:
        codecs.lookup(encoding)
    except LookupError:
        encoding = "utf-8"
    author = fields.get(b"author", b"").rsplit(b" <", 1)[0]
    stamp, _, zone = fields.get(b"committer", b"> 0 +0000").rsplit(b"> ", 1)[-1].partition(b" ")
    sign = -1 if zone.startswith(b"-") else 1
    hours, minutes = int(zone[1:3] or 0), int(zone[3:5] or 0)
    offset = timezone(sign * timedelta(hours=hours, minutes=minutes))
    date = datetime.fromtimestamp(int(stamp or 0), offset).isoformat()
    return date, author.decode(encoding, "replace"), body.decode(encoding, "replace")


def contents(
    batch: Batch, blobs: Sequence[str], limit: int, chunk: int = 256
) -> Iterator[tuple[str, bytes]]:
    """The bytes of many blobs, asked `chunk` at a time; blobs the mirror lacks and blobs
    above `limit` are left out."""
    asker = Asker()
    for at in range(0, len(blobs), chunk):
        part = blobs[at : at + chunk]
        unique = list(dict.fromkeys(part))
        batch.ask(asker, unique, limit)
        got = {blob: batch.wait(asker, blob) for blob in unique}
        for blob in part:
            data = got[blob]
            if isinstance(data, bytes):
                yield blob, data


class Blobs(Asker):
    """Blob bytes for a walk, through its process's `cat-file` (`Mirror.batch`). Versions
    are asked for ahead of use (`request`) and read as git answers. Holds the last `size`
    versions: a walk in lock-step reads each version once."""

    def __init__(self, mirror: Mirror, size: int) -> None:
        super().__init__()
        self.mirror = mirror
        self.size = size
        self.held: OrderedDict[str, bytes] = OrderedDict()
        self.batch: Batch | None = None
        self.count = 0  # blobs read from git

    def __call__(self, blob: str) -> bytes:
        if blob in self.mirror.absent:
            raise Absent(blob, self.mirror.upstream.repo)
        if blob not in self.held:
            self.request([blob])  # unless asked for already
            assert self.batch is not None
            data = self.batch.wait(self, blob)
            if not isinstance(data, bytes):  # asked with no limit: never TooLarge
                raise UpstreamError(f"{self.mirror.upstream.repo}: cannot read blob {blob}")
            self.count += 1
            self.held[blob] = data
            if len(self.held) > self.size:
                self.held.popitem(last=False)
        self.held.move_to_end(blob)
        return self.held[blob]

    def checked(self, blob: str) -> bytes:
        """A version to parse: above `[limits] file_bytes`, TooLarge, as `Mirror.read`."""
        data, limit = self(blob), self.mirror.limits.file_bytes
        if len(data) > limit:
            raise TooLarge(len(data), limit)
        return data

    def request(self, blobs: Iterable[str]) -> None:
        """Ask git for these blobs now; they are read as git answers. Only blobs the
        mirror holds: in a partial clone, git would fetch a missing one by itself."""
        if self.batch is None:
            self.batch = self.mirror.batch()
        known = {*self.held, *self.pending, *self.arrived, *self.mirror.absent}
        wanted = [b for b in dict.fromkeys(blobs) if b not in known]
        if wanted:
            self.batch.ask(self, wanted)

    def close(self) -> None:
        """Answers still to come for this walk are dropped as they arrive."""
        self.closed = True
        self.arrived.clear()
