"""Git in the notes repository's checkout, as `watch action` uses it: commits made by the
Actions bot, pushed back to the checked-out branch (a push that lost a race with another
job's is caught up and retried). Run through the one git runner (watcher.mirror.git).
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from watcher.errors import WatchError
from watcher.mirror.git import call

log = logging.getLogger("watcher.action")

BOT = ("github-actions[bot]", "41898282+github-actions[bot]@users.noreply.github.com")
# Git options that make the bot the author and committer of a commit.
AS_BOT = ("-c", f"user.name={BOT[0]}", "-c", f"user.email={BOT[1]}")
# What git says when another push got there first (or at the same moment).
RACED = ("fetch first", "non-fast-forward", "cannot lock ref", "failed to update ref")


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> str:
    """Run git in the checkout; its output, stripped. A failure raises with git's words."""
    code, out, err = call(cwd, *args, env=env, stdin=stdin)
    if code:
        raise WatchError(f"{cwd}: git {args[0]} failed: {err.strip()}")
    return out.strip()


def try_git(cwd: Path, *args: str) -> tuple[int, str]:
    """Run git in the checkout; its exit code and its error output on one line."""
    code, _, err = call(cwd, *args)
    return code, " ".join(line.strip() for line in err.splitlines() if line.strip())


def toplevel(root: Path) -> Path:
    """The top folder of the checkout holding `root`."""
    return Path(git(root, "rev-parse", "--show-toplevel"))


def push(top: Path, catch_up: Callable[[], None] | None = None, attempts: int = 8) -> None:
    """Push HEAD to its branch on origin. A push that lost a race with another push is
    caught up (`catch_up`, by default a rebase on the branch as pushed) and retried; any
    other refusal raises with git's own words."""
    branch = git(top, "rev-parse", "--abbrev-ref", "HEAD")
    for attempt in range(1, attempts + 1):
        code, text = try_git(top, "push", "--quiet", "origin", f"HEAD:refs/heads/{branch}")
        if code == 0:
            return
        raced = any(words in text for words in RACED)
        if not raced or attempt == attempts:
            raise WatchError(f"push to origin {branch} failed: {text}")
        log.warning("push lost a race with another run; rebasing on it (%s)", attempt)
        (catch_up or (lambda: rebase(top, branch)))()


def rebase(top: Path, branch: str) -> None:
    """Rebase HEAD on the branch as pushed; on a conflict, leave no rebase behind."""
    git(top, "fetch", "--quiet", "origin", branch)
    code, text = try_git(top, *AS_BOT, "rebase", "--quiet", "--autostash", "-X", "theirs",
                         "FETCH_HEAD")  # fmt: skip
    if code != 0:
        try_git(top, "rebase", "--abort")
        raise WatchError(f"could not rebase on origin {branch}: {text}")


def commit_off_tree(top: Path, files: dict[Path, str], message: str) -> str:
    """A commit on top of HEAD with `files` changed, made in a scratch index: the work
    tree and the checked-out branch stay as they are."""
    name, email = BOT
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(scratch) / "index")}
        git(top, "read-tree", "HEAD", env=env)
        for path, text in files.items():
            blob = git(top, "hash-object", "-w", "--stdin", stdin=text)
            rel = path.resolve().relative_to(top.resolve()).as_posix()
            git(top, "update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}", env=env)
        tree = git(top, "write-tree", env=env)
    env = {**os.environ, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
           "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}  # fmt: skip
    return git(top, "commit-tree", tree, "-p", "HEAD", "-m", message, env=env)
