"""Run the issue lifecycle for every checked note through one sink, then the dashboard.

Bookkeeping (`state/issues.json`) is only a cache of where each note's issue is; the
marker in the issue body is the truth, so losing the file costs lookups, not issues.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from watcher.config import Config
from watcher.errors import WatchError
from watcher.issues import dashboard, lifecycle, markers
from watcher.issues.sinks import SINKS, DryRunSink, IssueDoc, Sink, SinkError
from watcher.models import IssueAction, Note, Result, UpstreamStatus
from watcher.state import read_json, set_aside, write_json

Log = Callable[[str], None]
_DRY = {
    "opened": "would-open",
    "reopened": "would-open",
    "commented": "would-comment",
    "closed": "would-close",
    "unchanged": "unchanged",
}
_VERB = {"opened": "open", "reopened": "reopen", "commented": "comment on", "closed": "close"}


@dataclass
class Run:
    """One sync: the sink, the policy, and the bookkeeping being updated."""

    config: Config
    sink: Sink
    dry_run: bool
    log: Log
    book: dict[str, Any] = field(default_factory=dict)
    now: str = ""
    closed: set[str] = field(default_factory=set)  # notes whose issue is closed after this run

    @property
    def book_file(self) -> Path:
        return self.config.state / "issues.json"

    def save(self) -> None:
        if not self.dry_run:
            write_json(self.book_file, self.book)


def make_sink(config: Config, dry_run: bool, log: Log) -> tuple[Sink, bool]:
    """The configured sink, wrapped for a dry run; without a token, GitHub is a dry run."""
    kind = config.issues.sink
    token = os.environ.get(config.issues.token_env) or None
    if kind == "github" and token is None:
        log(f"issues: ${config.issues.token_env} is not set: dry run, nothing is opened on GitHub")
        return DryRunSink(None, log), True
    sink = SINKS[kind](config, token)
    return (DryRunSink(sink, log), True) if dry_run else (sink, False)


def sync(
    config: Config,
    notes: Mapping[str, Note],
    results: Sequence[Result],
    upstreams: Sequence[UpstreamStatus],
    *,
    sink: Sink,
    dry_run: bool,
    log: Log,
    now: datetime | None = None,
) -> list[IssueAction]:
    """Open, comment on, close or reopen each checked note's issue; then the dashboard."""
    run = Run(
        config, sink, dry_run, log, now=(now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    )
    run.book = _load_book(run)
    by_note = _group(results)
    policy = lifecycle.Policy(
        frozenset(config.issues.open_on), tuple(config.issues.labels), config.issues.reopen
    )
    try:
        sink.check()
    except SinkError as exc:  # unreachable: every note is retried by the next run
        log(f"issues: {exc}; no issue was touched, the next run retries")
        tried = [n for n, items in by_note.items() if lifecycle.affected(items, policy)]
        return [IssueAction(note=n, action="failed") for n in tried]
    _ensure_labels(run, policy, by_note)
    actions = _notes(run, notes, by_note, policy, upstreams)
    if config.issues.dashboard:
        _dashboard(run, notes, by_note, actions, upstreams)
    return list(actions.values())


def _notes(
    run: Run,
    notes: Mapping[str, Note],
    by_note: Mapping[str, Sequence[Result]],
    policy: lifecycle.Policy,
    upstreams: Sequence[UpstreamStatus],
) -> dict[str, IssueAction]:
    """Each note's lifecycle step; bookkeeping is saved after every note."""
    heads = [(u.repo, u.head) for u in upstreams if u.head]
    actions: dict[str, IssueAction] = {}
    for note_id, items in by_note.items():
        note = notes.get(note_id) or Note(id=note_id, file=items[0].note_file)
        mine = [h for h in heads if any(r.repo == h[0] for r in items)]
        action = _one(run, note, items, policy, mine)
        if action is not None:
            actions[note_id] = action
        run.save()
    return actions


def _load_book(run: Run) -> dict[str, Any]:
    try:
        book = read_json(run.book_file)
    except WatchError as exc:  # unreadable cache: markers still find every issue
        run.log(f"issues: {exc}; starting with empty bookkeeping")
        book = {}
    if not isinstance(book.setdefault("notes", {}), dict):  # valid JSON, wrong shape
        set_aside(run.book_file, "`notes` is not an object")
        book = {"notes": {}}
    return book


def _group(results: Sequence[Result]) -> dict[str, list[Result]]:
    by_note: dict[str, list[Result]] = {}
    for result in results:
        by_note.setdefault(result.note, []).append(result)
    return dict(sorted(by_note.items()))


def _ensure_labels(
    run: Run, policy: lifecycle.Policy, by_note: Mapping[str, Sequence[Result]]
) -> None:
    from watcher.issues import render

    names: set[str] = set()
    for items in by_note.values():
        if lifecycle.affected(items, policy):
            names.update(render.labels(policy.labels, items))
    if names:
        try:
            run.sink.ensure_labels(sorted(names))
        except SinkError as exc:  # issue creation also creates missing labels on GitHub
            run.log(f"issues: could not create labels ({exc}); continuing")


def _one(
    run: Run,
    note: Note,
    items: Sequence[Result],
    policy: lifecycle.Policy,
    heads: Sequence[tuple[str, str]],
) -> IssueAction | None:
    entry = run.book["notes"].get(note.id) or {}
    if lifecycle.affected(items, policy) and run.now[:10] < note.snooze_until:
        run.log(f"issues: note {note.id} is snoozed until {note.snooze_until}; left alone")
        return None
    try:
        marker, hint = markers.note_marker(note.id), entry.get("handle")
        thorough = lifecycle.affected(items, policy)  # only then may an issue be opened
        docs = run.sink.find(note.id, marker, hint, thorough=thorough)
        plan = lifecycle.decide(note, items, docs, policy, heads)
        if plan is None:
            return None
        doc = _apply(run, note, plan)
    except SinkError as exc:
        run.log(f"issues: note {note.id}: {exc}; the next run retries")
        return IssueAction(note=note.id, action="failed")
    return _record(run, note, plan, doc)


def _apply(run: Run, note: Note, plan: lifecycle.Plan) -> IssueDoc | None:
    """The plan's writes, comment first; each one is safe to redo after a crash."""
    doc = plan.doc
    if plan.outcome != "unchanged" or plan.content is not None:
        run.log(_headline(run, note, plan))
    if plan.comment is not None and doc is not None:
        run.sink.comment(doc, *plan.comment)
    content = plan.content
    if content is None:
        return doc
    if doc is None:
        return run.sink.create(note.id, content.title, content.body, content.labels)
    return run.sink.update(
        doc, title=content.title, body=content.body, labels=content.labels, state=content.state
    )


def _headline(run: Run, note: Note, plan: lifecycle.Plan) -> str:
    verb = "update" if plan.outcome == "unchanged" else _VERB[plan.outcome]
    where = (plan.doc.url or plan.doc.handle) if plan.doc else f"an issue ({run.sink.name})"
    return f"issues: note {note.id}: {'would ' if run.dry_run else ''}{verb} {where}"


def _record(run: Run, note: Note, plan: lifecycle.Plan, doc: IssueDoc | None) -> IssueAction:
    if doc is not None and doc.state == "closed":
        run.closed.add(note.id)
    if doc is not None and not run.dry_run:
        run.book["notes"][note.id] = {"handle": doc.handle, "url": doc.url, "state": doc.state}
    action = _DRY[plan.outcome] if run.dry_run else plan.outcome
    return IssueAction(
        note=note.id,
        action=action,
        url=doc.url if doc else None,
        number=doc.number if doc else None,
    )


def _dashboard(
    run: Run,
    notes: Mapping[str, Note],
    by_note: Mapping[str, Sequence[Result]],
    actions: Mapping[str, IssueAction],
    upstreams: Sequence[UpstreamStatus],
) -> None:
    entry = run.book.get("dashboard") or {}
    try:
        docs = run.sink.find(dashboard.HANDLE, markers.DASHBOARD, entry.get("handle"))
        current = min(docs, key=lambda d: d.number or 0) if docs else None
        # A row links the note's issue only while it is open (closed by hand included).
        links = {n: a for n, a in actions.items() if n not in run.closed}
        data = dashboard.rows(
            markers.parse_data(current.body if current else None),
            notes,
            by_note,
            links,
            upstreams,
            run.now,
        )
        doc = _write_dashboard(run, current, dashboard.body(data, _boxes(run, notes, data)))
    except SinkError as exc:
        run.log(f"issues: dashboard: {exc}; the next run retries")
        return
    if doc is not None and not run.dry_run:
        run.book["dashboard"] = {"handle": doc.handle, "url": doc.url}
        run.save()


def _boxes(run: Run, notes: Mapping[str, Note], data: dict[str, Any]) -> str:
    """Accept and snooze boxes for the notes whose issue is open."""
    from watcher.issues import boxes

    today = run.now[:10]
    snoozed = {n: note.snooze_until for n, note in notes.items() if note.snooze_until > today}
    stale = [n for n, row in data.items() if row.get("issue") or n in snoozed]
    return boxes.section(stale, snoozed, run.config.issues.accept)


def _write_dashboard(run: Run, current: IssueDoc | None, body: str) -> IssueDoc | None:
    labels = tuple(run.config.issues.labels[:1])
    if current is None:
        run.log(f"issues: {'would open' if run.dry_run else 'opening'} the dashboard")
        return run.sink.create(dashboard.HANDLE, dashboard.TITLE, body, labels)
    if current.body.rstrip() == body.rstrip() and current.state == "open":
        return current
    verb = "would update" if run.dry_run else "updating"
    run.log(f"issues: {verb} the dashboard {current.url or current.handle}")
    return run.sink.update(current, title=dashboard.TITLE, body=body, labels=labels, state="open")
