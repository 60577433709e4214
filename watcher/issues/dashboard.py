"""The `watch dashboard` issue: one row per note, edited in place, never closed.

Its rows live in the body itself (a hidden data line), so a filtered run keeps the
rows of the notes it did not check, and a lost `state/` loses nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from watcher.issues import markdown as md
from watcher.issues import markers
from watcher.models import IssueAction, Note, Result, UpstreamStatus, worst

TITLE = "watch dashboard"
HANDLE = "_dashboard"


def rows(
    previous: dict[str, Any],
    notes: Mapping[str, Note],
    by_note: Mapping[str, Sequence[Result]],
    actions: Mapping[str, IssueAction],
    upstreams: Sequence[UpstreamStatus],
    now: str,
) -> dict[str, Any]:
    """The previous rows updated with this run's notes."""
    heads = {u.repo: u.head for u in upstreams if u.head}
    data = {k: v for k, v in previous.items() if isinstance(v, dict)}
    for note_id, results in by_note.items():
        row = dict(data.get(note_id, {}))
        status = worst([r.verdict for r in results])
        row["status"] = status.value
        row["title"] = notes[note_id].title if note_id in notes else ""
        if not status.stale:
            repos = sorted({r.repo for r in results if r.repo in heads})
            row["fresh_at"] = now
            row["fresh_commits"] = {repo: heads[repo] for repo in repos}
        row["issue"] = _open_issue(actions.get(note_id), row.get("issue"))
        data[note_id] = row
    return data


def _open_issue(action: IssueAction | None, before: Any) -> dict[str, Any] | None:
    """The note's open issue after this run; no action means it has none (or it is closed)."""
    if action is None or action.action in ("closed", "would-close"):
        return None
    if action.action == "failed":
        return before if isinstance(before, dict) else None  # unknown: keep the last known
    return {"url": action.url, "number": action.number}


def body(data: dict[str, Any], actions: str = "") -> str:
    """The dashboard: one row per note, then the boxes a maintainer can tick (`actions`)."""
    lines = [
        markers.DASHBOARD,
        markers.data_line(data),
        "## watch dashboard",
        "",
        "| note | status | last seen fresh | at upstream commit | issue |",
        "|---|---|---|---|---|",
    ]
    for note_id in sorted(data, key=lambda n: (_rank(data[n]), n)):
        lines.append(_row(note_id, data[note_id]))
    if actions:
        lines += ["", actions.rstrip("\n")]
    lines += ["", "<sub>Kept up to date by `watch`; edits to this body are overwritten.</sub>"]
    return "\n".join(lines) + "\n"


def _rank(row: dict[str, Any]) -> int:
    order = ["error", "broken", "missing", "changed", "moved", "fresh"]
    status = row.get("status")
    return order.index(status) if status in order else len(order)


def _row(note_id: str, row: dict[str, Any]) -> str:
    commits = row.get("fresh_commits") or {}
    at = ", ".join(
        f"{md.code(repo, cell=True)} {md.code(str(sha)[:12])}"
        for repo, sha in sorted(commits.items())
    )
    link = _issue_link(row.get("issue") or {})
    fresh = md.text(str(row.get("fresh_at") or "not seen fresh yet"), 40, cell=True)
    status = md.text(str(row.get("status", "")), 20, cell=True)
    return f"| {md.code(note_id, 120, cell=True)} | **{status}** | {fresh} | {at} | {link} |"


def _issue_link(issue: dict[str, Any]) -> str:
    url = str(issue.get("url") or "")
    if not url.startswith(("http://", "https://")):
        return md.code(url, cell=True) if url else ""  # a files-sink path
    return f"[#{issue['number']}]({url})" if issue.get("number") else f"[issue]({url})"
