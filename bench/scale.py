"""`python -m bench.scale`: how the cost of a run grows with the site (issue 13).

Sites of 10 / 100 / 500 / 1,000 / 5,000 citations of real functions of one upstream
(one note per 10 citations, all at one old commit) are each checked in fresh processes:
cold (no mirror, no state), then warm (unchanged upstream) three times. For each size it
prints the cold wall time and the warm runs' median, the packs left in the mirror after
the cold run, fetch round
trips (every `git fetch` process, from git's own trace: the ones git starts by itself to
fill in missing objects count too), and what the watcher counted: `for-each-ref
--contains` calls, pack roll-ups and state files written (bookkeeping and issue
documents apart from the upstream's state).

The cold run's floor is the transfer of the history it cannot do without: a blobless
`git clone --bare` of the same upstream, through the same upload-pack as the mirror's.
Cold runs and clones are interleaved (`--cold-runs`, each clone right after a cold run,
so both see the same machine), and the medians are compared.

The upstream is any git repository (`--upstream PATH`, e.g. a bare mirror of codex),
checked at `--at REV` (default: 2,000 first-parent commits behind the branch); without
`--upstream` the bench's own codex-shaped history is generated first. Functions are
found with the watcher's own tree-sitter index and picked by a seeded shuffle, so a
bigger site holds every function of the smaller ones.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.runner import run
from watcher.mirror.clone import LOCAL_UPLOAD_PACK
from watcher.state.store import slug

ROOT = Path(__file__).resolve().parent.parent
SIZES = (10, 100, 500, 1000, 5000)
PER_NOTE = 10
REPO = "openai/codex"

# Runs `watch ARGS` in this process and writes the counters only the process can see.
PROBE = """\
import json, sys
from pathlib import Path
from watcher.mirror import mirrors
from watcher.state import store as state
counts = {"release_queries": 0, "release_passes": 0, "rollups": 0, "graph_writes": 0}
writes = []
close, write_text = mirrors.Mirror.close, state.write_text
def counted_close(self):
    for key in counts:
        counts[key] += getattr(self, key, 0)
    for key in counts:  # close may run twice; count once
        setattr(self, key, 0)
    close(self)
def counted_write(path, text):
    writes.append(str(path))
    write_text(path, text)
mirrors.Mirror.close = counted_close
state.write_text = counted_write
from watcher.cli import main
from watcher.judge.session import Counts
run = Counts()
code = main(sys.argv[2:], counts=run)
import resource
usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
own_cpu, children_cpu = (u.ru_utime + u.ru_stime for u in usage)
split = {"main": own_cpu, "workers": run.pool.worker_cpu,
         "git": children_cpu - run.pool.worker_cpu}
Path(sys.argv[1]).write_text(json.dumps(
    {**counts, "writes": writes, "cpu": own_cpu + children_cpu, "cpu_split": split}))
sys.exit(code)
"""


@dataclass(frozen=True)
class Function:
    path: str
    name: str
    start: int
    end: int


@dataclass(frozen=True)
class Measured:
    size: int
    cold: float
    warm: float
    cold_cpu: float  # user + system seconds of the process and its git children
    warm_cpu: float
    packs: int
    cold_counts: dict[str, Any]
    warm_counts: dict[str, Any]
    summary: dict[str, int]
    # The blobless clone beside the cold runs (medians; NaN: not measured), every cold
    # run's and clone's wall time, and the cold runs' peak memory (MB, the worst).
    clone: float = float("nan")
    clone_cpu: float = float("nan")
    colds: tuple[float, ...] = ()
    clones: tuple[float, ...] = ()
    cold_rss: float = float("nan")


# The definition kinds that are functions or methods, in each language the watcher reads.
FUNCTION_KINDS = frozenset({"function_item", "function_declaration", "method_declaration",
                            "function_definition", "method_definition"})  # fmt: skip


def functions(repo: Path, rev: str, limit: int, seed: int, language: str) -> list[Function]:
    """Up to `limit` distinct functions of 3+ lines at `rev` in one language the watcher
    reads (codex's Rust, go-sdk's Go, ...), in a seeded order."""
    from watcher.parse import languages, syntax

    listing = _git(repo, "ls-tree", "-r", "--full-tree", rev).splitlines()
    files = sorted(
        (path, line.split()[2])
        for line in listing
        if line.split()[1] == "blob"
        and languages.for_path(path := line.split("\t", 1)[1]) == language
    )
    blobs = _cat(repo, [blob for _, blob in files])
    found = []
    for path, blob in files:
        parsed = syntax.parse(blob, language, lambda blob=blob: blobs[blob])
        for d in parsed.definitions:
            if d.kind in FUNCTION_KINDS and d.end_line - d.start_line >= 2:
                found.append(Function(path, d.name, d.start_line, d.end_line))
    unique = list({(f.path, f.name): f for f in found}.values())  # one per name in a file
    random.Random(seed).shuffle(unique)
    return unique[:limit]


def write_site(folder: Path, url: str, commit: str, chosen: list[Function], tags: str) -> Path:
    """Notes of PER_NOTE citations each and a config with the `files` issue sink."""
    shutil.rmtree(folder, ignore_errors=True)
    notes = folder / "notes"
    notes.mkdir(parents=True)
    (folder / "rules").mkdir()
    for n in range(0, len(chosen), PER_NOTE):
        lines = ["---", f"id: scale-note-{n // PER_NOTE:04d}", f"title: Scale note {n}", "sources:"]
        for f in chosen[n : n + PER_NOTE]:
            lines += [
                f"  - url: https://github.com/{REPO}",
                f"    title: {f.path}, {f.name}",
                f"    commit: {commit[:10]}",
                f"    path: {f.path}:{f.start}-{f.end}",
            ]
        lines += ["---", "", "Generated by `python -m bench.scale`.", ""]
        (notes / f"scale-note-{n // PER_NOTE:04d}.md").write_text("\n".join(lines))
    config = folder / "config.toml"
    config.write_text(
        'notes = "notes"\nrules = "rules"\nstate = "state"\ncache = "cache"\n\n'
        f'[[upstream]]\nrepo = "{REPO}"\nurl = "{url}"\nbranch = "main"\n'
        f'release_tags = "{tags}"\n\n[issues]\nsink = "files"\ndashboard = false\n'
    )
    return config


def measure(folder: Path, config: Path, size: int, upstream: Path, runs: int = 1) -> Measured:
    """Cold runs of `watch check` on one site, each followed by a blobless clone of the
    upstream (`runs` of each, interleaved), then warm runs; each its own process. Wall
    and CPU are medians; the counters are the last cold run's."""
    colds: list[tuple[float, float, float]] = []  # (wall, cpu, peak MB)
    clones: list[tuple[float, float]] = []
    for n in range(runs):
        if n:  # the next cold run starts, as the first, with no mirror and no state
            for leftover in ("cache", "state"):
                shutil.rmtree(folder / leftover, ignore_errors=True)
        wall, cold_counts, report = _probe(folder, config)
        colds.append((wall, cold_counts.pop("cpu"), cold_counts.pop("rss")))
        clones.append(blobless_clone(upstream, folder / "blobless.git"))
    packs = len(list((folder / "cache").glob("*.git/objects/pack/pack-*.pack")))
    warm, warm_counts = _first_warm(folder, config)
    warm_counts.pop("rss")
    return Measured(
        size, statistics.median(w for w, _, _ in colds), warm,
        statistics.median(c for _, c, _ in colds), warm_counts.pop("cpu"), packs, cold_counts,
        warm_counts, report.get("summary", {}),
        clone=statistics.median(w for w, _ in clones),
        clone_cpu=statistics.median(c for _, c in clones),
        colds=tuple(w for w, _, _ in colds), clones=tuple(w for w, _ in clones),
        cold_rss=max(r for _, _, r in colds),
    )  # fmt: skip


def blobless_clone(upstream: Path, target: Path) -> tuple[float, float]:
    """Wall and CPU seconds of `git clone --bare --filter=blob:none` of the upstream over
    file:// (`--no-local`: objects go through upload-pack, as the mirror's do, with the
    same upload-pack settings): the transfer a cold run cannot do without."""
    shutil.rmtree(target, ignore_errors=True)
    done = run(["git", "clone", "--quiet", "--bare", "--filter=blob:none", "--no-local",
                "-u", LOCAL_UPLOAD_PACK, upstream.as_uri(), str(target)])  # fmt: skip
    shutil.rmtree(target, ignore_errors=True)
    if done.code != 0:
        raise SystemExit(f"blobless clone of {upstream} failed:\n{done.stderr[-2000:]}")
    return done.wall, done.cpu


WARM_RUNS = 3


def _first_warm(folder: Path, config: Path) -> tuple[float, dict[str, Any]]:
    """The first warm run after the cold one, WARM_RUNS times: wall and CPU are medians
    (one run is at the mercy of whatever else the machine does), the counters the first
    run's. Each run starts from the warm record the cold run left (`cache/warm-*.json`:
    what to fetch, no report), so each judges from state as the first warm run does,
    rather than printing that run's report again (watcher.state.replay)."""
    records = {path: path.read_bytes() for path in (folder / "cache").glob("warm-*.json")}
    walls: list[float] = []
    cpus: list[float] = []
    counts: dict[str, Any] = {}
    for n in range(WARM_RUNS):
        for path, data in records.items():
            path.write_bytes(data)
        wall, probed, _ = _probe(folder, config)
        walls.append(wall)
        cpus.append(probed.pop("cpu"))
        counts = counts if n else probed
    return statistics.median(walls), {**counts, "cpu": statistics.median(cpus), "rss": 0.0}


def measure_warm(folder: Path, config: Path, size: int) -> Measured:
    """Warm runs only, on a site a cold run left (`--warm-only`): one run to settle what a
    newer watch records, then the fastest of three."""
    if not (folder / "state" / f"{slug(REPO)}.json").exists():
        raise SystemExit(f"{folder}: no state from a cold run; run without --warm-only first")
    _, _, report = _probe(folder, config)
    runs = [_probe(folder, config) for _ in range(3)]
    warm, warm_counts, _ = min(runs, key=lambda r: r[0])
    warm_counts.pop("rss")
    packs = len(list((folder / "cache").glob("*.git/objects/pack/pack-*.pack")))
    cold_counts = dict.fromkeys(warm_counts, "-")
    return Measured(
        size, float("nan"), warm, float("nan"), warm_counts.pop("cpu"), packs, cold_counts,
        warm_counts, report.get("summary", {}),
    )  # fmt: skip


def _probe(folder: Path, config: Path) -> tuple[float, dict[str, Any], dict[str, Any]]:
    stats = folder / "stats.json"
    trace = folder / "trace"
    shutil.rmtree(trace, ignore_errors=True)
    trace.mkdir()
    done = run(
        [sys.executable, "-c", PROBE, str(stats), "check", "--config", str(config),
         "--format", "json"],
        cwd=ROOT, env={**os.environ, "GIT_TRACE2_EVENT": str(trace)},
    )  # fmt: skip
    if done.code not in (0, 1, 2) or not stats.exists():
        raise SystemExit(f"watch check failed ({done.code}):\n{done.stderr[-2000:]}")
    data = json.loads(stats.read_text())
    data["rss"] = done.rss_mb
    data["round_trips"], data["release_queries"] = _fetches(trace)
    state_dir = folder / "state"
    written = [Path(w) for w in data.pop("writes")]  # cache files (the notes memo) aside
    writes = [w.relative_to(state_dir).as_posix() for w in written if w.is_relative_to(state_dir)]
    data["state_writes"] = sum(w == f"{slug(REPO)}.json" for w in writes)
    data["issue_docs"] = sum(w.startswith("issues/") and w.endswith(".md") for w in writes)
    data["bookkeeping"] = len(writes) - data["state_writes"] - data["issue_docs"]
    report = json.loads(done.stdout) if done.stdout.strip() else {}
    return done.wall, data, report


COLUMNS = (
    "citations", "notes", "cold s", "cold cpu", "warm s", "warm cpu", "packs", "fetches",
    "contains", "passes", "rollups", "bookkeeping", "issue docs", "verdicts",
)  # fmt: skip


def render(rows: list[Measured]) -> str:
    """One line per size; counters as cold/warm. CPU is user + system time of watch and
    its git children: on a shared machine it tells what the run costs when wall time
    mostly tells how busy the machine was."""
    table = [COLUMNS]
    for m in rows:
        c, w = m.cold_counts, m.warm_counts
        verdicts = " ".join(f"{k}={v}" for k, v in m.summary.items() if v)
        table.append((
            f"{m.size:,}", f"{-(-m.size // PER_NOTE):,}", _seconds(m.cold, 1),
            _seconds(m.cold_cpu, 1),
            f"{m.warm:.2f}", f"{m.warm_cpu:.2f}",
            str(m.packs), f"{c['round_trips']}/{w['round_trips']}",
            f"{c['release_queries']}/{w['release_queries']}",
            f"{c['release_passes']}/{w['release_passes']}", f"{c['rollups']}/{w['rollups']}",
            f"{c['bookkeeping']}/{w['bookkeeping']}", f"{c['issue_docs']}/{w['issue_docs']}",
            verdicts,
        ))  # fmt: skip
    widths = [max(len(r[i]) for r in table) for i in range(len(COLUMNS))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in table]
    return "\n".join([lines[0], "  ".join("-" * w for w in widths), *lines[1:], *_splits(rows)])


def _splits(rows: list[Measured]) -> list[str]:
    """Each size's cold runs against the blobless clones beside them, then where each
    cold run's CPU went: watch's own process, its forked workers (their shares as they
    told them), and git, a local upstream's serving side included."""
    found = []
    for m in rows:
        if m.colds:
            found.append(
                f"cold at {m.size:,} citations: {_runs(m.colds)} s, peak {m.cold_rss:.0f} MB; "
                f"blobless clone beside them: {_runs(m.clones)} s (CPU {m.clone_cpu:.1f} s); "
                f"cold / clone {m.cold / m.clone:.1f}x (CPU {m.cold_cpu / m.clone_cpu:.1f}x)"
            )
    for m in rows:
        split = m.cold_counts.get("cpu_split")
        if isinstance(split, dict):  # "-": not measured (`--warm-only`)
            found.append(
                f"cold CPU at {m.size:,} citations: {split['main']:.1f} s in watch, "
                f"{split['workers']:.1f} s in its workers, {split['git']:.1f} s in git"
            )
    return found


def _runs(walls: tuple[float, ...]) -> str:
    """Wall times of a few runs, as `median (low-high)`."""
    low, high = min(walls), max(walls)
    median = statistics.median(walls)
    return f"{median:.1f}" if len(walls) == 1 else f"{median:.1f} ({low:.1f}-{high:.1f})"


def _seconds(value: float, digits: int) -> str:
    return "-" if value != value else f"{value:.{digits}f}"  # NaN: not measured


def goals(rows: list[Measured]) -> list[tuple[str, str, bool]]:
    """Issue 13's goals and issue 12's cold ones, for the sizes measured (a cold run not
    measured, `--warm-only`, is NaN: its goals are left out)."""
    by = {m.size: m for m in rows}
    cold = {size: m.cold for size, m in by.items() if m.cold == m.cold}
    out = []
    if 1000 in cold:
        out.append(("cold, 1,000 citations <= 15 s", f"{cold[1000]:.1f} s", cold[1000] <= 15))
        if by[1000].clone == by[1000].clone:
            ratio = cold[1000] / by[1000].clone
            out.append(("cold, 1,000 citations / blobless clone <= 2x", f"{ratio:.1f}x",
                        ratio <= 2))  # fmt: skip
        if by[1000].cold_rss == by[1000].cold_rss:
            rss = by[1000].cold_rss
            out.append(("peak RSS, cold 1,000 citations <= 300 MB", f"{rss:.0f} MB", rss <= 300))
    if 5000 in cold:
        out.append(("cold, 5,000 citations <= 30 s", f"{cold[5000]:.1f} s", cold[5000] <= 30))
    if 5000 in cold and 500 in cold:
        ratio = cold[5000] / cold[500]
        out.append(("cold 5,000 / cold 500 <= 10x", f"{ratio:.1f}x", ratio <= 10))
    if 5000 in by and 500 in by:
        ratio = by[5000].warm / by[500].warm
        out.append(("warm 5,000 / warm 500 <= 10x", f"{ratio:.1f}x", ratio <= 10))
    if 5000 in by:
        big = by[5000]
        out.append(("warm, 5,000 citations <= 1.5 s", f"{big.warm:.2f} s", big.warm <= 1.5))
        out.append(("packs after a cold run at 5,000 <= 5", str(big.packs), big.packs <= 5))
    return out


def main(argv: list[str] | None = None) -> int:
    """Measure every size and print the table and the goals; exit 1 when one is missed."""
    parser = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__)
    parser.add_argument("--upstream", type=Path, help="a git repository (default: generated)")
    parser.add_argument("--branch", default="main")
    parser.add_argument("--at", help="the cited commit (default: BRANCH~2000, first-parent)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--release-tags", default="rust-v*")
    parser.add_argument("--language", default="rust", help="whose functions are cited")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument(
        "--cold-runs",
        type=int,
        default=3,
        help="cold runs per size, each beside a blobless clone of the upstream (medians count)",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "scale")
    parser.add_argument(
        "--warm-only",
        action="store_true",
        help="reuse the sites an earlier run left under --out: warm runs only (fastest of 3)",
    )
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    out = args.out.resolve()
    if args.warm_only:
        return _report([measure_warm(out / f"site-{n}", out / f"site-{n}" / "config.toml", n)
                        for n in sizes])  # fmt: skip
    upstream, baseline = (args.upstream.resolve(), None) if args.upstream else _generated(out)
    rev = args.at or baseline or f"{args.branch}~2000"
    commit = _git(upstream, "rev-parse", "--verify", f"{rev}^{{commit}}").strip()
    chosen = functions(upstream, commit, max(sizes), args.seed, args.language)
    print(f"{upstream}: {len(chosen)} functions at {commit[:12]}", file=sys.stderr)
    rows = []
    for size in sizes:
        folder = out / f"site-{size}"
        config = write_site(folder, upstream.as_uri(), commit, chosen[:size], args.release_tags)
        rows.append(measure(folder, config, min(size, len(chosen)), upstream, args.cold_runs))
        print(render(rows[-1:]).splitlines()[-1], file=sys.stderr)
    return _report(rows)


def _report(rows: list[Measured]) -> int:
    print(render(rows))
    met = goals(rows)
    for name, value, ok in met:
        print(f"{name}: {value} {'met' if ok else 'NOT MET'}")
    return 0 if all(ok for _, _, ok in met) else 1


def _generated(out: Path) -> tuple[Path, str]:
    """The bench's codex-shaped upstream, and its baseline commit."""
    from bench.generate import UPSTREAM, generate
    from bench.history import FULL

    manifest = generate(out / "generated", FULL)
    return out / "generated" / "upstream" / UPSTREAM, manifest.baseline


def _cat(repo: Path, blobs: list[str]) -> dict[str, bytes]:
    """Blob contents through one `git cat-file --batch`."""
    done = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch"],
        input="".join(b + "\n" for b in blobs).encode(), capture_output=True, check=True,
    )  # fmt: skip
    data, pos, found = done.stdout, 0, {}
    for blob in blobs:
        header_end = data.index(b"\n", pos)
        size = int(data[pos:header_end].split()[2])
        found[blob] = data[header_end + 1 : header_end + 1 + size]
        pos = header_end + 2 + size
    return found


def _fetches(trace: Path) -> tuple[int, int]:
    """`git fetch` processes (one round trip each) and `for-each-ref --contains` processes
    in a trace folder: counted from git's side, so any version of watch can be measured."""
    fetches = contains = 0
    for file in trace.iterdir():
        with file.open(encoding="utf-8") as handle:
            text = handle.read()
        fetches += '"event":"cmd_name"' in text and '"name":"fetch"' in text
        contains += '"for-each-ref"' in text and '"--contains"' in text
    return fetches, contains


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


if __name__ == "__main__":
    raise SystemExit(main())
