"""Bare, blobless mirrors of upstream repositories, read by object id (never a work tree).

One mirror per upstream in the cache directory. The first clone brings commits only;
the trees of the first-parent commits a run reads (from the branch head back to its
oldest cited commit) follow in one fetch, and later fetches of the branch bring the new
commits' trees with them. Blobs are fetched on demand, in one batch per request, then
read through one long-lived `git cat-file --batch` (watcher.mirror.objects).

Costs that would grow with the site are kept flat here: every fetch of refs updates a
commit-graph (`--contains` queries read it instead of parsing commits), release lookups
are remembered per tag set, and the packs that blob fetches leave behind are rolled up
once they pile up.

The pieces live beside this module: the one git runner (`git`), the clone on disk
(`clone`), reading objects (`objects`), releases (`releases`), packs (`packs`), and what
a mirror is given (`source`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from watcher.errors import Absent, UpstreamError
from watcher.mirror import clone, objects, packs
from watcher.mirror.clone import TREES, stored_refs
from watcher.mirror.git import NO_FETCH, READING, GitTimeout, credentials, run, run_all
from watcher.mirror.releases import Releases
from watcher.mirror.source import Bounds, CommitInfo, Source

if TYPE_CHECKING:
    import subprocess

    from git import Repo

    from watcher.judge.session import Session
    from watcher.mirror.objects import Batch
    from watcher.mirror.renames import Paths

log = logging.getLogger("watch")

FULL_SHA = re.compile(r"^[0-9a-f]{40}$")
COMMIT_BYTES = 2**24  # a commit object larger than this is not a commit anyone wrote


class Mirror:
    """A bare partial clone of one upstream, with counters for the cost model.

    Every network operation is bounded: a wall-clock limit per fetch (`fetch_seconds`)
    and, over http(s), a low-speed limit (`stall_seconds` under 1 KB/s), so a silent
    upstream becomes an UpstreamError instead of a hang. Credentials in the upstream's
    URL never reach the mirror's config (which may be cached and shared): git gets them
    from a credential helper reading this process's environment.
    """

    def __init__(
        self,
        upstream: Source,
        cache: Path,
        limits: Bounds | None = None,
        session: Session | None = None,
    ) -> None:
        if limits is None:
            from watcher.config import Limits

            limits = Limits()
        # The run's caches and counters for this upstream: every stage that judges or
        # walks is handed the mirror, and reaches them here. Closed with the mirror.
        self._session = session
        self.upstream = upstream
        self.limits = limits
        self.fetch_seconds = upstream.fetch_seconds or self.limits.fetch_seconds
        self.url, self.local = clone.fetch_url(upstream.fetch_url)
        self.stored_url, self.env = credentials(self.url, self.limits.stall_seconds)
        self.path = clone.mirror_path(cache, upstream.repo)
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
        self._presence: objects.Presence | None = None
        self._batch: Batch | None = None  # this process's `cat-file --batch` (`batch`)
        self._present: set[str] = set()  # blobs known to be in the mirror
        self.absent: set[str] = set()  # blobs the upstream lacks (`objects.set_aside`)
        self._info: dict[str, CommitInfo] = {}
        self._resolved: dict[str, str | None] = {}
        self._trees: dict[str, dict[str, str]] = {}
        self._kinds: dict[tuple[str, tuple[str, ...]], dict[str, str]] = {}  # `files`
        self.release_memo = Releases(self)
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
            self._branch = clone.config(self.path, "watch.branch") or None
        return self._branch or "main"

    def sync(self, since: Iterable[str] = ()) -> None:
        """Create the mirror, or fetch the branch and tags into it (one round trip), then
        the trees of the history back to the commits in `since` (`complete_trees`).

        A corrupt or half-made mirror is deleted and cloned again, once. Two processes
        sharing one cache take turns (a lock file beside the mirror).
        """
        with clone.creation_lock(self.path, self.upstream.repo, self.fetch_seconds):
            for leftover in self.path.parent.glob(self.path.name + ".*"):
                if leftover.is_dir():  # a first clone killed before its rename
                    clone.remove(leftover)
            problem = packs.health(self.path) if self.path.exists() else None
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
                    clone.remove(self.path)
                    raise
            else:
                # config.toml or watch changed
                if not clone.origin_current(self.path, self._origin()):
                    for key, value in self._origin().items():
                        run(self.path, "config", "--", f"remote.origin.{key}", value)
                self._fetch_refs()
            self._complete_trees(since)

    def complete_trees(self, since: Iterable[str]) -> None:
        """Fetch, in one round trip, the trees a run reads that the mirror lacks: those of
        every first-parent commit from the branch head back to each commit of `since`
        (the cited commits, whose history is walked), and of `since` themselves.

        Without them the run is still right, only slow: git fetches a missing tree by
        itself when it is read, one round trip each.
        """
        with clone.creation_lock(self.path, self.upstream.repo, self.fetch_seconds):
            self._complete_trees(since)

    def check_health(self) -> None:
        """Offline: refuse a corrupt mirror (it cannot be cloned again without a fetch)."""
        problem = packs.health(self.path) if self.path.exists() else None
        if problem is not None:
            raise UpstreamError(
                f"{self.upstream.repo}: its mirror {self.path.name} is damaged ({problem}); "
                "run without --offline to clone it again"
            )

    def _reclone(self, problem: str) -> None:
        if self.recloned:
            raise UpstreamError(
                f"{self.upstream.repo}: its mirror {self.path.name} is still damaged after "
                f"cloning it again ({problem}); delete it and check the disk"
            )
        log.warning(
            "%s: its mirror %s is damaged (%s); cloning it again",
            self.upstream.repo,
            self.path.name,
            problem,
        )
        self.recloned = True
        self._reset()
        clone.remove(self.path)

    def _create(self) -> None:
        def settings() -> dict[str, str]:
            found = clone.SETTINGS | {f"remote.origin.{k}": v for k, v in self._origin().items()}
            if not self.upstream.branch:
                found["watch.branch"] = self._branch = self._remote_default()
            return found

        clone.create(self.path, self.upstream.repo, settings)

    def _remote_default(self) -> str:
        """The branch the remote's HEAD points at (`ls-remote --symref`), for `branch = ""`."""
        self.round_trips += 1
        try:
            out = self._network("ls-remote", "--symref", "--", self.stored_url, "HEAD")
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
        self.release_memo.forget()  # tags may have moved
        if self._refs() != before or not clone.graph_chain(self.path).is_file():
            self._write_graph()

    def _complete_trees(self, since: Iterable[str]) -> None:
        oldest, since = clone.config(self.path, TREES), set(since)
        if oldest is None:
            return  # made before trees were fetched by range: it has them all
        if oldest and not since:
            return  # every fetch since the first brought the head's trees
        commits = [c for c in map(self.resolve, since) if c is not None]
        wanted, deepest = clone.missing_trees(self.path, self.branch, oldest, commits)
        if wanted:
            self._fetch_objects(wanted)
            self._reset()
        if deepest is not None:
            run(self.path, "config", TREES, deepest)

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
            wanted["uploadpack"] = clone.LOCAL_UPLOAD_PACK
        return wanted

    def _write_graph(self) -> None:
        """Bring the commit-graph up to date with the refs (`clone.write_graph`)."""
        self.graph_writes += 1
        self.settle()
        self._filters = clone.write_graph(self.path)

    def settle(self) -> None:
        """Wait for the changed-path filters of a first commit-graph, if still written."""
        filters, self._filters = self._filters, None
        if filters is not None:
            clone.settle(self.path, filters)

    def _network(self, *args: str, stdin: str | None = None) -> str:
        """A git command that talks to the upstream, within the time limits."""
        return run(
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
        """GitPython's view of the mirror: what `info` reads commits with."""
        if self._repo is None:
            from git import Repo

            self.require()
            self._repo = Repo(self.path)
            # Lazy fetches git makes on its own get the same credentials and limits.
            self._repo.git.update_environment(**self.env)
        return self._repo

    def require(self) -> None:
        """Refuse to read a mirror that was never made (offline, before a sync)."""
        if not self.exists:
            raise UpstreamError(
                f"{self.upstream.repo}: no mirror in the cache yet; run `watch sync` "
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
        self.require()
        try:
            return run(
                self.path, "rev-parse", "--verify", "--quiet", "--end-of-options",
                f"{rev}^{{commit}}", env=NO_FETCH,
            ).strip()  # fmt: skip
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
            ranged = clone.config(self.path, TREES) is not None
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
        self.require()
        try:
            out = run(self.path, "rev-parse", f"--disambiguate={prefix}", env=self.env)
        except UpstreamError:
            return []
        kinds = [run(self.path, "cat-file", "-t", o, env=self.env).strip() for o in out.split()]
        return [o for o, kind in zip(out.split(), kinds, strict=True) if kind == "commit"]

    def blob_id(self, commit: str, path: str) -> str | None:
        """The blob of `path` at `commit`, from the trees alone (no blob is fetched)."""
        # One `ls-tree -r` per commit serves every item: 200 items cost 2 processes, not
        # 400 Python walks of tree objects.
        return self._listing(commit).get(path)

    def read(self, blob: str) -> bytes:
        """A blob's bytes; call `prefetch` first so that this never waits on the network.
        A blob above `[limits] file_bytes` raises TooLarge, its bytes read past a chunk at
        a time and dropped (a 50 MB generated file would cost minutes and gigabytes to
        tokenize); one the upstream lacks, Absent."""
        self.prefetch([blob])
        if blob in self.absent:
            raise Absent(blob, self.upstream.repo)
        return objects.read(self.batch(), blob, self.limits.file_bytes, self.upstream.repo)

    def batch(self) -> Batch:
        """This process's `git cat-file --batch` of the mirror, which every reading of
        blob bytes goes through (`watcher.mirror.objects`)."""
        self.require()
        batch = self._batch
        if batch is None or not batch.alive or batch.pid != os.getpid():
            if batch is not None and batch.pid == os.getpid():
                with contextlib.suppress(OSError):  # git is gone, a request maybe unsent
                    batch.close()
            batch = self._batch = objects.Batch(self.path, self.env)
        return batch

    def close_batch(self) -> None:
        """End this process's `cat-file` of the mirror (its walks are over)."""
        batch, self._batch = self._batch, None
        if batch is not None and batch.pid == os.getpid():
            batch.close()

    def prefetch(self, blobs: Iterable[str]) -> None:
        """Fetch every missing blob of `blobs` in one round trip."""
        wanted = set(blobs) - self._present - self.absent
        if not wanted:
            return  # a warm run asks for nothing: no pack index is read
        presence = self._presence or objects.Presence(self.path / "objects")
        self._presence = presence
        missing = sorted(b for b in wanted if not presence.has(b))
        if missing:
            self.blobs_fetched += len(missing)
            while missing:  # one round trip, and one more for each blob the upstream lacks
                try:
                    missing = self._fetch_objects(missing)
                except UpstreamError as exc:
                    if not objects.set_aside(str(exc), missing, self.absent, self.upstream.repo):
                        raise
            presence.refresh()
            if len(self.packs()) > packs.MID_RUN_PACKS:  # a long cold run: keep lookups cheap
                self.tidy()
        # Objects never leave a mirror: what is here now need not be looked up again
        # (a history walk reads hundreds of versions, each one checked once).
        self._present |= wanted - self.absent

    def _fetch_objects(self, missing: list[str]) -> list[str]:
        """Fetch these objects by id in one round trip (a tree comes with its subtrees);
        none is left missing."""
        self.round_trips += 1
        # Sending no "have" lines matters: a server with reachability bitmaps leaves out
        # every object reachable from what the client has, blobs of a partial clone included.
        try:
            self._network("-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet", "--no-tags",
                          "--no-write-fetch-head", "--recurse-submodules=no", "--filter=blob:none",
                          "--stdin", "origin", stdin="\n".join(missing) + "\n")  # fmt: skip
        except GitTimeout:
            raise
        except UpstreamError as exc:
            lacks = "not our ref" in str(exc)  # the server has no such object
            raise UpstreamError(
                f"{self.upstream.repo} ({self.upstream.display_url}): fetching "
                f"{len(missing)} object(s) the run reads failed: {exc}"
                + ("; the upstream does not have them: its history was rewritten, or the url "
                   "in config.toml is a copy that lacks them" if lacks else "")
            ) from exc  # fmt: skip
        return []

    def files(self, commit: str, suffixes: Sequence[str]) -> dict[str, str]:
        """Every file at `commit` with one of the suffixes: path -> blob id (one `ls-tree`
        per commit, however many items ask: a commit's tree never changes). Filtered once
        per (commit, suffixes): each missing citation asks again, and codex's tree holds
        some 10,000 files."""
        key = (commit, tuple(suffixes))
        if key not in self._kinds:
            ends = key[1]
            self._kinds[key] = {p: b for p, b in self._listing(commit).items() if p.endswith(ends)}
        return self._kinds[key]

    def _listing(self, commit: str) -> dict[str, str]:
        """Every file of a commit's tree, listed once per mirror."""
        if commit not in self._trees:
            self.require()
            self.listings += 1
            self._trees[commit] = clone.listing(self.path, commit)
        return self._trees[commit]

    def contents(self, blobs: Sequence[str], chunk: int = 256) -> Iterator[tuple[str, bytes]]:
        """The bytes of many blobs, asked of `cat-file` `chunk` at a time (call `prefetch`
        first); blobs above `[limits] file_bytes` are left out, as `read` refuses them."""
        held = [b for b in blobs if b not in self.absent]
        yield from objects.contents(self.batch(), held, self.limits.file_bytes, chunk)

    def git(self, *args: str, stdin: str | None = None) -> str:
        """Run a reading git command in the mirror (pathspecs taken literally)."""
        self.require()
        return run(self.path, *READING, *args, stdin=stdin)

    def gits(self, commands: Sequence[Sequence[str]]) -> list[str]:
        """The outputs of many reading git commands (as `git` runs them), a few running at
        once: a small one costs mostly git's start, ~10 ms, and the diffs of a 1,000-citation
        run's rename chase, one after another, took a second with a core idle."""
        self.require()
        return run_all(self.path, commands, READING)

    @property
    def session(self) -> Session:
        """The run's session for this upstream (`watcher.judge.session`): made here for a
        mirror opened outside a run (a command's, a test's), on first use only."""
        if self._session is None:
            from watcher.judge.session import Session

            self._session = Session()
        return self._session

    @property
    def paths(self) -> Paths:
        """Path histories of this mirror's files (renames followed commit by commit)."""
        if self._paths is None:
            from watcher.mirror.renames import Paths

            self._paths = Paths(self)
        return self._paths

    def date(self, sha: str) -> str:
        """A commit's committer date (ISO 8601), read with plain git: no GitPython needed."""
        return run(self.path, "log", "-1", "--format=%cI", sha).strip()  # `show` reads trees

    def info(self, sha: str) -> CommitInfo:
        """Who made a commit, when, and what it says: read from the commit object through
        the mirror's one `cat-file` (no GitPython, whose start-up costs more than a run's
        few commits)."""
        if sha not in self._info:
            raw = objects.read(self.batch(), sha, COMMIT_BYTES, self.upstream.repo)
            date, author, message = objects.commit_fields(raw)
            summary = message.split("\n", 1)[0]
            self._info[sha] = CommitInfo(sha, date, author, summary, message)
        return self._info[sha]

    def tags_key(self, pattern: str) -> str:
        """Changes whenever a tag matching `pattern` is added, moved or deleted."""
        return self.release_memo.tags_key(pattern)

    def remember_releases(self, pattern: str, known: dict[str, str | None]) -> None:
        """Take `first_release` answers for the current tag set from an earlier run."""
        self.release_memo.remember(pattern, known)

    def releases(self, pattern: str, commits: Iterable[str]) -> dict[str, str | None]:
        """`first_release` of each of `commits`: many at once in one pass, each remembered."""
        return self.release_memo.many(pattern, commits)

    def first_release(self, commit: str, pattern: str) -> str | None:
        """The earliest tag matching `pattern` (by version order) that contains `commit`
        (`watcher.mirror.releases`). Answers are remembered until the next fetch."""
        return self.release_memo.first(commit, pattern)

    def packs(self) -> list[Path]:
        """The mirror's pack files."""
        return packs.pack_files(self.path)

    def tidy(self) -> None:
        """Roll the smallest packs into one when more than PACK_LIMIT piled up, just
        enough of them to leave PACK_LIMIT (`watcher.mirror.packs`)."""
        self.settle()
        small = packs.smallest(self.packs())
        if small:
            self.rollups += 1
            if packs.roll_up(self.path, small):
                self._reset()

    def close(self) -> None:
        objects.tell_absent(self.absent, self.upstream.repo)
        self.settle()
        self._reset()
        self.close_batch()
        if self._session is not None:
            self._session.close()

    # --- forked workers (watcher.judge.pool) ---------------------------------------------

    # What a worker counts, and the blobs it found lacking, go to the parent (`judge.pool`).
    COUNTED = ("round_trips", "blobs_fetched", "release_queries", "release_passes",
               "graph_writes", "rollups", "listings", "absent")  # fmt: skip

    def forked(self) -> None:
        """In a forked worker: the parent's pipes to git (GitPython's, and the `cat-file`
        of `batch`) stay the parent's; this process opens its own. The parent's objects
        are kept, not dropped: dropping them would end the parent's git processes."""
        self._inherited.append((self._repo, self._presence, self._batch))
        self._repo = None
        self._presence = None
        self._batch = None
        self._filters = None  # the parent's to wait for
