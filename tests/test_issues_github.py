"""The issue lifecycle on GitHub: the real PyGithub client against a local GitHub REST server."""

from __future__ import annotations

import json
import shutil
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.github_server import Fault, GithubServer, contract_errors
from tests.issues_support import INTRO, Lines, config, note, result, upstreams
from watcher.config import Config
from watcher.errors import WatchError
from watcher.issues import markers
from watcher.issues.github import GithubSink, Retrying
from watcher.issues.sync import sync, sync_issues
from watcher.models import IssueAction, Note, Result, Verdict

TOKEN = "ghp_S3cretTokenThatMustNeverBePrinted"
A, B, C = "codex-reads-one-page-of-tools", "claude-code-drops-prompts", "cursor-is-fine"
NOTES = {n: note(n) for n in (A, B, C)}


@pytest.fixture
def cfg(tmp_path: Path) -> Config:
    return config(tmp_path, sink="github", api_url="http://127.0.0.1:1")  # sinks get the URL


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def sink_for(server: GithubServer, sleeps: Sleeps | None = None, **policy: Any) -> GithubSink:
    retrying = Retrying(sleep=sleeps if sleeps is not None else Sleeps(), backoff=0.01)
    for key, value in policy.items():
        setattr(retrying, key, value)
    return GithubSink(
        "notes/site", server.url, TOKEN, retrying, timeout=1, throttle=False,
        label="stale-verification",
    )  # fmt: skip


def run(
    cfg: Config,
    server: GithubServer,
    results: Sequence[Result],
    *,
    sink: Any = None,
    log: Lines | None = None,
    notes: dict[str, Note] = NOTES,
) -> list[IssueAction]:
    return sync(
        cfg, notes, results, upstreams(), sink=sink or sink_for(server), dry_run=False,
        log=log or Lines(),
    )  # fmt: skip


def stale(*verdicts: tuple[str, Verdict], **over: Any) -> list[Result]:
    return [result(v, n, **over) for n, v in verdicts]


def snapshot(server: GithubServer) -> list[tuple[Any, ...]]:
    """What a maintainer sees: every issue with its state, title, labels, body, comments.

    The server's address is replaced, so that runs against two servers compare equal.
    """
    return [
        (
            i["number"], i["state"], i["title"], sorted(lb["name"] for lb in i["labels"]),
            _portless(server, i["body"]), [c["body"] for c in server.comments(i["number"])],
        )
        for i in server.issues()
    ]  # fmt: skip


def _portless(server: GithubServer, body: str) -> str:
    data = markers.parse_data(body)
    if data:
        data = json.loads(json.dumps(data).replace(server.url, "API"))
        body = (
            body.split("\n", 2)[0] + "\n" + markers.data_line(data) + "\n" + body.split("\n", 2)[2]
        )
    return body.replace(server.url, "API")


def open_by_note(server: GithubServer) -> dict[str, int]:
    counts: dict[str, int] = {}
    for issue in server.issues(state="open"):
        first = (issue["body"] or "").split("\n", 1)[0]
        counts[first] = counts.get(first, 0) + 1
    return counts


FIRST = [(A, Verdict.BROKEN), (B, Verdict.CHANGED), (C, Verdict.FRESH)]


def test_first_run_opens_one_issue_per_affected_note(api: GithubServer, cfg: Config) -> None:
    actions = run(cfg, api, stale(*FIRST))

    assert [(a.note, a.action, a.number) for a in actions] == [(B, "opened", 1), (A, "opened", 2)]
    issues = api.issues()
    assert [i["title"] for i in issues] == [
        f"Stale verification: {B} — 1 changed",
        f"Stale verification: {A} — 1 broken",
    ]
    assert sorted(lb["name"] for lb in issues[1]["labels"]) == [
        "stale-verification",
        "verdict:broken",
    ]
    assert issues[1]["body"].startswith(f"<!-- watch:note={A} -->\n")
    assert actions[1].url == f"{api.url}/notes/site/issues/2"
    assert api.repo().labels["verdict:broken"]["color"] == "d93f0b"  # created with its colour


@pytest.mark.parametrize("lag", [False, True], ids=["search", "search-lags"])
def test_second_run_and_lost_state_never_duplicate(
    api: GithubServer, cfg: Config, lag: bool
) -> None:
    api.search_lag = lag
    run(cfg, api, stale(*FIRST))
    before = snapshot(api)

    second = run(cfg, api, stale(*FIRST))
    shutil.rmtree(cfg.state / "bookkeeping")
    third = run(cfg, api, stale(*FIRST))

    assert [a.action for a in second] == ["unchanged", "unchanged"]
    assert [a.action for a in third] == ["unchanged", "unchanged"]
    assert snapshot(api) == before


def test_news_is_commented_once(api: GithubServer, cfg: Config) -> None:
    run(cfg, api, stale(*FIRST))
    newer = "fedcba9876543210fedcba9876543210fedcba98"
    moved_on = stale((A, Verdict.BROKEN), (B, Verdict.CHANGED), released_in="rust-v0.170.0")

    actions = run(cfg, api, moved_on)
    again = run(cfg, api, moved_on)

    assert [a.action for a in actions] == ["commented", "commented"]
    assert [a.action for a in again] == ["unchanged", "unchanged"]
    comments = api.comments(2)
    assert len(comments) == 1
    assert "New since the last report" in comments[0]["body"]
    assert "`rust-v0.170.0`" in comments[0]["body"]
    assert "rust-v0.170.0" in api.issues()[1]["body"]
    assert newer not in comments[0]["body"] and INTRO in comments[0]["body"]


def test_fresh_again_closes_with_reason_and_stale_again_reopens(
    api: GithubServer, cfg: Config
) -> None:
    run(cfg, api, stale(*FIRST))
    fresh = stale((A, Verdict.FRESH), (B, Verdict.MOVED))

    closed = run(cfg, api, fresh)
    reopened = run(cfg, api, stale(*FIRST))

    assert [a.action for a in closed] == ["closed", "closed"]
    assert [a.action for a in reopened] == ["reopened", "reopened"]
    assert len(api.issues()) == 2
    notes_b = [c["body"] for c in api.comments(1)]
    assert "fresh or moved" in notes_b[0] and "Citations to update" in notes_b[0]
    assert "stale again" in notes_b[1]
    assert all(i["state"] == "open" and i["state_reason"] == "reopened" for i in api.issues())
    assert "verdict:fresh" not in api.repo().labels  # closing keeps the labels it had


def test_reopen_false_opens_a_new_issue(api: GithubServer, tmp_path: Path) -> None:
    cfg = config(tmp_path, sink="github", reopen=False)
    run(cfg, api, stale((A, Verdict.BROKEN)))
    run(cfg, api, stale((A, Verdict.FRESH)))

    actions = run(cfg, api, stale((A, Verdict.BROKEN)))

    assert [(a.action, a.number) for a in actions] == [("opened", 2)]
    assert [(i["number"], i["state"]) for i in api.issues()] == [(1, "closed"), (2, "open")]
    assert api.issues()[0]["state_reason"] == "completed"


def test_an_issue_closed_by_hand_stays_closed_until_news(api: GithubServer, cfg: Config) -> None:
    run(cfg, api, stale((A, Verdict.BROKEN)))
    api.repo().issues[1]["state"] = "closed"  # a maintainer disagrees and closes it

    same = run(cfg, api, stale((A, Verdict.BROKEN)))
    news = run(cfg, api, stale((A, Verdict.BROKEN), released_in="rust-v0.200.0"))

    assert [a.action for a in same] == ["unchanged"]
    assert [a.action for a in news] == ["reopened"]
    assert len(api.issues()) == 1


def test_filtered_run_touches_only_its_notes(api: GithubServer, cfg: Config) -> None:
    run(cfg, api, stale(*FIRST))

    actions = run(cfg, api, stale((B, Verdict.FRESH)))

    assert [(a.note, a.action) for a in actions] == [(B, "closed")]
    assert [(i["number"], i["state"]) for i in api.issues()] == [(1, "closed"), (2, "open")]


def test_spoofed_marker_in_another_issue_cannot_hijack(api: GithubServer, cfg: Config) -> None:
    spoof = f"Look at this code:\n```\n<!-- watch:note={A} -->\n```\n"
    api.add_issue(f"Stale verification: {A} — 1 broken", spoof, ("stale-verification",))

    actions = run(cfg, api, stale((A, Verdict.BROKEN)))

    assert [(a.action, a.number) for a in actions] == [("opened", 2)]
    assert api.issues()[0]["body"] == spoof and api.comments(1) == []


class Crash(BaseException):
    """A process killed mid-run: not an Exception, so nothing catches it."""


class CrashingSink:
    """Forwards to a real sink and dies right after its `after`-th write."""

    def __init__(self, inner: GithubSink, after: int) -> None:
        self.inner, self.after, self.writes, self.name = inner, after, 0, inner.name

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if name not in ("create", "comment", "update", "ensure_labels"):
            return attr

        def write(*args: Any, **kwargs: Any) -> Any:
            value = attr(*args, **kwargs)
            self.writes += 1
            if self.writes == self.after:
                raise Crash(f"killed after write {self.after} ({name})")
            return value

        return write


SCENARIO = [
    stale(*FIRST),  # opens A and B
    stale((A, Verdict.BROKEN), (B, Verdict.CHANGED), released_in="rust-v0.170.0"),  # comments
    stale((A, Verdict.FRESH), (B, Verdict.CHANGED), released_in="rust-v0.170.0"),  # closes A
    stale(*FIRST),  # reopens A, comments on B
]


def _reference(tmp_path: Path, dashboard: bool) -> list[list[tuple[Any, ...]]]:
    with GithubServer(TOKEN) as server:
        cfg = config(tmp_path / "reference", sink="github", dashboard=dashboard)
        shots = []
        for results in SCENARIO:
            run(cfg, server, results)
            shots.append(snapshot(server))
        return shots


@pytest.mark.parametrize("dashboard", [False, True], ids=["notes", "with-dashboard"])
def test_a_crash_at_any_write_is_repaired_by_the_next_run(tmp_path: Path, dashboard: bool) -> None:
    """Kill the run after its 1st, 2nd, ... write at every step of the lifecycle.

    Whatever was done, the next run must leave exactly what an uninterrupted history
    leaves: the same issues, bodies and comments, one open issue per stale note.
    """
    reference = _reference(tmp_path, dashboard)
    with GithubServer(TOKEN) as server:
        cfg = config(tmp_path / "crashing", sink="github", dashboard=dashboard)
        crashes = 0
        for step, results in enumerate(SCENARIO):
            before, book = server.save(), _read(cfg)
            for after in range(1, 20):
                crashing = CrashingSink(sink_for(server), after)
                try:
                    run(cfg, server, results, sink=crashing)
                except Crash:
                    crashes += 1
                else:
                    break  # this step has fewer writes: all crash points were covered
                finally:
                    assert contract_errors(server.recorded) == []
                run(cfg, server, results)  # the next run
                assert snapshot(server) == reference[step], (step, after)
                assert all(n == 1 for n in open_by_note(server).values())
                server.restore(before)
                _write(cfg, book)
            run(cfg, server, results)
        assert crashes >= 12


def _read(cfg: Config) -> dict[str, str]:
    """The bookkeeping as it was before a step: every shard's text."""
    folder = cfg.state / "bookkeeping"
    return {p.name: p.read_text() for p in folder.glob("*.json")} if folder.is_dir() else {}


def _write(cfg: Config, book: dict[str, str]) -> None:
    shutil.rmtree(cfg.state / "bookkeeping", ignore_errors=True)
    for name, text in book.items():
        (cfg.state / "bookkeeping").mkdir(parents=True, exist_ok=True)
        (cfg.state / "bookkeeping" / name).write_text(text)


FAULTS = [
    Fault(r"^POST /repos/notes/site/issues$", "500"),
    Fault(r"^POST /repos/notes/site/issues$", "500-after"),
    Fault(r"^POST /repos/notes/site/issues$", "timeout", delay=1.5),
    Fault(r"^POST /repos/notes/site/issues$", "timeout-after", delay=1.5),
    Fault(r"^POST .*/comments$", "500-after"),
    Fault(r"^PATCH ", "500", times=2),
    Fault(r"^GET /search", "500", times=10),
    Fault(r"^GET /search", "search-422", times=10),
    Fault(r"^GET ", "primary"),
    Fault(r"^POST ", "primary-429"),
    Fault(r"^POST ", "secondary"),
    Fault(r"^PATCH ", "secondary-429"),
    Fault(r"^POST ", "secondary-bare"),
]


@pytest.mark.parametrize("fault", FAULTS, ids=[f"{f.kind}:{f.match}" for f in FAULTS])
def test_faults_end_with_the_right_issues_and_no_duplicates(tmp_path: Path, fault: Fault) -> None:
    reference = _reference(tmp_path, dashboard=False)
    with GithubServer(TOKEN) as server:
        cfg = config(tmp_path / "faulty", sink="github")
        sleeps = Sleeps()
        for step, results in enumerate(SCENARIO):
            server.faults = [Fault(fault.match, fault.kind, fault.times, fault.delay)]
            actions = run(cfg, server, results, sink=sink_for(server, sleeps))
            assert all(a.action != "failed" for a in actions), actions
            assert snapshot(server) == reference[step]
        assert contract_errors(server.recorded) == []
    waits = {
        "primary": 30,
        "primary-429": 30,
        "secondary": 7,
        "secondary-429": 7,
        "secondary-bare": 60,
    }
    if fault.kind in waits:  # primary: until x-ratelimit-reset (30 s ahead) plus a second
        assert any(waits[fault.kind] <= s <= waits[fault.kind] + 1 for s in sleeps), sleeps


def test_rate_limit_longer_than_the_bound_fails_and_the_next_run_retries(
    api: GithubServer, cfg: Config
) -> None:
    api.faults = [Fault(r"^POST /repos/notes/site/issues$", "primary", times=1)]
    sleeps = Sleeps()
    log = Lines()

    first = run(
        cfg, api, stale((A, Verdict.BROKEN)), sink=sink_for(api, sleeps, max_wait=10), log=log
    )
    second = run(cfg, api, stale((A, Verdict.BROKEN)))

    assert [a.action for a in first] == ["failed"]
    assert "max_wait_seconds = 10" in log.text and sleeps == []
    assert [a.action for a in second] == ["opened"]
    assert len(api.issues()) == 1


def test_persistent_server_errors_fail_the_note_not_the_run(api: GithubServer, cfg: Config) -> None:
    api.faults = [Fault(r"^POST /repos/notes/site/issues$", "500", times=99)]
    log = Lines()

    actions = run(cfg, api, stale((A, Verdict.BROKEN), (B, Verdict.CHANGED)), log=log)

    assert [a.action for a in actions] == ["failed", "failed"]
    assert "HTTP 500" in log.text and "the next run retries" in log.text
    api.faults = []
    assert [a.action for a in run(cfg, api, stale((A, Verdict.BROKEN)))] == ["opened"]


def test_the_token_never_appears(
    api: GithubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WATCH_TEST_TOKEN", TOKEN)
    cfg = config(tmp_path, sink="github", api_url=api.url, token_env="WATCH_TEST_TOKEN")
    api.faults = [Fault(r"^POST ", "500", times=99), Fault(r"^PATCH ", "forbidden", times=99)]
    log = Lines()
    actions = run(cfg, api, stale((A, Verdict.BROKEN)), log=log)
    api.token = "another-token"  # the configured one is now refused: 401 Bad credentials
    with pytest.raises(WatchError) as caught:
        sync_issues(cfg, NOTES, stale((A, Verdict.BROKEN)), upstreams(), dry_run=False, log=log)

    shown = [log.text, str(caught.value), "".join(traceback.format_exception(caught.value))]
    shown += [a.model_dump_json() for a in actions]
    shown += [p.read_text() for p in cfg.state.rglob("*") if p.is_file()]
    assert all(TOKEN not in text for text in shown)
    assert "Bad credentials" in str(caught.value) and "notes/site" in str(caught.value)


def test_a_missing_repository_stops_with_a_fix(
    api: GithubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    cfg = config(tmp_path, sink="github", api_url=api.url, repo="notes/nope")

    with pytest.raises(WatchError, match=r"notes/nope.*check the repository name"):
        sync_issues(cfg, NOTES, stale((A, Verdict.BROKEN)), upstreams(), dry_run=False, log=Lines())


def test_without_a_token_nothing_is_sent_and_the_plan_is_printed(
    api: GithubServer, tmp_path: Path
) -> None:
    cfg = config(tmp_path, sink="github", api_url=api.url)
    log = Lines()

    actions = sync_issues(cfg, NOTES, stale(*FIRST), upstreams(), dry_run=False, log=log)

    assert api.recorded == []
    assert [(a.note, a.action) for a in actions] == [(B, "would-open"), (A, "would-open")]
    assert "$GITHUB_TOKEN is not set: dry run" in log.text
    assert f"title: Stale verification: {A} — 1 broken" in log.text
    assert f"| <!-- watch:note={A} -->" in log.text  # the whole body is shown
    assert not (cfg.state / "bookkeeping").exists()


def test_dry_run_reads_but_never_writes(
    api: GithubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    cfg = config(tmp_path, sink="github", api_url=api.url, dashboard=True)
    run(cfg, api, stale(*FIRST), sink=sink_for(api))
    before, writes = snapshot(api), len(api.writes())
    log = Lines()

    actions = sync_issues(
        cfg,
        NOTES,
        stale((A, Verdict.FRESH), (B, Verdict.BROKEN)),
        upstreams(),
        dry_run=True,
        log=log,
    )

    assert [(a.note, a.action) for a in actions] == [(B, "would-comment"), (A, "would-close")]
    assert snapshot(api) == before and len(api.writes()) == writes
    assert (
        "would close" in log.text
        and "comment on" in log.text
        and "would update the dashboard" in log.text
    )


def test_dashboard_is_one_issue_edited_in_place(api: GithubServer, tmp_path: Path) -> None:
    cfg = config(tmp_path, sink="github", dashboard=True)
    run(cfg, api, stale(*FIRST))
    run(cfg, api, stale((A, Verdict.FRESH)))  # a filtered run: B and C keep their rows
    run(cfg, api, stale((B, Verdict.BROKEN)))

    boards = [i for i in api.issues() if i["title"] == "watch dashboard"]
    assert len(boards) == 1 and boards[0]["state"] == "open"
    body = boards[0]["body"]
    assert body.startswith("<!-- watch:dashboard -->\n")
    rows = [line for line in body.splitlines() if line.startswith("| `")]
    assert [r.split("|")[1].strip() for r in rows] == [f"`{B}`", f"`{A}`", f"`{C}`"]
    assert "**broken**" in rows[0] and f"[#1]({api.url}/notes/site/issues/1)" in rows[0]
    assert "**fresh**" in rows[1] and "[#" not in rows[1]
    assert "| **fresh** | `openai/codex` `9f8e7d6c5b4a`, 2026-08-22 |" in rows[1]
    assert "| **broken** | not seen fresh yet |" in rows[0]


def test_an_unreachable_github_fails_every_note_without_raising(tmp_path: Path) -> None:
    cfg = config(tmp_path, sink="github")
    sleeps = Sleeps()
    dead = GithubSink("notes/site", "http://127.0.0.1:9", TOKEN, Retrying(sleep=sleeps, retries=2))
    log = Lines()

    actions = sync(cfg, NOTES, stale(*FIRST), upstreams(), sink=dead, dry_run=False, log=log)

    assert [(a.note, a.action) for a in actions] == [(B, "failed"), (A, "failed")]
    assert "ConnectionError" in log.text and "the next run retries" in log.text
    assert sleeps == [1.0, 2.0]  # exponential backoff, bounded by `retries`


def test_many_notes_cost_one_listing_and_no_search_for_fresh_ones(
    api: GithubServer, cfg: Config
) -> None:
    notes = {f"note-{n:02}": note(f"note-{n:02}") for n in range(30)}
    results = [result(Verdict.FRESH, n) for n in notes] + [result(Verdict.BROKEN, "note-00")]
    run(cfg, api, results, notes=notes)
    api.recorded.clear()

    run(cfg, api, results, notes=notes)

    operations = [r.operation for r in api.recorded]
    assert operations.count("issues/list-for-repo") == 1
    assert operations.count("search/issues-and-pull-requests") == 0
    assert len(operations) <= 4  # repository, listing, and nothing per fresh note


def test_an_issue_whose_label_was_removed_is_still_found(api: GithubServer, cfg: Config) -> None:
    run(cfg, api, stale((A, Verdict.BROKEN)))
    api.repo().issues[1]["labels"] = []  # a maintainer removed every label
    shutil.rmtree(cfg.state / "bookkeeping")

    actions = run(cfg, api, stale((A, Verdict.BROKEN)))

    assert [(a.action, a.number) for a in actions] == [("unchanged", 1)]
    assert len(api.issues()) == 1


def test_dashboard_links_only_open_issues(api: GithubServer, tmp_path: Path) -> None:
    cfg = config(tmp_path, sink="github", dashboard=True)
    run(cfg, api, stale((A, Verdict.BROKEN)))
    api.repo().issues[1]["state"] = "closed"  # closed by hand while still stale

    run(cfg, api, stale((A, Verdict.BROKEN)))

    board = next(i for i in api.issues() if i["title"] == "watch dashboard")["body"]
    row = next(line for line in board.splitlines() if line.startswith(f"| `{A}`"))
    assert "**broken**" in row and "[#1]" not in row


def test_github_sink_without_repo_names_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    cfg = config(tmp_path, sink="github", repo=None)

    with pytest.raises(WatchError, match=r"config\.toml: \[issues\] repo is required"):
        sync_issues(cfg, NOTES, stale((A, Verdict.BROKEN)), upstreams(), dry_run=False, log=Lines())


def _boards(api: GithubServer) -> list[tuple[int, str]]:
    return [
        (i["number"], i["user"]["login"]) for i in api.issues() if i["title"] == "watch dashboard"
    ]


def _recorded(cfg: Config) -> Any:
    return json.loads((cfg.state / "bookkeeping" / "_site.json").read_text())["dashboard"]


def test_the_dashboard_is_the_one_watch_opened_never_one_planted(
    api: GithubServer, tmp_path: Path
) -> None:
    """A lost bookkeeping finds watch's own labelled dashboard again, by its author; an
    issue with the marker by anyone else, labelled or not, is never taken for it."""
    cfg = config(tmp_path, sink="github", dashboard=True)
    body = "<!-- watch:dashboard -->\n- [x] <!-- watch:snooze=a -->\n"
    api.add_issue("watch dashboard", body, author="mallory")
    api.add_issue("watch dashboard", body, ("stale-verification",), author="trudy")
    run(cfg, api, stale((A, Verdict.BROKEN)))
    shutil.rmtree(cfg.state / "bookkeeping")  # lost: found again by label and author
    run(cfg, api, stale((A, Verdict.BROKEN)))

    assert _boards(api) == [(1, "mallory"), (2, "trudy"), (4, "watch-bot")]
    assert _recorded(cfg) == {
        "handle": "4", "url": f"{api.url}/notes/site/issues/4", "author": "watch-bot"
    }  # fmt: skip
    assert [api.issues()[n]["body"] for n in (0, 1)] == [body, body]


def test_a_token_that_cannot_name_its_account_keeps_the_recorded_dashboard_only(
    api: GithubServer, tmp_path: Path
) -> None:
    """An Actions token answers `GET /user` with 403: the dashboard recorded with its
    author is kept; a record without one (earlier versions) names an issue that could be
    anyone's, so watch opens its own instead."""
    cfg = config(tmp_path, sink="github", dashboard=True)
    api.faults = [Fault(r"^GET /user$", "forbidden", times=99)]
    run(cfg, api, stale((A, Verdict.BROKEN)))
    run(cfg, api, stale((A, Verdict.CHANGED)))
    assert _boards(api) == [(2, "watch-bot")]

    shard = cfg.state / "bookkeeping" / "_site.json"
    data = json.loads(shard.read_text())
    api.add_issue("watch dashboard", "<!-- watch:dashboard -->\n", author="mallory")
    data["dashboard"] = {"handle": "3", "url": None}  # recorded by an earlier version
    shard.write_text(json.dumps(data))
    run(cfg, api, stale((A, Verdict.BROKEN)))

    assert _boards(api) == [(2, "watch-bot"), (3, "mallory"), (4, "watch-bot")]
    assert api.issues()[2]["body"] == "<!-- watch:dashboard -->\n"
    assert _recorded(cfg)["handle"] == "4"

    # An earlier version's record of the dashboard the Actions token opened is kept.
    app = "github-actions[bot]"
    api.add_issue("watch dashboard", "<!-- watch:dashboard -->\n", author=app)
    data = json.loads(shard.read_text())
    data["dashboard"] = {"handle": "5", "url": None}
    shard.write_text(json.dumps(data))
    run(cfg, api, stale((A, Verdict.CHANGED)))

    assert _boards(api)[-1] == (5, app) and len(_boards(api)) == 4
    assert "codex-reads-one-page-of-tools" in api.issues()[4]["body"]  # drawn by watch
    assert _recorded(cfg) == {"handle": "5", "url": f"{api.url}/notes/site/issues/5", "author": app}


def test_matrix_jobs_without_news_leave_the_shared_dashboard_to_the_jobs_with_news(
    api: GithubServer, tmp_path: Path
) -> None:
    """Two jobs of a matrix start from the same state/: the job of shard `x` has news for
    A; the job of shard `y` has none, and its copy of `x` is older than what job `x` drew.
    It must not draw the dashboard from that copy (A's news would vanish from it)."""
    from watcher.state.bookkeeping import Scope

    cfg = config(tmp_path, sink="github", dashboard=True)
    owners = {A: "x", B: "y"}
    everything = Scope(owners=owners, shards={"x": None, "y": None}, prune=True, complete=True)
    first = stale((A, Verdict.CHANGED), (B, Verdict.BROKEN))
    sync(cfg, NOTES, first, upstreams(), sink=sink_for(api), dry_run=False, log=Lines(),
         scope=everything)  # fmt: skip
    clone = tmp_path / "clone-y"
    shutil.copytree(cfg.state, clone)  # job y's checkout, made before job x pushed

    def job(shard: str, results: list[Result], state: Path) -> None:
        scoped = cfg.model_copy(update={"state": state})
        scope = Scope(owners=owners, shards={shard: None}, prune=True)
        sync(scoped, NOTES, results, upstreams(), sink=sink_for(api), dry_run=False,
             log=Lines(), scope=scope)  # fmt: skip

    job("x", stale((A, Verdict.BROKEN)), cfg.state)  # news: A changed -> broken
    job("y", stale((B, Verdict.BROKEN)), clone)  # no news, stale copy of x

    (board,) = [i for i in api.issues() if i["title"] == "watch dashboard"]
    rows = {r.split("|")[1].strip(" `"): r.split("|")[2].strip() for r in
            board["body"].splitlines() if r.startswith("| `")}  # fmt: skip
    assert rows == {A: "**broken**", B: "**broken**"}
