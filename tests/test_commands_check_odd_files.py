"""Odd files never stop a run: names that are not UTF-8, links that loop, a file where a
folder belongs and a folder where a file belongs, in notes/, rules/ and state/; state
nested past what json reads; a `.lock` that is a folder. Each run is piped (the warm path
fingerprints every file first), and run twice (the second may be answered from it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Project
from watcher.gitbuild import Upstream
from watcher.inputs import walk

LIB = "src/lib.rs"
SOURCE = "pub fn a() -> u32 {\n    1\n}\n"
BAD = os.fsdecode(b"caf\xe9")  # a name in Latin-1: not UTF-8


def _site(project: Project, upstream: Upstream) -> str:
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("n", f"{base} {LIB}:1-3")
    project.config(sink="files")
    return base


def _check_twice(project: Project, capsys: pytest.CaptureFixture[str]) -> list[tuple[int, str]]:
    runs = []
    for _ in range(2):
        code, out, err = project.run("check", "--format", "json", capsys=capsys)
        assert "Traceback" not in err, err
        runs.append((code, out))
    return runs


def test_names_that_are_not_utf8_are_read_and_shown_escaped(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _site(project, upstream)
    project.note("latin", f"{base} {LIB}:1-3", name=f"{BAD}.md")
    project.rules(
        f"""
        [[rule]]
        id = "latin-rule"
        note = "latin"
        path = "{LIB}"
        query = '(function_item name: (identifier) @n (#eq? @n "a")) @target'
        """,
        name=f"{BAD}.toml",
    )
    project.run("check", "--format", "json", capsys=capsys)
    (project.root / "state" / f"{BAD}.json").write_text("{}\n")  # and one in state/

    (first, out), (second, again) = _check_twice(project, capsys)

    results = {r["id"]: r for r in json.loads(out)["results"]}
    assert first == second == 0 and out == again.replace(
        json.loads(again)["started_at"], json.loads(out)["started_at"]
    )
    assert results[f"latin:{LIB}:1-3"]["note_file"] == "notes/caf\\xe9.md"
    assert results["latin-rule"]["verdict"] == "fresh"


@pytest.mark.parametrize("folder", ["notes", "rules", "state"])
def test_links_that_loop_never_hang_a_run(
    folder: str, project: Project, upstream: Upstream, tmp_path: Path
) -> None:
    _site(project, upstream)
    (project.root / folder).mkdir(exist_ok=True)
    os.symlink(".", project.root / folder / "again")
    os.symlink("..", project.root / folder / "up")
    os.symlink("again", project.root / folder / "again2")
    command = [sys.executable, "-m", "watcher", "check", "--config", str(project.config_file)]

    for _ in range(2):  # piped: the warm fingerprint walks every folder
        proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        assert [r["verdict"] for r in json.loads(proc.stdout)["results"]] == ["fresh"]


def test_folders_where_files_belong_and_files_where_folders_belong_are_set_aside(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    _site(project, upstream)
    state = project.root / "state"
    project.run("check", "--format", "json", capsys=capsys)
    (project.root / "notes" / "folder.md").mkdir()  # named like a note
    (project.root / "rules" / "folder.toml").mkdir()
    os.mkfifo(project.root / "notes" / "pipe.md")  # never opened: it would block
    os.symlink("nowhere", project.root / "notes" / "dangling.md")
    for name in ("runs", "bookkeeping"):  # files where folders of state belong
        for file in (state / name).iterdir():
            file.unlink()
        (state / name).rmdir()
        (state / name).write_text("hand-written\n")
    (state / "acme__client.json").unlink()
    (state / "acme__client.json").mkdir()  # a folder where a state file belongs
    (state / "issues").mkdir(exist_ok=True)
    (state / "issues" / "n.md").mkdir()

    (first, out), (second, _) = _check_twice(project, capsys)

    assert first == second == 0
    assert [r["verdict"] for r in json.loads(out)["results"]] == ["fresh"]
    for name in ("runs", "bookkeeping", "acme__client.json"):
        assert (state / name).exists() and list(state.glob(f"{name}.corrupt-*"))
    assert (state / "acme__client.json").is_file() and (state / "runs").is_dir()


def test_state_nested_past_what_json_reads_is_set_aside(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    _site(project, upstream)
    project.run("check", "--format", "json", capsys=capsys)
    state = project.root / "state"
    nested = "[" * 100_000 + "]" * 100_000
    for file in (state / "acme__client.json", state / "runs" / "acme__client.json"):
        file.write_text(nested)

    code, _, err = project.run("check", "--format", "json", capsys=capsys)

    assert code == 0 and "Traceback" not in err
    assert "acme__client.json: state file is damaged (JSON nested too deep" in err
    assert json.loads((state / "acme__client.json").read_text())["items"]  # rebuilt


def test_a_lock_that_is_a_folder_is_named_with_its_fix(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    _site(project, upstream)
    (project.root / "state" / ".lock").mkdir(parents=True)

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    assert (code, out) == (2, "") and "Traceback" not in err
    assert "state/.lock: a folder where the state lock file belongs; remove it" in err


def test_a_note_that_is_not_utf8_names_its_line_and_column(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    _site(project, upstream)
    (project.root / "notes" / "latin.md").write_bytes(b"---\nid: latin\ntitle: caf\xe9\n---\n")

    code, out, _ = project.run("check", "--format", "json", capsys=capsys)

    errors = [r["message"] for r in json.loads(out)["results"] if r["verdict"] == "error"]
    assert code == 2
    assert errors == [
        "notes/latin.md:3: not UTF-8: byte 0xe9 at column 11 cannot be read; save the file as UTF-8"
    ]


def test_a_garbage_mirror_config_is_healed_by_the_next_sync(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    _site(project, upstream)
    project.run("sync", capsys=capsys)
    config = project.root / "cache" / "acme__client.git" / "config"
    config.write_bytes(os.urandom(64) + b"\n\x00[[[\n")

    code, _, err = project.run("sync", capsys=capsys)
    again, _, again_err = project.run("sync", capsys=capsys)

    assert code == again == 0 and "Traceback" not in err
    assert "its config is not one git can read); cloning it again" in err
    assert b'[remote "origin"]' in config.read_bytes() and "damaged" not in again_err


# --- the walk itself -----------------------------------------------------------------


def test_the_walk_lists_regular_files_once_whatever_the_folder_holds(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("a")
    (root / "sub" / "b.md").write_text("b")
    (root / f"{BAD}.md").write_text("c")
    (root / "folder.md").mkdir()
    os.mkfifo(root / "pipe.md")
    os.symlink("nowhere", root / "dangling.md")
    os.symlink("a.md", root / "link.md")  # a link to a file is the file
    os.symlink(".", root / "loop")
    os.symlink("..", root / "sub" / "up")
    os.symlink(str(tmp_path), root / "outside")
    (tmp_path / "outside.md").write_text("not below notes/")
    (root / "skip").mkdir()
    (root / "skip" / "c.md").write_text("c")

    found = walk.files(root, ".md", skip=("skip",))

    assert [f.name for f in found] == ["a.md", f"{BAD}.md", "link.md", "sub/b.md"]
    assert [walk.shown(f.name) for f in found][1] == "caf\\xe9.md"
    assert found[2].info.st_size == 1
