"""`python -m bench.differential --upstream PATH`: watch's histories, checked against git's.

PATH is a full git repository of a real upstream. At the commit BACK first-parent commits
behind the branch's tip, this cites N functions whole and N random ranges of 1-4
statements inside functions (a seeded draw, files of the languages watch parses, tests
left out), runs `watch check` on that site (kept under --work, a temporary folder by
default), and for each stale item compares:

- `history` with `git log --first-parent -L START,END:FILE BASE..BRANCH`, the range being
  the item's HEAD span (git follows it back, through renames);
- `introduced_by` with git's first commit of the HEAD state: the oldest commit git lists
  on that range (a changed item); for a missing one, the commit after the last one where
  `git blame --reverse --first-parent` still sees a cited line.

Every difference is classified: a commit git lists that only edits comments or
whitespace inside the range is expected (watch compares tokens); the others are printed
for a reader to explain. Agreement per upstream is printed last. `--python` runs another
checkout's watch (`--python-path` its root) on the same site: the before/after measure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import draw
from bench.blindspots import (
    GIT_WRONG,
    INSERTED,
    REWRITTEN,
    born_after,
    came_back,
    edits_cited,
    git_wrong,
    inserted_inside,
    reindented,
    touches,
    widened_range,
)
from bench.draw import WHOLE, Cite
from bench.gitread import FUNCTIONS, definitions, git_bytes, git_out, name_of, with_attributes
from bench.gittrace import (
    deleted_again,
    log_l,
    range_edit,
    removed_by,
    renames_between,
    spliced_in,
    unbroken,
)
from watcher.parse.languages import for_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.differential", description=__doc__)
    parser.add_argument("--upstream", type=Path, required=True)
    parser.add_argument("--branch", default=None, help="default: the repository's HEAD")
    parser.add_argument("--back", type=int, default=300)
    parser.add_argument("-n", type=int, default=100, help="items of each kind")
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--python-path", default=None, help="PYTHONPATH for --python")
    parser.add_argument("--show", type=int, default=40, help="disagreements printed")
    parser.add_argument("--shapes", action="store_true",
                        help="N of each shape that is no function (bench.draw)")  # fmt: skip
    args = parser.parse_args(argv)
    repo = args.upstream.resolve()
    branch = args.branch
    if branch is None:
        branch = git_out(repo, "symbolic-ref", "HEAD").strip().removeprefix("refs/heads/")
    # The branch's own ref: a tag of the same name (continue's `main`) would win otherwise.
    tip = git_out(repo, "rev-parse", "--verify", f"refs/heads/{branch}").strip()
    base = git_out(repo, "rev-list", "--first-parent", "-n1", f"--skip={args.back}", tip).strip()
    if not base:
        count = git_out(repo, "rev-list", "--first-parent", "--count", tip).strip()
        parser.error(f"--back {args.back}: {branch} has {count} first-parent commits; ask fewer")
    rng = random.Random(args.seed)
    cites = shapes(repo, base, args.n, rng) if args.shapes else sample(repo, base, args.n, rng)
    work = args.work or Path(tempfile.mkdtemp(prefix="watch-differential-"))
    report = run_watch(repo, branch, base, cites, work, args.python, args.python_path)
    rows = compare(repo, tip, base, report)
    return summarize(repo, rows, args.show)


def sample(repo: Path, base: str, n: int, rng: random.Random) -> list[Cite]:
    """N whole functions and N ranges of 1-4 statements inside functions, at `base`."""
    paths = [
        p
        for p in git_out(repo, "ls-tree", "-r", "--name-only", base).splitlines()
        if for_path(p) in FUNCTIONS and "test" not in p.lower() and "example" not in p.lower()
    ]
    rng.shuffle(paths)
    whole: list[Cite] = []
    ranges: list[Cite] = []
    for path in paths:
        if len(whole) >= n and len(ranges) >= n:
            break
        source = git_bytes(repo, "show", f"{base}:{path}")
        functions = definitions(source, path, types=False)
        rng.shuffle(functions)
        for node in functions[:3]:
            lines = source.split(b"\n")
            name = name_of(node)
            first = with_attributes(node)
            if len(whole) < n and node.end_point[0] > first.start_point[0]:
                whole.append(Cite("whole", path, first.start_point[0] + 1,
                                  node.end_point[0] + 1, name))  # fmt: skip
            statements = [s for s in _statements(node) if _own_lines(s, lines)]
            if len(ranges) < n and statements:
                size = rng.randint(1, min(4, len(statements)))
                at = rng.randrange(0, len(statements) - size + 1)
                chosen = statements[at : at + size]
                ranges.append(Cite("range", path, chosen[0].start_point[0] + 1,
                                   chosen[-1].end_point[0] + 1, name))  # fmt: skip
    return whole + ranges


def shapes(repo: Path, base: str, n: int, rng: random.Random) -> list[Cite]:
    """N citations of each shape that is not a function (`bench.draw`), at `base`."""
    paths = [p for p in git_out(repo, "ls-tree", "-r", "--name-only", base).splitlines()
             if "test" not in p.lower() and "example" not in p.lower()]  # fmt: skip
    return draw.draw(paths, lambda path: git_bytes(repo, "show", f"{base}:{path}"), n, rng)


def _statements(node: Any) -> list[Any]:
    body = node.child_by_field_name("body")
    children = [c for c in body.named_children if "comment" not in c.type]
    if len(children) == 1 and children[0].type == "statement_list":  # go
        children = [c for c in children[0].named_children if "comment" not in c.type]
    return children


def _own_lines(node: Any, lines: list[bytes]) -> bool:
    """A statement alone on its lines: nothing but space before it, `;` or `,` after."""
    row, column = node.start_point
    end_row, end_column = node.end_point
    before = lines[row][:column].strip()
    after = lines[end_row][end_column:].strip()
    return not before and after in (b"", b";", b",")


def run_watch(
    repo: Path,
    branch: str,
    base: str,
    cites: list[Cite],
    work: Path,
    python: str,
    python_path: str | None,
) -> dict[str, Any]:
    """`watch check` on a site citing `cites` at `base` (one note per file)."""
    (work / "notes").mkdir(parents=True, exist_ok=True)
    (work / "rules").mkdir(exist_ok=True)
    (work / "config.toml").write_text(
        'notes = "notes"\nrules = "rules"\nstate = "state"\ncache = "cache"\n\n'
        f'[[upstream]]\nrepo = "bench/upstream"\nurl = "{repo.as_uri()}"\n'
        f'branch = "{branch}"\n\n[issues]\nsink = "none"\n'
    )
    by_file: dict[str, list[Cite]] = {}
    for cite in cites:
        by_file.setdefault(cite.path, []).append(cite)
    for number, (path, cited) in enumerate(sorted(by_file.items())):
        sources = "".join(
            f"  - url: https://github.com/bench/upstream\n    commit: {base}\n"
            f"    path: {c.path}:{c.start}-{c.end}\n"
            for c in cited
        )
        (work / "notes" / f"n{number}.md").write_text(
            f"---\nid: n{number}\ntitle: {path}\nsources:\n{sources}---\n\nCites {path}.\n"
        )
    env = {**os.environ, "PYTHONPATH": python_path} if python_path else dict(os.environ)
    # Run in the site: `-m` puts the working folder first on the import path.
    done = subprocess.run(
        [python, "-m", "watcher", "check", "--no-issues", "--format", "json",
         "--config", str(work / "config.toml")],
        capture_output=True, text=True, env=env, check=False, cwd=work,
    )  # fmt: skip
    if done.returncode not in (0, 1):
        raise SystemExit(f"watch check exited {done.returncode}: {done.stderr[-2000:]}")
    report: dict[str, Any] = json.loads(done.stdout)
    kinds = {f"{c.path}:{c.start}-{c.end}": c for c in cites}
    for result in report["results"]:
        cite = kinds.get(result["id"].split(":", 1)[1])
        result["cite_kind"] = cite.kind if cite else "?"
        result["cite_name"] = cite.name if cite else "?"
    return report


@dataclass
class Row:
    id: str
    kind: str
    verdict: str
    history: bool  # agrees
    introduced: bool
    classes: list[str]
    explained: bool = True  # every difference of a kind where git is the one that is wrong


def compare(repo: Path, branch: str, base: str, report: dict[str, Any]) -> list[Row]:
    order = git_out(repo, "rev-list", "--first-parent", "--reverse", f"{base}..{branch}").split()
    rank = {c: i for i, c in enumerate(order)}
    renames = renames_between(repo, base, branch)
    rows = []
    for result in report["results"]:
        verdict = result["verdict"]
        if verdict not in ("changed", "missing"):
            if verdict in ("fresh", "moved"):
                rows.append(Row(result["id"], result["cite_kind"], verdict, True, True, []))
            continue
        watch_history = [h["commit"] for h in result.get("history", [])]
        watch_intro = (result.get("introduced_by") or {}).get("commit")
        classes: list[str] = []
        if verdict == "changed" and result.get("current"):
            cur = result["current"]
            # The HEAD span, not `-L :NAME:`: git's funcname takes the first line that
            # matches the name (a docstring's example, another class's method of the name).
            span = f"{cur['start_line']},{cur['end_line']}"
            listed = unbroken(repo, base, log_l(repo, base, branch, cur["path"], span), rank)
            states_at = {h["commit"]: h["state"] for h in result.get("history", [])}
            spliced = spliced_in(repo, base, listed, order, rank, states_at)
            listed = {**spliced, **listed}
            git_history = sorted(listed, key=lambda c: rank.get(c, -1))
            edits = {c: range_edit(listed[c]) for c in git_history}
            for commit in git_history:
                if edits[commit] == "code" and reindented(
                    repo, commit, listed[commit], cur["path"], result["cite_name"]
                ):
                    edits[commit] = "re-indented"  # fmt: skip
            widened = widened_range(repo, base, branch, result, listed, git_history, rank, order)
            edits.update((c, "widened") for c in widened if edits[c] == "code")
            code = [c for c in git_history if edits[c] == "code"]
            git_intro = code[0] if code else None
            name, path = result["cite_name"], cur["path"]
            wrong = {
                commit: why
                for commit in git_history
                if commit not in watch_history and edits[commit] == "code"
                and (why := git_wrong(repo, commit, path, name, listed[commit]))
            }  # fmt: skip
            for commit in sorted(set(git_history) - set(watch_history), key=rank.get):
                edit = wrong.get(commit, edits[commit])
                if edit == "re-indented":
                    edit = "moves the function unchanged, re-indented: git's diff lost it"
                elif edit == "widened":
                    edit = ("code, but not the cited lines: git's range widened at "
                            f"{widened[commit][:10]}, and every cited line is past it "
                            "unedited")  # fmt: skip
                classes.append(f"git-only {commit[:10]} ({edit})")
            # Where git's trace begins with the file made (the code came from elsewhere,
            # edited): git sees nothing before it.
            made = next((c for c in git_history[:1] if re.search(r"^@@ -0,0 ", listed[c], re.M)),
                        None)  # fmt: skip
            edited = edits_cited(repo, result, [c for c in watch_history if c not in git_history],
                                 renames, rank[made] if made else -1)  # fmt: skip
            inserted = inserted_inside(repo, result, [c for c in watch_history
                                                      if c not in git_history])  # fmt: skip
            for commit in sorted(set(watch_history) - set(git_history), key=rank.get):
                state = next(h["state"] for h in result["history"] if h["commit"] == commit)
                touched = touches(repo, commit, path, name)
                why = "edits the cited function" if touched else "does not edit the function"
                if commit in edited:
                    why = "edits a cited line that does not reach HEAD: git cannot trace it"
                if state == "changed" and commit in inserted:
                    why = INSERTED
                if (state == "missing" and commit not in edited
                    and born_after(commit, git_history, listed, states_at, rank)):  # fmt: skip
                    why = REWRITTEN
                classes.append(f"watch-only {commit[:10]} ({state}; {why})")
            states = [h["state"] for h in result.get("history", [])]
            history_ok = set(code) == set(watch_history) - {
                c for c in watch_history if edits.get(c) == "comments/whitespace"
            }
            if watch_intro != git_intro:
                why = "after a revert" if "same" in states else "differs"
                classes.append(f"introduced_by {str(watch_intro)[:10]} vs git "
                               f"{str(git_intro)[:10]} ({why})")  # fmt: skip
            intro_ok = watch_intro == git_intro or (watch_intro in git_history and "same" in states)
            # Git's trace of the HEAD lines misses a commit that edited lines of the function
            # a later commit rewrote; its hunk can cross into a neighbour it then lists.
            whole = result["cite_kind"] in WHOLE
            confirmed = [c for c in watch_history if c not in git_history and any(
                c[:10] in k and (("edits the cited function" in k and whole)
                                 or "edits a cited line" in k or INSERTED in k)
                for k in classes)]  # fmt: skip
            # Watch counts whitespace inside a string (a docstring reflowed) as a change of
            # that token; the diff's lines differ only in whitespace there.
            spaced = [c for c in watch_history if edits.get(c) == "comments/whitespace"]
            union = sorted({*(c for c in code if c not in wrong), *confirmed, *spaced},
                           key=rank.get)  # fmt: skip
            explained = all(
                "comments/whitespace" in k or any(why in k for why in GIT_WRONG)
                or "re-indented" in k or "not the cited lines" in k
                or ("edits the cited function" in k and whole)
                or "edits a cited line" in k or REWRITTEN in k or INSERTED in k
                or (k.startswith("introduced_by") and union and watch_intro == union[0])
                for k in classes
            )  # fmt: skip
        else:
            git_intro = removed_by(repo, base, branch, result["baseline"], order,
                                   result["cite_name"])  # fmt: skip
            history_ok = True  # git has no line history of lines that are gone
            intro_ok = watch_intro == git_intro
            # Blame counts an edited line as gone: a commit watch lists as a change, before
            # the one that removed the code, is where git's lines "end".
            edited = {h["commit"] for h in result.get("history", []) if h["state"] == "changed"}
            later = rank.get(watch_intro or "", -1) > rank.get(git_intro or "", -1)
            # A commit that deleted the code (a revert) and a later one that put it back
            # (the revert reverted): `-L` ends at the deletion and never sees it again.
            back = came_back(result.get("history", []), git_intro)
            explained = intro_ok or (later and (git_intro in edited or back))
            why = "differs"
            if explained:
                why = (
                    "git: an edit ends the line"
                    if git_intro in edited
                    else "git: the code came back after it"
                )
            # Blame counts a line moved inside the file (a function moved down) as gone;
            # `-M` sees it on, to where the code was deleted.
            if not explained and watch_intro == removed_by(
                repo, base, branch, result["baseline"], order, result["cite_name"], moves=True
            ):
                explained, why = True, "git: a move inside the file ends the line (blame -M)"
            again = None if explained else deleted_again(
                repo, base, branch, result["baseline"]["path"], result["cite_name"], git_intro
            )  # fmt: skip
            if again is not None and watch_intro == again:
                explained, why = True, (f"git: the file came back with the function and "
                                        f"{again[:10]} deleted it again")  # fmt: skip
            # Watch's FOUND_SHARE counts tokens; blame's median counts lines.
            if not explained and watch_intro == removed_by(
                repo, base, branch, result["baseline"], order, result["cite_name"], by_tokens=True
            ):
                explained, why = True, "git counts lines: most cited tokens went here"
            if not intro_ok:
                classes.append(f"missing: introduced_by {str(watch_intro)[:10]} vs git "
                               f"{str(git_intro)[:10]} ({why})")  # fmt: skip
        rows.append(Row(result["id"], result["cite_kind"], verdict, history_ok, intro_ok, classes,
                        explained or (history_ok and intro_ok)))  # fmt: skip
    return rows


def summarize(repo: Path, rows: list[Row], show: int) -> int:
    stale = [r for r in rows if r.verdict in ("changed", "missing")]
    ok = [r for r in stale if r.history and r.introduced]
    kinds = Counter((r.kind, r.verdict) for r in rows)
    print(f"{repo.parent.name}: {len(rows)} items " + ", ".join(
        f"{k}/{v} {n}" for (k, v), n in sorted(kinds.items())))  # fmt: skip
    shown = 0
    for row in stale:
        if row.history and row.introduced:
            continue
        if shown < show:
            tag = "git wrong" if row.explained else "to explain"
            print(f"  {row.id} [{row.kind}, {row.verdict}; {tag}]")
            for c in row.classes:
                print(f"      {c}")
        shown += 1
    expected = sum(1 for r in stale if r.classes and r.history and r.introduced)
    history = sum(r.history for r in stale)
    intro = sum(r.introduced for r in stale)
    n = max(1, len(stale))
    print(f"{repo.parent.name}: stale {len(stale)}; history agrees {history} "
          f"({history / n:.1%}), introduced_by agrees {intro} ({intro / n:.1%}), both "
          f"{len(ok)} ({len(ok) / n:.1%}); {expected} differ only by comment/whitespace "
          "commits")  # fmt: skip
    explained = sum(r.explained for r in stale)
    print(f"{repo.parent.name}: agree or git wrong (classified above): {explained} "
          f"({explained / n:.1%}); to explain by hand: {len(stale) - explained}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
