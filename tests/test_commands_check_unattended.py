"""Unattended runs never cry wolf: run-level failures are one error, not an issue storm;
a run with no news writes nothing; every run is recorded; read-only commands need no lock.

Real upstream repositories, the real PyGithub client against the local GitHub server,
`watch status` reading what the runs recorded.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Project
from tests.github_server import Fault, GithubServer
from tests.support import lock_held_elsewhere
from watcher.gitbuild import Upstream
from watcher.state import store

LIB = "src/client.py"
V1 = """\
def list_tools(mode, response):
    if mode == "legacy":
        return None
    return response.next_cursor


def call_tool(name, args):
    return {"name": name, "arguments": args}


def ping():
    return "pong"
"""
V2 = V1.replace("        return None\n", "        return response.next_cursor\n")
V2 = V2.replace('"arguments": args', '"arguments": args or {}')
TOKEN = "ghp_UnattendedTokenNeverShown"
NOTES = {"cursor": "1-4", "call": "7-8", "ping": "11-12"}
MUTATING = ("POST", "PATCH", "PUT", "DELETE")


def site(project: Project, issues: str, *, sink: str = "github", upstream: str = "") -> str:
    """Three notes citing three functions of one upstream commit; returns the commit."""
    base = project.upstream.commit("first", {LIB: V1})
    for note_id, lines in NOTES.items():
        project.note(note_id, f"{base} {LIB}:{lines}")
    project.config(sink=sink, upstream_extra=upstream)
    with project.config_file.open("a", encoding="utf-8") as handle:  # [issues] is last
        handle.write(f'repo = "notes/site"\ndashboard = true\nretries = 1\n{issues}')
    return base


def mutations(api: GithubServer) -> list[str]:
    return [f"{r.method} {r.path}" for r in api.recorded if r.method in MUTATING]


def state_files(project: Project) -> dict[str, bytes]:
    """Every file a run keeps in state/, except the run records (per-run facts by design)."""
    root = project.root / "state"
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".lock" and p.parts[len(root.parts)] != "runs"
    }


def check(project: Project, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    code, out, err = project.run("-q", "check", "--format", "json", *args, capsys=capsys)
    return code, json.loads(out), err


def run(project: Project, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    from watcher.cli import main

    code = main([*args, "--config", str(project.config_file)])
    out, err = capsys.readouterr()
    return code, out, err


def status(project: Project, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code, out, _ = run(project, capsys, "status")
    return code, out


def dashboard(api: GithubServer) -> str:
    (board,) = [i for i in api.issues() if i["title"] == "watch dashboard"]
    return str(board["body"])


def note_issue_writes(api: GithubServer) -> list[str]:
    board = [i["number"] for i in api.issues() if i["title"] == "watch dashboard"]
    return [m for m in mutations(api) if not any(m.endswith(f"/issues/{n}") for n in board)]


# --- run-level failures -----------------------------------------------------------


@pytest.mark.parametrize("outage", ["gone", "silent"])
def test_an_unreachable_upstream_is_one_error_not_an_issue_storm(
    project: Project,
    capsys: pytest.CaptureFixture[str],
    api: GithubServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    silent_port: int,
    outage: str,
) -> None:
    """`gone`: the URL leads nowhere; `silent`: a server accepts and never answers."""
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GIT_ALLOW_PROTOCOL", "file:http")
    site(project, f'api_url = "{api.url}"\n', upstream="fetch_seconds = 1")
    project.upstream.commit("Send the cursor in legacy mode too (#42)", {LIB: V2})
    code, _, _ = check(project, capsys)
    assert code == 1 and len(api.issues()) == 3  # two stale notes and the dashboard
    kept = state_files(project)
    issues_before = [(i["number"], i["state"], i["body"]) for i in api.issues()[:2]]
    api.recorded.clear()

    good = project.config_file.read_text(encoding="utf-8")
    silent = f"http://127.0.0.1:{silent_port}/acme/client.git"
    if outage == "gone":
        project.upstream.path.rename(tmp_path / "gone")  # no network, as far as git can tell
    else:
        project.config_file.write_text(good.replace(project.upstream.url, silent), "utf-8")
    down_code, down, err = check(project, capsys)

    assert down_code == 2
    errors = [line for line in err.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1 and "acme/client" in errors[0]
    why = "cannot fetch" if outage == "gone" else "no answer within 1 s"  # bounded, no hang
    assert why in errors[0]
    assert not [line for line in err.splitlines() if line.startswith("INFO")]  # -q
    assert down["upstreams"][0]["error"] and down["errors"] == []  # GitHub itself was fine
    assert down["issues"] == [] and note_issue_writes(api) == []  # no issue storm
    assert [(i["number"], i["state"], i["body"]) for i in api.issues()[:2]] == issues_before
    assert "could not check `acme/client`" in dashboard(api)  # one banner instead
    after = state_files(project)
    assert after["acme__client.json"] == kept["acme__client.json"]  # last verdicts kept
    book = json.loads(after["bookkeeping/acme__client.json"])
    assert book["failure"]["repo"] == "acme/client"
    assert {n: e["status"] for n, e in book["notes"].items()} == {
        "call": "changed",
        "cursor": "changed",
        "ping": "fresh",
    }
    assert status(project, capsys)[0] == 2

    api.recorded.clear()
    again_code, _, _ = check(project, capsys)  # still down: the same banner, nothing new
    assert again_code == 2 and mutations(api) == []

    if outage == "gone":
        (tmp_path / "gone").rename(project.upstream.path)
    project.config_file.write_text(good, encoding="utf-8")
    back_code, back, _ = check(project, capsys)
    assert back_code == 1 and back["errors"] == []
    assert [i["action"] for i in back["issues"]] == ["unchanged", "unchanged"]
    assert note_issue_writes(api) == [] and "could not check" not in dashboard(api)
    assert state_files(project) == kept  # the banner is gone again
    assert status(project, capsys)[0] == 0
    api.recorded.clear()
    assert check(project, capsys)[0] == 1 and mutations(api) == []


@pytest.mark.parametrize("down", ["refused", "5xx"])
def test_github_down_fails_the_run_and_the_next_run_files(
    project: Project,
    capsys: pytest.CaptureFixture[str],
    api: GithubServer,
    monkeypatch: pytest.MonkeyPatch,
    down: str,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    url = "http://127.0.0.1:9" if down == "refused" else api.url
    site(project, f'api_url = "{url}"\n')
    project.upstream.commit("Send the cursor in legacy mode too (#42)", {LIB: V2})
    api.faults = [Fault(r"^(POST|PATCH) ", "500", times=99)] if down == "5xx" else []

    code, report, err = check(project, capsys)

    assert code == 2 and report["errors"]
    errors = [line for line in err.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1 and "issues:" in errors[0] and "next run retries" in errors[0]
    assert [i for i in api.issues() if i["state"] == "open"] == []
    book = project.root / "state" / "bookkeeping" / "acme__client.json"
    notes = json.loads(book.read_text())["notes"] if book.exists() else {}
    assert all("handle" not in entry and "issue" not in entry for entry in notes.values())
    assert status(project, capsys)[0] == 2

    api.faults = []
    project.config_file.write_text(
        project.config_file.read_text().replace(url, api.url), encoding="utf-8"
    )
    again, report, _ = check(project, capsys)
    assert again == 1 and [i["action"] for i in report["issues"]] == ["opened", "opened"]
    assert status(project, capsys)[0] == 0


# --- no news, no writes -----------------------------------------------------------


@pytest.fixture
def writes(monkeypatch: pytest.MonkeyPatch) -> Counter[Path]:
    """Each state file written (`store.write_text`, behind every JSON state file), and
    how often, in this test."""
    counted: Counter[Path] = Counter()
    real = store.write_text

    def counting(path: Path, text: str | Iterable[str]) -> None:
        real(path, text)
        counted[path] += 1

    monkeypatch.setattr(store, "write_text", counting)
    return counted


def test_a_run_with_no_news_writes_nothing_and_calls_nothing_that_writes(
    project: Project,
    capsys: pytest.CaptureFixture[str],
    api: GithubServer,
    monkeypatch: pytest.MonkeyPatch,
    writes: Counter[Path],
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    site(project, f'api_url = "{api.url}"\n')
    project.upstream.commit("Send the cursor in legacy mode too (#42)", {LIB: V2})
    book = project.root / "state" / "bookkeeping" / "acme__client.json"
    writes.clear()

    assert check(project, capsys)[0] == 1
    first = state_files(project)
    assert writes[book] == 1  # three notes, two issues, one dashboard: one save
    writes.clear()
    api.recorded.clear()

    assert check(project, capsys)[0] == 1

    assert mutations(api) == []
    assert state_files(project) == first
    written = {p.relative_to(project.root / "state").as_posix() for p in writes}
    assert written == {"runs/acme__client.json"}  # only the run record: times by design


def test_bookkeeping_is_saved_once_per_run_however_many_notes(
    project: Project, capsys: pytest.CaptureFixture[str], writes: Counter[Path]
) -> None:
    base = project.upstream.commit("first", {LIB: V1})
    for n in range(12):
        project.note(f"note-{n:02}", f"{base} {LIB}:{NOTES['cursor']}")
    project.config(sink="files")
    with project.config_file.open("a", encoding="utf-8") as handle:
        handle.write("dashboard = true\n")
    project.upstream.commit("Send the cursor in legacy mode too (#42)", {LIB: V2})
    book = project.root / "state" / "bookkeeping" / "acme__client.json"

    saves = []
    for _ in range(3):
        writes.clear()
        check(project, capsys)
        saves.append(writes[book])

    assert saves == [1, 0, 0]
    assert len(json.loads(book.read_text())["notes"]) == 12


# --- every run recorded; locks only where writing ---------------------------------


def test_watch_check_and_watch_action_record_their_runs(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    site(project, "", sink="files")
    assert status(project, capsys)[0] == 2  # never ran

    assert check(project, capsys)[0] == 0
    code, out = status(project, capsys)
    assert code == 0 and "OK  fresh" in out

    run(project, capsys, "action")
    from watcher.state.runs import read_runs

    last = read_runs(project.root / "state").of(project.repo).last
    assert last is not None and last.by == "action" and last.outcome == "fresh"


def test_read_only_commands_take_no_lock_and_the_lock_message_names_a_flag(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    site(project, "", sink="files")
    assert check(project, capsys)[0] == 0
    (project.root / "state").mkdir(exist_ok=True)
    with lock_held_elsewhere(project.root / "state" / ".lock"):
        lint, _, lint_err = run(project, capsys, "rules", "lint")
        fix, fix_out, fix_err = run(project, capsys, "fix")
        notes, _, _ = run(project, capsys, "notes")
        busy, _, busy_err = run(project, capsys, "check")
    assert (lint, fix, notes) == (0, 0, 0), lint_err + fix_err
    assert "no moved citations" in fix_out
    assert busy == 2 and "holds the state lock" in busy_err and "--wait SECONDS" in busy_err


# --- mirrors ----------------------------------------------------------------------


def test_a_failed_first_clone_leaves_nothing_and_the_default_branch_comes_from_the_remote(
    project: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    trunk = Upstream(tmp_path / "trunk-upstream", branch="trunk")
    base = trunk.commit("first", {LIB: V1})
    project.note("cursor", f"{base} {LIB}:{NOTES['cursor']}")
    config = (
        'notes = "notes"\nrules = "rules"\nstate = "state"\ncache = "cache"\n'
        '[[upstream]]\nrepo = "acme/client"\nurl = "URL"\n'  # no branch: the remote's HEAD
    )
    project.config_file.write_text(config.replace("URL", trunk.url + "-nope"), encoding="utf-8")

    failed, report, _ = check(project, capsys)
    # Nothing of a mirror; the locks and the machine's small JSON caches may be there.
    leftovers = [
        p for p in (project.root / "cache").iterdir() if p.suffix not in (".lock", ".json")
    ]
    project.config_file.write_text(config.replace("URL", trunk.url), encoding="utf-8")
    code, fixed, _ = check(project, capsys)

    assert failed == 2 and "default branch" in report["upstreams"][0]["error"]
    assert leftovers == []
    assert code == 0 and fixed["upstreams"][0]["branch"] == "trunk"
    assert fixed["results"][0]["verdict"] == "fresh"


def test_sync_creates_every_configured_mirror_and_implicit_upstreams_can_be_refused(
    project: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    base = project.upstream.commit("first", {LIB: V1})
    other = Upstream(tmp_path / "other")
    other.commit("first", {LIB: V1})
    project.note(
        "two",
        raw=(
            f"---\nid: two\nsources:\n"
            f"  - url: https://github.com/acme/client\n    commit: {base}\n    path: {LIB}:1-4\n"
            f"  - url: https://github.com/acme/elsewhere\n    commit: {base}\n"
            f"    path: {LIB}:1-4\n---\n"
        ),
    )
    project.config(
        extra="implicit_upstreams = false",
        upstream_extra=f'\n[[upstream]]\nrepo = "acme/uncited"\nurl = "{other.url}"\n',
    )

    code, out, _ = run(project, capsys, "sync")
    checked, report, _ = check(project, capsys)
    _, listed, _ = run(project, capsys, "upstreams", "--json")

    assert code == 0
    assert sorted(p.name for p in (project.root / "cache").glob("*.git")) == [
        "acme__client.git",
        "acme__uncited.git",
    ]
    assert "acme/uncited: main at" in out
    assert checked == 2
    errors = {r["repo"]: r["error"] for r in report["results"] if r["error"]}
    assert errors == {"acme/elsewhere": "no-upstream"}
    assert report["errors"] == []  # a note-level error: the note's issue says so
    assert json.loads(listed) == [
        {
            "repo": "acme/client",
            "slug": "acme__client",
            "mirror": "acme__client.git",
            "cache_key": "watch-mirror-acme__client-",
            "implicit": False,
        },
        {
            "repo": "acme/uncited",
            "slug": "acme__uncited",
            "mirror": "acme__uncited.git",
            "cache_key": "watch-mirror-acme__uncited-",
            "implicit": False,
        },
    ]
