"""Bare, blobless mirrors of upstream repositories, read by object id (never a work tree).

One mirror per upstream in the cache directory. The first clone brings commits only;
the trees of the first-parent commits a run reads (from the branch head back to its
oldest cited commit) follow in one fetch, and later fetches of the branch bring the new
commits' trees with them. Blobs are fetched on demand, in one batch per request, then
read through the long-lived `git cat-file --batch` process that GitPython keeps.

Costs that would grow with the site are kept flat here: every fetch of refs updates a
commit-graph (`--contains` queries read it instead of parsing commits), release lookups
are remembered per tag set, and the packs that blob fetches leave behind are rolled up
once they pile up.
"""

from __future__ import annotations

import binascii
import contextlib
import logging
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

from watcher import redact
from watcher.errors import TooLarge, UpstreamError

if TYPE_CHECKING:
    import subprocess

    from git import Repo

    from watcher.mirror.renames import Paths

log = logging.getLogger("watch")

# A file:// upstream is served by a local upload-pack, which refuses partial clone
# unless told otherwise; GitHub allows it. This makes local upstreams behave like it.
# Its pack-objects, a child of watch here (GitHub runs it on its side), maps the
# upstream's packs in small windows: whole, codex's 194 MB pack made it watch's
# biggest process (257 MB, 134 MB so). The objects cross a pipe, not a network: it
# sends the deltas the upstream stores and searches for no new ones (`pack.window=0`),
# and compresses what it must fast (`pack.compression=1`). On a cold run of 1,000 codex
# citations the delta search cost 6 s of CPU to shrink the fetched packs by a fifth,
# and zlib's default level 1.3 s more than level 1 for a tenth.
LOCAL_UPLOAD_PACK = (
    "git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true"
    " -c core.packedGitLimit=32m -c core.packedGitWindowSize=8m"
    " -c pack.window=0 -c pack.compression=1 upload-pack"
)
FULL_SHA = re.compile(r"^[0-9a-f]{40}$")
# For git commands that must not fetch what the mirror lacks: no transport is allowed
# (set, the variable overrides `protocol.allow` and names every transport allowed).
NO_FETCH = {"GIT_ALLOW_PROTOCOL": ""}
# Every fetch leaves a pack and every object lookup pays for each pack: past this many,
# `tidy` rolls the small ones into one.
PACK_LIMIT = 4
MID_RUN_PACKS = 16  # a run that fetched this many packs rolls them up before going on
# More commits than this to place in releases at once: one walk of the tags' history
# (two git processes) instead of one `for-each-ref --contains` each.
RELEASE_PASS = 8
# The mirror's config key naming the oldest first-parent commit of the branch back to
# which every first-parent commit's trees are in the mirror ("" for none yet). Mirrors
# made before it have every tree.
TREES = "watch.trees"


class Source(Protocol):
    """What a mirror reads of an [[upstream]] (watcher.config.Upstream; watcher.state.replay's
    stand-in, which fetches before pydantic is imported)."""

    @property
    def repo(self) -> str: ...
    @property
    def fetch_url(self) -> str: ...
    @property
    def display_url(self) -> str: ...
    @property
    def branch(self) -> str: ...
    @property
    def fetch_seconds(self) -> float | None: ...


class Bounds(Protocol):
    """The limits a mirror obeys (watcher.config.Limits)."""

    @property
    def fetch_seconds(self) -> float: ...
    @property
    def stall_seconds(self) -> int: ...
    @property
    def file_bytes(self) -> int: ...


class CommitInfo(NamedTuple):  # not a dataclass: a warm run imports this module
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
    """A bare partial clone of one upstream, with counters for the cost model.

    Every network operation is bounded: a wall-clock limit per fetch (`fetch_seconds`)
    and, over http(s), a low-speed limit (`stall_seconds` under 1 KB/s), so a silent
    upstream becomes an UpstreamError instead of a hang. Credentials in the upstream's
    URL never reach the mirror's config (which may be cached and shared): git gets them
    from a credential helper reading this process's environment.
    """

    def __init__(self, upstream: Source, cache: Path, limits: Bounds | None = None) -> None:
        if limits is None:
            from watcher.config import Limits

            limits = Limits()
        self.upstream = upstream
        self.limits = limits
        self.fetch_seconds = upstream.fetch_seconds or self.limits.fetch_seconds
        self.url, self.local = fetch_url(upstream.fetch_url)
        self.stored_url, self.env = _credentials(self.url, self.limits.stall_seconds)
        self.path = cache / (upstream.repo.replace("/", "__") + ".git")
        # Counters for the cost model (tests pin them, the bench prints them).
        self.round_trips = 0
        self.blobs_fetched = 0
        self.recloned = False
        self.release_queries = 0  # `for-each-ref --contains` calls
        self.release_passes = 0  # walks of the release tags' history
        self.graph_writes = 0
        self.rollups = 0
        self.listings = 0  # `ls-tree` of whole commits: one per commit a run reads
        self._repo: Repo | None = None
        self._presence: _Presence | None = None
        self._present: set[str] = set()  # blobs known to be in the mirror
        self._info: dict[str, CommitInfo] = {}
        self._resolved: dict[str, str | None] = {}
        self._trees: dict[str, dict[str, str]] = {}
        self._releases: dict[tuple[str, str], str | None] = {}  # (pattern, commit) -> tag
        self._paths: Paths | None = None
        self._inherited: list[object] = []  # a forked worker's copy of the parent's readers
        self._filters: subprocess.Popen[bytes] | None = None  # see `_write_graph`
        self._branch: str | None = None
        self.refs: tuple[tuple[str, bytes], ...] | None = None  # as last read (a fetch's)

    # --- setup and fetch ----------------------------------------------------------

    @property
    def exists(self) -> bool:
        return (self.path / "HEAD").is_file()

    @property
    def branch(self) -> str:
        """The watched branch: configured, else the remote's default as found at creation."""
        if self.upstream.branch:
            return self.upstream.branch
        if self._branch is None and self.exists:
            with contextlib.suppress(UpstreamError):
                self._branch = _git(self.path, "config", "--get", "watch.branch").strip() or None
        return self._branch or "main"

    def sync(self, since: Iterable[str] = ()) -> None:
        """Create the mirror, or fetch the branch and tags into it (one round trip), then
        the trees of the history back to the commits in `since` (`complete_trees`).

        A corrupt or half-made mirror is deleted and cloned again, once. Two processes
        sharing one cache take turns (a lock file beside the mirror).
        """
        with self._creation_lock():
            for leftover in self.path.parent.glob(self.path.name + ".*"):
                if leftover.is_dir():  # a first clone killed before its rename
                    _remove(leftover)
            problem = health(self.path) if self.path.exists() else None
            if problem is not None:
                self._reclone(problem)
            if not self.exists:
                self._create()
                try:
                    self._fetch_refs(first=True)
                except BaseException:
                    # A failed first clone (no network, wrong URL or branch) leaves
                    # nothing behind to be blamed by the next run.
                    self._reset()
                    _remove(self.path)
                    raise
            else:
                if not self._origin_current():  # config.toml or watch changed
                    for key, value in self._origin().items():
                        _git(self.path, "config", f"remote.origin.{key}", value)
                self._fetch_refs()
            self._complete_trees(since)

    def complete_trees(self, since: Iterable[str]) -> None:
        """Fetch, in one round trip, the trees a run reads that the mirror lacks: those of
        every first-parent commit from the branch head back to each commit of `since`
        (the cited commits, whose history is walked), and of `since` themselves.

        Without them the run is still right, only slow: git fetches a missing tree by
        itself when it is read, one round trip each.
        """
        with self._creation_lock():
            self._complete_trees(since)

    def check_health(self) -> None:
        """Offline: refuse a corrupt mirror (it cannot be cloned again without a fetch)."""
        problem = health(self.path) if self.path.exists() else None
        if problem is not None:
            raise UpstreamError(
                f"{self.upstream.repo}: the mirror at {self.path} is damaged ({problem}); "
                "run without --offline to clone it again"
            )

    def _reclone(self, problem: str) -> None:
        if self.recloned:
            raise UpstreamError(
                f"{self.upstream.repo}: the mirror at {self.path} is still damaged after "
                f"cloning it again ({problem}); delete it and check the disk"
            )
        log.warning(
            "%s: the mirror at %s is damaged (%s); cloning it again",
            self.upstream.repo,
            self.path,
            problem,
        )
        self.recloned = True
        self._reset()
        _remove(self.path)

    @contextlib.contextmanager
    def _creation_lock(self) -> Iterator[None]:
        from watcher.state.store import hold

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            release = hold(Path(str(self.path) + ".lock"), wait=self.fetch_seconds)
        except TimeoutError:
            raise UpstreamError(
                f"{self.upstream.repo}: another process kept {self.path}.lock for "
                f"{self.fetch_seconds:g} s; wait for it, or delete the lock if none runs"
            ) from None
        except OSError as exc:
            raise UpstreamError(
                f"{self.upstream.repo}: cannot write the mirror cache {self.path.parent} "
                f"({exc.strerror}); set `cache` in config.toml to a writable folder"
            ) from None
        try:
            yield
        finally:
            release()

    def _create(self) -> None:
        # Build in a temp folder and rename: a failed first clone leaves nothing behind.
        try:
            import tempfile

            tmp = Path(tempfile.mkdtemp(prefix=self.path.name + ".", dir=self.path.parent))
        except OSError as exc:
            raise UpstreamError(
                f"{self.upstream.repo}: cannot write the mirror cache {self.path.parent} "
                f"({exc.strerror}); set `cache` in config.toml to a writable folder"
            ) from None
        try:
            _git(None, "init", "--quiet", "--bare", str(tmp))
            settings = {
                TREES: "",
                "core.repositoryformatversion": "1",
                "extensions.partialClone": "origin",
                "remote.origin.promisor": "true",
                "remote.origin.partialclonefilter": "blob:none",
                "gc.auto": "0",
            } | {f"remote.origin.{key}": value for key, value in self._origin().items()}
            if not self.upstream.branch:
                settings["watch.branch"] = self._branch = self._remote_default()
            for key, value in settings.items():
                _git(tmp, "config", key, value)
            os.replace(tmp, self.path)
        except BaseException:
            _remove(tmp)
            raise

    def _remote_default(self) -> str:
        """The branch the remote's HEAD points at (`ls-remote --symref`), for `branch = ""`."""
        self.round_trips += 1
        try:
            out = self._network("ls-remote", "--symref", self.stored_url, "HEAD")
        except UpstreamError as exc:
            raise UpstreamError(
                f"{self.upstream.repo}: cannot read the default branch of "
                f"{self.upstream.display_url}: {exc}; check the url in config.toml, or set `branch`"
            ) from None
        match = re.search(r"^ref: refs/heads/(\S+)\tHEAD$", out, re.MULTILINE)
        if match is None:
            raise UpstreamError(
                f"{self.upstream.repo}: {self.upstream.display_url} names no default branch; "
                "set `branch` in config.toml"
            )
        return match.group(1)

    def _fetch_refs(self, *, first: bool = False) -> None:
        """Fetch the branch and the tags. The first fetch brings commits without trees
        (`tree:0`): codex's whole history is 27 MB and 2.0 s with its trees, 0.4 s
        without, and a run reads the trees of a few thousand commits at most
        (`complete_trees`). Later fetches bring the new commits' trees with them."""
        branch = self.branch
        before = self._refs()
        self.round_trips += 1
        try:
            self._network(
                "fetch",
                "--quiet",
                "--prune",
                "--force",
                "--filter=tree:0" if first else "--filter=blob:none",
                "--no-write-fetch-head",
                "--no-auto-gc",
                "origin",
                f"+refs/heads/{branch}:refs/heads/{branch}",
                "+refs/tags/*:refs/tags/*",
            )
        except GitTimeout:
            raise  # says what happened and what to do already
        except UpstreamError as exc:
            raise UpstreamError(
                f"{self.upstream.repo}: cannot fetch branch {branch!r} from "
                f"{self.upstream.display_url}: {exc}; check the url and branch in config.toml, "
                "or run with --offline"
            ) from None
        self._reset()
        self._releases = {}  # tags may have moved
        if self._refs() != before or not (self._graphs / "commit-graph-chain").is_file():
            self._write_graph()

    def _complete_trees(self, since: Iterable[str]) -> None:
        oldest, since = self._config(TREES), set(since)
        if oldest is None:
            return  # made before trees were fetched by range: it has them all
        if oldest and not since:
            return  # every fetch since the first brought the head's trees
        listing = _git(
            self.path, "rev-list", "--first-parent", "--format=%T", f"refs/heads/{self.branch}"
        )
        lines = listing.split()  # "commit C", then the tree, for each commit from HEAD back
        chain = lines[1::3]
        trees = lines[2::3]
        place = {commit: depth for depth, commit in enumerate(chain)}
        have = place.get(oldest, -1)  # -1: none yet, or the branch was rewritten
        deepest, roots = 0, []
        for rev in since:
            commit = self.resolve(rev)
            if commit is None:
                continue
            if commit in place:
                deepest = max(deepest, place[commit])
                continue
            # Off the branch: its history joins the branch where the first-parent walk
            # from HEAD (`git log --first-parent COMMIT..HEAD`) stops.
            joined = _git(
                self.path, "rev-list", "--count", "--first-parent", chain[0], f"^{commit}"
            )
            deepest = max(deepest, min(int(joined), len(chain) - 1))
            # Read off the commit: `rev-parse C^{tree}` and `show` would fetch a missing tree.
            roots.append(_git(self.path, "log", "-1", "--format=%T", commit).strip())
        if roots:  # gitdb is imported only then: a warm run does without
            presence = _Presence(self.path / "objects")
            roots = [t for t in roots if not presence.has(t)]
        wanted = [*trees[have + 1 : deepest + 1], *roots]
        if wanted:
            self._fetch_objects(list(dict.fromkeys(wanted)))
            self._reset()
        if deepest > have:
            _git(self.path, "config", TREES, chain[deepest])

    @property
    def _graphs(self) -> Path:
        return self.path / "objects" / "info" / "commit-graphs"

    def _refs(self) -> tuple[tuple[str, bytes], ...]:
        """The refs as stored on disk (loose and packed): a fetch that brought nothing
        leaves them byte for byte as they were, and costs no commit-graph write."""
        self.refs = stored_refs(self.path)
        return self.refs

    def _origin(self) -> dict[str, str]:
        """What origin's config says in a mirror of this upstream: its URL, and for a
        local upstream the upload-pack that serves it."""
        wanted = {"url": self.stored_url}
        if self.local:
            wanted["uploadpack"] = LOCAL_UPLOAD_PACK
        return wanted

    def _origin_current(self) -> bool:
        """Whether origin's config is `_origin()`: read from the config as git writes
        plain values (one `key = VALUE` line under `[remote "origin"]`), else asked of
        git (a process fewer on every warm run)."""
        try:
            text = (self.path / "config").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        section, found = "", defaultdict[str, list[str]](list)
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith("["):
                section = stripped
            elif section == '[remote "origin"]':
                key, _, value = stripped.partition(" = ")
                found[key].append(value)
        return all(
            found[key] == [value]
            if _plain(value)
            else self._config(f"remote.origin.{key}") == value
            for key, value in self._origin().items()
        )

    def _config(self, key: str) -> str | None:
        try:
            return _git(self.path, "config", "--get", key).strip()
        except UpstreamError:  # not set
            return None

    def _write_graph(self) -> None:
        """Bring the commit-graph up to date with the refs.

        `--split` writes a small layer for the new commits only (git merges layers as
        they grow), so keeping it current costs little after the first fetch; without
        it, every `for-each-ref --contains` parses commits (codex: 120 ms a call, under
        10 ms with it).

        Changed-path Bloom filters need every commit's trees, so only a mirror made
        before trees were fetched by range (`TREES`) has them. There a first graph is
        written without them (codex: 0.1 s, 0.8 s with them), and a second write adds
        them in the background while the run plans and fetches blobs (`settle` waits for
        it). A mirror without them walks a path's history diffing trees: 0.03 s a path
        over 2,000 codex commits.
        """
        self.graph_writes += 1
        self.settle()
        command = ["commit-graph", "write", "--reachable", "--split"]
        if self._config(TREES) is not None:
            _git(self.path, *command, "--no-changed-paths")
            return
        if (self._graphs / "commit-graph-chain").is_file():
            _git(self.path, *command, "--changed-paths")
            return
        _git(self.path, *command)
        import subprocess

        self._filters = subprocess.Popen(
            ["git", "-C", str(self.path), *command[:-1], "--changed-paths", "--split=replace"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def settle(self) -> None:
        """Wait for the changed-path filters of a first commit-graph (`_write_graph`).
        Should git fail to write them, the graph is removed: the next fetch writes it
        again, filters and all."""
        filters, self._filters = self._filters, None
        if filters is None:
            return
        _, err = filters.communicate()
        if filters.returncode:
            said = (err.decode(errors="replace").strip().splitlines() or [""])[-1]
            log.warning("%s: commit-graph filters not written (%s)", self.path, said)
            (self._graphs / "commit-graph-chain").unlink(missing_ok=True)

    def _network(self, *args: str, stdin: str | None = None) -> str:
        """A git command that talks to the upstream, within the time limits."""
        return _git(
            self.path if self.path.is_dir() else None,
            *args,
            stdin=stdin,
            env=self.env,
            timeout=self.fetch_seconds,
            what=f"{self.upstream.repo}: {self.upstream.display_url}",
        )

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
            # Lazy fetches git makes on its own get the same credentials and limits.
            self._repo.git.update_environment(**self.env)
        return self._repo

    def _require(self) -> None:
        if not self.exists:
            raise UpstreamError(
                f"{self.upstream.repo}: no mirror at {self.path}; run `watch sync` "
                "(or drop --offline)"
            )

    def head(self) -> str:
        """The commit at the tip of the watched branch."""
        sha = self.resolve(f"refs/heads/{self.branch}")
        if sha is None:
            raise UpstreamError(
                f"{self.upstream.repo}: branch {self.branch!r} not in the mirror; "
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
        # GitPython would cost it more than the reads themselves. Git would fetch a
        # full id the mirror lacks by itself, with the history behind it (every tree
        # of it): such an id is unknown here, for `resolve_or_fetch` to fetch.
        self._require()
        try:
            return _git(
                self.path, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", env=NO_FETCH
            ).strip()
        except UpstreamError:
            return None

    def resolve_or_fetch(self, rev: str, *, offline: bool) -> str | None:
        """Like resolve, but fetch a full commit id that is not on the branch (e.g. a PR head).

        In a mirror that holds trees by range, the commits come alone and then their
        trees by `complete_trees`: fetched with its trees, the commit would come without
        those the server takes the mirror to have, those of the older commits it holds
        without trees, and git would fetch each of them when read, one round trip each.
        """
        found = self.resolve(rev)
        if found is None and not offline and FULL_SHA.match(rev):
            ranged = self._config(TREES) is not None
            self.round_trips += 1
            try:
                self._network(
                    "fetch", "--quiet", "--filter=tree:0" if ranged else "--filter=blob:none",
                    "--no-write-fetch-head", "origin", rev,
                )  # fmt: skip
            except GitTimeout:
                raise
            except UpstreamError:
                return None
            self._reset()
            found = self.resolve(rev)
            if found is not None and ranged:
                self.complete_trees([found])
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
            self._trees[commit] = self._listing(commit)
        return self._trees[commit].get(path)

    def read(self, blob: str) -> bytes:
        """A blob's bytes; call `prefetch` first so that this never waits on the network.

        A blob above `[limits] file_bytes` raises TooLarge, its bytes read past a chunk at
        a time and dropped: a 50 MB generated file would otherwise cost minutes and
        gigabytes to tokenize. One request to git per blob: the size comes with the bytes.
        """
        self.prefetch([blob])
        stream = self.repo.odb.stream(binascii.unhexlify(blob))
        if stream.size > self.limits.file_bytes:
            while stream.read(2**20):  # git answers in order: what it sent must be read
                pass
            raise TooLarge(stream.size, self.limits.file_bytes)
        data: bytes = stream.read()
        return data

    def prefetch(self, blobs: Iterable[str]) -> None:
        """Fetch every missing blob of `blobs` in one round trip."""
        wanted = set(blobs) - self._present
        if not wanted:
            return  # a warm run asks for nothing: no pack index is read
        presence = self._presence or _Presence(self.path / "objects")
        self._presence = presence
        missing = sorted(b for b in wanted if not presence.has(b))
        if missing:
            self._fetch_blobs(missing)
            presence.refresh()
            if len(self.packs()) > MID_RUN_PACKS:  # a long cold run: keep lookups cheap
                self.tidy()
        # Objects never leave a mirror: what is here now need not be looked up again
        # (a history walk reads hundreds of versions, each one checked once).
        self._present |= wanted

    def _fetch_blobs(self, missing: list[str]) -> None:
        self.blobs_fetched += len(missing)
        self._fetch_objects(missing)

    def _fetch_objects(self, missing: list[str]) -> None:
        """Fetch these objects by id in one round trip (a tree comes with its subtrees)."""
        self.round_trips += 1
        # Sending no "have" lines matters: a server with reachability bitmaps leaves out
        # every object reachable from what the client has, blobs of a partial clone included.
        self._network(
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

    def files(self, commit: str, suffixes: Sequence[str]) -> dict[str, str]:
        """Every file at `commit` with one of the suffixes: path -> blob id (one `ls-tree`
        per commit, however many items ask: a commit's tree never changes)."""
        if commit not in self._trees:
            self._trees[commit] = self._listing(commit)
        ends = tuple(suffixes)
        return {p: b for p, b in self._trees[commit].items() if p.endswith(ends)}

    def _listing(self, commit: str) -> dict[str, str]:
        self._require()
        self.listings += 1
        out = _git(self.path, "ls-tree", "-r", "-z", "--full-tree", commit)
        files = {}
        for entry in out.split("\0"):
            meta, _, path = entry.partition("\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob":
                files[path] = parts[2]
        return files

    def contents(self, blobs: Sequence[str], chunk: int = 256) -> Iterator[tuple[str, bytes]]:
        """The bytes of many blobs, through one `git cat-file --batch` per `chunk` of them
        (call `prefetch` first); blobs above `[limits] file_bytes` are left out, as `read`
        refuses them."""
        self._require()
        for at in range(0, len(blobs), chunk):
            part = blobs[at : at + chunk]
            batch = "".join(b + "\n" for b in part)
            out = _git_output(self.path, ["cat-file", "--batch"], batch, self.env)
            pos = 0
            for blob in part:
                end = out.index(b"\n", pos)
                header = out[pos:end].split()
                if len(header) < 3 or header[1] == b"missing":
                    pos = end + 1
                    continue
                size = int(header[2])
                if size <= self.limits.file_bytes:
                    yield blob, out[end + 1 : end + 1 + size]
                pos = end + 2 + size

    def git(self, *args: str, stdin: str | None = None) -> str:
        """Run a reading git command in the mirror (pathspecs taken literally)."""
        self._require()
        return _git(self.path, *_READING, *args, stdin=stdin)

    def gits(self, commands: Sequence[Sequence[str]]) -> list[str]:
        """The outputs of many reading git commands (as `git` runs them), a few running at
        once: a small one costs mostly git's start, ~10 ms, and the diffs of a 1,000-citation
        run's rename chase, one after another, took a second with a core idle."""
        self._require()
        return _git_all(self.path, commands, _READING)

    @property
    def paths(self) -> Paths:
        """Path histories of this mirror's files (renames followed commit by commit)."""
        if self._paths is None:
            from watcher.mirror.renames import Paths

            self._paths = Paths(self)
        return self._paths

    def date(self, sha: str) -> str:
        """A commit's committer date (ISO 8601), read with plain git: no GitPython needed."""
        return _git(self.path, "log", "-1", "--format=%cI", sha).strip()  # `show` reads trees

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

    def remember_releases(self, pattern: str, known: dict[str, str | None]) -> None:
        """Take `first_release` answers for the current tag set from an earlier run."""
        for commit, tag in known.items():
            self._releases.setdefault((pattern, commit), tag)

    def releases(self, pattern: str, commits: Iterable[str]) -> dict[str, str | None]:
        """`first_release` of each of `commits`: many at once in one pass, each remembered."""
        wanted = sorted(set(commits))
        unknown = [c for c in wanted if (pattern, c) not in self._releases]
        if len(unknown) > RELEASE_PASS:
            for commit, tag in self._release_pass(pattern, unknown).items():
                self._releases[(pattern, commit)] = tag
        return {c: self.first_release(c, pattern) for c in wanted}

    def _release_pass(self, pattern: str, commits: list[str]) -> dict[str, str | None]:
        """The first release of each of `commits` from one walk: the tags in version order
        (the order `first_release` sorts by), each claiming the commits it reaches that
        no earlier tag reached. Costs one walk of the tags' history, however many commits."""
        self.release_passes += 1
        listing = _git(
            self.path,
            "for-each-ref",
            "--format=%(refname:short) %(objecttype) %(objectname) %(*objecttype) %(*objectname)",
            f"refs/tags/{pattern}",
        )
        tags = []
        for line in listing.splitlines():
            name, kind, oid, *peeled = line.split()
            if peeled[:1] == ["commit"] or (kind == "commit" and not peeled):
                tags.append((name, peeled[1] if peeled else oid))
        from watcher.mirror import versions

        order = {n: i for i, n in enumerate(versions.ordered(n for n, _ in tags))}
        # Release order, as first_release's; a tag that reads as no version is no release.
        tags = sorted((nt for nt in tags if nt[0] in order), key=lambda nt: order[nt[0]])
        tips = "".join(f"{tip}\n" for tip in dict.fromkeys(tip for _, tip in tags))
        graph = _git(self.path, "rev-list", "--parents", "--stdin", stdin=tips) if tips else ""
        parents = {line[:40]: line.split()[1:] for line in graph.splitlines()}
        found: dict[str, str | None] = dict.fromkeys(commits)
        left, seen = set(commits), set()
        for name, tip in tags:
            stack = [tip]
            while stack and left:
                commit = stack.pop()
                if commit not in seen:
                    seen.add(commit)
                    if commit in left:
                        found[commit] = name
                        left.discard(commit)
                    stack.extend(parents.get(commit, ()))
            if not left:
                break
        return found

    def first_release(self, commit: str, pattern: str) -> str | None:
        """The earliest tag matching `pattern` (by version order) that contains `commit`.

        Release order is watcher.mirror.versions': pre-releases (semver and PEP 440) before
        their release, package prefixes allowed. Answers are remembered until the next fetch.
        """
        key = (pattern, commit)
        if key not in self._releases:
            self._releases[key] = self._first_release(commit, pattern)
        return self._releases[key]

    def _first_release(self, commit: str, pattern: str) -> str | None:
        self.release_queries += 1
        from watcher.mirror import versions

        out = self.repo.git.for_each_ref(
            "--contains",
            commit,
            "--format=%(refname:short)",
            f"refs/tags/{pattern}",
        )
        tags = versions.ordered(out.split())
        return tags[0] if tags else None

    def packs(self) -> list[Path]:
        """The mirror's pack files."""
        return sorted((self.path / "objects" / "pack").glob("pack-*.pack"))

    def tidy(self) -> None:
        """Roll the smallest packs into one when more than PACK_LIMIT piled up, just
        enough of them to leave PACK_LIMIT.

        `git repack -a` would rewrite the whole clone each time, and `--geometric` and
        the multi-pack-index repack (git 2.39) drop the promisor mark that tells git the
        blobs these trees name are fetched on demand, not lost. So the small packs'
        objects are packed anew with `pack-objects`, the new pack is marked as a
        promisor pack like the ones it replaces, and only then are those removed. The
        cost is that of the small packs: the big ones (the clone's, a cold run's blob
        fetches) are left alone. Rolling up all but the largest rewrote a cold run's
        clone pack too: 0.7 s at the end of a cold run of 1,000 codex citations.
        """
        self.settle()
        packs = self.packs()
        if len(packs) <= PACK_LIMIT:
            return
        small = sorted(packs, key=lambda p: p.stat().st_size)[: len(packs) - PACK_LIMIT + 1]
        self.rollups += 1
        try:
            name = self._pack(small)
        except UpstreamError as exc:  # the old packs are all still there: nothing is lost
            log.warning("%s: packs not rolled up (%s); the next run tries again", self.path, exc)
            return
        (self.path / "objects" / "pack" / f"pack-{name}.promisor").touch()
        for pack in small:
            if pack.stem != f"pack-{name}":
                for suffix in (".promisor", ".bitmap", ".rev", ".keep", ".pack", ".idx"):
                    pack.with_suffix(suffix).unlink(missing_ok=True)
        self._reset()

    def _pack(self, packs: list[Path]) -> str:
        """Write one pack of every object in `packs`; its name.

        The deltas the fetches brought are kept and no new ones are searched for
        (`--window=0`): on a cold run of 1,000 codex citations the search cost 5 s of CPU
        to make the pack a tenth smaller.
        """
        oids: set[str] = set()
        for pack in packs:
            index = pack.with_suffix(".idx").read_bytes()
            oids.update(line.split()[1] for line in _git_bytes(self.path, "show-index", index))
        objects = "".join(oid + "\n" for oid in sorted(oids))
        return _git(
            self.path, "pack-objects", "--quiet", "--window=0", "objects/pack/pack", stdin=objects
        ).strip()

    def close(self) -> None:
        self.settle()
        self._reset()

    # --- forked workers (watcher.judge.pool) ---------------------------------------------

    # What a worker counts is added to the parent's counts (`watcher.judge.pool`).
    COUNTED = ("round_trips", "blobs_fetched", "release_queries", "release_passes",
               "graph_writes", "rollups", "listings")  # fmt: skip

    def forked(self) -> None:
        """In a forked worker: the parent's pipes to git (GitPython's `cat-file`) stay the
        parent's; this process opens its own. The parent's objects are kept, not dropped:
        dropping them would end the parent's git processes."""
        self._inherited.append((self._repo, self._presence))
        self._repo = None
        self._presence = None
        self._filters = None  # the parent's to wait for


class _Presence:
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


def stored_refs(path: Path) -> tuple[tuple[str, bytes], ...]:
    """Every ref file of the mirror at `path` (packed-refs, then refs/ in name order) and
    its bytes; plain os, not pathlib: this runs around every fetch."""
    files = [str(path / "packed-refs")]
    for folder, dirs, names in os.walk(path / "refs"):
        dirs.sort()
        files += [os.path.join(folder, name) for name in sorted(names)]
    found = []
    for file in files:
        with contextlib.suppress(FileNotFoundError, IsADirectoryError), open(file, "rb") as f:
            found.append((file, f.read()))
    return tuple(found)


def _git_bytes(cwd: Path, command: str, stdin: bytes) -> list[str]:
    """Lines of a git command fed binary input (e.g. `show-index` reading a pack index)."""
    import subprocess

    proc = subprocess.run(
        ["git", "-C", str(cwd), command], input=stdin, capture_output=True, check=False
    )
    if proc.returncode != 0:
        raise UpstreamError(f"git {command} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode().splitlines()


def _git_output(cwd: Path, args: list[str], stdin: str, env: dict[str, str]) -> bytes:
    """A reading git command's output as bytes (blob contents are not text); `env` as
    the mirror's, should git fetch a missing object on its own."""
    import subprocess

    full_env = {**os.environ, **env, "GIT_TERMINAL_PROMPT": "0"}
    proc = subprocess.run(
        ["git", "-C", str(cwd), *args], input=stdin.encode(), capture_output=True, env=full_env,
        check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise UpstreamError(f"git {args[0]} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout


def _remove(folder: Path) -> None:
    import shutil  # only when a mirror is made or thrown away: not on a warm run

    shutil.rmtree(folder, ignore_errors=True)


class GitTimeout(UpstreamError):
    """A git command that talks to an upstream ran past its time limit and was stopped."""


def _plain(value: str) -> bool:
    """Whether git writes `value` in its config as it is (no quoting, no escapes)."""
    return not any(c in value for c in '"\\#;') and value == value.strip()


def _git(
    cwd: Path | None,
    *args: str,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    what: str = "",
) -> str:
    """Run git; a failure becomes an UpstreamError with git's own last line.

    With a `timeout`, git and every process it started (remote helpers, upload-pack,
    ssh) run in their own process group, which is killed when the time is up.
    """
    import signal
    import subprocess

    command = ["git", *(["-C", str(cwd)] if cwd else []), *args]
    full_env = {**os.environ, **(env or {}), "GIT_TERMINAL_PROMPT": "0", "GCM_INTERACTIVE": "never"}
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
        start_new_session=timeout is not None,
    )
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise GitTimeout(
            f"{what or 'upstream'} gave no answer within {timeout:g} s (git {args[0]} stopped); "
            "check that the upstream is reachable, or raise fetch_seconds in config.toml"
        ) from None
    except BaseException:  # Ctrl-C: git is in its own group and would not see it
        if timeout is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    if proc.returncode != 0:
        raise _failure(args[0], proc.returncode, err)
    return out


def _failure(command: str, code: int, err: str) -> UpstreamError:
    """A failed git command's error: git's own last line."""
    lines = [line for line in err.strip().splitlines() if line.strip()]
    return UpstreamError(lines[-1] if lines else f"git {command} failed ({code})")


# What every reading command is run with: pathspecs taken as they are, paths not quoted.
_READING = ("--literal-pathspecs", "-c", "core.quotePath=false")


def _git_all(
    cwd: Path, commands: Sequence[Sequence[str]], options: Sequence[str] = (), at_once: int = 4
) -> list[str]:
    """Run reading git commands (each after git's `options`), `at_once` at a time, and
    return their outputs in order; the first failure becomes an UpstreamError (as in
    `_git`), and the commands still running are stopped."""
    import subprocess
    from collections import deque

    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GCM_INTERACTIVE": "never"}
    running: deque[tuple[subprocess.Popen[str], str]] = deque()
    outputs: list[str] = []
    try:
        for command in [*commands, None]:
            while running and (command is None or len(running) == at_once):
                proc, name = running.popleft()
                out, err = proc.communicate()
                if proc.returncode != 0:
                    raise _failure(name, proc.returncode, err)
                outputs.append(out)
            if command is not None:
                proc = subprocess.Popen(["git", "-C", str(cwd), *options, *command],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
                running.append((proc, command[0]))
    finally:
        for proc, _ in running:  # left by a failure
            proc.kill()
            proc.communicate()
    return outputs


# A credential helper that answers from this process's environment: the secret is
# handed to git without being written into the mirror's config or onto a command line.
_HELPER = (
    '!f() { test "$1" = get || return 0; '
    'printf "username=%s\\npassword=%s\\n" "$WATCH_GIT_USERNAME" "$WATCH_GIT_PASSWORD"; }; f'
)


def _credentials(url: str, stall_seconds: int) -> tuple[str, dict[str, str]]:
    """The URL to store (no user-info) and the environment every git command gets."""
    from urllib.parse import unquote, urlsplit

    config = [("http.lowSpeedLimit", "1000"), ("http.lowSpeedTime", str(stall_seconds))]
    env: dict[str, str] = {}
    parts = urlsplit(url)
    stored = url
    if parts.scheme in ("http", "https") and "@" in parts.netloc:
        stored = redact.strip_userinfo(url)
        env["WATCH_GIT_USERNAME"] = unquote(parts.username or "")
        env["WATCH_GIT_PASSWORD"] = unquote(parts.password or "")
        config += [("credential.helper", ""), ("credential.helper", _HELPER)]
    env["GIT_CONFIG_COUNT"] = str(len(config))
    for n, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
    return stored, env


def health(path: Path) -> str | None:
    """What is wrong with the mirror at `path` (a half-made folder, a damaged pack), or None.

    Each pack is checked against its own SHA-1 trailer once: what was verified is
    remembered by name, size and modification time in `watch-verified`, so a warm run
    reads no pack, and a pack changed on disk is read again.
    """
    for name in ("HEAD", "config", "objects", "refs"):
        if not (path / name).exists():
            return f"{name} is missing"
    memo_file = path / "watch-verified"
    try:
        memo = set(memo_file.read_text(encoding="utf-8").split("\n"))
    except (OSError, UnicodeDecodeError):
        memo = set()
    seen = []
    for pack in sorted((path / "objects" / "pack").glob("*.pack")):
        stat = pack.stat()
        key = f"{pack.name} {stat.st_size} {stat.st_mtime_ns}"
        seen.append(key)
        if key in memo:
            continue
        if not pack.with_suffix(".idx").is_file():
            return f"{pack.name} has no index"
        if not _checksum_ok(pack) or not _checksum_ok(pack.with_suffix(".idx")):
            return f"{pack.name} fails its checksum"
    if set(seen) != memo:
        with contextlib.suppress(OSError):
            memo_file.write_text("\n".join(seen), encoding="utf-8")
    return None


def _checksum_ok(file: Path) -> bool:
    """A pack or pack index ends with the SHA-1 of everything before it."""
    import hashlib

    digest = hashlib.sha1(usedforsecurity=False)
    size = file.stat().st_size
    if size < 20:
        return False
    with file.open("rb") as handle:
        left = size - 20
        while left:
            chunk = handle.read(min(left, 1 << 20))
            if not chunk:
                return False
            digest.update(chunk)
            left -= len(chunk)
        return digest.digest() == handle.read(20)
