"""The measurements: each a ratio against a baseline measured in the same run.

Every watcher run is its own process (`python -m bench.probe`, which is `python -m watcher`
plus counters), so its wall time and peak memory are its own.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import rustgen, site
from bench.generate import UPSTREAM, touch_cited
from bench.runner import Run, checked, run
from bench.serve import Counter
from bench.site import Manifest

ROOT = Path(__file__).resolve().parent.parent  # the project: `bench` and `watcher` import from here
REPEAT = 3  # short runs are timed this many times; the fastest counts (least noise)


@dataclass(frozen=True)
class Row:
    """One line of the table."""

    measure: str
    watch: str
    baseline: str
    ratio: str
    goal: str
    met: bool | None  # None: informational
    rss_mb: float | None = None


@dataclass(frozen=True)
class Probe:
    """One `watch check` process: its run, report, counters and network use."""

    run: Run
    report: dict[str, Any]
    parses: int
    parsed_blobs: list[str]
    imported: list[str]
    walk_seconds: float
    connections: int
    bytes_down: int

    def result(self, item_id: str) -> dict[str, Any]:
        return next(r for r in self.report.get("results", []) if r["id"] == item_id)


@dataclass
class Bench:
    """The generated upstream, served at `url`, and the site that watches it."""

    out: Path
    manifest: Manifest
    url: str
    counter: Counter
    rows: list[Row] = field(default_factory=list)

    @property
    def site(self) -> Path:
        return self.out / "site"

    @property
    def full(self) -> Path:
        return self.out / "full.git"

    @property
    def repo_url(self) -> str:
        return f"{self.url}/{UPSTREAM}"

    @property
    def upstream(self) -> Path:
        return self.out / "upstream" / UPSTREAM

    def watch(self, config: Path, *args: str, time_walks: bool = False) -> Probe:
        """`watch check --no-issues --format json` in a fresh process, with its counters."""
        with tempfile.TemporaryDirectory() as tmp:
            stats_file = Path(tmp) / "stats.json"
            self.counter.reset()
            probe = [str(stats_file), *(["--time-walks"] if time_walks else [])]
            cmd = [sys.executable, "-m", "bench.probe", *probe, "check", "--no-issues",
                   "--format", "json", "--config", str(config), *args]  # fmt: skip
            path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
            done = run(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": path})
            stats = json.loads(stats_file.read_text()) if stats_file.exists() else {}
        if done.code not in (0, 1) or not done.stdout.strip():
            raise RuntimeError(f"watch check exited {done.code}: {done.stderr.strip()[-3000:]}")
        return Probe(
            run=done, report=json.loads(done.stdout), parses=stats.get("parses", -1),
            parsed_blobs=stats.get("parsed_blobs", []), imported=stats.get("imported", []),
            walk_seconds=stats.get("walk_seconds", 0.0) if stats.get("walks", 0) > 0 else -1.0,
            connections=self.counter.connections, bytes_down=self.counter.bytes_down,
        )  # fmt: skip

    def add(self, *rows: Row) -> None:
        self.rows.extend(rows)


def full_clone(b: Bench) -> tuple[Run, int]:
    """The baseline for a first run: `git clone --mirror` of everything."""
    shutil.rmtree(b.full, ignore_errors=True)
    b.counter.reset()
    done = checked(["git", "clone", "--quiet", "--mirror", b.repo_url, str(b.full)])
    return done, b.counter.bytes_down


def cold(b: Bench, config: Path) -> Probe:
    """First run: no mirror, no state. Bytes and wall time against the full mirror clone."""
    clone, clone_bytes = full_clone(b)
    for folder in ("cache", "state"):
        shutil.rmtree(b.site / folder, ignore_errors=True)
    probe = b.watch(config)
    got = probe.bytes_down
    on_disk, full_on_disk = _size_pack(b.site / "cache"), _size_pack(b.full)
    b.add(
        Row("cold: bytes received", _mb(got), _mb(clone_bytes) + " (clone --mirror)",
            _ratio(got, clone_bytes), "<= 0.15", got <= 0.15 * clone_bytes, probe.run.rss_mb),
        Row("cold: wall time", _s(probe.run.wall), _s(clone.wall) + " (clone --mirror)",
            _ratio(probe.run.wall, clone.wall), "", None),
        Row("cold: fetches (connections)", str(probe.connections), "1 (clone --mirror)", "", "",
            None),
        Row("  (mirror on disk: size-pack)", _mb(on_disk), _mb(full_on_disk),
            _ratio(on_disk, full_on_disk), "", None),
    )  # fmt: skip
    return probe


def warm(b: Bench, config: Path) -> list[Probe]:
    """Upstream unchanged: against the floor, process start + reading the cited blobs.

    One run settles first, as `bench.scale` does: the first warm run after a cold one is
    a whole check that records its report (watcher.state.replay); the runs after it are answered
    from that record, and the fastest of them counts."""
    settle = b.watch(config)
    probes = [b.watch(config) for _ in range(REPEAT)]
    best = min(probes, key=lambda p: p.run.wall)
    floor = _floor(b)
    imports = min(
        run([sys.executable, "-c", "import watcher.pipeline"], cwd=ROOT).wall for _ in range(REPEAT)
    )
    parses = max(p.parses for p in [settle, *probes])
    heavy = sorted({m for p in probes for m in p.imported} & {"github", "apscheduler"})
    items = len(best.report["results"])
    b.add(
        Row(f"warm, unchanged ({items} items): wall", _s(best.run.wall), _s(floor) + " (floor)",
            _ratio(best.run.wall, floor), "<= 2.0", best.run.wall <= 2 * floor,
            max(p.run.rss_mb for p in probes)),
        Row("  (python -c 'import watcher.pipeline' alone)", _s(imports), _s(floor) + " (floor)",
            _ratio(imports, floor), "", None),
        Row("warm, unchanged: parses", str(parses), "0", "", "0", parses == 0),
        Row("warm, unchanged: fetches (connections)", str(best.connections), "1", "", "", None),
        Row("warm: PyGithub/APScheduler imported", ", ".join(heavy) or "none", "none", "",
            "none", not heavy),
        Row("  (also imported: tree_sitter, git, pydantic)",
            ", ".join(m for m in best.imported if m in ("tree_sitter", "git", "pydantic"))
            or "none", "",
            "", "", None),
    )  # fmt: skip
    return probes


def one_change(b: Bench, config: Path) -> Probe:
    """One upstream commit edits one cited function: only that file's new version is parsed."""
    cited = b.manifest.one_change
    touch_cited(b.upstream, cited)
    probe = b.watch(config)
    versions = _versions(b.upstream, cited.path, b.manifest.baseline)
    parsed = probe.parsed_blobs
    only = set(parsed) <= versions and len(parsed) == len(set(parsed))
    b.add(
        Row("one cited file changed: parses", str(probe.parses),
            f"{len(versions)} (versions of {Path(cited.path).name})", "",
            "that file's, once each", only, probe.run.rss_mb),
        Row("one cited file changed: fetches (connections)", str(probe.connections), "", "", "",
            None),
    )  # fmt: skip
    return probe


def attribution(b: Bench) -> None:
    """`introduced_by` of the construct that flips, against `git log -L` on the full mirror."""
    config = site.write_config(
        b.site, b.repo_url, name="config-attribution.toml", suffix="-attribution"
    )
    # A fresh state and cache, holding only a copy of the mirror (its blobs are there, as the
    # full mirror's are for git log -L): nothing a previous run computed can be reused.
    for folder in ("state-attribution", "cache-attribution"):
        shutil.rmtree(b.site / folder, ignore_errors=True)
    for mirror in (b.site / "cache").glob("*.git"):
        shutil.copytree(mirror, b.site / "cache-attribution" / mirror.name, symlinks=True)
    probe = b.watch(config, "--rule", site.HOT_RULE, "--offline", time_walks=True)
    found = (probe.result(site.HOT_RULE).get("introduced_by") or {}).get("commit")
    m = b.manifest
    log_l = checked(["git", "-C", str(b.full), "log", f"-L:{rustgen.HOT_FN}:{rustgen.HOT_PATH}",
                     "--format=commit %H", f"{m.baseline}..{m.head}"])  # fmt: skip
    answer = _first_touching(log_l.stdout, "ProtocolMode::Legacy =>")
    same = found == answer == m.flip
    span = checked(["git", "-C", str(b.full), "rev-list", "--count", "--first-parent",
                    f"{m.baseline}..{m.head}"]).stdout.strip()  # fmt: skip
    # Without a timed walk (none ran, or the function moved) the whole process counts.
    walk = probe.walk_seconds if probe.walk_seconds >= 0 else probe.run.wall
    b.add(
        Row(f"introduced_by over {span} first-parent commits", _s(walk) + " (walk)",
            _s(log_l.wall) + " (git log -L)", _ratio(log_l.wall, walk) + "x faster",
            ">= 10x", log_l.wall >= 10 * walk, probe.run.rss_mb),
        Row("  (whole `watch check --rule` process)", _s(probe.run.wall), _s(log_l.wall),
            _ratio(log_l.wall, probe.run.wall) + "x faster", "", None),
        Row("introduced_by: same answer as git log -L", (found or "none")[:10],
            (answer or "none")[:10], "", "= flip commit", same),
        Row("introduced_by: parses", str(probe.parses), "", "", "", None),
    )  # fmt: skip


def memory(b: Bench) -> None:
    """The worst peak resident memory of any watch run so far."""
    peak = max(r.rss_mb for r in b.rows if r.rss_mb is not None)
    b.add(Row("peak RSS, worst watch run", f"{peak:.0f} MB", "", "", "<= 300 MB", peak <= 300))


def _floor(b: Bench) -> float:
    """Process start of this Python, plus `git cat-file --batch` of every cited blob."""
    blobs = sorted(_cited_blobs(b, b.manifest.baseline) | _cited_blobs(b, "refs/heads/main"))
    ids = ("\n".join(blobs) + "\n").encode()
    start = min(run([sys.executable, "-c", "pass"]).wall for _ in range(REPEAT))
    cat = min(checked(["git", "-C", str(b.upstream), "cat-file", "--batch"], stdin=ids).wall
              for _ in range(REPEAT))  # fmt: skip
    return start + cat


def _cited_blobs(b: Bench, rev: str) -> set[str]:
    paths = {c.path for c in b.manifest.citations}
    out = checked(["git", "-C", str(b.upstream), "ls-tree", "-r", rev]).stdout
    return {line.split()[2] for line in out.splitlines() if line.split("\t")[1] in paths}


def _versions(repo: Path, path: str, base: str) -> set[str]:
    """Every blob `path` had from `base` to the branch head, `base` included."""
    out = checked(["git", "-C", str(repo), "log", "--format=", "--raw", "--no-abbrev",
                   f"{base}..refs/heads/main", "--", path]).stdout  # fmt: skip
    blobs = {line.split()[3] for line in out.splitlines() if line.startswith(":")}
    return blobs | {checked(["git", "-C", str(repo), "rev-parse", f"{base}:{path}"]).stdout.strip()}


def _first_touching(log: str, needle: str) -> str | None:
    """The oldest commit in `git log -L` output whose patch adds or removes a `needle` line."""
    oldest = None
    commit = None
    for line in log.splitlines():
        if line.startswith("commit "):
            commit = line.split()[1]
        elif line[:1] in "+-" and not line.startswith(("+++", "---")) and needle in line:
            oldest = commit
    return oldest


def _size_pack(folder: Path) -> int:
    """Bytes of every pack under `folder` (a mirror, or a cache of mirrors)."""
    return sum(p.stat().st_size for p in folder.rglob("*.pack"))


def _mb(n: float) -> str:
    return f"{n / 1e6:.2f} MB"


def _s(seconds: float) -> str:
    return f"{seconds:.2f} s"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.3f}" if b else "n/a"
