"""The `watch dashboard` issue: one row per note, edited in place, never closed.

Its rows are rebuilt on every run from the bookkeeping shards of every upstream
(`watcher.state.bookkeeping`), never merged as text, and they hold no per-run time: a run
with no news renders the same body and so edits nothing. "Last seen fresh at" names the
upstream commit at which the note was last found fresh and that commit's date (when it
was committed upstream, not when watch looked: a per-run time would edit the dashboard
on every run).

A sink keeps either one dashboard for every upstream (GitHub: one issue) or one *page*
per upstream (files: `_dashboard/OWNER__NAME.md`, the rows of the notes that upstream's
bookkeeping shard owns), so that jobs of a matrix, one per upstream, never write the same
file. A sequential run writes every page, each the same as its job would.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from watcher.issues import markdown as md
from watcher.issues import markers
from watcher.models import IssueAction, Result, UpstreamStatus, worst
from watcher.state.bookkeeping import Entry, OpenIssue, Seen

TITLE = "watch dashboard"
HANDLE = "_dashboard"


@dataclass(frozen=True)
class Page:
    """One dashboard document: the whole dashboard (`shard` None), or one upstream's."""

    handle: str
    shard: str | None = None
    repo: str | None = None  # the upstream a page is for, as configured

    @property
    def title(self) -> str:
        return f"{TITLE}: {self.repo}" if self.repo else TITLE


def pages(per_upstream: bool, shards: Iterable[str], repos: Mapping[str, str]) -> list[Page]:
    """The dashboard documents a run writes: one per shard it writes, or the one."""
    if not per_upstream:
        return [Page(HANDLE)]
    return [Page(f"{HANDLE}/{s}", s, repos.get(s)) for s in sorted(shards)]


def entry(
    before: Entry,
    title: str,
    results: Sequence[Result],
    action: IssueAction | None,
    upstreams: Sequence[UpstreamStatus],
) -> Entry:
    """A note's row after this run: status, where it was last fresh, its open issue."""
    status = worst([r.verdict for r in results])
    row: Entry = {"status": status.value, "title": title}
    fresh = before.get("fresh")
    if not status.stale:
        repos = {r.repo for r in results}
        fresh = {
            u.repo: Seen(commit=u.head, date=u.head_date)
            for u in upstreams
            if u.head and u.repo in repos
        }
    if fresh:
        row["fresh"] = fresh
    issue = _open_issue(action, before.get("issue"))
    if issue:
        row["issue"] = issue
    return row


def _open_issue(action: IssueAction | None, before: OpenIssue | None) -> OpenIssue | None:
    """The note's open issue after this run; no action means it has none (or it is closed)."""
    if action is None or action.action in ("closed", "would-close"):
        return None
    if action.action == "failed":
        return before if isinstance(before, dict) else None  # unknown: keep the last known
    return OpenIssue(url=action.url, number=action.number)


def body(
    rows: Mapping[str, Entry], failures: Mapping[str, str], actions: str = "", page: str = TITLE
) -> str:
    """The dashboard (or one `page` of it): banners for upstreams that failed, one row per
    note, then the boxes a maintainer can tick (`actions`)."""
    lines = [markers.DASHBOARD, f"## {md.text(page, 200)}", ""]
    for repo, message in sorted(failures.items()):
        lines.append(
            f"> [!WARNING]\n> The last run could not check {md.code(repo)}: "
            f"{md.text(message.removeprefix(f'{repo}: '), 300)}. "
            "Notes citing it keep their last status.\n"
        )
    lines += [
        "| note | status | last seen fresh at (upstream commit, committed on) | issue |",
        "|---|---|---|---|",
    ]
    for note_id in sorted(rows, key=lambda n: (_rank(rows[n]), n)):
        lines.append(_row(note_id, rows[note_id]))
    if actions:
        lines += ["", actions.rstrip("\n")]
    lines += ["", "<sub>Kept up to date by `watch`; edits to this body are overwritten.</sub>"]
    return "\n".join(lines) + "\n"


def _rank(row: Entry) -> int:
    order = ["error", "broken", "missing", "changed", "moved", "fresh"]
    status = row.get("status", "")
    return order.index(status) if status in order else len(order)


def _row(note_id: str, row: Entry) -> str:
    """`fresh at `openai/codex` `abc123456789`, 2026-08-22`: the commit says what it is."""
    fresh_at = row.get("fresh") or {}
    fresh = ", ".join(_seen(repo, seen) for repo, seen in sorted(fresh_at.items()))
    link = _issue_link(row.get("issue"))
    status = md.text(str(row.get("status", "")), 20, cell=True)
    fresh = fresh or "not seen fresh yet"
    return f"| {md.code(note_id, 120, cell=True)} | **{status}** | {fresh} | {link} |"


def _seen(repo: str, seen: Seen) -> str:
    at = f"{md.code(repo, cell=True)} {md.code(str(seen.get('commit') or '')[:12])}"
    date = str(seen.get("date") or "")[:10]
    return f"{at}, {md.text(date, 12, cell=True)}" if date else at


def _issue_link(issue: OpenIssue | None) -> str:
    if not issue:
        return ""
    url = str(issue.get("url") or "")
    if not url.startswith(("http://", "https://")):
        return md.code(url, cell=True) if url else ""  # a files-sink path
    return f"[#{issue['number']}]({url})" if issue.get("number") else f"[issue]({url})"
