"""Why git is the one that is wrong, where `bench.differential` finds watch and git
differ: each reason is a kind of commit git's line trace lists, or misses, that the
cited tokens say otherwise about; every one was checked by hand on a real upstream."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from bench.draw import WHOLE
from bench.gitread import (
    code_lines,
    code_of,
    definitions,
    function_at,
    git_bytes,
    git_out,
    name_of,
    patch_lines,
    with_attributes,
)
from bench.gittrace import Renames, paths_along

REWRITTEN = "gone, then written again: git's trace starts where its lines were written"


def born_after(
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


def came_back(history: list[dict[str, Any]], commit: str | None) -> bool:
    """Whether watch has the item gone at `commit` and found again after it."""
    commits, states = [h["commit"] for h in history], [h["state"] for h in history]
    if commit not in commits or states[commits.index(commit)] != "missing":
        return False
    return any(state != "missing" for state in states[commits.index(commit) + 1 :])


# Why a commit git lists as a code edit of the range is one git gets wrong (`git_wrong`).
GIT_WRONG = (
    "not in the cited function: git's hunk crosses into it",
    "the cited function's tokens are unchanged: git lost its re-indented or moved lines",
    "every line git's hunk lists was moved, not edited: git's diff takes it for new",
)


def git_wrong(repo: Path, commit: str, path: str, name: str, patch: str) -> str | None:
    """Why git is wrong to list `commit` on the range (its patch `patch`), or None: its
    hunk edits no line of the cited function; or the function's tokens, comments aside,
    are the same before and after it (git's line diff lost lines it re-indented or
    moved); or each code line the hunk adds is one the commit moved (removed verbatim,
    whitespace aside, elsewhere in the file), and each line of the function it removes
    was added elsewhere."""
    if name == "?":  # no construct to judge by (`--shapes`' imports): not told
        return None
    if not touches(repo, commit, path, name):
        return "code, but " + GIT_WRONG[0]
    before, after = (
        _function_tokens(repo, f"{commit}^", path, name),
        _function_tokens(repo, commit, path, name),
    )
    if before and before == after:
        return "code, but " + GIT_WRONG[1]
    diff = git_out(repo, "diff", "-U0", f"{commit}^", commit, "--", path)
    removed, added = _changed_lines(diff)
    minus, plus = _changed_lines(patch)
    # A line git pairs with a moved one may be no line of the function (another's header).
    own = _function_lines(repo, f"{commit}^", path, name)
    if (minus or plus) and (minus & own) <= added and plus <= removed:
        return "code, but " + GIT_WRONG[2]
    return None


def _function_lines(repo: Path, rev: str, path: str, name: str) -> set[str]:
    """The code (`code_of`) of the lines of each function called `name` in `path` at `rev`."""
    try:
        source = git_bytes(repo, "show", f"{rev}:{path}")
    except subprocess.CalledProcessError:
        return set()
    lines = source.decode(errors="replace").split("\n")
    return {
        code_of([line])
        for node in definitions(source, path)
        if name_of(node) == name
        for line in lines[with_attributes(node).start_point[0] : node.end_point[0] + 1]
    }


def _changed_lines(diff: str) -> tuple[set[str], set[str]]:
    """The code (`code_of`) of the lines a diff removes and adds, lines of no code aside."""
    removed, added = set(), set()
    for line in diff.splitlines():
        if line.startswith(("---", "+++")) or line[:1] not in ("-", "+"):
            continue
        code = code_of([line[1:]])
        if code:
            (removed if line[0] == "-" else added).add(code)
    return removed, added


def _function_tokens(repo: Path, rev: str, path: str, name: str) -> list[tuple[str, ...]]:
    """The tokens (tree-sitter's leaves, comments left out) of each function called
    `name` in `path` at `rev`, attributes included, sorted; none when it has no such file."""
    try:
        source = git_bytes(repo, "show", f"{rev}:{path}")
    except subprocess.CalledProcessError:
        return []
    found = []
    for node in definitions(source, path):
        if name_of(node) != name:
            continue
        leaves, stack = [], [with_attributes(node)]
        while stack:
            current = stack.pop()
            if "comment" in current.type:
                continue
            if current.child_count == 0 and current.end_byte > current.start_byte:
                leaves.append(current.text.decode(errors="replace"))
            stack.extend(reversed(current.children))
        found.append(tuple(leaves))
    return sorted(found)


MEANINGFUL = 12  # characters of code: a shorter line (`return None`) is found anywhere


def edits_cited(
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
             if len(c := code_of([line])) >= MEANINGFUL}  # fmt: skip
    head = git_out(repo, "show", f"{cur['commit']}:{cur['path']}").splitlines()
    inside = {code_of([line]) for line in head[cur["start_line"] - 1 : cur["end_line"]]}
    outside = {code_of([line]) for line in head} - inside
    order = [h["commit"] for h in result.get("history", [])]
    rank = {commit: i for i, (commit, _) in enumerate(renames)}
    paths = paths_along(renames, base["path"])
    found = set()
    for commit in order:
        before, after = paths.get(commit, (base["path"], base["path"]))
        diff = git_out(repo, "diff", "-U0", "-M", f"{commit}^", commit, "--",
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


def inserted_inside(repo: Path, result: dict[str, Any], commits: list[str]) -> set[str]:
    """Of `commits` (watch lists them, git does not), those whose diff of the cited file
    has a hunk that only adds lines, between a cited line of code (MEANINGFUL characters
    at least) and the next cited line, inside the cited function: the cited statement
    edited where the lines git traces back from the HEAD span do not pass (codex's
    `let session = Session { ... }`, given a field by #3850, whose other fields a later
    commit moved into a `SessionServices` that the HEAD span holds)."""
    base, cur = result["baseline"], result["current"]
    codes = {c for line in result.get("baseline_code", "").splitlines() if (c := code_of([line]))}
    meaningful = {c for c in codes if len(c) >= MEANINGFUL}
    found = set()
    for commit in commits:
        for path in dict.fromkeys([base["path"], cur["path"]]):
            diff = git_out(repo, "diff", "-U0", f"{commit}^", commit, "--", path)
            added = [int(m) for m in re.findall(r"^@@ -(\d+),0 \+", diff, re.M)]
            if not added:
                continue
            try:
                old = git_out(repo, "show", f"{commit}^:{path}").split("\n")
            except subprocess.CalledProcessError:
                continue
            if any(0 < at < len(old) and code_of([old[at - 1]]) in meaningful
                   and code_of([old[at]]) in codes
                   and function_at(repo, f"{commit}^", path, at) == result["cite_name"]
                   for at in added):  # fmt: skip
                found.add(commit)
    return found


def touches(repo: Path, commit: str, path: str, name: str) -> bool:
    """Whether the commit's diff of `path` edits lines of a function called `name` in the
    version before it (attributes included), or appends lines to its body: lines added
    after the blank lines that end it (git's hunk starts past them), that a function of
    that name holds in the version after it (a Python function's last lines)."""
    try:
        before = git_bytes(repo, "show", f"{commit}^:{path}")
    except subprocess.CalledProcessError:
        return True  # the file came from elsewhere: not told, counted as an edit
    spans = [
        (with_attributes(n).start_point[0] + 1, n.end_point[0] + 1)
        for n in definitions(before, path)
        if name_of(n) == name
    ]
    lines = before.decode(errors="replace").split("\n")
    diff = git_out(repo, "diff", "-U0", f"{commit}^", commit, "--", path)
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
    after = git_bytes(repo, "show", f"{commit}:{path}")
    held = [(n.start_point[0] + 1, n.end_point[0] + 1) for n in definitions(after, path)
            if name_of(n) == name]  # fmt: skip
    return any(s <= high and low <= e for low, high in appended for s, e in held)


def reindented(repo: Path, commit: str, patch: str, path: str, name: str) -> bool:
    """Whether the lines a commit adds in the range are, but for indentation and
    comments, a whole function of that name in the version before it: the function moved
    unchanged (into a macro's body), and git's diff took it for new lines."""
    added = code_lines(patch_lines(patch, "+"))
    if not added:
        return False
    try:
        before = git_bytes(repo, "show", f"{commit}^:{path}")
    except subprocess.CalledProcessError:
        return False
    lines = before.decode(errors="replace").split("\n")
    for node in definitions(before, path):
        if name_of(node) == name:
            text = lines[with_attributes(node).start_point[0] : node.end_point[0] + 1]
            if code_lines(text) == added:
                return True
    return False


def widened_range(
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
    out = git_out(repo, "blame", "--reverse", "--first-parent", "--porcelain",
                  f"-L{baseline['start_line']},{baseline['end_line']}", f"{base}..{branch}", "--",
                  baseline["path"])  # fmt: skip
    ends, commit = [], None
    for line in out.splitlines():
        if re.match(r"^[0-9a-f]{40} ", line):
            commit = line.split()[0]
        elif line.startswith("\t") and commit and re.search(r"\w", code_of([line[1:]])):
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
    commits = git_out(repo, "log", "--first-parent", "--reverse", "--format=%H",
                      f"{base}..{branch}", "--", path).split()  # fmt: skip
    for commit in commits:
        try:
            git_out(repo, "cat-file", "-e", f"{commit}:{path}")
        except subprocess.CalledProcessError:
            break
        diff = git_out(repo, "diff", "-U0", "--no-renames", f"{commit}^", commit, "--", path)
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
