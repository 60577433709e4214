"""Issue citations (SPEC 6.4): a note that cites an upstream issue or pull request depends
on its state. The note was true as of its `date` (or `lastVerified`); an issue closed, or a
pull request merged or closed, after that date is a `changed` item of the note, with the
release that ships a merged pull request. Without a date, any closed state counts.

No state file is needed: GitHub keeps when each issue was closed and each PR merged.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING

from watcher.config import Config
from watcher.mirror.mirrors import Mirror
from watcher.models import ErrorCode, IssueCitation, Note, Result, Verdict

if TYPE_CHECKING:
    from github import Github

log = logging.getLogger("watch")


@dataclass(frozen=True)
class Thread:
    """What GitHub says of one issue or pull request now."""

    state: str  # open | closed
    reason: str | None  # completed | not_planned | reopened | None
    closed_at: datetime | None
    merged_at: datetime | None = None
    merge_commit: str | None = None


def check(config: Config, notes: Iterable[Note], *, offline: bool) -> list[Result]:
    """One result per issue citation; nothing offline (GitHub is the only source)."""
    cited = [(note, c) for note in notes for c in note.issue_citations]
    if not cited:
        return []
    if offline:
        log.info("issue citations: not checked with --offline (%d skipped)", len(cited))
        return []
    client = _client(config)
    return [_judge(config, client, note, citation) for note, citation in cited]


def _client(config: Config) -> Github:
    from github import Auth, Github

    token = os.environ.get(config.issues.token_env)
    auth = Auth.Token(token) if token else None
    return Github(
        base_url=config.issues.api_url,
        auth=auth,
        timeout=config.issues.timeout_seconds,
        retry=2,
        lazy=True,
    )


def _judge(config: Config, client: Github, note: Note, citation: IssueCitation) -> Result:
    from github import GithubException

    try:
        thread = _fetch(client, citation)
    except (GithubException, OSError) as exc:
        status = getattr(exc, "status", None)
        why = f"GitHub answered {status}" if status else type(exc).__name__
        message = f"cannot read {citation.url}: {why}; {_fix(config, citation, status)}"
        return _result(note, citation, Verdict.ERROR, message, None,
                       error=ErrorCode.UPSTREAM_UNREACHABLE)  # fmt: skip
    since = _since(citation, note)
    verdict, message = _verdict(citation, thread, since)
    release = _release(config, citation, thread) if verdict is Verdict.CHANGED else None
    return _result(note, citation, verdict, message, release)


def _fix(config: Config, citation: IssueCitation, status: int | None) -> str:
    """What to do when GitHub did not tell an issue's state, by its answer."""
    token = config.issues.token_env
    if status == 404:
        return (
            f"check that {citation.repo} has {citation.kind} {citation.number} (the url in "
            f"the note), and for a private repository that ${token} holds a token that can read it"
        )
    if status in (401, 403):
        return f"check the token in ${token} (missing, expired or rate-limited); then run again"
    return "GitHub could not be reached or failed; run again later, or use --offline"


def _fetch(client: Github, citation: IssueCitation) -> Thread:
    repo = client.get_repo(citation.repo)
    if citation.kind == "pull":
        pull = repo.get_pull(citation.number)
        return Thread(pull.state, None, pull.closed_at, pull.merged_at, pull.merge_commit_sha)
    issue = repo.get_issue(citation.number)
    return Thread(issue.state, issue.state_reason, issue.closed_at)


def _since(citation: IssueCitation, note: Note) -> date | None:
    for text in (citation.date, note.last_verified):
        try:
            return date.fromisoformat(text[:10])
        except ValueError:
            continue
    return None


def _verdict(citation: IssueCitation, thread: Thread, since: date | None) -> tuple[Verdict, str]:
    what = f"{citation.repo}#{citation.number}"
    when = thread.merged_at or thread.closed_at
    if thread.state == "open" or when is None:
        return Verdict.FRESH, f"{what} is still open"
    how = "merged" if thread.merged_at else f"closed ({thread.reason or 'no reason given'})"
    if since is not None and when.date() <= since:
        return Verdict.FRESH, f"{what} was {how} on {when.date()}, before the note was verified"
    after = f", after the note was verified on {since}" if since else ""
    return Verdict.CHANGED, f"{what} was {how} on {when.date()}{after}: re-verify the note"


def _release(config: Config, citation: IssueCitation, thread: Thread) -> str | None:
    """The first release containing a merged PR's merge commit, from the upstream's mirror."""
    upstream = config.upstream_for(citation.repo)
    if upstream is None or thread.merge_commit is None:
        return None
    mirror = Mirror(upstream, config.cache, config.limits)
    try:
        if not mirror.exists or mirror.resolve(thread.merge_commit) is None:
            return None
        return mirror.first_release(thread.merge_commit, upstream.release_tags)
    finally:
        mirror.close()


def _result(
    note: Note, citation: IssueCitation, verdict: Verdict, message: str, release: str | None,
    *, error: ErrorCode | None = None,
) -> Result:  # fmt: skip
    return Result(
        id=f"{note.id}:{citation.repo}#{citation.number}", kind="issue", note=note.id,
        note_file=note.file, repo=citation.repo, verdict=verdict, released_in=release,
        message=message, error=error,
    )  # fmt: skip
