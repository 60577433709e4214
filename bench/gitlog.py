"""`python -m bench.gitlog --upstream PATH`: the history walk against `git log -L`, for real.

Cites whole functions of one much-edited file (any language watch reads) of PATH (a full
git repository, e.g. a mirror of openai/codex) at the commit that made its `--back`th
version before the branch's head (functions whose signature line is still in the file at
the head), runs `watch check` over `file://` (a first run builds the mirror), then:

- the attribution stage of `watch check` (state cleared, mirror kept: the blobs are
  there, as they are for git), fastest of `--repeat`, against one `git log
  --first-parent -L` call with every stale item's HEAD lines on PATH, runs interleaved;
- each stale item's `introduced_by` and `history` against what `git log --first-parent
  -L` of its own HEAD lines lists (its oldest commit, and all of them, oldest first).

`git log -L` follows lines, watch the cited tokens: a commit that only re-indented or
re-commented a function is in git's list and not in watch's history, so "same history"
is counted, not required; the answers are printed per item.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from bench.runner import checked, run

Row = tuple[str, str, str, str, str, bool | None]
FUNCTION = re.compile(r"^( *)(?:pub(?:\([^)]*\))? +)?(?:async +)?(?:const +)?(?:unsafe +)?fn \w+")
CODEX_FILE = "codex-rs/core/src/config/mod.rs"
BACK, ITEMS = 400, 20


def functions(text: str, least: int = 4, most: int = 80) -> list[tuple[int, int]]:
    """The lines (1-based, inclusive) of each Rust function whose closing brace is the
    first line after it at its own indentation, `least` to `most` lines long."""
    lines = text.splitlines()
    found = []
    for index, line in enumerate(lines):
        match = FUNCTION.match(line)
        if match is None or line.rstrip().endswith(";"):
            continue
        close = match.group(1) + "}"
        end = next((j for j in range(index + 1, len(lines)) if lines[j] == close), None)
        if end is not None and least <= end - index + 1 <= most:
            found.append((index + 1, end + 1))
    return found


def definitions(text: str, path: str, least: int = 4, most: int = 80) -> list[tuple[int, int]]:
    """The lines (1-based, inclusive) of each function or method, `least` to `most` lines
    long, found as watch finds definitions (tree-sitter): for a file in another language
    than Rust (`functions` reads Rust the way it always has, so the codex row keeps its
    draw)."""
    from bench.scale import FUNCTION_KINDS
    from watcher.parse import languages, syntax

    language = languages.for_path(path)
    if language is None:
        raise SystemExit(f"{path}: watch reads no language from this file name")
    source = text.encode()
    parsed = syntax.parse(f"bench:{path}", language, lambda: source)
    return sorted(
        (d.start_line, d.end_line)
        for d in parsed.definitions
        if d.kind in FUNCTION_KINDS and least <= d.end_line - d.start_line + 1 <= most
    )


def generate(upstream: Path, out: Path, path: str, branch: str, back: int, items: int) -> str:
    """Write the site under `out/site` citing `items` functions of `path`, spread through
    the file, at its `back`th version before the head; return that commit."""
    from bench.shapes import write_site

    shutil.rmtree(out, ignore_errors=True)
    git = ["git", "-C", str(upstream)]
    touched = checked([*git, "log", "--first-parent", "--format=%H", branch, "--", path])
    commits = touched.stdout.split()
    base = commits[min(back, len(commits) - 1)]
    text = checked([*git, "show", f"{base}:{path}"]).stdout
    # Functions still in the file at the head (their signature line is): git log -L
    # follows lines within a file, and has nothing to say of one that left it.
    head = set(checked([*git, "show", f"{branch}:{path}"]).stdout.splitlines())
    lines = text.splitlines()
    found = functions(text) if path.endswith(".rs") else definitions(text, path)
    spans = [(start, end) for start, end in found if lines[start - 1] in head]
    step = max(1, len(spans) // items)
    cited = [(path, start, end) for start, end in spans[::step][:items]]
    write_site(out / "site", upstream, base, cited)
    config = out / "site" / "config.toml"
    config.write_text(config.read_text().replace('branch = "main"', f'branch = "{branch}"'))
    return base


def git_log(upstream: Path, base: str, branch: str, ranges: list[tuple[str, int, int]]) -> Any:
    """`git log --first-parent -L` of these HEAD ranges, one call: the run, and the
    commits it lists, newest first."""
    lines = [f"-L{start},{end}:{path}" for path, start, end in ranges]
    done = checked(["git", "-C", str(upstream), "log", "--first-parent", *lines,
                    "--format=commit %H", f"{base}..{branch}"])  # fmt: skip
    listed = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("commit ")]
    return done, listed


def measure(upstream: Path, out: Path, path: str, branch: str, back: int, items: int,
            repeat: int) -> list[Row]:  # fmt: skip
    """The rows: the walk stage against `git log -L`, and the answers compared."""
    from bench.shapes import ATTRIBUTION_PROBE, probe

    upstream, out = upstream.resolve(), out.resolve()
    base = generate(upstream, out, path, branch, back, items)
    config = out / "site" / "config.toml"
    check = ["check", "--no-issues", "--format", "json", "--config", str(config)]
    probe(ATTRIBUTION_PROBE, str(out / "first.json"), *check)  # builds the mirror
    offline = [check[0], "--offline", *check[1:]]
    report = json.loads(run([sys.executable, "-m", "watcher", *offline]).stdout)
    stale = [r for r in report["results"] if r["verdict"] in ("changed", "broken", "missing")]
    ranges = [(r["current"]["path"], r["current"]["start_line"], r["current"]["end_line"])
              for r in stale if r.get("current")]  # fmt: skip
    walks, logs = [], []
    for _ in range(repeat):
        shutil.rmtree(out / "site" / "state", ignore_errors=True)
        stats, _, _ = probe(ATTRIBUTION_PROBE, str(out / "walk.json"), *offline)
        walks.append((float(stats["seconds"]), stats))
        log = git_log(upstream, base, branch, ranges)[0] if ranges else None
        logs.append((log.wall, log.cpu) if log else (0.0, 0.0))
    seconds, stats = min(walks, key=lambda w: w[0])
    cpu = min(float(w[1]["cpu"]) for w in walks)
    log_wall, log_cpu = min(logs)[0], min(entry[1] for entry in logs)
    same_first = same_all = 0
    for result in stale:
        current = result.get("current")
        listed = []
        if current:
            one = [(current["path"], current["start_line"], current["end_line"])]
            listed = git_log(upstream, base, branch, one)[1][::-1]
        history = [change["commit"] for change in result.get("history") or ()]
        answer = (result.get("introduced_by") or {}).get("commit")
        first = answer == (listed[0] if listed else None) or (not listed and answer is None)
        same_first += first
        same_all += history == listed
        print(f"{result['id']}: {result['verdict']}, introduced_by {(answer or 'none')[:10]}, "
              f"git's oldest {(listed[0] if listed else 'none')[:10]}, history "
              f"{'=' if history == listed else '!='} git's ({len(history)} / {len(listed)})",
              file=sys.stderr)  # fmt: skip
    ratio = log_wall / seconds if seconds else 0.0
    name = f"{upstream.name if upstream.name != 'repo' else upstream.parent.name}: {path}"
    return [
        (f"{name}, {len(stale)} stale of {len(report['results'])}: walk stage",
         f"{seconds:.2f} s, {cpu:.2f} s CPU", f"{log_wall:.2f} s, {log_cpu:.2f} s CPU (git log -L)",
         f"{ratio:.2f}x (CPU {log_cpu / cpu if cpu else 0:.2f}x)", ">= 1x", ratio >= 1),
        ("  introduced_by = git log -L's oldest commit", f"{same_first} of {len(stale)}", "", "",
         "all", same_first == len(stale)),
        ("  history = every commit git log -L lists", f"{same_all} of {len(stale)}", "", "", "",
         None),
        ("  versions judged / followed without parsing",
         f"{stats['judged']} / {stats['skipped']}", "", "", "", None),
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    from bench.shapes import ROOT, render

    parser = argparse.ArgumentParser(prog="python -m bench.gitlog", description=__doc__)
    parser.add_argument("--upstream", type=Path, required=True, help="a full git repository")
    parser.add_argument("--file", default=CODEX_FILE, help=f"the file cited (default {CODEX_FILE})")
    parser.add_argument("--branch", default="main")
    parser.add_argument("--back", type=int, default=BACK, help="versions of the file back")
    parser.add_argument("--items", type=int, default=ITEMS, help="functions cited")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "gitlog")
    args = parser.parse_args(argv)
    rows = measure(args.upstream, args.out, args.file, args.branch, args.back, args.items,
                   args.repeat)  # fmt: skip
    print(render(rows))
    return 0 if all(r[5] is not False for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
