"""What a user may write to name something in an upstream: a file path that stays inside
the repository, and an OWNER/NAME that is a name, not a path.

Checked where notes, rules and config.toml are read, so that no later stage (git, the
mirror cache, state file names) ever sees `../../etc/passwd`, `/etc/passwd` or `../..`.
Each check returns why a value is refused, with the fix, or None.
"""

from __future__ import annotations

import posixpath
import re

from watcher import redact

# OWNER/NAME as GitHub spells them: letters, digits, `.`, `_`, `-`; neither part `.` or
# `..` (a path, not a name) nor starting with `-` (an option to whatever reads it).
REPO = re.compile(r"^(?!\.\.?/|-)[A-Za-z0-9_.-]+/(?!\.\.?\Z|-)[A-Za-z0-9_.-]+\Z")
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
# A repository's URL where OWNER/NAME belongs (any page of it: issues, a file, `.git`).
_URL = re.compile(
    r"^(?:https?://(?:[^@/]*@)?|git@)[^/:]+[/:]([\w.-]+)/([\w.-]+?)(?:\.git)?(?:[/#?].*)?$"
)


def path_problem(path: str) -> str | None:
    """Why `path` cannot be a file inside a repository, and how to write it; None if it can.

    A path is relative to the repository's root, `/` between folders, and every part of
    it a name: no `..` (it would leave the repository), no `.`, no empty part."""
    example = "like src/lib.rs"
    if not path:
        return f"is empty; cite a file by its path from the repository root, {example}"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in path):
        return "holds a control character (a NUL, a newline); retype the path"
    if path.startswith(("/", "\\")) or _DRIVE.match(path):
        return (
            "is absolute; a citation names a file inside the upstream repository, by its "
            f"path from the repository's root, {example}"
        )
    if path.startswith("~"):
        return f"starts with `~` (a home folder); write it from the repository root, {example}"
    parts = path.split("/")
    if ".." in parts:
        return (
            "leaves the repository (a `..` part); write the path from the repository root, "
            f"{example}"
        )
    if "." in parts or "" in parts:
        tidy = posixpath.normpath(path).lstrip("/")
        return f"has an empty or `.` part; write it as {tidy}"
    return None


def repo_problem(repo: str) -> str | None:
    """Why `repo` is not an OWNER/NAME, with an example; None when it is one."""
    if found := _URL.match(repo.strip()):  # a repository's URL, pasted: say what to write
        return f"expected OWNER/NAME, got a URL; write {found.group(1)}/{found.group(2)}"
    if not REPO.match(repo):
        # Not echoed when it may hold credentials (`user:token@host`, a pasted token).
        secret = "@" in repo or "://" in repo or redact.looks_like_token(repo)
        shown = "a URL or a token" if secret else repr(repo)
        return f"expected OWNER/NAME (like openai/codex), got {shown}"
    return None
