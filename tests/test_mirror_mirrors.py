"""Mirrors are bare and blobless, fetch incrementally, and read blobs in batches."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Project
from watcher.config import Upstream as UpstreamConfig
from watcher.errors import Absent, UpstreamError
from watcher.gitbuild import Upstream
from watcher.mirror import clone, objects
from watcher.mirror.mirrors import Mirror
from watcher.mirror.objects import ABSENT_MOST
from watcher.parse import syntax

LIB = "src/lib.rs"


def _git(path: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(path), *args], capture_output=True, text=True, check=True
    ).stdout


def _missing_blobs(mirror: Path) -> int:
    out = _git(mirror, "rev-list", "--objects", "--all", "--missing=print")
    return sum(line.startswith("?") for line in out.splitlines())


def _zlib_level(pack: Path, offset: int) -> int:
    """The zlib level an undeltified object of `pack` at `offset` says it was written
    at: the second byte of its stream after the object's size (1: fastest, 6: default)."""
    with pack.open("rb") as f:
        f.seek(offset)
        while f.read(1)[0] & 0x80:  # the type and size, seven bits a byte
            pass
        flags = f.read(2)[1] >> 6
    return {0: 1, 1: 5, 2: 6, 3: 9}[flags]  # zlib's FLEVEL: levels 0-1, 2-5, 6, 7-9


def _files(n: int) -> dict[str, str]:
    return {f"src/m{i}.rs": f"pub fn f{i}() -> u32 {{\n    {i}\n}}\n" for i in range(n)}


@pytest.mark.parametrize("as_path", [False, True], ids=["file-url", "plain-path"])
def test_mirror_is_bare_and_blobless(
    as_path: bool, upstream: Upstream, project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("many files", _files(20))
    project.note("n", f"{base} src/m3.rs:1-3")
    if as_path:  # a plain local path must behave exactly like file://
        text = project.config_file.read_text().replace(upstream.url, str(upstream.path))
        project.config_file.write_text(text)

    code, _out, _ = project.run("check", "--format", "json", capsys=capsys)

    assert code == 0
    mirror = project.root / "cache" / "acme__client.git"
    assert _git(mirror, "rev-parse", "--is-bare-repository").strip() == "true"
    assert not (mirror / "src").exists() and not (mirror / "index").exists()  # no work tree
    assert _git(mirror, "config", "remote.origin.partialclonefilter").strip() == "blob:none"
    assert _missing_blobs(mirror) == 19  # only the cited file's blob came over
    # the local upload side reads the upstream's packs through bounded windows
    served = _git(mirror, "config", "remote.origin.uploadpack")
    assert "-c core.packedGitLimit=32m -c core.packedGitWindowSize=8m" in served


def test_prefetch_is_one_round_trip_per_batch(upstream: Upstream, tmp_path: Path) -> None:
    upstream.commit("many files", _files(30))
    mirror = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    mirror.sync()
    head = mirror.head()
    blobs = [b for p in sorted(_files(30)) if (b := mirror.blob_id(head, p))]

    mirror.prefetch(blobs[:25])
    mirror.prefetch(blobs)  # 25 already here: one more trip for the other 5
    mirror.prefetch(blobs)  # all here: no trip
    texts = [mirror.read(b) for b in blobs]

    # no `branch`: one `ls-remote` for the remote's default, then sync (commits, then
    # HEAD's trees) + two batches
    assert (mirror.round_trips, mirror.blobs_fetched) == (5, 30)
    assert all(t.startswith(b"pub fn f") for t in texts)
    mirror.close()


def test_a_blob_the_upstream_lacks_is_set_aside_and_reading_it_names_the_upstream(
    upstream: Upstream, tmp_path: Path
) -> None:
    """A copy of a repository that lacks some of its blobs (or a history rewritten since
    the mirror read its trees) answers a fetch with git's "not our ref": the blob is set
    aside, the others of the batch come over, and reading it is an error that names the
    upstream and what to check."""
    upstream.commit("lib", _files(3))
    mirror = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    mirror.sync()
    blobs = [b for p in sorted(_files(3)) if (b := mirror.blob_id(mirror.head(), p))]
    lacked = "1" * 40

    mirror.prefetch([lacked, *blobs])

    assert mirror.absent == {lacked}
    assert [mirror.read(b)[:8] for b in blobs] == [b"pub fn f"] * 3
    assert mirror.round_trips == 5  # `ls-remote`, sync (commits, trees), the batch twice
    with pytest.raises(Absent) as raised:
        mirror.read(lacked)
    message = str(raised.value)
    assert "blob 111111111111 is not on the upstream acme/client" in message
    assert "config.toml" in message
    mirror.close()


def test_an_upstream_that_lacks_many_blobs_fails_the_fetch(
    upstream: Upstream, tmp_path: Path
) -> None:
    """Past ABSENT_MOST blobs set aside, the upstream is taken for one that lacks them all:
    the fetch's error names the upstream and what to check."""
    upstream.commit("lib", {LIB: "pub fn a() {}\n"})
    mirror = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    mirror.sync()
    mirror.absent = {f"{n:040x}" for n in range(ABSENT_MOST)}

    with pytest.raises(UpstreamError) as raised:
        mirror.prefetch(["1" * 40])

    message = str(raised.value)
    assert message.startswith("acme/client (")
    assert "not our ref 1111111111111111111111111111111111111111" in message
    assert "the upstream does not have them" in message and "config.toml" in message
    mirror.close()


def test_files_by_ending_are_listed_once_per_commit_and_kept_apart(
    upstream: Upstream, tmp_path: Path
) -> None:
    first = upstream.commit("rust", _files(3))
    second = upstream.commit("python too", {**_files(3), "tool.py": "x = 1\n"})
    mirror = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    mirror.sync([first])

    rust, again = mirror.files(second, (".rs",)), mirror.files(second, (".rs",))
    python = mirror.files(second, (".py",))
    earlier = mirror.files(first, (".py", ".rs"))

    assert sorted(rust) == ["src/m0.rs", "src/m1.rs", "src/m2.rs"] and again is rust
    assert list(python) == ["tool.py"]
    assert sorted(earlier) == sorted(rust)  # the first commit had no Python file
    assert mirror.listings == 2  # one `ls-tree` per commit, whatever the endings asked
    mirror.close()


def test_git_commands_run_side_by_side_answer_in_order_and_a_failure_is_an_error(
    upstream: Upstream, tmp_path: Path
) -> None:
    for n in range(6):
        upstream.commit(f"change {n}", {f"src/m{n}.rs": f"pub fn f{n}() {{}}\n"})
    mirror = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    mirror.sync()
    commits = mirror.git("rev-list", mirror.head()).split()
    shows = [("show", "--no-patch", "--format=%H", commit) for commit in commits]

    assert [out.strip() for out in mirror.gits(shows)] == commits  # 4 at a time, in order
    with pytest.raises(UpstreamError, match=r"0{40}"):
        mirror.gits([("show", "0" * 40), *shows])  # the others, running, are stopped
    assert mirror.gits([]) == []
    mirror.close()


def test_a_read_is_one_request_to_git_and_a_blob_over_the_limit_is_refused(
    upstream: Upstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Judging reads thousands of blobs: the size comes with the bytes (`cat-file
    # --batch`), not from a `--batch-check` request first. A blob over the limit is
    # refused, and the read after it still gets its own bytes.
    from watcher.errors import TooLarge

    upstream.commit("files", {"src/big.rs": "// x\n" * 500, "src/small.rs": "pub fn f() {}\n"})
    limits = {"file_bytes": 1_000}
    mirror = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    mirror.sync()
    monkeypatch.setattr(mirror, "limits", mirror.limits.model_copy(update=limits))
    head = mirror.head()
    big, small = (mirror.blob_id(head, p) or "" for p in ("src/big.rs", "src/small.rs"))
    mirror.prefetch([big, small])
    monkeypatch.setattr(mirror.repo.odb, "info", None)  # a second request would fail

    with pytest.raises(TooLarge):
        mirror.read(big)
    assert mirror.read(small) == b"pub fn f() {}\n"
    mirror.close()


def test_a_local_upstream_sends_what_it_stores_and_searches_no_deltas(
    upstream: Upstream, tmp_path: Path
) -> None:
    """Six versions of one file, stored loose upstream: a local upload-pack searching
    for deltas (what git does by default) would send five of them as deltas, and would
    compress them at zlib's default level (6), not its fastest (1)."""
    body = "".join(f"pub fn f{i}() -> u32 {{\n    {i}\n}}\n" for i in range(200))
    commits = [upstream.commit(f"v{n}", {LIB: body + f"// {n}\n"}) for n in range(6)]
    mirror = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    mirror.sync()

    mirror.prefetch([b for c in commits if (b := mirror.blob_id(c, LIB))])

    listing = [
        _git(mirror.path, "verify-pack", "-v", str(p.with_suffix(".idx"))) for p in mirror.packs()
    ]
    blobs = [line.split() for text in listing for line in text.splitlines() if " blob " in line]
    assert len(blobs) == 6
    assert [b for b in blobs if len(b) > 5] == []  # none stored as a delta of another
    (fetched,) = [p for p, text in zip(mirror.packs(), listing, strict=True) if " blob " in text]
    assert {_zlib_level(fetched, int(b[4])) for b in blobs} == {1}
    mirror.close()


def test_a_mirror_made_by_an_older_watch_gets_the_current_upload_pack(
    upstream: Upstream, tmp_path: Path
) -> None:
    upstream.commit("one", {LIB: "fn a() {}\n"})
    mirror = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    mirror.sync()
    _git(
        mirror.path,
        "config",
        "remote.origin.uploadpack",
        "git -c uploadpack.allowFilter=true upload-pack",
    )
    upstream.commit("two", {LIB: "fn b() {}\n"})

    mirror.sync()

    served = _git(mirror.path, "config", "remote.origin.uploadpack")
    assert "-c pack.window=0" in served
    assert mirror.head() == upstream.head()
    mirror.close()


def _commits(upstream: Upstream, n: int, first: int = 0) -> list[str]:
    """`n` commits, each giving LIB another body."""
    return [upstream.commit(f"c{i}", {LIB: f"fn f() -> u32 {{ {i} }}\n"})
            for i in range(first, first + n)]  # fmt: skip


def _on_main(upstream: Upstream, tmp_path: Path) -> Mirror:
    """A new mirror of the upstream's `main` (no `ls-remote` for its default branch)."""
    return Mirror(UpstreamConfig(repo="acme/client", url=upstream.url, branch="main"),
                  tmp_path / "cache")  # fmt: skip


def _with_trees(mirror: Mirror, commits: list[str]) -> list[str]:
    """Those of `commits` whose root tree is in the mirror (asking git would fetch it)."""
    presence = objects.Presence(mirror.path / "objects")
    tree = {c: _git(mirror.path, "log", "-1", "--format=%T", c).strip() for c in commits}
    return [c for c in commits if presence.has(tree[c])]


def test_a_new_mirror_fetches_the_trees_of_the_cited_history_only(
    upstream: Upstream, tmp_path: Path
) -> None:
    history = _commits(upstream, 6)
    mirror = _on_main(upstream, tmp_path)

    mirror.sync([history[2][:10]])  # a note cites c2: its history is c2..HEAD

    assert mirror.round_trips == 2  # the commits, then their trees in one fetch
    assert _with_trees(mirror, history) == history[2:]
    assert _git(mirror.path, "config", clone.TREES).strip() == history[2]

    mirror.sync([history[2]])  # nothing new: no trees to fetch
    assert mirror.round_trips == 3
    mirror.sync([history[3], history[0]])  # a note at c0 comes: only c0 and c1's trees
    assert mirror.round_trips == 5
    assert _with_trees(mirror, history) == history

    [later] = _commits(upstream, 1, first=6)
    mirror.sync([history[0]])  # the new commit's trees come with it
    assert mirror.round_trips == 6
    assert _with_trees(mirror, [later]) == [later]
    mirror.close()


def test_a_commit_off_the_branch_gets_its_tree_and_those_of_the_branch_since(
    upstream: Upstream, tmp_path: Path
) -> None:
    base = _commits(upstream, 3)
    upstream.branch_off("feature")
    side = upstream.commit("side", {"src/side.rs": "fn side() {}\n"})
    upstream.checkout("main")
    main = upstream.commit("main", {LIB: "fn f() -> u32 { 9 }\n"})
    merged = upstream.merge("feature", "merge feature")
    mirror = _on_main(upstream, tmp_path)

    mirror.sync([side])

    # `git log --first-parent side..HEAD` reads merged, main and the diff to c2.
    assert _with_trees(mirror, [*base, side, main, merged]) == [base[2], side, main, merged]
    assert mirror.round_trips == 2
    mirror.close()


def test_a_commit_fetched_by_id_comes_with_every_tree_it_names(
    upstream: Upstream, tmp_path: Path
) -> None:
    # The pull request's commit keeps `src/b` as the branch had it at c0, a tree the
    # mirror does not hold (its history starts at c2): the server, taking the mirror to
    # have every tree of the commits it holds, would leave that one out.
    upstream.commit("c0", {"src/a/x.rs": "fn x() {}\n", "src/b/y.rs": "fn y() {}\n"})
    upstream.branch_off("pr")
    pr = upstream.commit("on the pull request", {"src/a/x.rs": "fn x() { 1 }\n"})
    upstream.checkout("main")
    upstream.commit("c1", {"src/b/y.rs": "fn y() { 1 }\n"})
    cited = upstream.commit("c2", {"src/a/x.rs": "fn x() { 2 }\n"})
    mirror = _on_main(upstream, tmp_path)
    mirror.sync([cited])
    assert mirror.resolve(pr) is None  # not on the branch: not fetched

    assert mirror.resolve_or_fetch(pr, offline=False) == pr

    presence = objects.Presence(mirror.path / "objects")
    trees = [upstream.git("rev-parse", f"{pr}:{p}").strip() for p in ("", "src", "src/b")]
    assert all(presence.has(t) for t in trees)
    assert mirror.round_trips == 4  # the commits, their trees; the commit, its trees
    mirror.close()


def test_a_rewritten_branch_gets_the_trees_of_its_new_history(
    upstream: Upstream, tmp_path: Path
) -> None:
    old = _commits(upstream, 4)
    mirror = _on_main(upstream, tmp_path)
    mirror.sync([old[2]])
    upstream.git("reset", "--quiet", "--hard", old[1])  # force-pushed: c2 and c3 are gone
    new = _commits(upstream, 2, first=10)

    mirror.sync([old[2]])  # still cited: its history now joins the branch at c1

    assert _with_trees(mirror, [old[1], *new]) == [old[1], *new]
    assert _git(mirror.path, "config", clone.TREES).strip() == old[1]
    mirror.close()


def test_a_mirror_made_with_every_tree_fetches_no_more(upstream: Upstream, tmp_path: Path) -> None:
    history = _commits(upstream, 3)
    mirror = _on_main(upstream, tmp_path)
    mirror.sync()
    _git(mirror.path, "config", "--unset", clone.TREES)  # as an older watch made it

    mirror.sync([history[0]])

    assert mirror.round_trips == 3  # the first sync's two, then only the branch
    mirror.close()


def test_incremental_fetch_and_abbreviated_commits(upstream: Upstream, tmp_path: Path) -> None:
    first = upstream.commit("one", {LIB: "fn a() {}\n"})
    mirror = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    mirror.sync()
    second = upstream.commit("two", {LIB: "fn b() {}\n"})
    upstream.tag("v1.0.0")

    mirror.sync()

    assert mirror.head() == second
    assert mirror.resolve(first[:8]) == first
    assert mirror.resolve("deadbeef") is None
    assert mirror.first_release(second, "v*") == "v1.0.0"
    mirror.close()


def test_offline_uses_the_mirror_as_it_is(
    upstream: Upstream, project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("one", {LIB: "fn a() {}\n"})
    project.note("n", f"{base} {LIB}:1")
    project.run("check", "--format", "json", capsys=capsys)
    upstream.commit("two", {LIB: "struct B;\n"})

    _, offline, _ = project.run("check", "--format", "json", "--offline", capsys=capsys)
    _, online, _ = project.run("check", "--format", "json", capsys=capsys)

    assert json.loads(offline)["results"][0]["verdict"] == "fresh"
    assert json.loads(online)["results"][0]["verdict"] == "missing"


def test_offline_without_a_mirror_is_a_clear_error(
    upstream: Upstream, project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("one", {LIB: "fn a() {}\n"})
    project.note("n", f"{base} {LIB}:1")

    code, out, _ = project.run("check", "--format", "json", "--offline", capsys=capsys)

    report = json.loads(out)
    assert code == 2
    assert "run `watch sync`" in report["upstreams"][0]["error"]


def test_second_run_on_unchanged_upstream_parses_nothing(
    upstream: Upstream, project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("many", _files(10))
    project.note("n", *(f"{base} src/m{i}.rs:1-3" for i in range(10)))
    upstream.commit("change one", {"src/m1.rs": "pub fn f1() -> u32 {\n    100\n}\n"})
    project.run("check", "--format", "json", capsys=capsys)
    assert project.counts.parse.parses > 0
    project.counts.parse.reset()

    code, out, _ = project.run("check", "--format", "json", capsys=capsys)

    assert project.counts.parse.parses == 0
    assert code == 1 and json.loads(out)["summary"]["changed"] == 1


def test_one_upstream_commit_reparses_only_the_touched_file(
    upstream: Upstream, project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("many", _files(10))
    project.note("n", *(f"{base} src/m{i}.rs:1-3" for i in range(10)))
    project.run("check", "--format", "json", capsys=capsys)
    project.counts.parse.reset()
    upstream.commit("touch m4", {"src/m4.rs": "// moved down\n" + _files(10)["src/m4.rs"]})

    project.run("check", "--format", "json", capsys=capsys)

    # The new version of m4 only (its baseline parse is still in this process's cache).
    assert project.counts.parse.parsed_blobs == [
        _git(upstream.path, "rev-parse", "HEAD:src/m4.rs").strip()
    ]


def test_rules_lint_keeps_the_citations_cached(
    upstream: Upstream, project: Project, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    base = upstream.commit("many", _files(3))
    project.note("n", *(f"{base} src/m{i}.rs:1-3" for i in range(3)))
    project.rules(
        '[[rule]]\nid = "f1"\nnote = "n"\npath = "src/m1.rs"\nquery = \'(function_item) @target\'\n'
    )
    project.run("check", "--format", "json", capsys=capsys)
    project.run("rules", "lint", capsys=capsys)
    project.counts.parse.reset()
    monkeypatch.setattr(syntax, "_CACHE", syntax.Cache())  # a new process: only state/ helps

    project.run("check", "--format", "json", capsys=capsys)

    assert project.counts.parse.parses == 0


def _raw_commit(upstream: Upstream, parent: str, header: bytes, message: bytes) -> str:
    """A commit object written byte for byte (headers git itself would not write)."""
    tree = upstream.git("log", "-1", "--format=%T", parent)
    raw = b"tree %s\nparent %s\n%s\n%s" % (tree.encode(), parent.encode(), header, message)
    sha = subprocess.run(
        ["git", "-C", str(upstream.path), "hash-object", "-t", "commit", "-w", "--stdin"],
        input=raw, capture_output=True, check=True,
    ).stdout.decode().strip()  # fmt: skip
    upstream.git("update-ref", "refs/heads/main", sha)
    return sha


def test_commit_info_reads_what_gitpython_reads(upstream: Upstream, tmp_path: Path) -> None:
    """Who made a commit, when and what it says, read from the raw object through the
    mirror's cat-file, equal to GitPython's reading: offsets, signatures, encodings."""
    import git

    plain = upstream.commit("Fix the cursor (#42)\n\nLonger text.\n", {LIB: "fn f() {}\n"})
    odd = [
        _raw_commit(upstream, plain,
                    b"author Zo\xc3\xa9 Dev <z@example.com> 1760000000 +0545\n"
                    b"committer Bot <b@example.com> 1760003600 -0430\n"
                    b"gpgsig -----BEGIN PGP SIGNATURE-----\n abc\n -----END PGP SIGNATURE-----\n",
                    b"Merge pull request #7 from a/b\n\nbody\n"),
    ]  # fmt: skip
    odd.append(_raw_commit(upstream, odd[0],
                           b"author Ren\xe9 <r@example.com> 1760007200 +0000\n"
                           b"committer Ren\xe9 <r@example.com> 1760007200 +0000\n"
                           b"encoding ISO-8859-1\n",
                           b"Caf\xe9 fix\n"))  # fmt: skip
    mirror = _on_main(upstream, tmp_path)
    mirror.sync()
    theirs = git.Repo(upstream.path)
    for sha in [plain, odd[0]]:
        commit = theirs.commit(sha)
        info = mirror.info(sha)
        assert (info.date, info.author, info.summary, info.message) == (
            commit.committed_datetime.isoformat(),
            str(commit.author.name),
            str(commit.summary),
            str(commit.message),
        )
    # GitPython reads a Latin-1 commit as UTF-8 ("Ren\ufffd"); git re-encodes it, as here.
    latin = mirror.info(odd[1])
    assert (latin.author, latin.message) == ("René", "Café fix\n")
    assert upstream.git("log", "-1", "--format=%an %s", odd[1]) == "René Café fix"


def test_a_mistyped_url_says_what_git_found_wrong_not_its_closing_advice(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: "pub fn a() {}\n"})
    project.note("n", f"{base} {LIB}:1")
    typo = upstream.url.replace("upstream", "upstrem")
    project.config_file.write_text(project.config_file.read_text().replace(upstream.url, typo))

    code, out, err = project.run("check", "--format", "json", "--no-issues", capsys=capsys)

    assert code == 2
    (message,) = [u["error"] for u in json.loads(out)["upstreams"]]
    assert "does not appear to be a git repository" in message, message
    assert "check the url" in message
    assert "and the repository exists" not in message + err and "Traceback" not in err
