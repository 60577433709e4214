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
import difflib
import functools
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
from bench.draw import Cite
from watcher.parse.languages import for_path, grammar

FUNCTIONS = {
    "rust": ("function_item",),
    "python": ("function_definition",),
    "typescript": ("function_declaration", "method_definition"),
    "tsx": ("function_declaration", "method_definition"),
    "javascript": ("function_declaration", "method_definition"),
    "go": ("function_declaration", "method_declaration"),
}
ATTRIBUTES = ("attribute_item", "decorator")
WHOLE = ("whole", "type", "const")  # the kinds of citation that cite a construct whole
# A comment on a line; Rust's `#[attribute]` and `#![attribute]` are code, not Python's `#`.
COMMENT = re.compile(r"//.*|#(?!!?\[).*|/\*.*?\*/|^\s*\*.*")


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
    branch = args.branch or _git(repo, "symbolic-ref", "--short", "HEAD").strip()
    base = _git(repo, "rev-list", "--first-parent", "-n1", f"--skip={args.back}", branch).strip()
    rng = random.Random(args.seed)
    cites = shapes(repo, base, args.n, rng) if args.shapes else sample(repo, base, args.n, rng)
    work = args.work or Path(tempfile.mkdtemp(prefix="watch-differential-"))
    report = run_watch(repo, branch, base, cites, work, args.python, args.python_path)
    rows = compare(repo, branch, base, report)
    return summarize(repo, rows, args.show)


def sample(repo: Path, base: str, n: int, rng: random.Random) -> list[Cite]:
    """N whole functions and N ranges of 1-4 statements inside functions, at `base`."""
    paths = [
        p
        for p in _git(repo, "ls-tree", "-r", "--name-only", base).splitlines()
        if for_path(p) in FUNCTIONS and "test" not in p.lower() and "example" not in p.lower()
    ]
    rng.shuffle(paths)
    whole: list[Cite] = []
    ranges: list[Cite] = []
    for path in paths:
        if len(whole) >= n and len(ranges) >= n:
            break
        source = _git_bytes(repo, "show", f"{base}:{path}")
        functions = _functions(source, path, types=False)
        rng.shuffle(functions)
        for node in functions[:3]:
            lines = source.split(b"\n")
            name = _name(node)
            first = _with_attributes(node)
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
    paths = [p for p in _git(repo, "ls-tree", "-r", "--name-only", base).splitlines()
             if "test" not in p.lower() and "example" not in p.lower()]  # fmt: skip
    return draw.draw(paths, lambda path: _git_bytes(repo, "show", f"{base}:{path}"), n, rng)


def _functions(source: bytes, path: str, *, types: bool = True) -> list[Any]:
    """The functions of the file, and (`types`) the types and constants `--shapes` cites,
    which the classifiers find by name as they find a function."""
    from tree_sitter import Parser

    language = for_path(path) or ""
    tree = Parser(grammar(language)).parse(source)
    named = draw.named_kinds(path) if types else ()
    found, stack = [], [tree.root_node]
    while stack:
        node = stack.pop()
        if (node.type in FUNCTIONS[language] and node.child_by_field_name("body") is not None) or (
            node.type in named and node.child_by_field_name("name") is not None
        ):
            found.append(node)
        stack.extend(node.children)
    return sorted(found, key=lambda n: n.start_byte)


def _name(node: Any) -> str:
    name = node.child_by_field_name("name")
    return name.text.decode(errors="replace") if name is not None else "?"


def _with_attributes(node: Any) -> Any:
    first = node
    while first.prev_named_sibling is not None and first.prev_named_sibling.type in ATTRIBUTES:
        first = first.prev_named_sibling
    if node.parent is not None and node.parent.type == "decorated_definition":
        return node.parent
    return first


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
    order = _git(repo, "rev-list", "--first-parent", "--reverse", f"{base}..{branch}").split()
    rank = {c: i for i, c in enumerate(order)}
    renames = _renames(repo, base, branch)
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
            listed = _unbroken(repo, base, _log_l(repo, base, branch, cur["path"], span), rank)
            states_at = {h["commit"]: h["state"] for h in result.get("history", [])}
            spliced = _spliced(repo, base, listed, order, rank, states_at)
            listed = {**spliced, **listed}
            git_history = sorted(listed, key=lambda c: rank.get(c, -1))
            edits = {c: _range_edit(listed[c]) for c in git_history}
            for commit in git_history:
                if edits[commit] == "code" and _reindented(
                    repo, commit, listed[commit], cur["path"], result["cite_name"]
                ):
                    edits[commit] = "re-indented"  # fmt: skip
            widened = _widened(repo, base, branch, result, listed, git_history, rank, order)
            edits.update((c, "widened") for c in widened if edits[c] == "code")
            code = [c for c in git_history if edits[c] == "code"]
            git_intro = code[0] if code else None
            name, path = result["cite_name"], cur["path"]
            wrong = {
                commit: why
                for commit in git_history
                if commit not in watch_history and edits[commit] == "code"
                and (why := _git_wrong(repo, commit, path, name, listed[commit]))
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
            edited = _edits_cited(repo, result, [c for c in watch_history if c not in git_history],
                                  renames, rank[made] if made else -1)  # fmt: skip
            inserted = _inserted_inside(repo, result, [c for c in watch_history
                                                       if c not in git_history])  # fmt: skip
            for commit in sorted(set(watch_history) - set(git_history), key=rank.get):
                state = next(h["state"] for h in result["history"] if h["commit"] == commit)
                touched = _touches(repo, commit, path, name)
                why = "edits the cited function" if touched else "does not edit the function"
                if commit in edited:
                    why = "edits a cited line that does not reach HEAD: git cannot trace it"
                if state == "changed" and commit in inserted:
                    why = INSERTED
                if (state == "missing" and commit not in edited
                        and _born_after(commit, git_history, listed, states_at, rank)):  # fmt: skip
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
            git_intro = _removed_by(repo, base, branch, result["baseline"], order,
                                    result["cite_name"])  # fmt: skip
            history_ok = True  # git has no line history of lines that are gone
            intro_ok = watch_intro == git_intro
            # Blame counts an edited line as gone: a commit watch lists as a change, before
            # the one that removed the code, is where git's lines "end".
            edited = {h["commit"] for h in result.get("history", []) if h["state"] == "changed"}
            later = rank.get(watch_intro or "", -1) > rank.get(git_intro or "", -1)
            # A commit that deleted the code (a revert) and a later one that put it back
            # (the revert reverted): `-L` ends at the deletion and never sees it again.
            back = _came_back(result.get("history", []), git_intro)
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
            if not explained and watch_intro == _removed_by(
                repo, base, branch, result["baseline"], order, result["cite_name"], moves=True
            ):
                explained, why = True, "git: a move inside the file ends the line (blame -M)"
            again = None if explained else _deleted_again(
                repo, base, branch, result["baseline"]["path"], result["cite_name"], git_intro
            )  # fmt: skip
            if again is not None and watch_intro == again:
                explained, why = True, (f"git: the file came back with the function and "
                                        f"{again[:10]} deleted it again")  # fmt: skip
            # Watch's FOUND_SHARE counts tokens; blame's median counts lines.
            if not explained and watch_intro == _removed_by(
                repo, base, branch, result["baseline"], order, result["cite_name"], by_tokens=True
            ):
                explained, why = True, "git counts lines: most cited tokens went here"
            if not intro_ok:
                classes.append(f"missing: introduced_by {str(watch_intro)[:10]} vs git "
                               f"{str(git_intro)[:10]} ({why})")  # fmt: skip
        rows.append(Row(result["id"], result["cite_kind"], verdict, history_ok, intro_ok, classes,
                        explained or (history_ok and intro_ok)))  # fmt: skip
    return rows


REWRITTEN = "gone, then written again: git's trace starts where its lines were written"


def _born_after(
    commit: str,
    git_history: list[str],
    listed: dict[str, str],
    states: dict[str, str],
    rank: dict[str, int],
) -> bool:
    """Whether git's oldest commit on the HEAD range wrote every line of it (each hunk of
    its patch replaces no line: `@@ -N,0 ...`), after `commit` (where watch has the item
    missing), and watch has the item back there: git cannot trace lines past the commit
    that wrote them."""
    if not git_history or rank.get(commit, -1) >= rank.get(git_history[0], -1):
        return False
    born = git_history[0]
    hunks = re.findall(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,\d+)? @@", listed[born], re.M)
    return bool(hunks) and all(old == "0" for old in hunks) and states.get(born) not in (
        None, "missing")  # fmt: skip


def _came_back(history: list[dict[str, Any]], commit: str | None) -> bool:
    """Whether watch has the item gone at `commit` and found again after it."""
    commits, states = [h["commit"] for h in history], [h["state"] for h in history]
    if commit not in commits or states[commits.index(commit)] != "missing":
        return False
    return any(state != "missing" for state in states[commits.index(commit) + 1 :])


# Why a commit git lists as a code edit of the range is one git gets wrong (`_git_wrong`).
GIT_WRONG = (
    "not in the cited function: git's hunk crosses into it",
    "the cited function's tokens are unchanged: git lost its re-indented or moved lines",
    "every line git's hunk lists was moved, not edited: git's diff takes it for new",
)


def _git_wrong(repo: Path, commit: str, path: str, name: str, patch: str) -> str | None:
    """Why git is wrong to list `commit` on the range (its patch `patch`), or None: its
    hunk edits no line of the cited function; or the function's tokens, comments aside,
    are the same before and after it (git's line diff lost lines it re-indented or
    moved); or each code line the hunk adds is one the commit moved (removed verbatim,
    whitespace aside, elsewhere in the file), and each line of the function it removes
    was added elsewhere."""
    if name == "?":  # no construct to judge by (`--shapes`' imports): not told
        return None
    if not _touches(repo, commit, path, name):
        return "code, but " + GIT_WRONG[0]
    before, after = (
        _function_tokens(repo, f"{commit}^", path, name),
        _function_tokens(repo, commit, path, name),
    )
    if before and before == after:
        return "code, but " + GIT_WRONG[1]
    diff = _git(repo, "diff", "-U0", f"{commit}^", commit, "--", path)
    removed, added = _changed_lines(diff)
    minus, plus = _changed_lines(patch)
    # A line git pairs with a moved one may be no line of the function (another's header).
    own = _function_lines(repo, f"{commit}^", path, name)
    if (minus or plus) and (minus & own) <= added and plus <= removed:
        return "code, but " + GIT_WRONG[2]
    return None


def _function_lines(repo: Path, rev: str, path: str, name: str) -> set[str]:
    """The code (`_code`) of the lines of each function called `name` in `path` at `rev`."""
    try:
        source = _git_bytes(repo, "show", f"{rev}:{path}")
    except subprocess.CalledProcessError:
        return set()
    lines = source.decode(errors="replace").split("\n")
    return {
        _code([line])
        for node in _functions(source, path)
        if _name(node) == name
        for line in lines[_with_attributes(node).start_point[0] : node.end_point[0] + 1]
    }


def _changed_lines(diff: str) -> tuple[set[str], set[str]]:
    """The code (`_code`) of the lines a diff removes and adds, lines of no code aside."""
    removed, added = set(), set()
    for line in diff.splitlines():
        if line.startswith(("---", "+++")) or line[:1] not in ("-", "+"):
            continue
        code = _code([line[1:]])
        if code:
            (removed if line[0] == "-" else added).add(code)
    return removed, added


def _function_tokens(repo: Path, rev: str, path: str, name: str) -> list[tuple[str, ...]]:
    """The tokens (tree-sitter's leaves, comments left out) of each function called
    `name` in `path` at `rev`, attributes included, sorted; none when it has no such file."""
    try:
        source = _git_bytes(repo, "show", f"{rev}:{path}")
    except subprocess.CalledProcessError:
        return []
    found = []
    for node in _functions(source, path):
        if _name(node) != name:
            continue
        leaves, stack = [], [_with_attributes(node)]
        while stack:
            current = stack.pop()
            if "comment" in current.type:
                continue
            if current.child_count == 0 and current.end_byte > current.start_byte:
                leaves.append(current.text.decode(errors="replace"))
            stack.extend(reversed(current.children))
        found.append(tuple(leaves))
    return sorted(found)


def _edits_cited(
    repo: Path, result: dict[str, Any], commits: list[str], renames: Renames, made: int = -1
) -> set[str]:
    """Of `commits` (watch lists them, git does not), those whose diff of the cited file
    (at the path it had then, followed from the baseline through the renames git sees, or
    at its HEAD path) has a hunk removing a cited line (code of at least MEANINGFUL
    characters), or one an earlier such hunk put in place of one, where none of the
    hunk's added lines is at HEAD outside the item's span: the edit of a cited line that
    later commits removed, which git's trace of the HEAD lines cannot reach. A commit
    that deletes the file (the code restored later under another path, where git's trace
    begins) removes every cited line. Before the commit of rank `made`, which made the
    file git's trace begins in, git sees no edit at all: any such hunk is one."""
    base, cur = result["baseline"], result["current"]
    cited = {c for line in result.get("baseline_code", "").splitlines()
             if len(c := _code([line])) >= MEANINGFUL}  # fmt: skip
    head = _git(repo, "show", f"{cur['commit']}:{cur['path']}").splitlines()
    inside = {_code([line]) for line in head[cur["start_line"] - 1 : cur["end_line"]]}
    outside = {_code([line]) for line in head} - inside
    order = [h["commit"] for h in result.get("history", [])]
    rank = {commit: i for i, (commit, _) in enumerate(renames)}
    paths = _paths_along(renames, base["path"])
    found = set()
    for commit in order:
        before, after = paths.get(commit, (base["path"], base["path"]))
        diff = _git(repo, "diff", "-U0", "-M", f"{commit}^", commit, "--",
                    *dict.fromkeys((before, after, cur["path"])))  # fmt: skip
        # A commit that made HEAD's file from part of the cited file (a split): a cited
        # line it removed from the cited file, adding it in neither file, was dropped
        # where git's trace of HEAD's file, which begins with the commit, never looks
        # (fastmcp's `OpenAPITool.__repr__` docstring, left out of the split).
        made_here = re.search(rf"^--- /dev/null\n\+\+\+ b/{re.escape(cur['path'])}$", diff, re.M)
        everywhere = _changed_lines(diff)[1]
        for part in re.split(r"^diff --git ", diff, flags=re.M)[1:]:
            other = re.search(r"^\+\+\+ b/(.+)$", part, re.M)
            split = made_here is not None and other is not None and other.group(1) != cur["path"]
            for hunk in re.split(r"^@@.*$", part, flags=re.M)[1:]:
                removed, added = _changed_lines(hunk)
                if removed & cited:
                    cited |= added
                    dropped = split and bool(removed & cited - everywhere)
                    if commit in commits and (
                        not added & outside or rank[commit] < made or dropped
                    ):
                        found.add(commit)
    return found


INSERTED = "inserts code between two cited lines, where HEAD's span does not reach"


def _inserted_inside(repo: Path, result: dict[str, Any], commits: list[str]) -> set[str]:
    """Of `commits` (watch lists them, git does not), those whose diff of the cited file
    has a hunk that only adds lines, between a cited line of code (MEANINGFUL characters
    at least) and the next cited line, inside the cited function: the cited statement
    edited where the lines git traces back from the HEAD span do not pass (codex's
    `let session = Session { ... }`, given a field by #3850, whose other fields a later
    commit moved into a `SessionServices` that the HEAD span holds)."""
    base, cur = result["baseline"], result["current"]
    codes = {c for line in result.get("baseline_code", "").splitlines() if (c := _code([line]))}
    meaningful = {c for c in codes if len(c) >= MEANINGFUL}
    found = set()
    for commit in commits:
        for path in dict.fromkeys([base["path"], cur["path"]]):
            diff = _git(repo, "diff", "-U0", f"{commit}^", commit, "--", path)
            added = [int(m) for m in re.findall(r"^@@ -(\d+),0 \+", diff, re.M)]
            if not added:
                continue
            try:
                old = _git(repo, "show", f"{commit}^:{path}").split("\n")
            except subprocess.CalledProcessError:
                continue
            if any(0 < at < len(old) and _code([old[at - 1]]) in meaningful
                   and _code([old[at]]) in codes
                   and _function_at(repo, f"{commit}^", path, at) == result["cite_name"]
                   for at in added):  # fmt: skip
                found.add(commit)
    return found


MEANINGFUL = 12  # characters of code: a shorter line (`return None`) is found anywhere

# Each first-parent commit after the base, oldest first, with the renames (old, new) its
# diff shows (`_renames`).
Renames = list[tuple[str, list[tuple[str, str]]]]


def _renames(repo: Path, base: str, branch: str) -> Renames:
    """The renames git's diff (`-M`, against the first parent) shows in each first-parent
    commit after `base`, oldest first."""
    try:
        out = _git(repo, "log", "--first-parent", "--reverse", "-M", "--name-status",
                   "--format=@@%H", f"{base}..{branch}")  # fmt: skip
    except subprocess.CalledProcessError:  # a blob the mirror lacks: no renames told
        out = _git(repo, "log", "--first-parent", "--reverse", "--format=@@%H", f"{base}..{branch}")
    found: Renames = []
    for line in out.splitlines():
        if line.startswith("@@"):
            found.append((line[2:], []))
        elif line.startswith("R") and found:
            _, old, new = line.split("\t")
            found[-1][1].append((old, new))
    return found


def _paths_along(renames: Renames, path: str) -> dict[str, tuple[str, str]]:
    """The file's path before and after each commit, from `path` at the base, through the
    renames of `renames`."""
    paths = {}
    for commit, pairs in renames:
        after = dict(pairs).get(path, path)
        paths[commit] = (path, after)
        path = after
    return paths


def _log_l(repo: Path, base: str, branch: str, path: str, span: str) -> dict[str, str]:
    """The commits `git log --first-parent -L START,END:PATH` lists, with their patches."""
    out = _git(repo, "log", "--first-parent", f"-L{span}:{path}", "--format=@@commit %H",
               f"{base}..{branch}")  # fmt: skip
    patches: dict[str, str] = {}
    current = None
    for line in out.splitlines():
        if line.startswith("@@commit "):
            current = line.split()[1]
            patches[current] = ""
        elif current is not None:
            patches[current] += line + "\n"
    return _merge_patches(repo, branch, path, span, patches)


def _merge_patches(
    repo: Path, tip: str, path: str, span: str, patches: dict[str, str]
) -> dict[str, str]:
    """`patches` (newest first) with a patch for each merge: `git log -L` lists a merge
    that touched the range but prints no diff of it, even with `--first-parent`. The range
    after a merge holds what the range before the next commit listed held (or at the
    tip); found there in the merge's version, it is carried back through the merge's diff
    against its first parent (a range end in a hunk takes the whole hunk, as `-L` does),
    and the patch is the two ranges' line diff, the whole range shown."""
    start, end = (int(n) for n in span.split(","))
    text = _git(repo, "show", f"{tip}:{path}").split("\n")[start - 1 : end]
    later = tip  # the version `text` and `path` are of
    for commit, patch in patches.items():
        if patch.strip():
            text = [line[1:] for line in patch.split("@@", 2)[-1].splitlines()[1:]
                    if line[:1] in (" ", "-")]  # fmt: skip
            path = m[1] if (m := re.search(r"^--- a/(.+)$", patch, re.M)) else path
            later = f"{commit}^"
            continue
        now = _renamed_from(repo, commit, later, path)
        if now is None or not text:
            break  # not told: this merge and older ones left without a patch
        after = _git(repo, "show", f"{commit}:{now}").split("\n")
        at = next((k for k in range(len(after) - len(text) + 1)
                   if after[k : k + len(text)] == text), None)  # fmt: skip
        if at is None:
            break
        new = (at + 1, at + len(text))
        path = _renamed_from(repo, f"{commit}^", commit, now) or ""
        if path:
            diff = _git(repo, "diff", "-U0", "-M", f"{commit}^", commit, "--", path, now)
            old = _carried_back(diff, *new)
            before = _git(repo, "show", f"{commit}^:{path}").split("\n")[old[0] - 1 : old[1]]
        else:
            old, before = (0, -1), []
        patches[commit] = _range_patch(path or now, now, old, new, before, text)
        text, later = before, f"{commit}^"
        if not path:
            break
    return patches


def _renamed_from(repo: Path, rev: str, later: str, path: str) -> str | None:
    """The path at `rev` of the file at `path` in the later version `later`: the same, or
    the one git's diff between them renames to it; None when there is none."""
    if _exists(repo, rev, path):
        return path
    try:
        status = _git(repo, "diff", "-M", "--name-status", rev, later)
    except subprocess.CalledProcessError:  # a blob the mirror lacks
        return None
    for line in status.splitlines():
        parts = line.split("\t")
        if line.startswith("R") and len(parts) == 3 and parts[2] == path:
            return parts[1]
    return None


def _carried_back(diff: str, start: int, end: int) -> tuple[int, int]:
    """Lines start..end after a diff (`-U0`), carried back to the lines before it; a line a
    hunk added takes the hunk's old lines. Empty (start > end) when the diff added all."""
    found = re.findall(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", diff, re.M)
    hunks = [tuple(int(n) if n else 1 for n in h) for h in found]

    def back(line: int, first: bool) -> int:
        shift = 0
        for a, b, c, d in hunks:
            if d and c <= line < c + d:  # added by this hunk
                if not b:
                    return a + 1 if first else a
                return a if first else a + b - 1
            if (c + d - 1 if d else c) < line:  # the hunk is before the line
                shift += b - d
        return line + shift

    return back(start, True), back(end, False)


def _range_patch(
    path: str,
    now: str,
    old: tuple[int, int],
    new: tuple[int, int],
    before: list[str],
    after: list[str],
) -> str:
    """A patch of one range in `git log -L`'s shape: both sides' lines, unchanged ones as
    context."""
    size = max(0, old[1] - old[0] + 1)
    head = "--- /dev/null" if old == (0, -1) else f"--- a/{path}"  # the file made
    body = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            body += [" " + line for line in before[i1:i2]]
            continue
        body += ["-" + line for line in before[i1:i2]] + ["+" + line for line in after[j1:j2]]
    return (f"diff --git a/{path} b/{now}\n{head}\n+++ b/{now}\n"
            f"@@ -{max(old[0], 0)},{size} +{new[0]},{new[1] - new[0] + 1} @@\n"
            + "".join(line + "\n" for line in body))  # fmt: skip


def _range_edit(patch: str) -> str:
    """What a commit did inside the range, from `git log -L`'s patch: comments or
    whitespace only, or code."""
    removed = [line[1:] for line in patch.splitlines() if line.startswith("-")
               and not line.startswith("---")]  # fmt: skip
    added = [line[1:] for line in patch.splitlines() if line.startswith("+")
             and not line.startswith("+++")]  # fmt: skip
    if _code(removed) == _code(added):
        return "comments/whitespace"
    return "code"


def _code(lines: list[str]) -> str:
    return "".join("".join(COMMENT.sub("", line).split()) for line in lines)


def _touches(repo: Path, commit: str, path: str, name: str) -> bool:
    """Whether the commit's diff of `path` edits lines of a function called `name` in the
    version before it (attributes included), or appends lines to its body: lines added
    after the blank lines that end it (git's hunk starts past them), that a function of
    that name holds in the version after it (a Python function's last lines)."""
    try:
        before = _git_bytes(repo, "show", f"{commit}^:{path}")
    except subprocess.CalledProcessError:
        return True  # the file came from elsewhere: not told, counted as an edit
    spans = [
        (_with_attributes(n).start_point[0] + 1, n.end_point[0] + 1)
        for n in _functions(before, path)
        if _name(n) == name
    ]
    lines = before.decode(errors="replace").split("\n")
    diff = _git(repo, "diff", "-U0", f"{commit}^", commit, "--", path)
    appended = []
    for hunk in re.finditer(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? ", diff, re.M):
        start, size = int(hunk[1]), int(hunk[2] if hunk[2] is not None else 1)
        low, high = (start, start + size - 1) if size else (start, start + 1)
        if any(low <= end and start_ <= high for start_, end in spans):
            return True
        if not size and any(end < start and not "".join(lines[end:start]).strip()
                            for _, end in spans):  # fmt: skip
            added = int(hunk[4] if hunk[4] is not None else 1)
            appended.append((int(hunk[3]), int(hunk[3]) + added - 1))
    if not appended:
        return False
    after = _git_bytes(repo, "show", f"{commit}:{path}")
    held = [(n.start_point[0] + 1, n.end_point[0] + 1) for n in _functions(after, path)
            if _name(n) == name]  # fmt: skip
    return any(s <= high and low <= e for low, high in appended for s, e in held)


def _function_at(repo: Path, commit: str, path: str, line: int) -> str | None:
    """The name of the innermost function holding `line` of `path` at `commit`."""
    try:
        source = _git_bytes(repo, "show", f"{commit}:{path}")
    except subprocess.CalledProcessError:
        return None
    holding = [n for n in _functions(source, path)
               if _with_attributes(n).start_point[0] + 1 <= line <= n.end_point[0] + 1]  # fmt: skip
    return _name(max(holding, key=lambda n: n.start_byte)) if holding else None


def _patch_lines(patch: str, sign: str) -> list[str]:
    return [line[1:] for line in patch.splitlines()
            if line.startswith(sign) and not line.startswith(sign * 3)]  # fmt: skip


def _code_lines(lines: list[str]) -> list[str]:
    return [c for line in lines if (c := "".join(COMMENT.sub("", line).split()))]


def _reindented(repo: Path, commit: str, patch: str, path: str, name: str) -> bool:
    """Whether the lines a commit adds in the range are, but for indentation and
    comments, a whole function of that name in the version before it: the function moved
    unchanged (into a macro's body), and git's diff took it for new lines."""
    added = _code_lines(_patch_lines(patch, "+"))
    if not added:
        return False
    try:
        before = _git_bytes(repo, "show", f"{commit}^:{path}")
    except subprocess.CalledProcessError:
        return False
    lines = before.decode(errors="replace").split("\n")
    for node in _functions(before, path):
        if _name(node) == name:
            text = lines[_with_attributes(node).start_point[0] : node.end_point[0] + 1]
            if _code_lines(text) == added:
                return True
    return False


def _origin(
    repo: Path, commit: str, code: list[str], edited: bool = False
) -> tuple[str, int, int] | None:
    """Where the lines whose code is `code` were in the version before `commit`, in a file
    the commit deletes lines from: (path, first line, last line). With `edited`, lines
    the commit also edited as it moved them: the stretch of such a file that holds most of
    them in order (`_edited_stretch`), when none holds them all."""
    diff = _git(repo, "diff", "--no-renames", "-U0", f"{commit}^", commit)
    removed = {_code([line[1:]]) for line in diff.splitlines()
               if line.startswith("-") and not line.startswith("---")}  # fmt: skip
    best: tuple[int, str, int, int] | None = None
    for path in dict.fromkeys(re.findall(r"^--- a/(.+)$", diff, re.M)):
        if (found := _stretch(repo, f"{commit}^", path, code)) is not None:
            return path, *found
        moved = _edited_stretch(repo, f"{commit}^", path, code, removed) if edited else None
        if moved is not None and (best is None or moved[0] > best[0]):
            best = (moved[0], path, moved[1], moved[2])
    return None if best is None else best[1:]


MOVED_SHARE = 0.5  # of a moved and edited stretch's lines of code, found in order


def _edited_stretch(
    repo: Path, rev: str, path: str, code: list[str], removed: set[str]
) -> tuple[int, int, int] | None:
    """The stretch of `path` at `rev` most like `code` (lines of code): (score, first
    line, last line), its kept lines in order, each one the commit removed, at least
    MOVED_SHARE of `code`, the most kept lines less the lines of the stretch not kept;
    None when there is none."""
    try:
        text = _git(repo, "show", f"{rev}:{path}")
    except subprocess.CalledProcessError:
        return None
    rows = [(i + 1, c) for i, line in enumerate(text.split("\n"))
            if (c := "".join(COMMENT.sub("", line).split()))]  # fmt: skip
    codes = [c for _, c in rows]
    blocks = difflib.SequenceMatcher(None, codes, code, autojunk=False).get_matching_blocks()
    blocks = [b for b in blocks if b.size]
    best = None
    for i in range(len(blocks)):
        kept = 0
        for j in range(i, len(blocks)):
            first, last = blocks[i].a, blocks[j].a + blocks[j].size - 1
            if last - first + 1 > 2 * len(code):
                break
            kept += sum(codes[blocks[j].a + k] in removed for k in range(blocks[j].size))
            score = kept - (last - first + 1 - kept)
            if kept >= MOVED_SHARE * len(code) and (best is None or score > best[0]):
                best = (score, rows[first][0], rows[last][0])
    return best


def _stretch(repo: Path, rev: str, path: str, code: list[str]) -> tuple[int, int] | None:
    """The first and last line of the first stretch of `path` at `rev` whose lines of code
    (`_code_lines`) are `code`, or None."""
    try:
        text = _git(repo, "show", f"{rev}:{path}")
    except subprocess.CalledProcessError:
        return None
    rows = [(i + 1, c) for i, line in enumerate(text.split("\n"))
            if (c := "".join(COMMENT.sub("", line).split()))]  # fmt: skip
    for k in range(len(rows) - len(code) + 1):
        if [c for _, c in rows[k : k + len(code)]] == code:
            return rows[k][0], rows[k + len(code) - 1][0]
    return None


@functools.cache
def _broken_renames(repo: Path, commit: str) -> list[tuple[str, str]]:
    """The renames (old, new) onto a path that still exists before the commit: those
    `git diff -B -M` shows and `-M` alone does not."""
    found: list[tuple[str, str]] = []
    try:
        status = _git(repo, "diff", "-B", "-M", "--name-status", f"{commit}^", commit)
    except subprocess.CalledProcessError:  # a blob the mirror lacks
        return found
    for line in status.splitlines():
        parts = line.split("\t")
        if line.startswith("R") and len(parts) == 3 and _exists(repo, f"{commit}^", parts[2]):
            found.append((parts[1], parts[2]))
    return found


def _exists(repo: Path, rev: str, path: str) -> bool:
    done = subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{rev}:{path}"],
                          capture_output=True, check=False)  # fmt: skip
    return done.returncode == 0


def _unbroken(
    repo: Path, base: str, listed: dict[str, str], rank: dict[str, int]
) -> dict[str, str]:
    """`git log -L` with the trace git's own break detection gives: `-L` does none (`-B`),
    so a commit that rewrites the traced file with another file's content (that file
    deleted: `git diff -B -M` shows it renamed onto the path; typescript-sdk's
    `webStandardStreamableHttp.ts` becoming `streamableHttp.ts` while the old content
    moved out) shows, to its trace, new lines in place of the file's old ones, and git
    follows those old lines back. Where the range at the newest such commit is, code for
    code, a stretch of the other file before it, the commits before it are that
    stretch's trace, and the commit only carried the lines over. `listed` as it is
    otherwise."""
    for commit in sorted(listed, key=lambda c: rank.get(c, -1), reverse=True):
        patch = listed[commit]
        if (header := re.search(r"^\+\+\+ b/(.+)$", patch, re.M)) is None:
            continue
        sources = [old for old, new in _broken_renames(repo, commit) if new == header[1]]
        lines = [line[1:] for line in patch.split("@@", 2)[-1].splitlines()[1:]
                 if line[:1] in (" ", "+")]  # fmt: skip
        code = _code_lines(lines)
        found = _stretch(repo, f"{commit}^", sources[0], code) if sources and code else None
        if found is None:
            continue
        span = f"{found[0]},{found[1]}"
        earlier = _log_l(repo, base, f"{commit}^", sources[0], span) if rank.get(commit) else {}
        return {**earlier, **{c: p for c, p in listed.items() if rank[c] > rank[commit]}}
    return listed


def _spliced(
    repo: Path,
    base: str,
    listed: dict[str, str],
    order: list[str],
    rank: dict[str, int],
    states: dict[str, str],
) -> dict[str, str]:
    """`git log -L` of the lines before the commit that created them in the file, where
    they came from another file: git's trace stops where its file begins, watch follows
    the code across files. Three shapes: the commit moved them from a file it deletes them
    from (a file split), or they restore lines that the commit watch says deleted the item
    removed (a file deleted, then restored under another path), or the commit moved them
    from a file it deletes them from and edited them on the way (then it stays listed, as
    the edit it also is). Empty otherwise."""
    if not listed:
        return {}
    first = min(listed, key=lambda c: rank.get(c, -1))
    patch = listed[first]
    if not re.search(r"^@@ -0,0 ", patch, re.M) or _patch_lines(patch, "-"):
        return {}
    code = _code_lines(_patch_lines(patch, "+"))
    if not code:
        return {}
    found, edited = _origin(repo, first, code), False
    deleted = None
    gone = [c for c, s in states.items() if s == "missing" and rank.get(c, -1) < rank[first]]
    if found is None and gone:  # restored: deleted by the commit watch last saw it missing at
        deleted = max(gone, key=lambda c: rank.get(c, -1))
        found = _origin(repo, deleted, code)
    if found is None:  # moved and edited: the commit stays, as a change of the lines
        deleted, edited = None, True
        found = _origin(repo, first, code, edited=True)
        if found is None:
            return {}
    path, start, end = found
    tip = f"{deleted or first}^"
    earlier = _log_l(repo, base, tip, path, f"{start},{end}") if rank[deleted or first] else {}
    if deleted is not None:  # git's diff removes the very lines the later commit restores
        earlier[deleted] = "".join(f"-{line}\n" for line in code)
    elif not edited:
        del listed[first]  # moved, not made: the commit only carried the lines over
    return earlier


def _widened(
    repo: Path,
    base: str,
    branch: str,
    result: dict[str, Any],
    listed: dict[str, str],
    history: list[str],
    rank: dict[str, int],
    order: list[str],
) -> dict[str, str]:
    """The commits git lists only because its range widened (a commit W whose hunk
    replaced many old lines by the few it traces, so that older commits are traced
    through lines that were not the cited ones), when `git blame --reverse` sees every
    cited line of a range survive them, or the cited lines carried forward through each
    diff (`_carried_forward`) are past them unedited: {commit: W}."""
    if result["cite_kind"] in WHOLE:
        return {}
    baseline = result["baseline"]
    out = _git(repo, "blame", "--reverse", "--first-parent", "--porcelain",
               f"-L{baseline['start_line']},{baseline['end_line']}", f"{base}..{branch}", "--",
               baseline["path"])  # fmt: skip
    ends, commit = [], None
    for line in out.splitlines():
        if re.match(r"^[0-9a-f]{40} ", line):
            commit = line.split()[0]
        elif line.startswith("\t") and commit and re.search(r"\w", _code([line[1:]])):
            ends.append(rank.get(commit, -1))
    if not ends:
        return {}
    found: dict[str, str] = {}
    carried: tuple[set[str], int] | None = None
    for w in history:
        hunks = re.findall(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@", listed[w], re.M)
        old = sum(int(a or 1) for a, _ in hunks)
        new = sum(int(b or 1) for _, b in hunks)
        if old <= 2 * new:
            continue
        for c in history:
            if rank.get(c, -1) >= rank.get(w, -1):
                continue
            if min(ends) >= rank.get(c, -1):
                found.setdefault(c, w)
                continue
            if carried is None:
                carried = _carried_forward(repo, base, branch, baseline, rank)
            touched, reached = carried
            if c not in touched and rank.get(c, -1) <= reached:
                found.setdefault(c, w)
    return found


def _carried_forward(
    repo: Path, base: str, branch: str, baseline: dict[str, Any], rank: dict[str, int]
) -> tuple[set[str], int]:
    """The commits whose first-parent diff of the cited file edits a cited line, or a
    line an earlier such edit put in its place, or inserts lines between two of them:
    the cited lines carried forward from the baseline through each diff, as `git log -L`
    carries a range back from HEAD. With the rank of the last commit the file still had
    its path at (past it, nothing is known). Where blame sees a cited line edited (a
    docstring's quotes joined to its first line), this still tells a commit that edits
    only lines below them, which a range widened later lists, from one that edits them."""
    path = baseline["path"]
    lines = set(range(baseline["start_line"], baseline["end_line"] + 1))
    touched: set[str] = set()
    reached = rank.get(base, -1)
    commits = _git(repo, "log", "--first-parent", "--reverse", "--format=%H",
                   f"{base}..{branch}", "--", path).split()  # fmt: skip
    for commit in commits:
        try:
            _git(repo, "cat-file", "-e", f"{commit}:{path}")
        except subprocess.CalledProcessError:
            break
        diff = _git(repo, "diff", "-U0", "--no-renames", f"{commit}^", commit, "--", path)
        hunks = [(int(a), 1 if b == "" else int(b), int(c), 1 if d == "" else int(d))
                 for a, b, c, d in re.findall(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@",
                                              diff, re.M)]  # fmt: skip
        after: set[int] = set()
        for line in lines:
            shift, edited = 0, False
            for a, b, c, d in hunks:
                if b and a <= line < a + b:
                    edited = True
                    after |= set(range(c, c + d))
                    break
                if (b and a + b <= line) or (not b and a < line):
                    shift += d - b
            if edited:
                touched.add(commit)
            else:
                after.add(line + shift)
        for a, b, c, d in hunks:
            if not b and a in lines and a + 1 in lines:  # inserted between two of them
                touched.add(commit)
                after |= set(range(c, c + d))
        lines, reached = after, rank.get(commit, -1)
        if not lines:
            break
    return touched, reached


def _removed_by(
    repo: Path,
    base: str,
    branch: str,
    baseline: dict[str, Any],
    order: list[str],
    name: str,
    *,
    moves: bool = False,
    by_tokens: bool = False,
) -> str | None:
    """The commit after the last one in which `git blame --reverse` still sees a cited
    line of code (blank and comment lines aside; `-w`: a line re-indented into a new
    block is still there, as watch compares tokens), or the commit whose diff shows the
    file deleted, if earlier: blame, limited to the path, may pair a deleted file with a
    file the same commit renamed from elsewhere (inspector's `bin/cli.js`, deleted, and
    `bin/src/index.ts` renamed to `cli/src/cli.ts`) and follow its lines there. A line
    written more than once in the baseline file (`assert_eq!(`, `);`) that git sees last
    inside another function is not counted: git's diff matched it to that function's own
    line of the same text. `moves`: `-M` too, a line moved inside the file is still there.
    `by_tokens`: each line weighs its tokens, not one (watch's FOUND_SHARE is a share of
    the cited tokens: a long `let` and its chained calls removed outweigh three short
    `&& x` lines that stay)."""
    deleted = _deleted_by(repo, base, branch, baseline["path"])
    out = _git(repo, "blame", "-w", *(["-M"] if moves else []), "--reverse", "--first-parent",
               "--porcelain",
               f"-L{baseline['start_line']},{baseline['end_line']}", f"{base}..{branch}", "--",
               baseline["path"])  # fmt: skip
    commit = None
    rank = {c: i for i, c in enumerate(order)}
    at = 0
    seen: list[tuple[int, str, int, str, str]] = []
    for line in out.splitlines():
        if re.match(r"^[0-9a-f]{40} ", line):
            commit, at = line.split()[0], int(line.split()[1])
        elif line.startswith("\t") and commit and re.search(r"\w", _code([line[1:]])):
            seen.append((rank.get(commit, -1), commit, at, _code([line[1:]]), line[1:]))
    path = baseline["path"]
    counts = Counter(_code_lines(_git(repo, "show", f"{base}:{path}").split("\n")))
    kept = [(r, text) for r, commit, at, code, text in seen
            if counts[code] < 2 or _function_at(repo, commit, path, at) == name]  # fmt: skip
    kept = kept or [(r, text) for r, _, _, _, text in seen]  # all git has to go by
    if not kept:
        return deleted
    # Gone when most of its lines (or tokens) are: a lone `}` that git's diff keeps
    # elsewhere does not keep the construct alive.
    weights = sorted((r, len(TOKEN.findall(COMMENT.sub("", t))) if by_tokens else 1)
                     for r, t in kept)  # fmt: skip
    total, gone = sum(w for _, w in weights), 0
    latest = weights[-1][0]
    for r, w in weights:
        gone += w
        if 2 * gone >= total:
            latest = r
            break
    if deleted is not None and rank.get(deleted, len(order)) <= latest:
        return deleted
    return order[latest + 1] if latest + 1 < len(order) else None


TOKEN = re.compile(r"\w+|[^\w\s]")  # about a token: a word, or one sign


def _deleted_by(repo: Path, base: str, branch: str, path: str) -> str | None:
    """The first commit after `base` whose diff (rename detection over the whole commit)
    shows `path` deleted, not renamed."""
    return next(iter(_deletions(repo, base, branch, path)), None)


def _deletions(repo: Path, base: str, branch: str, path: str) -> list[str]:
    """Every first-parent commit after `base` whose diff (rename detection over the whole
    commit) shows `path` deleted, not renamed, oldest first."""
    removals = _git(repo, "log", "--first-parent", "--no-renames", "--diff-filter=D", "--reverse",
                    "--format=%H", f"{base}..{branch}", "--", path).split()  # fmt: skip
    found = []
    for commit in removals:
        status = _git(repo, "diff", "-M", "--name-status", f"{commit}^1", commit)
        if f"D\t{path}" in status.splitlines():
            found.append(commit)
    return found


def _deleted_again(
    repo: Path, base: str, branch: str, path: str, name: str, after: str | None
) -> str | None:
    """The last commit that deleted `path`, when `after` (the commit git names as the
    one that removed the item) deleted it earlier and the file it deleted held a function called
    `name` again: the file was deleted, written again with the function (a revert of its
    deletion, a feature branch merged late), and deleted once more. Blame follows the
    baseline's lines, and the file written again holds new lines for it: git cannot see
    that the item came back, and names the first deletion."""
    deletions = _deletions(repo, base, branch, path)
    if after not in deletions[:-1]:
        return None
    last = deletions[-1]
    source = _git_bytes(repo, "show", f"{last}^1:{path}")
    return last if any(_name(n) == name for n in _functions(source, path)) else None


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


def _git(repo: Path, *args: str) -> str:
    return _git_bytes(repo, *args).decode(errors="replace")


def _git_bytes(repo: Path, *args: str) -> bytes:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True)
    return done.stdout


if __name__ == "__main__":
    sys.exit(main())
