"""Stale-verification issues (SPEC 6.2): one per affected note, plus a dashboard.

`sync_issues` is the one entry point of a check, `rebuild_dashboard` of a job that only
redraws the dashboard. Behind them: `render` (titles, bodies, comments; markdown safety
in `markdown`), `markers` (the hidden markers that deduplicate), `lifecycle` (what to do
for one note), `sink` (the Protocol and its documents), `sinks` (the registry), `github`
and `files` (the sinks). This module runs the lifecycle for every checked note through
one sink, then the dashboard.

Bookkeeping (`state/bookkeeping/`, see `watcher.state.bookkeeping`) is only a cache of
where each note's issue is; the marker in the issue body is the truth, so losing it costs
lookups, not issues. It is saved once, at the end of the run, and only when it changed: a
run killed halfway leaves the previous bookkeeping, and the next run finds by marker
whatever the killed run had opened.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from watcher.config import Config
from watcher.issues import dashboard, lifecycle, markers
from watcher.issues.sink import DryRunSink, IssueDoc, Sink, SinkError
from watcher.issues.sinks import SINKS
from watcher.models import IssueAction, Note, Result, UpstreamStatus
from watcher.state.bookkeeping import Board, Book, Entry, Scope

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
    book: Book
    scope: Scope
    entries: dict[str, Entry] = field(default_factory=dict)  # this run's notes
    closed: set[str] = field(default_factory=set)  # notes whose issue is closed after this run
    failures: list[str] = field(default_factory=list)  # run-level: the sink failed
    handles: dict[str, str] = field(default_factory=dict)  # note -> issue handle, this run
    rendered: dict[str, dict[str, str]] = field(default_factory=dict)  # see lifecycle.stamp
    now: str = ""  # for snoozes only: nothing a run writes carries its time

    def handle(self, note_id: str) -> str | None:
        handle = self.book.entry(note_id, self.scope.owner(note_id)).get("handle")
        return str(handle) if handle else None


def make_sink(config: Config, dry_run: bool, log: Log) -> tuple[Sink, bool]:
    """The configured sink, wrapped for a dry run; without a token, GitHub is a dry run."""
    kind = config.issues.sink
    token = os.environ.get(config.issues.token_env) or None
    if kind == "github" and token is None:
        log(f"issues: ${config.issues.token_env} is not set: dry run, nothing is opened on GitHub")
        return DryRunSink(None, log), True
    sink = SINKS[kind](config, token)
    return (DryRunSink(sink, log), True) if dry_run else (sink, False)


def sync_issues(
    config: Config,
    notes: Mapping[str, Note],
    results: Sequence[Result],
    upstreams: Sequence[UpstreamStatus],
    *,
    dry_run: bool,
    log: Log,
    scope: Scope | None = None,
    failures: list[str] | None = None,
) -> list[IssueAction]:
    """File, update, close or reopen each checked note's issue through the configured sink.

    Called with the state lock held. Only the notes present in `results` are touched.
    A failed note yields `IssueAction(action="failed")` and is retried by the next run;
    run-level failures are appended to `failures`. A `WatchError` is raised only when
    nothing can be done (e.g. a wrong `[issues] repo`).
    """
    if config.issues.sink == "none" or not (results or any(u.error for u in upstreams)):
        return []
    sink, dry = make_sink(config, dry_run, log)
    return sync(
        config, notes, results, upstreams, sink=sink, dry_run=dry, log=log, scope=scope,
        failures=failures,
    )  # fmt: skip


def rebuild_dashboard(config: Config, *, log: Log) -> None:
    """Render the dashboard again from every bookkeeping shard (after another job's push)."""
    if config.issues.sink == "none" or not config.issues.dashboard:
        return
    sink, dry = make_sink(config, False, log)
    if not dry:
        refresh_dashboard(config, sink, log)


def sync(
    config: Config,
    notes: Mapping[str, Note],
    results: Sequence[Result],
    upstreams: Sequence[UpstreamStatus],
    *,
    sink: Sink,
    dry_run: bool,
    log: Log,
    scope: Scope | None = None,
    failures: list[str] | None = None,
    now: datetime | None = None,
) -> list[IssueAction]:
    """Open, comment on, close or reopen each checked note's issue; then the dashboard.

    `scope` says which bookkeeping shards this run writes (default: one shard for all).
    Run-level failures (the sink unreachable, a note's issue not updated after the
    retries) are appended to `failures`: the caller reports them once and exits 2.
    """
    scope = scope or Scope()
    run = Run(config, sink, dry_run, log, Book.load(config.state, log), scope)
    run.now = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    by_note = _group(results)
    policy = lifecycle.Policy(
        frozenset(config.issues.open_on), tuple(config.issues.labels), config.issues.reopen
    )
    try:
        sink.check()
    except SinkError as exc:  # unreachable: every note is retried by the next run
        log(f"issues: {exc}; no issue was touched, the next run retries")
        _fail(failures, f"issues: {exc}; no issue was touched, the next run retries")
        tried = [n for n, items in by_note.items() if lifecycle.affected(items, policy)]
        return [IssueAction(note=n, action="failed") for n in tried]
    _ensure_labels(run, policy, by_note)
    actions = _notes(run, notes, by_note, policy, upstreams)
    board = _dashboard(run) if config.issues.dashboard else None
    if not dry_run:
        run.book.update(scope, run.entries, board)
        run.book.save(scope)
    failed = [a.note for a in actions.values() if a.action == "failed"]
    if failed:
        run.failures.insert(0, f"{len(failed)} note(s) not updated ({', '.join(failed)})")
    if run.failures:  # one run-level failure, however many notes it hit
        _fail(failures, f"issues: {'; '.join(run.failures)}; the next run retries")
    return list(actions.values())


def _fail(failures: list[str] | None, message: str) -> None:
    if failures is not None:
        failures.append(message)


def _notes(
    run: Run,
    notes: Mapping[str, Note],
    by_note: Mapping[str, Sequence[Result]],
    policy: lifecycle.Policy,
    upstreams: Sequence[UpstreamStatus],
) -> dict[str, IssueAction]:
    """Each note's lifecycle step, and its bookkeeping entry (saved once, by the caller)."""
    heads = [(u.repo, u.head) for u in upstreams if u.head]
    actions: dict[str, IssueAction] = {}
    for note_id, items in by_note.items():
        note = notes.get(note_id) or Note(id=note_id, file=items[0].note_file)
        mine = [h for h in heads if any(r.repo == h[0] for r in items)]
        action = _one(run, note, items, policy, mine)
        if action is not None:
            actions[note_id] = action
        before = run.book.entry(note_id, run.scope.owner(note_id))
        entry = dashboard.entry(before, note.title, items, action, upstreams)
        if note.snooze_until > run.now[:10]:
            entry["snooze_until"] = note.snooze_until  # the dashboard says so, until then
        if note_id in run.closed:
            entry.pop("issue", None)
        handle = run.handles.get(note_id) or before.get("handle")
        if handle:
            entry["handle"] = str(handle)
        if note_id in run.rendered:
            entry["rendered"] = run.rendered[note_id]
        run.entries[note_id] = entry
    return actions


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
    if lifecycle.affected(items, policy) and run.now[:10] < note.snooze_until:
        run.log(f"issues: note {note.id} is snoozed until {note.snooze_until}; left alone")
        return None
    try:
        marker, hint = markers.note_marker(note.id), run.handle(note.id)
        thorough = lifecycle.affected(items, policy)  # only then may an issue be opened
        docs = run.sink.find(note.id, marker, hint, thorough=thorough)
        before = run.book.entry(note.id, run.scope.owner(note.id)).get("rendered")
        rendered = before if isinstance(before, dict) else None
        plan = lifecycle.decide(note, items, docs, policy, heads, rendered)
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
        run.handles[note.id] = doc.handle
        if plan.stamp is not None and doc.state == "open":  # its body: rendered from stamp
            record = plan.record if plan.content is None else None  # the body left alone
            if record is None:
                record = lifecycle.recorded(plan.stamp, doc.body)
            run.rendered[note.id] = dict(record)
    action = _DRY[plan.outcome] if run.dry_run else plan.outcome
    return IssueAction(
        note=note.id,
        action=action,
        url=doc.url if doc else None,
        number=doc.number if doc else None,
    )


def refresh_dashboard(config: Config, sink: Sink, log: Log) -> None:
    """Render the dashboard from the shards as they are on disk (no note is touched)."""
    if sink.dashboard_per_upstream:
        return  # each job wrote its own upstream's page: nothing is shared to redraw
    book = Book.load(config.state, log)
    run = Run(config, sink, False, log, book, Scope(shards={}))
    _render(run, book)


def _dashboard(run: Run) -> Board | None:
    """Rebuild the dashboard from every shard (this run's notes folded in); its handle.

    A run of part of the upstreams (a job of a matrix) that changed none of its shards
    leaves a shared dashboard issue as it is: its copies of the other jobs' shards may be
    older than what those jobs drew, and the last job to push redraws it from every shard.
    """
    book = run.book.copy()
    book.update(run.scope, run.entries, None)
    quiet = not run.scope.complete and all(
        book.shards.get(s) == run.book.shards.get(s) for s in run.scope.shards
    )
    return _render(run, book, quiet)


def _render(run: Run, book: Book, quiet: bool = False) -> Board | None:
    """Write every page of the dashboard; where the one dashboard issue is (GitHub)."""
    from watcher.issues import boxes

    board: Board | None = None
    pages = dashboard.pages(run.sink.dashboard_per_upstream, run.scope.shards, run.scope.repos)
    try:
        for page in pages:
            rows = book.rows(run.scope.owners, page.shard)
            text = dashboard.body(rows, book.failures(page.shard), _boxes(run, rows), page.title)
            current = run.sink.dashboard(page.handle, run.book.board())
            untouched = current is not None and boxes.read(current.body) == ([], [])
            if quiet and page.shard is None and untouched:
                continue  # no news from this job, and no tick to clear
            doc = _write_dashboard(run, page, current, text)
            if doc is not None and page.shard is None:
                board = {"handle": doc.handle, "url": doc.url, "author": doc.author}
        retire = getattr(run.sink, "retire_dashboards", None)
        if retire is not None and run.scope.complete:  # upstreams no longer checked
            retire([p.shard for p in pages])
    except SinkError as exc:
        run.log(f"issues: dashboard: {exc}; the next run retries")
        run.failures.append(f"dashboard: {exc}")
        return None
    return None if run.dry_run else board


def _boxes(run: Run, rows: Mapping[str, Entry]) -> str:
    """Accept and snooze boxes for the notes whose issue is open, from every shard's rows."""
    from watcher.issues import boxes

    today = run.now[:10]
    snoozed = {
        n: str(r["snooze_until"]) for n, r in rows.items() if r.get("snooze_until", "") > today
    }
    stale = [n for n, row in rows.items() if row.get("issue") or n in snoozed]
    issues = run.config.issues
    mode = "branch" if issues.accept != "commit" and issues.sink != "github" else issues.accept
    return boxes.section(stale, snoozed, mode)


def _write_dashboard(
    run: Run, page: dashboard.Page, current: IssueDoc | None, body: str
) -> IssueDoc | None:
    labels = tuple(run.config.issues.labels[:1])
    what = f"dashboard of {page.repo or page.shard}" if page.shard else "dashboard"
    if current is None:
        run.log(f"issues: {'would open' if run.dry_run else 'opening'} the {what}")
        return run.sink.create(page.handle, page.title, body, labels)
    if current.body.rstrip() == body.rstrip() and current.state == "open":
        return current
    verb = "would update" if run.dry_run else "updating"
    run.log(f"issues: {verb} the {what} {current.url or current.handle}")
    return run.sink.update(current, title=page.title, body=body, labels=labels, state="open")
