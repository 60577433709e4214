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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from watcher import fingerprint
from watcher.issues import markdown, markers, render
from watcher.issues.sink import IssueDoc, State
from watcher.models import Note, Result, worst
from watcher.redact import redact

# The renderer's own source: a new watch renders open issues afresh.
RENDERER = fingerprint.code(m.__file__ for m in (render, markdown, markers))

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
    stamp: str | None = None  # what the open issue's body is rendered from (see `stamp`)
    # What `recorded` says of the open issue's body as it is, told while deciding: the
    # record to keep when the plan leaves the body alone (`content` None).
    record: Mapping[str, str] | None = None


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
    rendered: Mapping[str, str] | None = None,
) -> Plan | None:
    """The plan for one note; None when it has no issue and needs none.

    `rendered` is what an earlier run recorded about the open issue's body (`recorded`):
    when this run would render it from the same inputs, and the body is still the one
    recorded, it is not rendered again. It only saves work: without it, or when anything
    differs, the body is rendered and compared as always.
    """
    open_doc = _first_open(docs)
    if not affected(results, policy):
        return _close(note, results, open_doc, policy, heads) if open_doc else None
    keys = markers.news_keys(results)
    mark = stamp(note, results, keys)
    if open_doc:
        return _refresh(note, results, open_doc, policy, keys, mark, rendered or {})
    closed = _last_closed(docs)
    if closed is None:
        return Plan("opened", None, _content(note, results, policy, keys, "open"), stamp=mark)
    news = keys - markers.parse_seen(closed.body)
    if not news:
        return Plan("unchanged", closed, None)
    if not policy.reopen:
        return Plan("opened", None, _content(note, results, policy, keys, "open"), stamp=mark)
    text = render.news_comment(results, news, reopened=True)
    comment = (markers.digest("reopen", *sorted(keys)), text)
    content = _content(note, results, policy, keys, "open")
    return Plan("reopened", closed, content, comment, stamp=mark)


def _refresh(
    note: Note,
    results: Sequence[Result],
    doc: IssueDoc,
    policy: Policy,
    keys: frozenset[str],
    mark: str | None,
    rendered: Mapping[str, str],
) -> Plan:
    news = keys - markers.parse_seen(doc.body)
    if news:
        content = _content(note, results, policy, keys, "open")
        text = render.news_comment(results, news, reopened=False)
        comment = (markers.digest("news", *sorted(keys)), text)
        return Plan("commented", doc, content, comment, stamp=mark)
    record = recorded(mark, doc.body) if mark is not None else None
    if record is not None and rendered == record:
        head = (render.title(note, results), set(render.labels(policy.labels, results)))
        if (doc.title, set(doc.labels)) == head:  # the body is the one this run would render
            return Plan("unchanged", doc, None, stamp=mark, record=record)
    content = _content(note, results, policy, keys, "open")
    rewrite = None if _same(doc, content) else content
    return Plan("unchanged", doc, rewrite, stamp=mark, record=record)


def stamp(note: Note, results: Sequence[Result], keys: frozenset[str]) -> str | None:
    """A digest of everything an open issue's body is rendered from: the note, its results,
    the news keys and the renderer's own source (so a new watch renders afresh); None when
    the source cannot be read (nothing is then remembered).

    Taken of the redacted text, as state stores results: the run after the one that
    judged reads them back redacted (`plugin://user@host` without its user) and must
    find the same stamp."""
    if RENDERER is None:
        return None
    told = b"".join(b"\0" + redact(part.model_dump_json()).encode() for part in (note, *results))
    return fingerprint.short(RENDERER.encode() + told + "\0".join(sorted(keys)).encode(), 24)


def recorded(mark: str, body: str) -> dict[str, str]:
    """What the bookkeeping keeps about an open issue's body: its stamp and its digest,
    of the body as a sink stores it (redacted), not as rendered."""
    return {"stamp": mark, "body": fingerprint.short(redact(body).rstrip(), 24)}


def _close(
    note: Note,
    results: Sequence[Result],
    doc: IssueDoc,
    policy: Policy,
    heads: Sequence[tuple[str, str]],
) -> Plan:
    # A closed issue drops its verdict label and its checklist: neither holds any more.
    content = Content(
        title=render.title(note, results),
        body=render.body(note, results, frozenset(), closed=True),
        labels=render.closed_labels(doc.labels),
        state="closed",
    )
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
