"""`python -m bench --upstream PATH --site DIR`: the bench's measures on a real upstream.

PATH is a full git repository (a `git clone --mirror` of, say, openai/codex); DIR is a
notes site (its `notes/` and `rules/`; its config is replaced by one that watches PATH
over `file://`). Each measure is a ratio against a baseline taken in the same run:

- cold: a first `watch check` (no mirror, no state) against `git clone --mirror --no-local`;
- warm: an unchanged upstream, one settling run then the fastest of REPEAT, each run
  `bench.probe` (which imports nothing before watch does), against the floor (Python's
  start and `git cat-file --batch` of the cited blobs);
- attribution: the attribution stage of a fresh `watch check` (state cleared, the mirror
  kept, so every version it reads is there, as it is for git) against
  `git log --first-parent -L` of the same items' HEAD lines, one call per file with all
  its ranges, on PATH; each item's answer is checked against the commits git lists;
- peak RSS of every run.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.measure import Row
from bench.runner import checked, run
from bench.shapes import ATTRIBUTION_PROBE as PROBE

ROOT = Path(__file__).resolve().parent.parent
REPEAT = 3
STALE = ("changed", "broken", "missing")


def measure(upstream: Path, site: Path, out: Path, branch: str) -> list[Row]:
    """Every measure on `upstream` and the site's notes; rows for the table."""
    upstream, work = upstream.resolve(), out.resolve() / "real"
    shutil.rmtree(work, ignore_errors=True)
    for folder in ("notes", "rules"):
        source = site / folder
        if source.is_dir():
            shutil.copytree(source, work / folder)
        else:
            (work / folder).mkdir(parents=True)
    config = work / "config.toml"
    config.write_text(
        'notes = "notes"\nrules = "rules"\nstate = "state"\ncache = "cache"\n\n'
        f'[[upstream]]\nrepo = "{_repo_name(site)}"\nurl = "{upstream.as_uri()}"\n'
        f'branch = "{branch}"\nrelease_tags = "rust-v*"\n\n[issues]\nsink = "none"\n'
    )
    rows: list[tuple[Any, ...]] = []
    clone, clone_label = _clone_wall(upstream, work)
    cold, cold_run = _watch(work, config)
    items = len(cold_run["results"])
    rows.append((f"cold check ({items} items)", f"{cold['wall']:.2f} s",
                 f"{clone:.2f} s ({clone_label})", f"{cold['wall'] / clone:.2f}", "", None,
                 cold["rss"]))  # fmt: skip
    # Settle: the first warm run after the cold one (options differ) is a whole check, and
    # so may the next be, before one records what the later ones print (watcher.state.replay).
    for _ in range(3):
        if "pydantic" not in _warm(config)["imported"]:
            break
    warm = [_warm(config) for _ in range(REPEAT)]
    best = min(w["wall"] for w in warm)
    floor = _floor(upstream, cold_run)
    rows.append(("warm, unchanged", f"{best:.2f} s", f"{floor:.2f} s (floor)",
                 f"{best / floor:.2f}", "<= 3", best <= 3 * floor,
                 max(w["rss"] for w in warm)))  # fmt: skip
    heavy = sorted({m for w in warm for m in w["imported"]})
    rows.append(("  warm: heavy modules imported", ", ".join(heavy) or "none", "none", "", "",
                 not heavy, None))  # fmt: skip
    rows += _attribution(upstream, work, config, cold_run, branch)
    peak = max(r[6] for r in rows if r[6] is not None)
    rows.append(("peak RSS, worst watch run", f"{peak:.0f} MB", "", "", "<= 300 MB",
                 peak <= 300, None))  # fmt: skip
    return [Row(*row) for row in rows]


def _attribution(
    upstream: Path, work: Path, config: Path, cold: dict[str, Any], branch: str
) -> list[tuple[Any, ...]]:
    stale = [r for r in cold["results"] if r["verdict"] in STALE and r.get("current")]
    if not stale:
        return [("attribution", "no stale item with lines at HEAD", "", "", "", None, None)]
    runs = []
    for _ in range(REPEAT):
        shutil.rmtree(work / "state", ignore_errors=True)
        runs.append(_watch(work, config, "--offline"))
    stats, report = min(runs, key=lambda r: r[0]["seconds"])
    answers = {r["id"]: (r.get("introduced_by") or {}).get("commit") for r in report["results"]}
    by_file: dict[str, list[dict[str, Any]]] = {}
    for result in stale:
        by_file.setdefault(result["current"]["path"], []).append(result)
    walls, agree = [], 0
    for path, results in by_file.items():
        base = results[0]["baseline"]["commit"]
        ranges = [f"-L{r['current']['start_line']},{r['current']['end_line']}:{path}"
                  for r in results]  # fmt: skip
        walls.append(min(_log_l(upstream, base, branch, ranges)[0] for _ in range(REPEAT)))
        for result in results:
            listed = _log_l(upstream, base, branch, ranges[results.index(result) :][:1])[1]
            agree += answers.get(result["id"]) in listed
    git = sum(walls)
    seconds = stats["seconds"]
    return [
        (f"attribution, {len(stale)} stale items in {len(by_file)} files",
         f"{seconds:.2f} s", f"{git:.2f} s (git log -L)", f"{git / seconds:.2f}x faster",
         ">= 1x", git >= seconds, stats["rss"]),
        ("  answers among the commits git log -L lists", f"{agree}/{len(stale)}", "", "", "",
         None, None),
        ("  versions judged / followed without parsing",
         f"{stats['judged']} / {stats['skipped']}", "", "", "", None, None),
    ]  # fmt: skip


def _watch(work: Path, config: Path, *args: str) -> tuple[dict[str, Any], dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        stats_file = Path(tmp) / "stats.json"
        done = run([sys.executable, "-c", PROBE, str(stats_file), "check", "--no-issues",
                    "--format", "json", "--config", str(config), *args], cwd=ROOT)  # fmt: skip
        if not stats_file.exists() or done.code not in (0, 1):
            raise RuntimeError(f"watch check exited {done.code}: {done.stderr[-2000:]}")
        stats = json.loads(stats_file.read_text())
    return {**stats, "wall": done.wall, "rss": done.rss_mb}, json.loads(done.stdout)


def _warm(config: Path) -> dict[str, Any]:
    """A warm run through `bench.probe`: the attribution probe imports the judging modules
    (and pydantic with them) before watch starts, which a warm run does not need."""
    with tempfile.TemporaryDirectory() as tmp:
        stats_file = Path(tmp) / "stats.json"
        done = run([sys.executable, "-m", "bench.probe", str(stats_file), "check", "--no-issues",
                    "--format", "json", "--config", str(config)], cwd=ROOT)  # fmt: skip
        if not stats_file.exists() or done.code not in (0, 1):
            raise RuntimeError(f"watch check exited {done.code}: {done.stderr[-2000:]}")
        stats = json.loads(stats_file.read_text())
    return {**stats, "wall": done.wall, "rss": done.rss_mb}


def _clone_wall(upstream: Path, work: Path) -> tuple[float, str]:
    """`git clone --mirror` of the upstream; a blobless clone when a full one cannot be made
    (a snapshot may lack its largest blobs)."""
    target = work / "full-clone.git"
    allow = "git -c uploadpack.allowFilter=true upload-pack"
    for label, extra in (("clone --mirror", []), ("blobless clone", ["--filter=blob:none"])):
        done = run(["git", "clone", "--quiet", "--mirror", "--no-local", "-u", allow, *extra,
                    str(upstream), str(target)])  # fmt: skip
        shutil.rmtree(target, ignore_errors=True)
        if done.code == 0:
            return done.wall, label
    raise RuntimeError(f"cannot clone {upstream}: {done.stderr.strip()[-500:]}")


def _floor(upstream: Path, report: dict[str, Any]) -> float:
    """Python's start, plus `git cat-file --batch` of every cited blob at baseline and HEAD."""
    specs = set()
    for result in report["results"]:
        for where in (result.get("baseline"), result.get("current")):
            if where and where.get("path"):
                specs.add(f"{where['commit']}:{where['path']}")
    ids = ("\n".join(sorted(specs)) + "\n").encode()
    start = min(run([sys.executable, "-c", "pass"]).wall for _ in range(REPEAT))
    cat = min(checked(["git", "-C", str(upstream), "cat-file", "--batch"], stdin=ids).wall
              for _ in range(REPEAT))  # fmt: skip
    return start + cat


def _log_l(upstream: Path, base: str, branch: str, ranges: list[str]) -> tuple[float, set[str]]:
    done = checked(["git", "-C", str(upstream), "log", "--first-parent", *ranges,
                    "--format=commit %H", f"{base}..refs/heads/{branch}"])  # fmt: skip
    commits = {line.split()[1] for line in done.stdout.splitlines() if line.startswith("commit ")}
    return done.wall, commits


def _repo_name(site: Path) -> str:
    """The repository the site's notes cite most (its config may name it too)."""
    counts: dict[str, int] = {}
    for note in (site / "notes").glob("**/*.md"):
        for line in note.read_text(errors="replace").splitlines():
            if "url: https://github.com/" in line:
                name = "/".join(line.split("github.com/", 1)[1].split("/")[:2])
                counts[name] = counts.get(name, 0) + 1
    return max(counts, key=lambda k: counts[k]) if counts else "upstream/repo"
