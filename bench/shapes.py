"""`python -m bench.shapes`: the shapes that made attribution slow on real upstreams.

Generates one repository with `git fast-import`:

- `src/session/engine.rs`, 3,200 lines of small functions, edited in 1,200 first-parent
  commits (one function each, lines added above now and then), renamed to
  `src/core/engine.rs` half-way; one function, `hot_path`, is changed in the 100th
  commit and edited again later, so finding who made it what it is at HEAD walks back
  1,100 versions;
- `src/small.rs` (0.2 MB) and `src/large.rs` (1.5 MB), 100 citations each, both shifted
  by one line at HEAD, so every citation is found again (moved) in a new version.

Then, each in fresh processes, fastest of REPEAT (of PER_REPEAT, the time per citation):

- `introduced_by` of the hot function (the attribution stage of `watch check`, timed in
  the process, on a mirror whose blobs are already there) against
  `git --first-parent log -L` of the same lines on the full repository, same answer;
- the time per citation in the 0.2 MB file and in the 1.5 MB file, in CPU time: judging
  the last 90 of 100 moved citations of one file, the first ten having parsed and
  indexed its two versions (and all but the first, the indexing included), for
  functions cited whole and for ranges of five statements inside them (a second site,
  `site-part`, so the walk above judges the same items as before).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench import gitlog, scattered
from bench.runner import checked, run

ROOT = Path(__file__).resolve().parent.parent
REPEAT = 3
PER_REPEAT = 7  # the time per citation's runs (below)
BIG, RENAMED = "src/session/engine.rs", "src/core/engine.rs"
HOT = "hot_path"
WHO = "Bench Bot <bench@example.com> {t} +0000"

# `watch ARGS` in this process, timing its attribution stage (everything else is reported
# apart), in wall time and in CPU time (its own and its git children's), and counting
# what it did; `bench.real` uses it too.
ATTRIBUTION_PROBE = """\
import json, resource, sys, time
from pathlib import Path
from watcher.history import attribute
from watcher.judge.session import Counts
spent, cpu = [], []
stage = attribute.attribute
def used():  # CPU of this process, and of its git children done with (the stage's cat-file)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime
def timed(*args, **kwargs):
    start, before = time.perf_counter(), used()
    try:
        return stage(*args, **kwargs)
    finally:
        spent.append(time.perf_counter() - start)
        cpu.append(used() - before)
attribute.attribute = timed
from watcher.cli import main
run = Counts()
code = main(sys.argv[2:], counts=run)
Path(sys.argv[1]).write_text(json.dumps({"seconds": sum(spent), "cpu": sum(cpu),
    "parses": run.parse.parses, "judged": run.walk.judged, "skipped": run.walk.skipped,
    "imported": sorted({m.split(".")[0] for m in sys.modules} & {"tree_sitter", "git", "github",
                                                                  "apscheduler"})}))
"""

# Judges the citations of one file once the first ones have parsed and indexed both versions:
# each version's definitions are listed once it is asked more than INDEX_AFTER names (before,
# each name is searched for in its bytes), a cost per version, not per citation. Also times
# all but the first, the listing included ("amortized").
PER_CITATION_PROBE = """\
import json, sys, time
from pathlib import Path
from watcher import config
from watcher.judge import classify
from watcher.locate.definitions import INDEX_AFTER
from watcher.pipeline import CheckOptions, gather
from watcher.mirror.mirrors import Mirror
cfg = config.load(Path(sys.argv[2]))
items = [i for i in gather(cfg, CheckOptions(offline=True)).items if i.path == sys.argv[3]]
mirror = Mirror(cfg.upstream[0], cfg.cache)
head = mirror.head()
plans = [classify.plan(mirror, head, i, offline=True) for i in items]
mirror.prefetch(b for p in plans for b in p.blobs)
first = classify.judge(mirror, plans[0])
start, start_cpu = time.perf_counter(), time.process_time()
verdicts = [classify.judge(mirror, p).verdict.value for p in plans[1 : INDEX_AFTER + 1]]
middle, middle_cpu = time.perf_counter(), time.process_time()
verdicts += [classify.judge(mirror, p).verdict.value for p in plans[INDEX_AFTER + 1 :]]
end, end_cpu = time.perf_counter(), time.process_time()
timed = len(plans) - INDEX_AFTER - 1
Path(sys.argv[1]).write_text(json.dumps({"per_citation": (end - middle) / timed,
    "cpu": (end_cpu - middle_cpu) / timed, "amortized": (end - start) / len(plans[1:]),
    "amortized_cpu": (end_cpu - start_cpu) / len(plans[1:]), "verdicts": verdicts}))
"""


def function(name: str, value: int, lines: int) -> list[str]:
    body = [
        f"    let v{i} = input.wrapping_mul({value + i}).rotate_left({i % 7});"
        for i in range(lines)
    ]
    return [f"pub fn {name}(input: u64) -> u64 {{", *body, f"    v0 ^ v{lines - 1}", "}", ""]


class Source:
    """A generated Rust file: functions by name, each with a value that edits change."""

    def __init__(self, prefix: str, count: int, lines: int) -> None:
        self.names = [f"{prefix}_{i:04d}" for i in range(count)]
        self.values = {n: i for i, n in enumerate(self.names)}
        self.lines = lines
        self.header = 0

    def text(self) -> bytes:
        out = ["// generated by bench.shapes"] * (1 + self.header)
        for name in self.names:
            out += function(name, self.values[name], self.lines)
        return ("\n".join(out) + "\n").encode()

    def span(self, name: str) -> tuple[int, int]:
        """The lines of a function, from its signature to its closing brace."""
        start = 2 + self.header + (self.lines + 4) * self.names.index(name)
        return start, start + self.lines + 2


def generate(out: Path, seed: int = 12) -> dict[str, object]:
    """Write `out/upstream.git` (full, bare) and `out/site`; return what was cited."""
    shutil.rmtree(out, ignore_errors=True)
    repo = out / "upstream.git"
    checked(["git", "init", "-q", "--bare", str(repo)])
    rng = random.Random(seed)
    big = Source("step", 199, 13)
    big.names.insert(120, HOT)
    big.values[HOT] = 7
    small, large = Source("small", 200, 13), Source("large", 1500, 13)
    choose = random.Random(seed + 1)
    hot = (BIG, *big.span(HOT))
    sources = [hot] + [
        (f"src/{source.names[0].split('_')[0]}.rs", *source.span(name))
        for source in (small, large)
        for name in choose.sample(source.names, 100)
    ]
    # The same functions' 3rd to 7th statements: a partial citation, carried by alignment.
    partial = [(path, start + 3, start + 7) for path, start, _ in sources[1:]]
    importer = subprocess.Popen(
        ["git", "-C", str(repo), "fast-import", "--quiet", "--done"], stdin=subprocess.PIPE
    )
    assert importer.stdin is not None
    stream = importer.stdin  # written as it is generated: 1,200 versions of a big file
    marks: list[int] = []
    path = BIG

    def commit(message: str, files: dict[str, bytes | None]) -> None:
        mark = len(marks) + 1
        who = WHO.format(t=1_700_000_000 + 60 * mark)
        head = f"commit refs/heads/main\nmark :{mark}\nauthor {who}\ncommitter {who}\n"
        stream.write(f"{head}data {len(message)}\n{message}".encode())
        if marks:
            stream.write(f"from :{marks[-1]}\n".encode())
        for name, blob in files.items():
            if blob is None:
                stream.write(f"D {name}\n".encode())
            else:
                stream.write(f"M 100644 inline {name}\ndata {len(blob)}\n".encode() + blob)
        marks.append(mark)

    commit("base (#1)", {BIG: big.text(), "src/small.rs": small.text(),
                         "src/large.rs": large.text()})  # fmt: skip
    others = [n for n in big.names if n != HOT]
    for index in range(1, 1201):
        if index in (100, 700, 1000):
            big.values[HOT] += 1000 * index
        else:
            big.values[rng.choice(others)] += 1
        if index % 50 == 0:
            big.header += 1
        if index == 600:
            commit(f"move the engine (#{index + 1})", {path: None, RENAMED: big.text()})
            path = RENAMED
            continue
        commit(f"tune the engine (#{index + 1})", {path: big.text()})
    small.header = large.header = 1
    commit("shift the small and large files (#1202)",
           {"src/small.rs": small.text(), "src/large.rs": large.text()})  # fmt: skip
    stream.write(b"done\n")
    stream.close()
    if importer.wait() != 0:
        raise RuntimeError("git fast-import failed")
    checked(["git", "-C", str(repo), "repack", "-a", "-d", "-q"])
    for key in ("uploadpack.allowFilter", "uploadpack.allowAnySHA1InWant"):
        checked(["git", "-C", str(repo), "config", key, "true"])
    shas = checked(["git", "-C", str(repo), "rev-list", "--reverse", "main"]).stdout.split()
    write_site(out / "site", repo, shas[0], sources)
    write_site(out / "site-part", repo, shas[0], partial)
    return {"base": shas[0], "hot_change": shas[100], "head": shas[-1], "hot": hot}


def write_site(site: Path, repo: Path, base: str, sources: list[tuple[str, int, int]]) -> None:
    (site / "notes").mkdir(parents=True)
    (site / "rules").mkdir()
    for index in range(0, len(sources), 10):
        lines = ["---", f"id: shapes-{index // 10:03d}", "title: Generated", "sources:"]
        for path, start, end in sources[index : index + 10]:
            lines += ["  - url: https://github.com/bench/shapes", f"    commit: {base[:10]}",
                      f"    path: {path}:{start}-{end}"]  # fmt: skip
        (site / "notes" / f"shapes-{index // 10:03d}.md").write_text(
            "\n".join([*lines, "---", "", "Generated by bench.shapes.", ""])
        )
    (site / "config.toml").write_text(
        'notes = "notes"\nrules = "rules"\nstate = "state"\ncache = "cache"\n\n'
        f'[[upstream]]\nrepo = "bench/shapes"\nurl = "{repo.resolve().as_uri()}"\n'
        'branch = "main"\n\n[issues]\nsink = "none"\n'
    )


def probe(script: str, *args: str) -> tuple[dict[str, object], float, float]:
    """Run a probe script in a fresh process: its counters, wall time and peak RSS (MB)."""
    stats = Path(args[0])
    done = run([sys.executable, "-c", script, *args], cwd=ROOT)
    if not stats.exists():
        raise RuntimeError(f"probe failed ({done.code}): {done.stderr[-2000:]}")
    return json.loads(stats.read_text()), done.wall, done.rss_mb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.shapes", description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "shapes")
    parser.add_argument("--codex", type=Path, help="a full clone of openai/codex: its case too")
    parser.add_argument("--branch", default="main", help="--codex's branch (default: main)")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    manifest = generate(out)
    site = out / "site"
    config = site / "config.toml"
    # A first run builds the mirror and fetches every version the walk reads, as the full
    # clone has them for `git log -L`; the timed runs start from a copy of that mirror.
    check_args = ("check", "--offline", "--no-issues", "--format", "json", "--config", str(config))
    probe(ATTRIBUTION_PROBE, str(out / "first.json"), "check", "--no-issues",
                        "--format", "json", "--config", str(config))  # fmt: skip
    report = json.loads(run([sys.executable, "-m", "watcher", "check", "--offline",
                             "--no-issues", "--format", "json", "--config", str(config)],
                            cwd=ROOT).stdout)  # fmt: skip
    _, start, end = manifest["hot"]
    hot = next(r for r in report["results"] if r["id"].endswith(f"{BIG}:{start}-{end}"))
    rows = []
    walks, logs = [], []
    for _ in range(REPEAT):
        shutil.rmtree(site / "state", ignore_errors=True)
        stats, _, rss = probe(ATTRIBUTION_PROBE, str(out / "walk.json"), *check_args)
        walks.append((float(stats["seconds"]), stats, rss))
        current = hot["current"]
        log = checked(["git", "-C", str(out / "upstream.git"), "log", "--first-parent",
                       f"-L{current['start_line']},{current['end_line']}:{current['path']}",
                       "--format=commit %H", f"{manifest['base']}..main"])  # fmt: skip
        logs.append((log.wall, log.stdout, log.cpu))
    seconds, stats, rss = min(walks, key=lambda w: w[0])
    log_wall, log_out, _ = min(logs, key=lambda entry: entry[0])
    cpu, log_cpu = min(float(w[1]["cpu"]) for w in walks), min(entry[2] for entry in logs)
    listed = [line.split()[1] for line in log_out.splitlines() if line.startswith("commit ")]
    answer = (hot.get("introduced_by") or {}).get("commit")
    rows.append(("introduced_by, 3,200-line file, 1,200 versions, a rename",
                 f"{seconds:.2f} s, {cpu:.2f} s CPU",
                 f"{log_wall:.2f} s, {log_cpu:.2f} s CPU (git log -L)",
                 f"{log_wall / seconds:.2f}x (CPU {log_cpu / cpu:.2f}x)", ">= 3x",
                 log_wall >= 3 * seconds))  # fmt: skip
    same = answer == manifest["hot_change"] == (listed[-1] if listed else None)
    rows.append(("  same answer as git log -L (its oldest commit)", (answer or "none")[:10],
                 (listed[-1] if listed else "none")[:10], "", "= the change", same))  # fmt: skip
    judged = f"{stats['judged']} / {stats['skipped']}"
    rows.append(("  versions judged / followed without parsing", judged, "", "", "", None))
    rows.append(("  peak RSS", f"{rss:.0f} MB", "", "", "<= 300 MB", rss <= 300))
    part = out / "site-part" / "config.toml"
    run([sys.executable, "-m", "watcher", "check", "--no-issues", "--format", "json",
         "--config", str(part)], cwd=ROOT)  # its mirror, for the offline probe  # fmt: skip
    for shape, site_config in (("whole functions", config), ("5-statement ranges", part)):
        # Fastest of PER_REPEAT fresh processes, the two files in turn, by CPU time (the
        # probe starts no process): a 0.1 s stretch moves 2x with the load of a shared
        # machine, its CPU time too, and the fastest of 3 did not settle.
        timed: dict[str, list[dict[str, Any]]] = {"src/small.rs": [], "src/large.rs": []}
        for _ in range(PER_REPEAT):
            for path, runs in timed.items():
                runs.append(probe(PER_CITATION_PROBE, str(out / "per.json"), str(site_config),
                                  path)[0])  # fmt: skip
        for label, wall, cpu in (
            (f"time per citation, 1.5 MB file vs 0.2 MB, {shape}", "per_citation", "cpu"),
            ("  with each version's listing of its definitions", "amortized", "amortized_cpu"),
        ):
            best = {p: min(float(t[cpu]) for t in timed[p]) for p in timed}
            walls = {p: min(float(t[wall]) for t in timed[p]) for p in timed}
            large, small = (
                f"{best[p] * 1e3:.2f} ms CPU ({walls[p] * 1e3:.2f} ms)"
                for p in ("src/large.rs", "src/small.rs")
            )
            ratio = best["src/large.rs"] / best["src/small.rs"]
            shown = f"{ratio:.2f} (wall {walls['src/large.rs'] / walls['src/small.rs']:.2f})"
            goal = label.startswith("time")
            rows.append((label, large, small, shown, "<= 1.5" if goal else "",
                         ratio <= 1.5 if goal else None))  # fmt: skip
    rows += scattered.measure(out / "scattered", REPEAT)
    if args.codex is not None:
        rows += gitlog.measure(args.codex, out / "codex", gitlog.CODEX_FILE, args.branch,
                               gitlog.BACK, gitlog.ITEMS, REPEAT)  # fmt: skip
    print(render(rows))
    return 0 if all(r[5] is not False for r in rows) else 1


def render(rows: list[tuple[str, str, str, str, str, bool | None]]) -> str:
    head = ("measurement", "watch", "baseline", "ratio", "goal", "met")
    cells = [head] + [(*r[:5], "" if r[5] is None else ("yes" if r[5] else "NO")) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(head))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
