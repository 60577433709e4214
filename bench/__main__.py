"""`python -m bench [--quick]`: generate a codex-shaped upstream, serve it, measure `watch`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

from bench import measure, real, site
from bench.generate import generate
from bench.history import FULL, QUICK
from bench.measure import Bench, Row
from bench.serve import serve

DEFAULT_OUT = Path(__file__).resolve().parent / "out"


def main(argv: list[str] | None = None) -> int:
    """Run every measurement and print the table; exit 1 when a goal is missed."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="a small upstream (seconds, not minutes)"
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="work folder (default: bench/out)"
    )
    parser.add_argument(
        "--upstream", type=Path, help="a full git repository to measure on (with --site)"
    )
    parser.add_argument("--site", type=Path, help="a notes site (notes/, rules/) citing it")
    parser.add_argument("--branch", default="main", help="the upstream branch (default: main)")
    args = parser.parse_args(argv)
    if args.upstream is not None or args.site is not None:
        if args.upstream is None or args.site is None:
            parser.error("--upstream and --site go together")
        rows = real.measure(args.upstream, args.site, args.out, args.branch)
        print(render(rows))
        return 0 if all(r.met is not False for r in rows) else 1
    size = QUICK if args.quick else FULL
    out = args.out.resolve() / ("quick" if args.quick else "full")
    started = time.perf_counter()
    manifest = generate(out, size)
    generated = time.perf_counter() - started
    print(
        f"generated {manifest.commits} commits ({manifest.first_parent} first-parent), "
        f"{manifest.files} Rust files, {len(manifest.tags)} release tags, "
        f"{len(manifest.citations)} citations + 2 rules in {generated:.1f} s",
        file=sys.stderr,
    )
    with serve(out / "upstream") as (base_url, counter):
        bench = Bench(out, manifest, base_url, counter)
        config = site.write_config(out / "site", bench.repo_url)
        for step in (measure.cold, measure.warm, measure.one_change):
            print(f"measuring: {(step.__doc__ or step.__name__).splitlines()[0]}", file=sys.stderr)
            step(bench, config)
        measure.attribution(bench)
        measure.memory(bench)
    print(render(bench.rows))
    print(f"\nwhole bench: {time.perf_counter() - started:.0f} s; work folder: {out}")
    (out / "results.json").write_text(json.dumps([asdict(r) for r in bench.rows], indent=2) + "\n")
    (out / "results.md").write_text(markdown(bench.rows))
    return 0 if all(r.met is not False for r in bench.rows) else 1


HEAD = ("measurement", "watch", "baseline", "ratio", "goal", "met", "peak RSS")


def _cells(row: Row) -> tuple[str, ...]:
    met = "" if row.met is None else ("yes" if row.met else "NO")
    rss = "" if row.rss_mb is None else f"{row.rss_mb:.0f} MB"
    return (row.measure, row.watch, row.baseline, row.ratio, row.goal, met, rss)


def markdown(rows: list[Row]) -> str:
    """The table in Markdown, for the README."""
    lines = [HEAD, ("---",) * len(HEAD), *(_cells(r) for r in rows)]
    return "".join(
        "| " + " | ".join(c.replace("|", "\\|") for c in line) + " |\n" for line in lines
    )


def render(rows: list[Row]) -> str:
    """A plain-text table: one row per measurement, ratio and goal side by side."""
    head = HEAD
    cells = [head] + [_cells(r) for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(head))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
