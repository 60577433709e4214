"""A warm `watch check` with nothing new answers from the last run (watcher.state.replay).

Pinned by counters: `replayed` (runs answered from a record, before pydantic is
imported) and `stored` of the runs' counts (`Counts.warm`). For every input that can change, the next run is
a full one and prints what a full run prints; a run that did nothing new is answered
again, with its own start time and its own line in the run record.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.conftest import Project
from tests.support import Trace, lock_held_elsewhere
from tests.test_state_replay_imports import LIB, RULES
from watcher.gitbuild import Upstream
from watcher.state import replay
from watcher.state.runs import read_runs

CHECK = ("check", "--format", "json")


@pytest.fixture
def site(project: Project, upstream: Upstream) -> Project:
    """Two citations and a rule, the upstream one commit past the cited one."""
    base = upstream.commit("base (#1)", {"src/lib.rs": LIB.replace("VALUE", "1")})
    upstream.commit("alpha adds 3 (#2)", {"src/lib.rs": LIB.replace("VALUE", "3")})
    project.note("lib", f"{base} src/lib.rs:1-4", f"{base} src/lib.rs:6-8")
    project.rules(RULES)
    return project


def run(project: Project, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code, out, _ = project.run(*(args or CHECK), capsys=capsys)
    return code, out


def timeless(output: str) -> str:
    return re.sub(r'"started_at": "[^"]*"', '"started_at": "-"', output)


def settled(project: Project, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Cold, then warm runs until one is answered from the record; that one's output,
    the same as the run before it printed."""
    last = run(project, capsys, *args)
    for _ in range(3):
        before = project.counts.warm.replayed
        code, out = run(project, capsys, *args)
        if project.counts.warm.replayed > before:
            assert (code, timeless(out)) == (last[0], timeless(last[1]))
            return code, out
        last = (code, out)
    raise AssertionError("no run was answered from the record")


def full(project: Project, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """What a full run prints now (`-v` always runs in full)."""
    before = project.counts.warm.replayed
    code, out, _ = project.run("-v", *(args or CHECK), capsys=capsys)
    assert project.counts.warm.replayed == before
    return code, timeless(out)


def test_an_unchanged_site_is_answered_from_the_record_with_its_own_time_and_run_line(
    site: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = settled(site, capsys)
    runs_before = read_runs(site.root / "state").of(site.repo).runs

    again = run(site, capsys)

    assert site.counts.warm.replayed == 2
    assert again[0] == code == 1
    assert timeless(again[1]) == timeless(out)
    assert json.loads(again[1])["started_at"] != "-"
    recorded = read_runs(site.root / "state").of(site.repo)  # validated by the models
    assert recorded.runs == runs_before + 1
    assert recorded.last is not None and recorded.last.by == "check"
    assert recorded.last.outcome == "stale" and recorded.last.summary["changed"] == 1
    assert (code, timeless(out)) == full(site, capsys)


def _edit_note(project: Project, upstream: Upstream) -> None:
    note = project.root / "notes" / "lib.md"
    note.write_text(note.read_text().replace("src/lib.rs:6-8", "src/lib.rs:1-4\n"))


def _edit_rule(project: Project, upstream: Upstream) -> None:
    project.rules(RULES.replace("beta returns its name", "beta says its name"))


def _break_rule(project: Project, upstream: Upstream) -> None:
    project.rules(RULES.replace("equals = '\"beta\"'", "equals = '\"gamma\"'"))


def _edit_config(project: Project, upstream: Upstream) -> None:
    project.config(extra="track_citations = false")


def _new_commit(project: Project, upstream: Upstream) -> None:
    upstream.commit("beta says more (#3)", {"src/lib.rs": LIB.replace("VALUE", "3") + "\n// x\n"})
    upstream.commit("beta changes (#4)", {"src/lib.rs": LIB.replace('"beta"', '"b"')})


def _new_tag(project: Project, upstream: Upstream) -> None:
    upstream.tag("v1.0.0")


def _state_removed(project: Project, upstream: Upstream) -> None:
    (project.root / "state" / "acme__client.json").unlink()


def _new_note_file(project: Project, upstream: Upstream) -> None:
    (project.root / "notes" / "other.md").write_text("no front matter here\n")


CHANGES = {
    "a note's bytes": _edit_note,
    "a note file added": _new_note_file,
    "a rule's text": _edit_rule,
    "a rule's claim": _break_rule,
    "config.toml": _edit_config,
    "a new upstream commit": _new_commit,
    "a new release tag": _new_tag,
    "state/ removed": _state_removed,
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=list(CHANGES))
def test_any_changed_input_runs_in_full_and_prints_what_a_full_run_prints(
    site: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str], change: object
) -> None:
    settled(site, capsys)
    replayed = site.counts.warm.replayed
    assert callable(change)
    change(site, upstream)

    code, out = run(site, capsys)

    assert site.counts.warm.replayed == replayed  # not answered from the record
    assert (code, timeless(out)) == full(site, capsys)


def test_what_each_change_shows_is_in_the_output(
    site: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The full run after a change sees it (the fast path's fetch is the run's)."""
    _, out = settled(site, capsys)
    _new_commit(site, upstream)
    _, moved = run(site, capsys)
    _new_tag(site, upstream)
    _, tagged = run(site, capsys)

    rule = {r["id"]: r for r in json.loads(moved)["results"]}["beta-says-beta"]
    assert rule["verdict"] == "broken" and "beta-says-beta" not in {
        r["id"] for r in json.loads(out)["results"] if r["verdict"] == "broken"
    }
    released = {r["id"]: r for r in json.loads(tagged)["results"]}["beta-says-beta"]
    assert released["released_in"] == "v1.0.0"


@pytest.mark.parametrize(
    "option",
    [
        ("--format", "markdown"),
        ("--format", "table"),
        ("--offline",),
        ("--no-implicit-upstreams",),
        ("--upstream", "acme/client"),
        ("-q",),
    ],
)
def test_other_options_are_other_records(
    site: Project, capsys: pytest.CaptureFixture[str], option: tuple[str, ...]
) -> None:
    settled(site, capsys)
    replayed = site.counts.warm.replayed

    args = (*option, *CHECK) if option[0] == "-q" else (*CHECK, *option)
    code, out = run(site, capsys, *args)

    assert site.counts.warm.replayed == replayed
    assert (code, timeless(out)) == full(site, capsys, *args)
    assert settled(site, capsys, *args)[1].startswith(out[:20])


def test_filtered_and_dry_runs_always_run_in_full(
    site: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    settled(site, capsys)
    replayed = site.counts.warm.replayed
    for args in (("--note", "lib"), ("--rule", "beta-says-beta"), ("--dry-run",)):
        for _ in range(3):
            run(site, capsys, *CHECK, *args)
    assert site.counts.warm.replayed == replayed


def test_with_the_files_sink_a_new_day_runs_in_full(
    site: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Snoozes end on a date: the day is part of the fingerprint when issues are filed."""
    site.config(sink="files")
    settled(site, capsys)
    replayed = site.counts.warm.replayed
    monkeypatch.setattr(replay, "today", lambda: "2999-01-01")

    code, out = run(site, capsys)

    assert site.counts.warm.replayed == replayed
    assert (code, timeless(out)) == full(site, capsys)


def test_an_issue_file_edited_by_hand_runs_in_full(
    site: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    site.config(sink="files")
    settled(site, capsys)
    replayed = site.counts.warm.replayed
    issue = site.root / "state" / "issues" / "lib.md"
    issue.write_text(issue.read_text().replace("state: open", "state: closed"))

    run(site, capsys)

    assert site.counts.warm.replayed == replayed


def test_a_github_sink_is_never_answered_from_a_record(
    site: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    """GitHub's issues are the truth of the issue lifecycle: every run reads them."""
    site.config(sink="github")  # no token: a dry run that reads nothing, yet not stored
    for _ in range(4):
        run(site, capsys)
    assert site.counts.warm.replayed == 0 and site.counts.warm.stored == 0


def test_a_moved_upstream_is_fetched_once(
    site: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str], trace: Trace
) -> None:
    settled(site, capsys)
    _new_commit(site, upstream)

    trace.start()
    run(site, capsys)

    refs = [c for c in trace.commands("fetch") if "--prune" in c]
    assert len(refs) == 1  # the fetch that decided is the run's: not made twice


def test_the_state_lock_is_taken(site: Project, capsys: pytest.CaptureFixture[str]) -> None:
    settled(site, capsys)
    replayed = site.counts.warm.replayed
    with lock_held_elsewhere(site.root / "state" / ".lock"):
        code, out, err = site.run(*CHECK, capsys=capsys)
    assert code == 2 and out == "" and "holds the state lock" in err
    assert site.counts.warm.replayed == replayed


def test_an_upstream_that_cannot_be_fetched_is_tried_once(
    site: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str], trace: Trace
) -> None:
    settled(site, capsys)
    upstream.path.rename(upstream.path.with_name("gone"))

    trace.start()
    code, out = run(site, capsys)

    assert code == 2 and json.loads(out)["upstreams"][0]["error"]
    assert len([c for c in trace.commands("fetch") if "--prune" in c]) == 1
    assert site.counts.warm.replayed == 1  # settling's; this one ran in full


def test_another_issue_token_runs_in_full(
    site: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The token is a secret the output is redacted of: another one, another report."""
    settled(site, capsys)
    replayed = site.counts.warm.replayed
    monkeypatch.setenv("GITHUB_TOKEN", "a-new-token-value")

    code, out = run(site, capsys)

    assert site.counts.warm.replayed == replayed
    assert (code, timeless(out)) == full(site, capsys)


def test_fingerprints_hash_files_a_chunk_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A big state file is hashed in chunks, never read whole and copied again (12 MB at
    5,000 citations, at the end of a run when memory peaks); the digest is as before:
    each file's name, size and bytes."""
    from hashlib import blake2b

    big = 3 * 2**20 + 5
    files = {"a.json": b"x" * big, "b/c.json": b"{}\n", "d.txt": b"skipped"}
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    expected = blake2b(digest_size=32)
    for name in ("a.json", "b/c.json"):  # below the folder, as the walk names them
        data = files[name]
        expected.update(f"{name}\0{len(data)}\0".encode() + data)
    updates: list[int] = []

    class Measured:
        def __init__(self, **kwargs: int) -> None:
            self.inner = blake2b(**kwargs)

        def update(self, data: bytes) -> None:
            updates.append(len(data))
            self.inner.update(data)

        def hexdigest(self) -> str:
            return self.inner.hexdigest()

    monkeypatch.setattr(replay, "blake2b", Measured)
    assert replay._digest(replay._listed(tmp_path, ".json", ())) == expected.hexdigest()
    assert max(updates) <= 2**20 < big  # never the whole file at once


def test_a_full_run_reads_again_only_the_folders_it_wrote(
    site: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fingerprint taken after a full run, to tell whether it changed what it read,
    reads no file of a folder the run left as it was on disk: the notes and rules once
    each (500 notes and 12 MB of state at 5,000 citations); the state it wrote, again."""
    settled(site, capsys)
    _edit_note(site, upstream)
    replayed = site.counts.warm.replayed
    hashed: list[str] = []
    hash_file = replay._hash_file

    def counted(digest: object, file: str, name: str) -> None:
        hashed.append(os.path.relpath(file, site.root))
        hash_file(digest, file, name)

    monkeypatch.setattr(replay, "_hash_file", counted)
    run(site, capsys)
    assert site.counts.warm.replayed == replayed  # a full run: the note changed
    inputs = [f for f in hashed if f.startswith(("notes", "rules"))]
    assert inputs and sorted(inputs) == sorted(set(inputs))  # each read once
    written = [f for f in hashed if f.startswith("state")]
    assert len(written) > len(set(written))  # the state it rewrote, read again


def test_the_run_after_one_that_filed_issues_over_redacted_code_writes_nothing(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """State and issue bodies are stored redacted (`plugin://user@host` loses its user
    part): the bookkeeping remembers the body as stored, so the warm run after the one
    that judged and filed finds every issue as recorded, writes no bookkeeping, and is
    the one whose report is given again (it was the run after it)."""
    code = "    let doubled = input * 2; // plugin://sample@test\n"
    lib = LIB.replace("    let doubled = input * 2;\n", code)
    base = upstream.commit("base (#1)", {"src/lib.rs": lib.replace("VALUE", "1")})
    upstream.commit("alpha adds 3 (#2)", {"src/lib.rs": lib.replace("VALUE", "3")})
    project.note("lib", f"{base} src/lib.rs:1-4")
    project.config(sink="files")
    book = project.root / "state" / "bookkeeping" / f"{project.repo.replace('/', '__')}.json"
    assert run(project, capsys)[0] == 1  # judged: `alpha` changed, an issue filed
    filed = book.read_bytes()
    assert "sample@" not in (project.root / "state" / "issues" / "lib.md").read_text()

    run(project, capsys)

    assert book.read_bytes() == filed
    assert project.counts.warm.stored == 1
    run(project, capsys)
    assert project.counts.warm.replayed == 1
