"""The `files` sink: the same documents and lifecycle as GitHub, under state/issues/."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.issues_support import Lines, config, note, result, upstreams
from watcher.config import Config
from watcher.issues import lifecycle, render
from watcher.issues.files import FilesSink
from watcher.issues.sink import DryRunSink, SinkError
from watcher.issues.sync import sync
from watcher.models import IssueAction, Result, Verdict

A = "codex-reads-one-page-of-tools"
NOTES = {A: note(A)}


def run(cfg: Config, results: list[Result], *, dry_run: bool = False) -> list[IssueAction]:
    sink = FilesSink(cfg.state / "issues", display=cfg.display)
    chosen = DryRunSink(sink, Lines()) if dry_run else sink
    return sync(cfg, NOTES, results, upstreams(), sink=chosen, dry_run=dry_run, log=Lines())


def header(path: Path) -> dict[str, object]:
    return dict(yaml.safe_load(path.read_text(encoding="utf-8").split("---\n")[1]))


def test_open_comment_close_reopen_in_one_file(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    path = cfg.state / "issues" / f"{A}.md"
    steps = [
        [result(Verdict.CHANGED)],
        [result(Verdict.CHANGED)],
        [result(Verdict.BROKEN)],
        [result(Verdict.FRESH)],
        [result(Verdict.BROKEN)],
    ]

    actions = []
    for results in steps:
        actions.append(run(cfg, results)[0].action)
        if actions[-1] == "closed":  # verified again: no verdict label, nothing left to do
            closed = path.read_text(encoding="utf-8")
            assert header(path)["labels"] == ["stale-verification"]
            assert "Verified again" in closed and "- [ ]" not in closed
            assert "Commit the fix" not in closed and "The next run closes" not in closed

    assert actions == ["opened", "unchanged", "commented", "closed", "reopened"]
    text = path.read_text(encoding="utf-8")
    assert header(path)["state"] == "open"
    assert header(path)["labels"] == ["stale-verification", "verdict:broken"]
    assert text.count("**Comment ") == 3
    assert text.index("New since the last report") < text.index("verified again")
    assert text.index("verified again") < text.index("stale again")


def test_reopen_false_replaces_the_closed_document(tmp_path: Path) -> None:
    cfg = config(tmp_path, reopen=False)
    run(cfg, [result(Verdict.CHANGED)])
    run(cfg, [result(Verdict.FRESH)])

    actions = run(cfg, [result(Verdict.CHANGED)])

    path = cfg.state / "issues" / f"{A}.md"
    assert [a.action for a in actions] == ["opened"]
    assert header(path)["state"] == "open" and "**Comment " not in path.read_text()


def test_dry_run_writes_no_file(tmp_path: Path) -> None:
    cfg = config(tmp_path, dashboard=True)

    actions = run(cfg, [result(Verdict.BROKEN)], dry_run=True)

    assert [a.action for a in actions] == ["would-open"]
    assert not (cfg.state / "issues").exists() and not (cfg.state / "bookkeeping").exists()


def test_a_file_that_is_not_ours_is_not_taken_for_the_issue(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    path = cfg.state / "issues" / f"{A}.md"
    path.parent.mkdir(parents=True)
    path.write_text("notes a maintainer kept here\n", encoding="utf-8")

    actions = run(cfg, [result(Verdict.BROKEN)])

    assert [a.action for a in actions] == ["opened"]
    assert path.read_text(encoding="utf-8").count(f"<!-- watch:note={A} -->") == 1


def test_lost_bookkeeping_changes_nothing(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    run(cfg, [result(Verdict.BROKEN)])
    before = (cfg.state / "issues" / f"{A}.md").read_text(encoding="utf-8")
    shutil.rmtree(cfg.state / "bookkeeping")

    actions = run(cfg, [result(Verdict.BROKEN)])

    assert [a.action for a in actions] == ["unchanged"]
    assert (cfg.state / "issues" / f"{A}.md").read_text(encoding="utf-8") == before


class Calls:
    """Counts the calls of one module's function (as other modules call it)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> None:
        self.count = 0
        real = getattr(module, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)


def test_a_run_with_no_news_renders_no_issue_body_and_heals_a_hand_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = config(tmp_path)
    path = cfg.state / "issues" / f"{A}.md"
    stale = [result(Verdict.CHANGED)]
    renders = Calls(monkeypatch, render, "body")  # issue bodies rendered
    digests = Calls(monkeypatch, lifecycle, "recorded")  # issue bodies digested
    assert [a.action for a in run(cfg, stale)] == ["opened"]
    assert renders.count == 1
    written = path.read_text(encoding="utf-8")

    digests.count = 0
    assert [a.action for a in run(cfg, stale)] == ["unchanged"]
    assert renders.count == 1  # same inputs, same body on disk: nothing rendered
    assert digests.count == 1  # one digest of the body on disk decides and is recorded
    assert path.read_text(encoding="utf-8") == written

    edited = written.replace("## Stale verification", "## Stale VERIFICATION")  # body only
    assert edited != written
    path.write_text(edited, "utf-8")
    assert [a.action for a in run(cfg, stale)] == ["unchanged"]
    assert renders.count == 2  # the body is not the one recorded: rendered, and restored
    assert path.read_text(encoding="utf-8") == written

    moved = [result(Verdict.CHANGED), result(Verdict.MOVED, id=f"{A}:src/other.rs:1-4")]
    run(cfg, moved)
    assert renders.count == 3  # new inputs: rendered
    assert "src/other.rs" in path.read_text(encoding="utf-8")

    shutil.rmtree(cfg.state / "bookkeeping")  # nothing recorded: rendered and compared
    assert [a.action for a in run(cfg, moved)] == ["unchanged"]
    assert renders.count == 4


@pytest.mark.parametrize(
    "handle", ["../x", "_dashboard/../x", "_dashboard/.x", "other/x", "_dashboard/a/b", ""]
)
def test_no_handle_names_a_file_outside_the_issue_folder(tmp_path: Path, handle: str) -> None:
    sink = FilesSink(tmp_path / "issues")
    with pytest.raises(SinkError, match="cannot name an issue file"):
        sink.path(handle)
    assert sink.path("_dashboard/acme__alpha") == tmp_path / "issues/_dashboard/acme__alpha.md"


def test_a_folder_or_file_in_the_way_fails_that_document_only(tmp_path: Path) -> None:
    """A folder where a note's issue file goes fails that note (reported without a machine
    path, retried); a file where the dashboard's folder goes is set aside by the state
    store, and the page is written."""
    cfg = config(tmp_path, sink="files", dashboard=True)
    issues = cfg.state / "issues"
    issues.mkdir(parents=True)
    (issues / "_dashboard").write_text("a file", encoding="utf-8")
    (issues / "other-note.md").mkdir()
    notes = {A: note(A), "other-note": note("other-note")}
    failures: list[str] = []
    log = Lines()
    results = [result(Verdict.BROKEN, A), result(Verdict.BROKEN, "other-note")]

    actions = sync(cfg, notes, results, upstreams(), sink=FilesSink(issues, display=cfg.display),
                   dry_run=False, log=log, failures=failures)  # fmt: skip

    assert [(a.note, a.action) for a in actions] == [(A, "opened"), ("other-note", "failed")]
    assert (issues / f"{A}.md").is_file()
    (failure,) = failures
    assert "1 note(s) not updated (other-note)" in failure and "dashboard" not in failure
    assert "note other-note: state/issues/other-note.md: cannot be written" in log.text
    assert str(tmp_path) not in failure + log.text
    assert "<!-- watch:dashboard -->" in (issues / "_dashboard" / "_site.md").read_text()
