"""Carry out the dashboard boxes a maintainer ticked (see `watcher.issues.boxes`).

`watch action` calls this in the notes repository's checkout, before its check:

- accept: `watch fix --accept NOTE_ID` is planned, and its edits are committed on branch
  `watch/accept/NOTE_ID` (built from HEAD without touching the work tree, pushed with
  `--force` so a second tick refreshes it) and opened as a pull request; a sink that
  cannot open pull requests (`files`) leaves the pushed branch for review. Only with
  `[issues] accept = "commit"` are they committed to the checked-out branch and pushed;
  a push that fails takes the commit back, so the check that follows still sees the
  note as it was and its issue stays open.
- snooze: `snooze_until` (today + 30 days) is set in the note and committed to the
  checked-out branch, so this run and every later one leave its issue alone.

Only the dashboard watch keeps is read (`Sink.dashboard`: never an issue someone else
opened), only boxes outside code blocks count (`boxes.read`), and on GitHub only when the
last edit of the body was made by someone with write access (`Sink.untrusted`). Ticks
that do not count are reported as a warning and left alone; the check that follows
renders the dashboard afresh with its boxes unticked, so each is reported once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from watcher.commands import fix
from watcher.config import Config
from watcher.errors import WatchError
from watcher.inputs import checkout, edit
from watcher.inputs.notememo import site_notes
from watcher.issues import boxes
from watcher.issues.sink import Sink
from watcher.state import store
from watcher.state.bookkeeping import Book, note_shard, shard_of

log = logging.getLogger("watcher.action")


@dataclass
class Outcome:
    """What the ticked boxes came to: one line per box done, one per box that failed,
    one per tick that does not count (reported, not carried out: `_counted`)."""

    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)


def carry_out(config: Config, *, today: date, upstream: str | None = None) -> Outcome:
    """Carry out every ticked box; one line per box saying what was done or what failed
    (a failure fails the run: `watch action` exits 2).

    With `upstream` (one job of a matrix), only the boxes of notes that upstream owns (the
    first repository a note cites): every box is carried out by exactly one job. Ticks
    that do not count are logged and listed in `Outcome.ignored` (for the step summary)."""
    from watcher.issues.sink import SinkError
    from watcher.issues.sync import make_sink

    outcome = Outcome()
    sink, dry = make_sink(config, False, log.info)
    if dry:
        return outcome
    try:
        ticks = _counted(config, sink, upstream, outcome.ignored)
    except SinkError as exc:
        log.error("dashboard: could not read its boxes: %s", exc)
        outcome.failed.append(f"could not read the dashboard's boxes: {exc}")
        return outcome
    for tick in ticks:
        try:
            if tick.what == "accept":
                outcome.done.append(_accept(config, sink, tick.note, today))
            else:
                outcome.done.append(_snooze(config, tick.note, today))
        except WatchError as exc:  # one box failing leaves the others to be done
            log.error("dashboard: %s %s: %s", tick.what, tick.note, exc)
            outcome.failed.append(f"{tick.what} {tick.note}: {exc}")
    for line in outcome.done:
        log.info("dashboard: %s", line)
    return outcome


def _counted(
    config: Config, sink: Sink, upstream: str | None, ignored: list[str]
) -> list[boxes.Tick]:
    """The ticks that count, of the notes this job carries out, on every dashboard page it
    reads; the others of its notes are reported, in `ignored` and the log."""
    from watcher.issues import dashboard

    book = Book.load(config.state, log.info)
    shards = (
        [shard_of(config, upstream)]
        if upstream
        else [shard_of(config, u.repo) for u in config.upstream] or [store.HOME]
    )
    ticks: list[boxes.Tick] = []
    for page in dashboard.pages(sink.dashboard_per_upstream, shards, {}):
        doc = sink.dashboard(page.handle, book.board())
        found, hidden = boxes.read(doc.body if doc else None)
        found, hidden = _mine(config, found, upstream), _mine(config, hidden, upstream)
        where = (doc.url or doc.handle) if doc else ""
        if hidden:  # each job says so of its own notes' boxes only
            count = len(hidden)
            ignored.append(f"dashboard {where}: {count} ticked box(es) inside code blocks ignored")
            log.warning("%s", ignored[-1])
        reason = sink.untrusted(doc) if doc and found else None
        if reason is not None:
            which = ", ".join(f"{t.what} {t.note}" for t in found)
            ignored.append(f"dashboard {where}: ticks ignored ({which}): {reason}")
            log.warning("%s", ignored[-1])
            continue
        ticks += found
    return ticks


def _mine(config: Config, ticks: list[boxes.Tick], upstream: str | None) -> list[boxes.Tick]:
    if upstream is None or not ticks:
        return ticks
    notes, shard = site_notes(config).notes, shard_of(config, upstream)
    return [t for t in ticks if t.note in notes and note_shard(config, notes[t.note]) == shard]


def _accept(config: Config, sink: object, note_id: str, today: date) -> str:
    changes = fix.plan(config, note_id, offline=False, date=today.isoformat())
    changed = {p: new for p, (old, new) in changes.texts.items() if old != new}
    if not changed:
        return f"accept {note_id}: nothing to change"
    top = checkout.toplevel(config.root)
    summary = [*changes.done, *(f"todo: {t}" for t in changes.todo)]
    message = f"Accept {note_id}: re-verified, re-based on upstream HEAD\n\n" + "\n".join(summary)
    if config.issues.accept == "commit":
        return _accept_by_commit(config, top, note_id, changes, changed, message)
    branch = f"watch/accept/{note_id}"
    commit = checkout.commit_off_tree(top, changed, message)
    changes.keep_aliases(config.state)  # harmless before the merge: used for unknown ids only
    code, text = checkout.try_git(
        top, "push", "--force", "--quiet", "origin", f"{commit}:refs/heads/{branch}"
    )
    if code:
        raise WatchError(f"push of branch {branch} to origin failed: {text}")
    base = checkout.git(top, "rev-parse", "--abbrev-ref", "HEAD")
    open_pull = getattr(sink, "open_pull", None)
    if open_pull is None:  # the files sink: the branch is the review
        return (
            f"accept {note_id}: pushed branch {branch} for review; open a pull request "
            f"from it into {base}"
        )
    body = (
        f"Ticked **accept** for `{note_id}` on the watch dashboard: `watch fix --accept "
        f"{note_id}` re-based it on upstream HEAD.\n\n" + "\n".join(f"- {s}" for s in summary)
    )
    url = open_pull(branch, base, f"Accept {note_id}: re-based on upstream HEAD", body)
    return f"accept {note_id}: pull request {url}"


def _accept_by_commit(
    config: Config,
    top: Path,
    note_id: str,
    changes: fix.Changes,
    changed: dict[Path, str],
    message: str,
) -> str:
    """`accept = "commit"`: commit to the checked-out branch and push. A failed push takes
    the commit and the edits back: the note stays as it was, and so does its issue."""
    changes.write()
    commit = _commit_or_undo(top, list(changed), message)
    changes.keep_aliases(config.state)
    return f"accept {note_id}: committed {commit[:12]}"


def _commit_or_undo(top: Path, paths: list[Path], message: str) -> str:
    """Commit `paths` as the bot and push; the commit. When the push fails, the commit
    and its edits are taken back (HEAD and the work tree as before) and the error raised."""
    checkout.git(top, "add", "--", *(str(p) for p in paths))
    checkout.git(top, *checkout.AS_BOT, "commit", "--quiet", "-m", message)
    try:
        checkout.push(top)
    except WatchError:
        checkout.git(top, "reset", "--quiet", "--keep", "HEAD~1")
        raise
    return checkout.git(top, "rev-parse", "HEAD")


def _snooze(config: Config, note_id: str, today: date) -> str:
    notes = site_notes(config).notes
    if note_id not in notes:
        raise WatchError(f"no note {note_id} (renamed or deleted since the box was drawn)")
    until = (today + timedelta(days=boxes.SNOOZE_DAYS)).isoformat()
    path = config.root / notes[note_id].file
    shown = notes[note_id].file  # the note's bytes kept: CRLF, a BOM (edit.read, edit.write)
    edit.write(path, edit.set_key(edit.read(path), "snooze_until", until, shown))
    top = checkout.toplevel(config.root)
    message = f"Snooze {note_id} until {until} (ticked on the watch dashboard)"
    commit = _commit_or_undo(top, [path], message)
    return f"snooze {note_id}: until {until}, committed {commit[:12]}"
