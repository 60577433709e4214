"""A GitHub Actions matrix over upstreams, run here as parallel processes.

Each job is `watch action --upstream REPO --commit-state` in its own clone of one notes
repository, pushing state/ to one bare `origin`, as matrix jobs do. They start from
the same commit, so every job but the first to push loses the race and must rebase.
No two jobs write the same file (the files sink keeps one dashboard page per upstream),
so the rebase never meets a conflict, and the result equals one sequential run's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support import git
from watcher.gitbuild import Upstream

LIB = "src/lib.py"
V1 = 'def handshake(version):\n    return {"protocolVersion": version}\n'
V2 = 'def handshake(version):\n    return {"protocolVersion": version, "capabilities": {}}\n'
REPOS = ("acme/alpha", "acme/beta", "acme/gamma", "acme/delta")


def upstreams(tmp_path: Path) -> dict[str, Upstream]:
    """One upstream per repo; alpha and gamma move after the cited commit."""
    built = {}
    for repo in REPOS:
        upstream = Upstream(tmp_path / "upstreams" / repo.replace("/", "__"))
        upstream.commit("first", {LIB: V1})
        built[repo] = upstream
    return built


def origin_with_notes(where: Path, ups: dict[str, Upstream]) -> Path:
    """A bare origin holding a notes site: one note per upstream, the files sink, a dashboard."""
    where.mkdir(parents=True)
    origin = where / "origin.git"
    git(where, "init", "--quiet", "--bare", "--initial-branch=main", str(origin))
    work = where / "seed"
    git(where, "clone", "--quiet", str(origin), str(work))
    config = 'notes = "notes"\nrules = "rules"\nstate = "state"\n'
    for repo, upstream in ups.items():
        config += f'[[upstream]]\nrepo = "{repo}"\nurl = "{upstream.url}"\nbranch = "main"\n'
        name = repo.split("/")[1]
        base = upstream.git("rev-list", "--max-parents=0", "HEAD")
        (work / "notes").mkdir(exist_ok=True)
        (work / "notes" / f"{name}.md").write_text(
            f"---\nid: {name}-handshake\ntitle: {name} sends the protocol version\nsources:\n"
            f"  - url: https://github.com/{repo}\n    commit: {base}\n    path: {LIB}:1-2\n---\n",
            encoding="utf-8",
        )
    config += '[issues]\nsink = "files"\ndashboard = true\n'
    (work / "rules").mkdir()
    (work / "rules" / ".gitkeep").write_text("", encoding="utf-8")
    (work / "config.toml").write_text(config, encoding="utf-8")
    for key, value in (("user.name", "Maintainer"), ("user.email", "m@example.com")):
        git(work, "config", key, value)
    git(work, "add", "--all")
    git(work, "commit", "--quiet", "-m", "notes")
    git(work, "push", "--quiet", "origin", "main")
    return origin


def job(origin: Path, clone: Path, *args: str) -> subprocess.Popen[str]:
    git(origin.parent, "clone", "--quiet", str(origin), str(clone))
    import watcher

    env = {**os.environ, "PYTHONPATH": str(Path(watcher.__file__).parents[1])}
    cache = clone.parent / f"{clone.name}-mirrors"
    command = [sys.executable, "-m", "watcher", "-q", "action", "--config", "config.toml",
               "--cache-dir", str(cache), "--commit-state", *args]  # fmt: skip
    return subprocess.Popen(
        command, cwd=clone, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def state_tree(origin: Path) -> dict[str, str]:
    """state/ as pushed: path -> content (the run records are not committed)."""
    names = git(origin, "ls-tree", "-r", "--name-only", "main", "--", "state").splitlines()
    return {name: git(origin, "show", f"main:{name}") for name in names}


def test_parallel_matrix_jobs_all_succeed_and_equal_one_sequential_run(tmp_path: Path) -> None:
    ups = upstreams(tmp_path)
    for repo in ("acme/alpha", "acme/gamma"):
        ups[repo].commit("Announce capabilities in the handshake (#7)", {LIB: V2})
    sequential = origin_with_notes(tmp_path / "sequential", ups)
    parallel = origin_with_notes(tmp_path / "parallel", ups)

    one = job(sequential, tmp_path / "sequential" / "job")
    _, one_err = one.communicate(timeout=300)
    # Every clone is made before any job runs: all start from the same commit.
    jobs = [
        job(parallel, tmp_path / "parallel" / f"job-{n}", "--upstream", repo)
        for n, repo in enumerate(REPOS)
    ]
    finished = [(p.wait(timeout=300), p.communicate()[1]) for p in jobs]

    assert one.returncode == 0, one_err
    assert [code for code, _ in finished] == [0] * len(REPOS), "\n".join(e for _, e in finished)
    expected = state_tree(sequential)
    assert state_tree(parallel) == expected
    slugs = sorted(repo.replace("/", "__") for repo in REPOS)
    assert sorted(n for n in expected if n.startswith("state/bookkeeping/")) == [
        f"state/bookkeeping/{s}.json" for s in slugs
    ]
    pages = sorted(n for n in expected if "_dashboard" in n)
    assert pages == [f"state/issues/_dashboard/{s}.md" for s in slugs]
    rows = [line for page in pages for line in expected[page].splitlines() if line[:3] == "| `"]
    status = {r.split("|")[1].strip(" `"): r.split("|")[2].strip() for r in rows}
    assert status == {
        "alpha-handshake": "**changed**",
        "beta-handshake": "**fresh**",
        "gamma-handshake": "**changed**",
        "delta-handshake": "**fresh**",
    }
    assert "watch:accept=alpha-handshake" in expected["state/issues/_dashboard/acme__alpha.md"]
    # No file is written by two jobs: each job's commit touches its own files only.
    commits = git(parallel, "log", "--format=%H", "--grep=save state", "main").split()
    touched = [
        git(parallel, "diff-tree", "--no-commit-id", "--name-only", "-r", c).split()
        for c in commits
    ]
    assert len(touched) == len(REPOS)
    assert sum(map(len, touched)) == len({name for names in touched for name in names})
    assert {"state/issues/alpha-handshake.md", "state/issues/gamma-handshake.md"} < set(expected)
    # One commit per job on top of the notes, every one of them kept.
    log = git(parallel, "log", "--format=%s", "main").splitlines()
    assert log.count("watch: save state after a check") == len(REPOS)
    assert all(json.loads(expected[n]) for n in expected if n.endswith(".json"))
