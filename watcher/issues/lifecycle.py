"""Decide what to do with one note's issue: open, comment, close, reopen, or nothing.

Pure: the decision depends only on this run's results and on the issues found by their
marker, never on our own bookkeeping, so a lost `state/` or a crash halfway through a
previous run leads to the same decision, and finishing it twice is harmless.

Reopen-or-new policy: a note that goes stale again while its last issue is closed gets
that issue reopened (`[issues] reopen = true`, the default) or a new issue
(`reopen = false`), but only when something is *news* against the closed issue's
recorded keys. An issue a maintainer closed by hand while the note was still stale
therefore stays closed until upstream changes again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from watcher.issues import markers, render
from watcher.issues.sinks import IssueDoc, State
from watcher.models import Note, Result, worst

Outcome = Literal["opened", "commented", "closed", "reopened", "unchanged"]


@dataclass(frozen=True)
class Content:
    title: str
    body: str
    labels: tuple[str, ...]
    state: State


@dataclass(frozen=True)
class Plan:
    """The writes for one note, in order: comment first, then create or update.

    Comment-first makes a crash between the two safe: the next run finds the comment
    already there (same key) and only redoes the write after it.
    """

    outcome: Outcome
    doc: IssueDoc | None  # the issue acted on; None when a new one is created
    content: Content | None  # the issue's new title/body/labels/state; None: leave it
    comment: tuple[str, str] | None = None  # (key, text)


@dataclass(frozen=True)
class Policy:
    open_on: frozenset[str]
    labels: tuple[str, ...]
    reopen: bool


def affected(results: Sequence[Result], policy: Policy) -> bool:
    return worst([r.verdict for r in results]).value in policy.open_on


def decide(
    note: Note,
    results: Sequence[Result],
    docs: Sequence[IssueDoc],
    policy: Policy,
    heads: Sequence[tuple[str, str]],
) -> Plan | None:
    """The plan for one note; None when it has no issue and needs none."""
    open_doc = _first_open(docs)
    if not affected(results, policy):
        return _close(note, results, open_doc, policy, heads) if open_doc else None
    if open_doc:
        return _refresh(note, results, open_doc, policy)
    closed = _last_closed(docs)
    keys = markers.news_keys(results)
    if closed is None:
        return Plan("opened", None, _content(note, results, policy, keys, "open"))
    news = keys - markers.parse_seen(closed.body)
    if not news:
        return Plan("unchanged", closed, None)
    if not policy.reopen:
        return Plan("opened", None, _content(note, results, policy, keys, "open"))
    text = render.news_comment(results, news, reopened=True)
    comment = (markers.digest("reopen", *sorted(keys)), text)
    return Plan("reopened", closed, _content(note, results, policy, keys, "open"), comment)


def _refresh(note: Note, results: Sequence[Result], doc: IssueDoc, policy: Policy) -> Plan:
    keys = markers.news_keys(results)
    content = _content(note, results, policy, keys, "open")
    news = keys - markers.parse_seen(doc.body)
    if news:
        text = render.news_comment(results, news, reopened=False)
        return Plan("commented", doc, content, (markers.digest("news", *sorted(keys)), text))
    return Plan("unchanged", doc, None if _same(doc, content) else content)


def _close(
    note: Note,
    results: Sequence[Result],
    doc: IssueDoc,
    policy: Policy,
    heads: Sequence[tuple[str, str]],
) -> Plan:
    # Labels stay as they were: a closed issue keeps the verdict it was about.
    content = replace(_content(note, results, policy, frozenset(), "closed"), labels=doc.labels)
    text = render.close_comment(results, heads, reopen=policy.reopen)
    key = markers.digest("close", *sorted(markers.parse_seen(doc.body)))
    return Plan("closed", doc, content, (key, text))


def _content(
    note: Note, results: Sequence[Result], policy: Policy, keys: frozenset[str], state: State
) -> Content:
    return Content(
        title=render.title(note, results),
        body=render.body(note, results, keys),
        labels=render.labels(policy.labels, results),
        state=state,
    )


def _same(doc: IssueDoc, content: Content) -> bool:
    return (doc.title, doc.body.rstrip(), set(doc.labels)) == (
        content.title,
        content.body.rstrip(),
        set(content.labels),
    )


def _order(doc: IssueDoc) -> int:
    return doc.number if doc.number is not None else 0


def _first_open(docs: Sequence[IssueDoc]) -> IssueDoc | None:
    """The oldest open issue: if a duplicate ever exists, every run picks the same one."""
    return min((d for d in docs if d.state == "open"), key=_order, default=None)


def _last_closed(docs: Sequence[IssueDoc]) -> IssueDoc | None:
    return max((d for d in docs if d.state == "closed"), key=_order, default=None)
