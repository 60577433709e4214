"""bench.differential's classifier: the cases where git's line history, not watch, is
wrong, checked on histories built here."""

from __future__ import annotations

from pathlib import Path

from bench import differential
from tests.support import git

LOOP = "def first(items):\n    for item in items:\n        if item:\n            return item\n    return None\n"
OTHER = "def other():\n    return 1\n"


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "up"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    return repo


def _commit(repo: Path, files: dict[str, str | None], message: str) -> str:
    for name, text in files.items():
        if text is None:
            git(repo, "rm", "-q", name)
            continue
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
        git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def test_a_function_split_into_a_new_file_was_brought_there(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _commit(repo, {"a.py": OTHER + "\n\n" + LOOP}, "base")
    split = _commit(repo, {"a.py": OTHER, "b.py": LOOP}, "split first() into b.py")
    patch = differential._log_l(repo, f"{split}^", "main", "b.py", "1,5")[split]
    assert differential._brought(repo, split, "b.py", patch)
    written = _commit(repo, {"c.py": LOOP.replace("item", "entry")}, "new code")
    patch = differential._log_l(repo, f"{written}^", "main", "c.py", "1,5")[written]
    assert not differential._brought(repo, written, "c.py", patch)


def test_lines_moved_in_their_file_are_kept_until_the_commit_that_removes_them(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    base = _commit(repo, {"a.py": LOOP + "\n\n" + OTHER}, "base")
    baseline = {"path": "a.py", "start_line": 2, "end_line": 4}
    _commit(repo, {"a.py": OTHER + "\n\n" + LOOP}, "move first() below other()")
    removed = _commit(repo, {"a.py": OTHER}, "remove first()")
    assert differential._kept_until(repo, base, baseline, removed)
    # Edited before it was removed: the cited code is not there verbatim any more.
    _commit(repo, {"a.py": LOOP.replace("item", "entry") + OTHER}, "again, edited")
    gone = _commit(repo, {"a.py": OTHER}, "remove it again")
    assert not differential._kept_until(repo, base, baseline, gone)


def test_a_deleted_file_is_told_from_a_renamed_one(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _commit(repo, {"a.py": LOOP}, "base")
    renamed = _commit(repo, {"a.py": None, "b.py": LOOP}, "rename")
    deleted = _commit(repo, {"b.py": None}, "delete")
    assert not differential._deletes(repo, renamed, "a.py")
    assert differential._deletes(repo, deleted, "b.py")
