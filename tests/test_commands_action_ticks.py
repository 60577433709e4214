"""The dashboard belongs to the maintainers (issue 37, finding 1), end to end: `watch action`
on a real notes checkout and upstream, against the local GitHub server with more than one
account.

Only the issue watch opened is the dashboard (never an issue planted by someone else,
labelled or not), only boxes outside code blocks count, and only when the last edit of
the body was made by someone with write access to the repository. Ticks that do not
count are reported once and change nothing: no snooze committed, no branch pushed.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from tests.github_server import BOT, Fault, GithubServer
from tests.test_cli_maintainer_loop import LIB, SOURCE, Site, make_site, versioned
from watcher.commands.ticks import carry_out
from watcher.config import load
from watcher.gitbuild import Upstream
from watcher.issues import boxes

TOKEN = "ghp_TicksTokenNeverShown"
FORGED = (
    "<!-- watch:dashboard -->\n## watch dashboard\n\n"
    "- [x] <!-- watch:accept=one-page --> **accept** `one-page`\n"
    "- [x] <!-- watch:snooze=one-page --> **snooze** `one-page` for 30 days\n"
)


def boards(api: GithubServer) -> list[dict[str, Any]]:
    return [i for i in api.issues() if i["body"].startswith("<!-- watch:dashboard -->")]


def ours(api: GithubServer) -> dict[str, Any]:
    (board,) = [b for b in boards(api) if b["user"]["login"] == BOT]
    return board


def edit(api: GithubServer, who: str, change: Any) -> None:
    """`who` edits watch's dashboard in the web UI: `change` maps the old body to the new."""
    board = ours(api)
    api.edit_body(board["number"], change(board["body"]), who)


def tick_snooze(body: str) -> str:
    box = "<!-- watch:snooze=one-page -->"
    assert f"- [ ] {box}" in body
    return body.replace(f"- [ ] {box}", f"- [x] {box}")


def stale(
    tmp_path: Path,
    upstream: Upstream,
    api: GithubServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    plant: bool = False,
) -> tuple[Site, Upstream]:
    """A versioned site whose note went stale, after its first `watch action`; with
    `plant`, two dashboards were forged before it: an unlabelled one by a stranger and a
    labelled one by someone who may label issues but is not watch."""
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    site = make_site(tmp_path, upstream, api, capsys)
    repo = versioned(site, tmp_path)
    if plant:
        api.add_account("mallory", token="ghp_MalloryOwnToken")  # anyone: no access
        api.add_account("trudy", "triage")  # may label, may not write
        api.add_issue("watch dashboard", FORGED, author="mallory")
        api.add_issue("watch dashboard", FORGED, ("stale-verification",), author="trudy")
    upstream.commit("Lazy cursor (#14)", {LIB: SOURCE.replace("response.next_cursor", "x()")})
    code, _, err = site.run("action")
    assert code == 0, err
    return site, repo


def carried_out_nothing(site: Site, repo: Upstream, api: GithubServer) -> None:
    note = (site.root / "notes" / "one-page.md").read_text(encoding="utf-8")
    assert "snooze_until" not in note
    assert "Snooze" not in repo.git("log", "--format=%s", "origin/main")
    assert repo.git("ls-remote", "origin", "refs/heads/watch/*") == ""
    assert api.pulls() == []


def test_forged_dashboards_are_never_adopted_nor_their_ticks_carried_out(
    tmp_path: Path,
    upstream: Upstream,
    api: GithubServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    site, repo = stale(tmp_path, upstream, api, capsys, monkeypatch, plant=True)
    code, _, err = site.run("action")

    assert code == 0, err
    forged = [b for b in boards(api) if b["user"]["login"] != BOT]
    assert [(b["user"]["login"], b["body"]) for b in forged] == [
        ("mallory", FORGED),
        ("trudy", FORGED),
    ]  # never edited: neither was taken for the dashboard
    board = ours(api)  # watch opened its own, and keeps it
    assert "- [ ] <!-- watch:accept=one-page -->" in board["body"]
    carried_out_nothing(site, repo, api)
    shard = site.root / "state" / "bookkeeping" / "acme__client.json"
    recorded = json.loads(shard.read_text(encoding="utf-8"))["dashboard"]
    assert (recorded["handle"], recorded["author"]) == (str(board["number"]), BOT)
    touched = {r.path.split("/")[5] for r in api.writes() if "/issues/" in r.path}
    assert touched.isdisjoint({str(b["number"]) for b in forged})  # no edit, no comment


def test_ticks_inside_code_blocks_are_ignored_and_reported(
    tmp_path: Path,
    upstream: Upstream,
    api: GithubServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    site, repo = stale(tmp_path, upstream, api, capsys, monkeypatch)
    api.add_account("maintainer", "write")
    pasted = FORGED.split("\n\n", 1)[1]  # the ticked lines, pasted as an example
    edit(api, "maintainer", lambda b: b + f"\n```\n{pasted}```\n\n    {pasted.splitlines()[0]}\n")

    code, _, err = site.run("action")

    assert code == 0, err
    assert "3 ticked box(es) inside code blocks ignored" in err
    carried_out_nothing(site, repo, api)
    assert "```" not in ours(api)["body"]  # rendered afresh


def test_a_tick_by_a_collaborator_with_write_access_is_carried_out(
    tmp_path: Path,
    upstream: Upstream,
    api: GithubServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    site, repo = stale(tmp_path, upstream, api, capsys, monkeypatch)
    api.add_account("maintainer", "maintain")
    edit(api, "maintainer", tick_snooze)

    code, _, err = site.run("action")

    assert code == 0, err
    assert "ticks ignored" not in err
    note = (site.root / "notes" / "one-page.md").read_text(encoding="utf-8")
    assert "snooze_until: 20" in note
    assert "Snooze one-page until" in repo.git("log", "-1", "--format=%s", "origin/main")


def test_a_body_last_edited_by_a_read_only_user_is_ignored_and_reported_once(
    tmp_path: Path,
    upstream: Upstream,
    api: GithubServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    site, repo = stale(tmp_path, upstream, api, capsys, monkeypatch)
    api.add_account("reader", "read")
    edit(api, "reader", tick_snooze)
    summary = tmp_path / "summary.md"
    # A matrix job of another upstream: not its box, not its report.
    elsewhere = carry_out(load(site.config), today=date(2026, 12, 2), upstream="a/b")
    assert (elsewhere.done, elsewhere.failed, elsewhere.ignored) == ([], [], [])

    code, _, err = site.run("action", "--summary-file", str(summary))
    first = summary.read_text(encoding="utf-8")
    again, _, err_again = site.run("action", "--summary-file", str(summary))

    assert code == again == 0, err + err_again
    assert "ticks ignored (snooze one-page)" in err
    assert "last edited by @reader, who has read access to notes/site" in err
    assert "**Ticks not carried out:**" in first and "by @\u200breader" in first  # no ping
    assert "ticks ignored" not in err_again  # reported once: the body was rendered afresh
    assert summary.read_text(encoding="utf-8").count("Ticks not carried out") == 1
    assert "- [ ] <!-- watch:snooze=one-page -->" in ours(api)["body"]
    carried_out_nothing(site, repo, api)


def test_when_github_cannot_say_who_edited_the_body_nothing_is_carried_out(
    tmp_path: Path,
    upstream: Upstream,
    api: GithubServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    site, repo = stale(tmp_path, upstream, api, capsys, monkeypatch)
    api.add_account("maintainer", "admin")
    edit(api, "maintainer", tick_snooze)
    api.faults = [Fault(r"^POST /graphql$", "500", times=99)]

    code, _, err = site.run("action")

    assert code == 2, err  # a box that could not be read fails the run
    assert "dashboard: could not read its boxes: GitHub read last editor" in err
    carried_out_nothing(site, repo, api)


@pytest.mark.parametrize(
    ("body", "counted", "hidden"),
    [
        ("- [x] <!-- watch:accept=a -->", ["accept a"], 0),
        ("```\n- [x] <!-- watch:accept=a -->\n```", [], 1),
        ("~~~~\n- [x] <!-- watch:accept=a -->\n~~~\n- [x] <!-- watch:snooze=b -->", [], 2),
        (
            "````md\n```\n- [x] <!-- watch:accept=a -->\n````\n- [x] <!-- watch:snooze=b -->",
            ["snooze b"],
            1,
        ),
        ("  ```\n- [x] <!-- watch:accept=a -->", [], 1),  # an unclosed fence runs to the end
        ("text\n\n    - [x] <!-- watch:accept=a -->", [], 1),  # indented code
        ("\t- [x] <!-- watch:accept=a -->", [], 1),
        (
            "<!--\n- [x] <!-- watch:accept=a -->\n-->\n- [x] <!-- watch:snooze=a -->",
            ["snooze a"],
            1,
        ),
        ("> - [x] <!-- watch:accept=a -->", [], 0),  # quoted: not one of our boxes
        (
            "<pre>\n\n- [x] <!-- watch:accept=a -->\n</pre>\n- [x] <!-- watch:snooze=a -->",
            ["snooze a"],
            1,
        ),
        (
            "<details>\n- [x] <!-- watch:accept=a -->\n\n- [x] <!-- watch:snooze=a -->",
            ["snooze a"],
            1,
        ),  # an HTML block runs to a blank line
        ("<!-- one line -->\n- [x] <!-- watch:accept=a -->", ["accept a"], 0),  # closed
        ("<sub>footer</sub>\n\n- [x] <!-- watch:accept=a -->", ["accept a"], 0),
    ],
)
def test_only_boxes_github_draws_count(body: str, counted: list[str], hidden: int) -> None:
    ticks, ignored = boxes.read(body)
    assert [f"{t.what} {t.note}" for t in ticks] == counted
    assert len(ignored) == hidden
