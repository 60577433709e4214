"""What git lists for an item, as `bench.differential` asks it: `git log --first-parent
-L` on the item's HEAD span (merges given a patch, files rewritten with another's content
traced on in that file, lines moved from another file traced there), and, for a missing
item, the commit `git blame --reverse --first-parent` ends its lines at."""

from __future__ import annotations

import difflib
import functools
import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

from bench.gitread import (
    COMMENT,
    TOKEN,
    code_lines,
    code_of,
    definitions,
    function_at,
    git_bytes,
    git_out,
    name_of,
    patch_lines,
    path_exists,
)

# Each first-parent commit after the base, oldest first, with the renames (old, new) its
# diff shows (`renames_between`).
Renames = list[tuple[str, list[tuple[str, str]]]]


def renames_between(repo: Path, base: str, branch: str) -> Renames:
    """The renames git's diff (`-M`, against the first parent) shows in each first-parent
    commit after `base`, oldest first."""
    try:
        out = git_out(repo, "log", "--first-parent", "--reverse", "-M", "--name-status",
                      "--format=@@%H", f"{base}..{branch}")  # fmt: skip
    except subprocess.CalledProcessError:  # a blob the mirror lacks: no renames told
        out = git_out(
            repo, "log", "--first-parent", "--reverse", "--format=@@%H", f"{base}..{branch}"
        )
    found: Renames = []
    for line in out.splitlines():
        if line.startswith("@@"):
            found.append((line[2:], []))
        elif line.startswith("R") and found:
            _, old, new = line.split("\t")
            found[-1][1].append((old, new))
    return found


def paths_along(renames: Renames, path: str) -> dict[str, tuple[str, str]]:
    """The file's path before and after each commit, from `path` at the base, through the
    renames of `renames`."""
    paths = {}
    for commit, pairs in renames:
        after = dict(pairs).get(path, path)
        paths[commit] = (path, after)
        path = after
    return paths


def log_l(repo: Path, base: str, branch: str, path: str, span: str) -> dict[str, str]:
    """The commits `git log --first-parent -L START,END:PATH` lists, with their patches."""
    out = git_out(repo, "log", "--first-parent", f"-L{span}:{path}", "--format=@@commit %H",
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
    text = git_out(repo, "show", f"{tip}:{path}").split("\n")[start - 1 : end]
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
        after = git_out(repo, "show", f"{commit}:{now}").split("\n")
        at = next((k for k in range(len(after) - len(text) + 1)
                   if after[k : k + len(text)] == text), None)  # fmt: skip
        if at is None:
            break
        new = (at + 1, at + len(text))
        path = _renamed_from(repo, f"{commit}^", commit, now) or ""
        if path:
            diff = git_out(repo, "diff", "-U0", "-M", f"{commit}^", commit, "--", path, now)
            old = _carried_back(diff, *new)
            before = git_out(repo, "show", f"{commit}^:{path}").split("\n")[old[0] - 1 : old[1]]
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
    if path_exists(repo, rev, path):
        return path
    try:
        status = git_out(repo, "diff", "-M", "--name-status", rev, later)
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


def range_edit(patch: str) -> str:
    """What a commit did inside the range, from `git log -L`'s patch: comments or
    whitespace only, or code."""
    removed = [line[1:] for line in patch.splitlines() if line.startswith("-")
               and not line.startswith("---")]  # fmt: skip
    added = [line[1:] for line in patch.splitlines() if line.startswith("+")
             and not line.startswith("+++")]  # fmt: skip
    if code_of(removed) == code_of(added):
        return "comments/whitespace"
    return "code"


@functools.cache
def _broken_renames(repo: Path, commit: str) -> list[tuple[str, str]]:
    """The renames (old, new) onto a path that still exists before the commit: those
    `git diff -B -M` shows and `-M` alone does not."""
    found: list[tuple[str, str]] = []
    try:
        status = git_out(repo, "diff", "-B", "-M", "--name-status", f"{commit}^", commit)
    except subprocess.CalledProcessError:  # a blob the mirror lacks
        return found
    for line in status.splitlines():
        parts = line.split("\t")
        if line.startswith("R") and len(parts) == 3 and path_exists(repo, f"{commit}^", parts[2]):
            found.append((parts[1], parts[2]))
    return found


def unbroken(repo: Path, base: str, listed: dict[str, str], rank: dict[str, int]) -> dict[str, str]:
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
        code = code_lines(lines)
        found = _stretch(repo, f"{commit}^", sources[0], code) if sources and code else None
        if found is None:
            continue
        span = f"{found[0]},{found[1]}"
        earlier = log_l(repo, base, f"{commit}^", sources[0], span) if rank.get(commit) else {}
        return {**earlier, **{c: p for c, p in listed.items() if rank[c] > rank[commit]}}
    return listed


def _stretch(repo: Path, rev: str, path: str, code: list[str]) -> tuple[int, int] | None:
    """The first and last line of the first stretch of `path` at `rev` whose lines of code
    (`code_lines`) are `code`, or None."""
    rows = _code_rows(repo, rev, path)
    if rows is None:
        return None
    for k in range(len(rows) - len(code) + 1):
        if [c for _, c in rows[k : k + len(code)]] == code:
            return rows[k][0], rows[k + len(code) - 1][0]
    return None


def _code_rows(repo: Path, rev: str, path: str) -> list[tuple[int, str]] | None:
    """Each line of `path` at `rev` that holds code: its number and its code, comments
    and whitespace left out; None when the file is not there."""
    try:
        text = git_out(repo, "show", f"{rev}:{path}")
    except subprocess.CalledProcessError:
        return None
    return [(i + 1, c) for i, line in enumerate(text.split("\n"))
            if (c := "".join(COMMENT.sub("", line).split()))]  # fmt: skip


MOVED_SHARE = 0.5  # of a moved and edited stretch's lines of code, found in order


def _edited_stretch(
    repo: Path, rev: str, path: str, code: list[str], removed: set[str]
) -> tuple[int, int, int] | None:
    """The stretch of `path` at `rev` most like `code` (lines of code): (score, first
    line, last line), its kept lines in order, each one the commit removed, at least
    MOVED_SHARE of `code`, the most kept lines less the lines of the stretch not kept;
    None when there is none."""
    rows = _code_rows(repo, rev, path)
    if rows is None:
        return None
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


def _origin(
    repo: Path, commit: str, code: list[str], edited: bool = False
) -> tuple[str, int, int] | None:
    """Where the lines whose code is `code` were in the version before `commit`, in a file
    the commit deletes lines from: (path, first line, last line). With `edited`, lines
    the commit also edited as it moved them: the stretch of such a file that holds most of
    them in order (`_edited_stretch`), when none holds them all."""
    diff = git_out(repo, "diff", "--no-renames", "-U0", f"{commit}^", commit)
    removed = {code_of([line[1:]]) for line in diff.splitlines()
               if line.startswith("-") and not line.startswith("---")}  # fmt: skip
    best: tuple[int, str, int, int] | None = None
    for path in dict.fromkeys(re.findall(r"^--- a/(.+)$", diff, re.M)):
        if (found := _stretch(repo, f"{commit}^", path, code)) is not None:
            return path, *found
        moved = _edited_stretch(repo, f"{commit}^", path, code, removed) if edited else None
        if moved is not None and (best is None or moved[0] > best[0]):
            best = (moved[0], path, moved[1], moved[2])
    return None if best is None else best[1:]


def spliced_in(
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
    if not re.search(r"^@@ -0,0 ", patch, re.M) or patch_lines(patch, "-"):
        return {}
    code = code_lines(patch_lines(patch, "+"))
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
    earlier = log_l(repo, base, tip, path, f"{start},{end}") if rank[deleted or first] else {}
    if deleted is not None:  # git's diff removes the very lines the later commit restores
        earlier[deleted] = "".join(f"-{line}\n" for line in code)
    elif not edited:
        del listed[first]  # moved, not made: the commit only carried the lines over
    return earlier


def removed_by(
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
    out = git_out(repo, "blame", "-w", *(["-M"] if moves else []), "--reverse", "--first-parent",
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
        elif line.startswith("\t") and commit and re.search(r"\w", code_of([line[1:]])):
            seen.append((rank.get(commit, -1), commit, at, code_of([line[1:]]), line[1:]))
    path = baseline["path"]
    counts = Counter(code_lines(git_out(repo, "show", f"{base}:{path}").split("\n")))
    kept = [(r, text) for r, commit, at, code, text in seen
            if counts[code] < 2 or function_at(repo, commit, path, at) == name]  # fmt: skip
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


def _deleted_by(repo: Path, base: str, branch: str, path: str) -> str | None:
    """The first commit after `base` whose diff (rename detection over the whole commit)
    shows `path` deleted, not renamed."""
    return next(iter(_deletions(repo, base, branch, path)), None)


def _deletions(repo: Path, base: str, branch: str, path: str) -> list[str]:
    """Every first-parent commit after `base` whose diff (rename detection over the whole
    commit) shows `path` deleted, not renamed, oldest first."""
    removals = git_out(
        repo, "log", "--first-parent", "--no-renames", "--diff-filter=D", "--reverse",
        "--format=%H", f"{base}..{branch}", "--", path,
    ).split()  # fmt: skip
    found = []
    for commit in removals:
        status = git_out(repo, "diff", "-M", "--name-status", f"{commit}^1", commit)
        if f"D\t{path}" in status.splitlines():
            found.append(commit)
    return found


def deleted_again(
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
    source = git_bytes(repo, "show", f"{last}^1:{path}")
    return last if any(name_of(n) == name for n in definitions(source, path)) else None
