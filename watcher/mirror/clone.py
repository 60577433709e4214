"""A mirror's bare clone on disk: making it in one step, its config and origin, its refs as
stored, and its commit-graph. Functions of the clone's path; `Mirror` decides when."""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from watcher.errors import UpstreamError
from watcher.mirror.git import NO_FETCH, READING, plain, run
from watcher.mirror.objects import Presence
from watcher.state.store import slug

if TYPE_CHECKING:
    import subprocess

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
# The mirror's config key naming the oldest first-parent commit of the branch back to
# which every first-parent commit's trees are in the mirror ("" for none yet). Mirrors
# made before it have every tree.
TREES = "watch.trees"
# A new mirror's config, besides its origin's.
SETTINGS = {
    TREES: "",
    "core.repositoryformatversion": "1",
    "extensions.partialClone": "origin",
    "remote.origin.promisor": "true",
    "remote.origin.partialclonefilter": "blob:none",
    "gc.auto": "0",
}


def mirror_path(cache: Path, repo: str) -> Path:
    """Where the mirror of upstream `repo` (OWNER/NAME) lives in the cache folder."""
    return cache / (slug(repo) + ".git")


def fetch_url(url: str) -> tuple[str, bool]:
    """The URL git is given, and whether it is local (a path or file://)."""
    if url.startswith("file://"):
        return url, True
    if "://" in url or re.match(r"^[\w.-]+@[\w.-]+:", url):
        return url, False
    return Path(url).expanduser().resolve().as_uri(), True


@contextlib.contextmanager
def creation_lock(path: Path, repo: str, wait: float) -> Iterator[None]:
    """Hold the lock file beside the mirror at `path`: two processes sharing one cache
    take turns."""
    from watcher.state.store import hold

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        release = hold(Path(str(path) + ".lock"), wait=wait)
    except TimeoutError:
        raise UpstreamError(
            f"{repo}: another process kept {path.name}.lock in the mirror cache for "
            f"{wait:g} s; wait for it, or delete the lock if none runs"
        ) from None
    except OSError as exc:
        raise _unwritable(repo, exc) from None
    try:
        yield
    finally:
        release()


def _unwritable(repo: str, exc: OSError) -> UpstreamError:
    return UpstreamError(
        f"{repo}: cannot write the mirror cache "
        f"({exc.strerror}); set `cache` in config.toml to a writable folder"
    )


def create(path: Path, repo: str, settings: Callable[[], dict[str, str]]) -> None:
    """Make an empty bare clone at `path` with the config `settings()` gives. It is built
    in a temp folder and renamed: a failed first clone leaves nothing behind."""
    try:
        import tempfile

        tmp = Path(tempfile.mkdtemp(prefix=path.name + ".", dir=path.parent))
    except OSError as exc:
        raise _unwritable(repo, exc) from None
    try:
        run(None, "init", "--quiet", "--bare", str(tmp))
        for key, value in settings().items():
            run(tmp, "config", "--", key, value)  # a value may start with `-`
        os.replace(tmp, path)
    except BaseException:
        remove(tmp)
        raise


def remove(folder: Path) -> None:
    """Delete a mirror (or a half-made one), or a file or link where one belongs."""
    import shutil  # only when a mirror is made or thrown away: not on a warm run

    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        with contextlib.suppress(FileNotFoundError):
            folder.unlink()
        return
    shutil.rmtree(folder, ignore_errors=True)


def config(path: Path, key: str) -> str | None:
    """A config value of the mirror at `path`, or None when it is not set."""
    try:
        return run(path, "config", "--get", key).strip()
    except UpstreamError:  # not set
        return None


def origin_current(path: Path, wanted: dict[str, str]) -> bool:
    """Whether origin's config is `wanted`: read from the config as git writes plain
    values (one `key = VALUE` line under `[remote "origin"]`), else asked of git (a
    process fewer on every warm run)."""
    try:
        text = (path / "config").read_text(encoding="utf-8")
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
        found[key] == [value] if plain(value) else config(path, f"remote.origin.{key}") == value
        for key, value in wanted.items()
    )


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


def missing_trees(
    path: Path, branch: str, oldest: str, commits: list[str]
) -> tuple[list[str], str | None]:
    """The trees a run reads that the mirror lacks: those of every first-parent commit of
    `branch` from its head back to each of `commits`, and of `commits` themselves, but
    not those back to `oldest` (the mirror has them: `TREES`); and the first-parent
    commit to remember as `TREES` once they are fetched (None: as it was)."""
    listing = run(path, "rev-list", "--first-parent", "--format=%T", f"refs/heads/{branch}")
    lines = listing.split()  # "commit C", then the tree, for each commit from HEAD back
    chain = lines[1::3]
    trees = lines[2::3]
    place = {commit: depth for depth, commit in enumerate(chain)}
    have = place.get(oldest, -1)  # -1: none yet, or the branch was rewritten
    deepest, roots = 0, []
    for commit in commits:
        if commit in place:
            deepest = max(deepest, place[commit])
            continue
        # Off the branch: its history joins the branch where the first-parent walk
        # from HEAD (`git log --first-parent COMMIT..HEAD`) stops.
        joined = run(path, "rev-list", "--count", "--first-parent", chain[0], f"^{commit}")
        deepest = max(deepest, min(int(joined), len(chain) - 1))
        # Read off the commit: `rev-parse C^{tree}` and `show` would fetch a missing tree.
        roots.append(run(path, "log", "-1", "--format=%T", commit).strip())
    if roots:  # gitdb is imported only then: a warm run does without
        presence = Presence(path / "objects")
        roots = [t for t in roots if not presence.has(t)]
    wanted = list(dict.fromkeys([*trees[have + 1 : deepest + 1], *roots]))
    return wanted, chain[deepest] if deepest > have else None


def listing(path: Path, commit: str) -> dict[str, str]:
    """Every file at `commit`: path -> blob id (one `ls-tree` of the whole commit)."""
    out = run(path, "ls-tree", "-r", "-z", "--full-tree", commit)
    files = {}
    for entry in out.split("\0"):
        meta, _, name = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob":
            files[name] = parts[2]
    return files


def held_blobs(path: Path, commit: str, files: Iterable[str]) -> dict[str, str]:
    """Those of `files` at `commit` whose blobs the mirror at `path` holds, by path: read
    without a fetch (where a partial clone lacks a tree or a blob, git would fetch it);
    {} when the commit's trees are not here."""
    try:
        out = run(path, *READING, "ls-tree", "-z", commit, "--", *files, env=NO_FETCH)
    except UpstreamError:
        return {}
    entries = (entry.partition("\t") for entry in out.split("\0") if entry)
    found = {name: meta.split()[2] for meta, _, name in entries if meta.split()[1:2] == ["blob"]}
    presence = Presence(path / "objects")
    return {name: blob for name, blob in found.items() if presence.has(blob)}


def graph_chain(path: Path) -> Path:
    """The file listing the layers of the commit-graph of the mirror at `path`."""
    return path / "objects" / "info" / "commit-graphs" / "commit-graph-chain"


def write_graph(path: Path) -> subprocess.Popen[bytes] | None:
    """Bring the commit-graph up to date with the refs; the process still writing its
    changed-path filters, if any (`settle` waits for it).

    `--split` writes a small layer for the new commits only (git merges layers as
    they grow), so keeping it current costs little after the first fetch; without
    it, every `for-each-ref --contains` parses commits (codex: 120 ms a call, under
    10 ms with it).

    Changed-path Bloom filters need every commit's trees, so only a mirror made
    before trees were fetched by range (`TREES`) has them. There a first graph is
    written without them (codex: 0.1 s, 0.8 s with them), and a second write adds
    them in the background while the run plans and fetches blobs. A mirror without
    them walks a path's history diffing trees: 0.03 s a path over 2,000 codex commits.
    """
    command = ["commit-graph", "write", "--reachable", "--split"]
    if config(path, TREES) is not None:
        run(path, *command, "--no-changed-paths")
        return None
    if graph_chain(path).is_file():
        run(path, *command, "--changed-paths")
        return None
    run(path, *command)
    import subprocess

    return subprocess.Popen(
        ["git", "-C", str(path), *command[:-1], "--changed-paths", "--split=replace"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def settle(path: Path, filters: subprocess.Popen[bytes]) -> None:
    """Wait for the changed-path filters of a first commit-graph (`write_graph`).
    Should git fail to write them, the graph is removed: the next fetch writes it
    again, filters and all."""
    _, err = filters.communicate()
    if filters.returncode:
        said = (err.decode(errors="replace").strip().splitlines() or [""])[-1]
        log.warning("%s: commit-graph filters not written (%s)", path, said)
        graph_chain(path).unlink(missing_ok=True)
