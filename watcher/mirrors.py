"""Bare, blobless mirrors of upstream repositories, read by object id (never a work tree).

One mirror per upstream in the cache directory. Commits and trees come with the
clone; blobs are fetched on demand, in one batch per request, then read through the
long-lived `git cat-file --batch` process that GitPython keeps.
"""

from __future__ import annotations

import binascii
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from watcher.errors import UpstreamError

if TYPE_CHECKING:
    from git import Repo

    from watcher.config import Upstream

# A file:// upstream is served by a local upload-pack, which refuses partial clone
# unless told otherwise; GitHub allows it. This makes local upstreams behave like it.
LOCAL_UPLOAD_PACK = (
    "git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true upload-pack"
)
FULL_SHA = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class Change:
    """One first-parent commit that touched a followed file, and the file's blob after it."""

    commit: str
    path: str
    blob: str | None  # None when the commit deleted the file


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    date: str
    author: str
    summary: str
    message: str


def fetch_url(url: str) -> tuple[str, bool]:
    """The URL git is given, and whether it is local (a path or file://)."""
    if url.startswith("file://"):
        return url, True
    if "://" in url or re.match(r"^[\w.-]+@[\w.-]+:", url):
        return url, False
    return Path(url).expanduser().resolve().as_uri(), True


class Mirror:
    """A bare partial clone of one upstream, with counters for the cost model."""

    def __init__(self, upstream: Upstream, cache: Path) -> None:
        self.upstream = upstream
        self.url, self.local = fetch_url(upstream.fetch_url)
        self.path = cache / (upstream.repo.replace("/", "__") + ".git")
        self.round_trips = 0
        self.blobs_fetched = 0
        self._repo: Repo | None = None
        self._presence: _Presence | None = None
        self._info: dict[str, CommitInfo] = {}
        self._resolved: dict[str, str | None] = {}
        self._trees: dict[str, dict[str, str]] = {}

    # --- setup and fetch ----------------------------------------------------------

    @property
    def exists(self) -> bool:
        return (self.path / "HEAD").is_file()

    def sync(self) -> None:
        """Create the mirror, or fetch the branch and tags into it (one round trip)."""
        if not self.exists:
            self._create()
        elif _git(self.path, "config", "--get", "remote.origin.url").strip() != self.url:
            _git(self.path, "config", "remote.origin.url", self.url)  # config.toml changed
            if self.local:
                _git(self.path, "config", "remote.origin.uploadpack", LOCAL_UPLOAD_PACK)
        self._fetch_refs()

    def _create(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Build in a temp folder and rename: a failed first clone leaves nothing behind.
        tmp = Path(tempfile.mkdtemp(prefix=self.path.name + ".", dir=self.path.parent))
        try:
            _git(None, "init", "--quiet", "--bare", str(tmp))
            settings = {
                "core.repositoryformatversion": "1",
                "extensions.partialClone": "origin",
                "remote.origin.url": self.url,
                "remote.origin.promisor": "true",
                "remote.origin.partialclonefilter": "blob:none",
                "gc.auto": "0",
            }
            if self.local:
                settings["remote.origin.uploadpack"] = LOCAL_UPLOAD_PACK
            for key, value in settings.items():
                _git(tmp, "config", key, value)
            os.replace(tmp, self.path)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def _fetch_refs(self) -> None:
        branch = self.upstream.branch
        self.round_trips += 1
        try:
            _git(
                self.path,
                "fetch",
                "--quiet",
                "--prune",
                "--force",
                "--filter=blob:none",
                "--no-write-fetch-head",
                "--no-auto-gc",
                "origin",
                f"+refs/heads/{branch}:refs/heads/{branch}",
                "+refs/tags/*:refs/tags/*",
            )
        except UpstreamError as exc:
            raise UpstreamError(
                f"{self.upstream.repo}: cannot fetch branch {branch!r} from {self.url}: {exc}; "
                "check the url and branch in config.toml, or run with --offline"
            ) from None
        self._reset()

    def _reset(self) -> None:
        if self._repo is not None:
            self._repo.close()
        self._repo = None
        self._presence = None
        self._resolved = {}  # refs move with a fetch; trees by commit id never change

    # --- reading ------------------------------------------------------------------

    @property
    def repo(self) -> Repo:
        if self._repo is None:
            from git import Repo

            self._require()
            self._repo = Repo(self.path)
        return self._repo

    def _require(self) -> None:
        if not self.exists:
            raise UpstreamError(
                f"{self.upstream.repo}: no mirror at {self.path}; run `watch sync` "
                "(or drop --offline)"
            )

    def head(self) -> str:
        """The commit at the tip of the watched branch."""
        sha = self.resolve(f"refs/heads/{self.upstream.branch}")
        if sha is None:
            raise UpstreamError(
                f"{self.upstream.repo}: branch {self.upstream.branch!r} not in the mirror; "
                "check `branch` in config.toml"
            )
        return sha

    def resolve(self, rev: str) -> str | None:
        """The full id of a commit (abbreviations allowed), or None when unknown here."""
        if rev not in self._resolved:
            self._resolved[rev] = self._resolve(rev)
        return self._resolved[rev]

    def _resolve(self, rev: str) -> str | None:
        # Plain git, not GitPython: a warm run reads only refs and trees, and importing
        # GitPython would cost it more than the reads themselves.
        self._require()
        try:
            return _git(self.path, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip()
        except UpstreamError:
            return None

    def resolve_or_fetch(self, rev: str, *, offline: bool) -> str | None:
        """Like resolve, but fetch a full commit id that is not on the branch (e.g. a PR head)."""
        found = self.resolve(rev)
        if found is None and not offline and FULL_SHA.match(rev):
            self.round_trips += 1
            try:
                _git(
                    self.path,
                    "fetch",
                    "--quiet",
                    "--filter=blob:none",
                    "--no-write-fetch-head",
                    "origin",
                    rev,
                )
            except UpstreamError:
                return None
            self._reset()
            found = self.resolve(rev)
        return found

    def commits_like(self, prefix: str) -> list[str]:
        """Every commit whose id starts with `prefix` (more than one: it is ambiguous)."""
        from git import GitCommandError

        try:
            out = str(self.repo.git.rev_parse(f"--disambiguate={prefix}"))
        except GitCommandError:
            return []
        return [o for o in out.split() if self.repo.git.cat_file("-t", o).strip() == "commit"]

    def blob_id(self, commit: str, path: str) -> str | None:
        """The blob of `path` at `commit`, from the trees alone (no blob is fetched)."""
        # One `ls-tree -r` per commit serves every item: 200 items cost 2 processes, not
        # 400 Python walks of tree objects.
        if commit not in self._trees:
            self._trees[commit] = self.files(commit, ("",))
        return self._trees[commit].get(path)

    def read(self, blob: str) -> bytes:
        """A blob's bytes; call `prefetch` first so that this never waits on the network."""
        self.prefetch([blob])
        data: bytes = self.repo.odb.stream(binascii.unhexlify(blob)).read()
        return data

    def prefetch(self, blobs: Iterable[str]) -> None:
        """Fetch every missing blob of `blobs` in one round trip."""
        wanted = set(blobs)
        if not wanted:
            return  # a warm run asks for nothing: no pack index is read
        presence = self._presence or _Presence(self.path / "objects")
        self._presence = presence
        missing = sorted(b for b in wanted if not presence.has(b))
        if not missing:
            return
        self.round_trips += 1
        self.blobs_fetched += len(missing)
        # Sending no "have" lines matters: a server with reachability bitmaps leaves out
        # every object reachable from what the client has, blobs of a partial clone included.
        _git(
            self.path,
            "-c",
            "fetch.negotiationAlgorithm=noop",
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--recurse-submodules=no",
            "--filter=blob:none",
            "--stdin",
            "origin",
            stdin="\n".join(missing) + "\n",
        )
        presence.refresh()

    def files(self, commit: str, suffixes: Sequence[str]) -> dict[str, str]:
        """Every file at `commit` with one of the suffixes: path -> blob id."""
        self._require()
        out = _git(self.path, "ls-tree", "-r", "-z", "--full-tree", commit)
        files = {}
        for entry in out.split("\0"):
            meta, _, path = entry.partition("\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob" and path.endswith(tuple(suffixes)):
                files[path] = parts[2]
        return files

    def renamed(self, base: str, head: str, path: str) -> list[str]:
        """Where `path` at `base` went by `head`: renames or copies git detects, best first."""
        added = self.repo.git.diff("--name-only", "--diff-filter=A", "--no-renames", base, head)
        suffix = Path(path).suffix
        candidates = [p for p in added.splitlines() if p.endswith(suffix)]
        if not candidates:
            return []
        out = self.repo.git.diff(
            "--name-status", "-M", "-C", "--diff-filter=RC", base, head, "--", path, *candidates
        )
        moves = []
        for line in out.splitlines():
            status, old, new = ([*line.split("\t"), "", ""])[:3]
            if old == path and new:
                moves.append((int(status[1:] or 0), new))
        return [new for _, new in sorted(moves, reverse=True)]

    def changes(self, base: str, head: str, paths: Sequence[str]) -> list[Change]:
        """First-parent commits in base..head that touched `paths`, oldest first."""
        out = self.repo.git.log(
            "--first-parent",
            "--diff-merges=first-parent",
            "--reverse",
            "--raw",
            "--no-abbrev",
            "--no-renames",
            "--format=%x00%H",
            f"{base}..{head}",
            "--",
            *paths,
        )
        changes = []
        for chunk in out.split("\x00")[1:]:
            lines = chunk.strip().splitlines()
            for raw in lines[1:]:
                meta, _, path = raw.partition("\t")
                parts = meta.split()
                if len(parts) < 5:
                    continue
                blob = None if parts[4].startswith("D") else parts[3]
                changes.append(Change(lines[0], path, blob))
        return changes

    def info(self, sha: str) -> CommitInfo:
        if sha not in self._info:
            commit = self.repo.commit(sha)
            self._info[sha] = CommitInfo(
                sha=sha,
                date=commit.committed_datetime.isoformat(),
                author=str(commit.author.name),
                summary=str(commit.summary),
                message=str(commit.message),
            )
        return self._info[sha]

    def tags_key(self, pattern: str) -> str:
        """Changes whenever a tag matching `pattern` is added, moved or deleted."""
        import hashlib

        self._require()
        out = _git(
            self.path, "for-each-ref", "--format=%(objectname) %(refname)", f"refs/tags/{pattern}"
        )
        return hashlib.sha256(out.encode()).hexdigest()[:16]

    def first_release(self, commit: str, pattern: str) -> str | None:
        """The earliest tag matching `pattern` (by version order) that contains `commit`.

        With versionsort.suffix=-, v3.0.0-beta.1 comes before v3.0.0 (git's default puts
        a pre-release after its release).
        """
        out = self.repo.git(c="versionsort.suffix=-").for_each_ref(
            "--contains",
            commit,
            "--sort=version:refname",
            "--format=%(refname:short)",
            f"refs/tags/{pattern}",
        )
        tags = out.split()
        return tags[0] if tags else None

    def close(self) -> None:
        self._reset()


class _Presence:
    """Which objects the mirror holds, read from its pack indexes: asking git would fetch."""

    def __init__(self, objects: Path) -> None:
        from gitdb.db.loose import LooseObjectDB
        from gitdb.db.pack import PackedDB

        self.packs = PackedDB(str(objects / "pack"))
        self.loose = LooseObjectDB(str(objects))

    def has(self, blob: str) -> bool:
        binsha = binascii.unhexlify(blob)
        return bool(self.loose.has_object(binsha) or self.packs.has_object(binsha))

    def refresh(self) -> None:
        self.packs.update_cache(force=True)


def _git(cwd: Path | None, *args: str, stdin: str | None = None) -> str:
    """Run git; a failure becomes an UpstreamError with git's own last line."""
    import subprocess

    command = ["git", *(["-C", str(cwd)] if cwd else []), *args]
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GCM_INTERACTIVE": "never"}
    proc = subprocess.run(
        command, input=stdin, capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        raise UpstreamError(lines[-1] if lines else f"git {args[0]} failed ({proc.returncode})")
    return proc.stdout
