"""Build small real git repositories: used by `watch demo`, the tests and the bench.

Author, committer and dates are pinned so that commit ids are the same on every machine.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z


class Upstream:
    """A non-bare repository whose commits are made one call at a time."""

    def __init__(self, path: Path, branch: str = "main") -> None:
        self.path = path
        self.branch = branch
        self.ticks = 0
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "--quiet", f"--initial-branch={branch}")
        self.git("config", "uploadpack.allowFilter", "true")

    def git(self, *args: str) -> str:
        self.ticks += 1
        when = f"{EPOCH + 3600 * self.ticks} +0000"
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "Ada Upstream",
            "GIT_AUTHOR_EMAIL": "ada@example.com",
            "GIT_COMMITTER_NAME": "Ada Upstream",
            "GIT_COMMITTER_EMAIL": "ada@example.com",
            "GIT_AUTHOR_DATE": when,
            "GIT_COMMITTER_DATE": when,
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        proc = subprocess.run(
            ["git", "-C", str(self.path), *args],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode:
            raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.strip()}")
        return proc.stdout.strip()

    def write(self, files: Mapping[str, str | None]) -> None:
        """Write (or, for None, delete) files in the work tree."""
        for name, text in files.items():
            target = self.path / name
            if text is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")

    def commit(self, message: str, files: Mapping[str, str | None] | None = None) -> str:
        """Write `files`, commit everything, and return the new commit id."""
        if files:
            self.write(files)
        self.git("add", "--all")
        self.git("commit", "--quiet", "--allow-empty", "-m", message)
        return self.head()

    def move(self, old: str, new: str, message: str) -> str:
        (self.path / new).parent.mkdir(parents=True, exist_ok=True)
        self.git("mv", old, new)
        return self.commit(message)

    def tag(self, name: str, rev: str = "HEAD") -> None:
        self.git("tag", name, rev)

    def branch_off(self, name: str) -> None:
        self.git("checkout", "--quiet", "-b", name)

    def checkout(self, name: str) -> None:
        self.git("checkout", "--quiet", name)

    def merge(self, name: str, message: str) -> str:
        self.git("merge", "--quiet", "--no-ff", "-m", message, name)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")

    def read(self, name: str) -> str:
        return (self.path / name).read_text(encoding="utf-8")

    @property
    def url(self) -> str:
        return self.path.resolve().as_uri()
