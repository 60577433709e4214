"""`watch check` end to end with issues: a real upstream history, the files sink, and GitHub."""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest

from tests.conftest import Project
from tests.github_server import GithubServer
from tests.issues_support import assert_inert
from tests.rust_client import LIST_TOOLS
from watcher.issues import render

LIB = "src/client.rs"
SOURCE = LIST_TOOLS
TOKEN = "ghp_EndToEndTokenNeverShown"


def setup(project: Project, sink: str, issues: str = "") -> str:
    """An upstream with one commit, a note citing it; returns that commit."""
    base = project.upstream.commit("first", {LIB: SOURCE})
    project.note("one-page", f"{base} {LIB}:1-7")
    project.config(sink=sink)
    with project.config_file.open("a", encoding="utf-8") as handle:  # [issues] is last
        handle.write(f'repo = "notes/site"\n{issues}')
    return base


def change(project: Project) -> None:
    text = SOURCE.replace("Mode::Legacy => None,", "Mode::Legacy => response.next_cursor,")
    project.upstream.commit("Send the cursor in legacy mode too (#42)", {LIB: text})
    project.upstream.tag("v1.0.0")


def check(
    project: Project, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, dict[str, Any], str]:
    code, out, err = project.run("check", "--format", "json", *args, capsys=capsys)
    return code, json.loads(out), err


def test_files_sink_lifecycle_through_watch_check(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    setup(project, "files", "dashboard = true\n")
    issue = project.root / "state" / "issues" / "one-page.md"

    code, fresh, _ = check(project, capsys)
    opened_when_fresh = issue.exists()
    change(project)
    stale_code, stale, err = check(project, capsys)
    again_code, again, _ = check(project, capsys)

    assert code == 0 and fresh["issues"] == [] and not opened_when_fresh
    assert stale_code == 1
    assert stale["issues"] == [
        {"note": "one-page", "action": "opened", "url": "state/issues/one-page.md", "number": None}
    ]
    text = issue.read_text(encoding="utf-8")
    assert "state: open" in text and "<!-- watch:note=one-page -->" in text
    assert "-        Mode::Legacy => None," in text and "`v1.0.0`" in text
    assert "/pull/42" in text and "Stale verification: one-page — 1 changed" in text
    assert "issues: note one-page: open" in err
    assert again_code == 1 and [i["action"] for i in again["issues"]] == ["unchanged"]
    # The files sink keeps one dashboard page per upstream: matrix jobs never share a file.
    pages = project.root / "state" / "issues" / "_dashboard"
    assert [p.name for p in pages.iterdir()] == ["acme__client.md"]
    board = (pages / "acme__client.md").read_text(encoding="utf-8")
    assert "title: 'watch dashboard: acme/client'" in board
    assert "| `one-page` | **changed** |" in board


def test_a_full_run_retires_the_dashboards_of_earlier_versions_and_gone_upstreams(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    """`_dashboard.md` (one file for every upstream, before pages) and the page of an
    upstream no longer configured go with the next run that checks everything; a run of
    one upstream (a matrix job) writes its own page only."""
    setup(project, "files", "dashboard = true\n")
    change(project)
    issues = project.root / "state" / "issues"
    (issues / "_dashboard").mkdir(parents=True)
    for old in (issues / "_dashboard.md", issues / "_dashboard" / "gone__away.md"):
        old.write_text("---\ntitle: old\n---\n<!-- watch:dashboard -->\n", encoding="utf-8")

    def dashboards() -> list[str]:
        found = [*issues.glob("_dashboard*"), *issues.glob("_dashboard/*")]
        return sorted(p.relative_to(issues).as_posix() for p in found)

    check(project, capsys, "--upstream", "acme/client")
    one_job = dashboards()
    check(project, capsys)
    after = dashboards()

    assert one_job == [
        "_dashboard", "_dashboard.md", "_dashboard/acme__client.md", "_dashboard/gone__away.md"
    ]  # fmt: skip
    assert after == ["_dashboard", "_dashboard/acme__client.md"]


def test_dry_run_and_no_issues_write_nothing(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    setup(project, "files")
    change(project)

    _, dry, err = check(project, capsys, "--dry-run")
    _, none, _ = check(project, capsys, "--no-issues")

    assert [i["action"] for i in dry["issues"]] == ["would-open"]
    assert "title: Stale verification: one-page" in err
    assert none["issues"] == []
    assert not (project.root / "state" / "issues").exists()


def test_github_sink_through_watch_check(
    project: Project,
    capsys: pytest.CaptureFixture[str],
    api: GithubServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    setup(project, "github", f'api_url = "{api.url}"\n')
    change(project)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)

    code, first, err1 = check(project, capsys)
    shutil.rmtree(project.root / "state")  # lost state: the marker still finds the issue
    _, second, err2 = check(project, capsys)

    assert code == 1
    assert first["issues"] == [
        {
            "note": "one-page",
            "action": "opened",
            "url": f"{api.url}/notes/site/issues/1",
            "number": 1,
        }
    ]
    assert [i["action"] for i in second["issues"]] == ["unchanged"]
    assert len(api.issues()) == 1
    labels = sorted(label["name"] for label in api.issues()[0]["labels"])
    assert labels == ["stale-verification", "verdict:changed"]
    assert TOKEN not in err1 + err2 + json.dumps(first)


def test_github_sink_without_token_is_a_dry_run(
    project: Project, capsys: pytest.CaptureFixture[str], api: GithubServer
) -> None:
    setup(project, "github", f'api_url = "{api.url}"\n')
    change(project)

    _, report, err = check(project, capsys)

    assert [i["action"] for i in report["issues"]] == ["would-open"]
    assert "GITHUB_TOKEN is not set: dry run" in err
    assert api.recorded == []


def test_a_hostile_upstream_gives_a_safe_issue_file(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    """Real git bytes: backtick runs, pings, a spoofed marker, a 200 kB line, invalid UTF-8."""
    base = setup(project, "files")
    hostile = (
        SOURCE.replace(
            "    next\n",
            '    let fence = "```````"; // @org/team see #1 <!-- watch:note=other-note -->\n'
            f'    let blob = "{"A" * 200_000}";\n'
            "    next\n",
        ).encode()
        + b"// bad bytes: \xff\xfe\xc3\x28\n"
    )
    (project.upstream.path / LIB).write_bytes(hostile)
    project.upstream.commit("Ping @octocat about #2 <img src=x> ``` (#7)")

    code, report, _ = check(project, capsys)

    assert code == 1 and base
    raw = (project.root / "state" / "issues" / "one-page.md").read_bytes()
    body = raw.decode("utf-8").split("---\n", 2)[2]  # strict: fails on invalid UTF-8
    assert len(body) < render.MAX_BODY
    assert body.startswith("<!-- watch:note=one-page -->\n")
    assert "more characters cut" in body
    assert_inert(body, repo="acme/client")
    assert [i["action"] for i in report["issues"]] == ["opened"]


def test_a_snoozed_note_gets_no_issue_until_its_date(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    base = setup(project, "files")
    change(project)
    note = project.root / "notes" / "one-page.md"
    sources = f"sources:\n  - url: https://github.com/{project.repo}\n    commit: {base}\n"
    sources += "    path: src/client.rs:1-7\n"
    note.write_text(f"---\nid: one-page\nsnooze_until: 2999-01-01\n{sources}---\n")

    code, snoozed, err = check(project, capsys)
    note.write_text(f"---\nid: one-page\nsnooze_until: 2001-01-01\n{sources}---\n")
    _, woken, _ = check(project, capsys)

    assert code == 1 and snoozed["issues"] == []  # still reported, not filed
    assert "issues: note one-page is snoozed until 2999-01-01; left alone" in err
    assert [i["action"] for i in woken["issues"]] == ["opened"]
