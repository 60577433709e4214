"""Carry out the dashboard boxes a maintainer ticked (see `watcher.issues.boxes`).

`watch action` calls this in the notes repository's checkout, before its check:

- accept: `watch fix --accept NOTE_ID` is planned, and its edits are committed on branch
  `watch/accept/NOTE_ID` (built from HEAD without touching the work tree, pushed with
  `--force` so a second tick refreshes it) and opened as a pull request; with
  `[issues] accept = "commit"` (or a sink that cannot open pull requests) they are
  committed to the checked-out branch and pushed.
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
from datetime import date, timedelta

from watcher.commands import fix
from watcher.config import Config
from watcher.errors import WatchError
from watcher.inputs import checkout, edit
from watcher.inputs.notememo import site_notes
from watcher.issues import boxes
from watcher.issues.sink import Sink
from watcher.state import store
from watcher.state.bookkeeping import Book, shard_of
from watcher.state.store import write_text

log = logging.getLogger("watcher.action")


def carry_out(
    config: Config,
    *,
    today: date,
    upstream: str | None = None,
    ignored: list[str] | None = None,
) -> list[str]:
    """Carry out every ticked box; one line per box saying what was done.

    With `upstream` (one job of a matrix), only the boxes of notes that upstream owns (the
    first repository a note cites): every box is carried out by exactly one job. Ticks
    that do not count are logged, and appended to `ignored` (for the step summary)."""
    from watcher.issues.sink import SinkError
    from watcher.issues.sync import make_sink

    sink, dry = make_sink(config, False, log.info)
    if dry:
        return []
    try:
        ticks = _counted(config, sink, upstream, ignored if ignored is not None else [])
    except SinkError as exc:
        log.error("dashboard: could not read its boxes: %s", exc)
        return []
    done = []
    for tick in ticks:
        try:
            if tick.what == "accept":
                done.append(_accept(config, sink, tick.note, today))
            else:
                done.append(_snooze(config, tick.note, today))
        except WatchError as exc:  # one box failing leaves the others to be done
            log.error("dashboard: %s %s: %s", tick.what, tick.note, exc)
    for line in done:
        log.info("dashboard: %s", line)
    return done


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
    notes = site_notes(config).notes
    owners = {
        n.id: (n.citations[0].repo if n.citations else n.issue_citations[0].repo).lower()
        for n in notes.values()
        if n.citations or n.issue_citations
    }
    return [t for t in ticks if owners.get(t.note) == upstream.lower()]


def _accept(config: Config, sink: object, note_id: str, today: date) -> str:
    changes = fix.plan(config, note_id, offline=False, date=today.isoformat())
    changed = {p: new for p, (old, new) in changes.texts.items() if old != new}
    if not changed:
        return f"accept {note_id}: nothing to change"
    top = checkout.toplevel(config.root)
    summary = [*changes.done, *(f"todo: {t}" for t in changes.todo)]
    message = f"Accept {note_id}: re-verified, re-based on upstream HEAD\n\n" + "\n".join(summary)
    open_pull = getattr(sink, "open_pull", None)
    if config.issues.accept == "commit" or open_pull is None:
        changes.write()
        checkout.git(top, "add", "--", *(str(p) for p in changed))
        commit = checkout.commit(top, message)
        return f"accept {note_id}: committed {commit[:12]}"
    branch = f"watch/accept/{note_id}"
    commit = checkout.commit_off_tree(top, changed, message)
    checkout.git(top, "push", "--force", "--quiet", "origin", f"{commit}:refs/heads/{branch}")
    base = checkout.git(top, "rev-parse", "--abbrev-ref", "HEAD")
    body = (
        f"Ticked **accept** for `{note_id}` on the watch dashboard: `watch fix --accept "
        f"{note_id}` re-based it on upstream HEAD.\n\n" + "\n".join(f"- {s}" for s in summary)
    )
    url = open_pull(branch, base, f"Accept {note_id}: re-based on upstream HEAD", body)
    return f"accept {note_id}: pull request {url}"


def _snooze(config: Config, note_id: str, today: date) -> str:
    notes = site_notes(config).notes
    if note_id not in notes:
        raise WatchError(f"no note {note_id} (renamed or deleted since the box was drawn)")
    until = (today + timedelta(days=boxes.SNOOZE_DAYS)).isoformat()
    path = config.root / notes[note_id].file
    write_text(path, edit.set_key(path.read_text(encoding="utf-8"), "snooze_until", until))
    top = checkout.toplevel(config.root)
    checkout.git(top, "add", "--", str(path))
    commit = checkout.commit(top, f"Snooze {note_id} until {until} (ticked on the watch dashboard)")
    return f"snooze {note_id}: until {until}, committed {commit[:12]}"
