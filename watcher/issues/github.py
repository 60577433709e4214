"""The `github` sink: issues in `[issues] repo` through PyGithub (imported here only).

Retries are ours, not PyGithub's (`retry=None`), so that they are explicit and bounded:
rate limits (403/429 with `x-ratelimit-remaining: 0`, `x-ratelimit-reset`,
`retry-after`, or a secondary-limit message) are waited out while the total wait stays
under `max_wait_seconds`; 5xx and timeouts are retried `retries` times with backoff.
A POST whose outcome is unknown (5xx, timeout) is never blindly repeated: the issue or
comment is looked up first. The token never leaves this module: every error message
is rebuilt from status and GitHub's message, then scrubbed.

The dashboard is the maintainers' (`dashboard`, `untrusted`): it is the issue watch
opened (recorded in the bookkeeping with its author) or, failing that, a labelled one
opened by the token's own account (`GET /user`); never one found by search, which anyone
who can open an issue could plant. Its ticks count only when the last edit of its body
was made by someone with write access. GitHub's REST API does not say who last edited an
issue body (the timeline has no such event), its GraphQL API does (`Issue.editor`); the
permission is REST's `GET /repos/{owner}/{repo}/collaborators/{username}/permission`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

from watcher.errors import WatchError
from watcher.issues import markers
from watcher.issues.sink import IssueDoc, SinkError, State
from watcher.redact import redact

if TYPE_CHECKING:
    from github.Issue import Issue
    from github.Repository import Repository

    from watcher.config import IssuesConfig

T = TypeVar("T")
WRITE = frozenset({"admin", "maintain", "write"})  # permissions (and roles) that may tick
EDITOR_QUERY = (
    "query($owner: String!, $name: String!, $number: Int!) { repository(owner: $owner, "
    "name: $name) { issue(number: $number) { author { login } editor { login } "
    "lastEditedAt } } }"
)
LABEL_COLORS = {
    "verdict:error": "b60205",
    "verdict:broken": "d93f0b",
    "verdict:missing": "fbca04",
    "verdict:changed": "c5def5",
}


@dataclass
class Retrying:
    """Bounded retry policy; `sleep` and `clock` are injectable so tests need not wait."""

    retries: int = 4
    max_wait: float = 300.0
    backoff: float = 1.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.time
    waited: float = 0.0  # total rate-limit wait of this run, against max_wait


@dataclass
class GithubSink:
    repo_name: str
    api_url: str
    token: str = field(repr=False)  # never shown: not in reprs, messages or logs
    policy: Retrying = field(default_factory=Retrying)
    timeout: int = 15  # seconds; PyGithub accepts whole seconds only
    throttle: bool = True  # GitHub asks for ~1 s between writes; tests turn it off
    name: str = "github"
    label: str | None = None  # the listing fallback filters on it; all our issues carry it
    dashboard_per_upstream: bool = False  # one issue: GitHub edits have no merge conflicts
    _repo: Repository | None = None
    _gh: Any = None
    _by_marker: dict[str, list[IssueDoc]] | None = None
    _me: tuple[str | None] | None = None  # the token's own login, once asked

    @classmethod
    def from_config(cls, cfg: IssuesConfig, token: str) -> GithubSink:
        if cfg.repo is None:
            raise WatchError('config: [issues] repo is required with sink = "github"')
        policy = Retrying(retries=cfg.retries, max_wait=cfg.max_wait_seconds)
        return cls(
            cfg.repo,
            cfg.api_url,
            token,
            policy,
            timeout=cfg.timeout_seconds,
            label=next(iter(cfg.labels), None),
        )

    # --- the Sink operations --------------------------------------------------------

    def check(self) -> None:
        """Reach the repository once; a wrong repo or token stops the run with a fix."""
        from github import GithubException

        try:
            self._call("read repository", lambda: self.repo.id)
        except SinkError as exc:
            cause = exc.__cause__
            if isinstance(cause, GithubException) and cause.status in (401, 403, 404):
                raise WatchError(
                    f"[issues] repo {self.repo_name} at {self.api_url}: {self._scrub(str(exc))}; "
                    "check the repository name and that the token may write issues there"
                ) from None
            raise

    def find(
        self, note_id: str, marker: str, hint: str | None, *, thorough: bool = True
    ) -> list[IssueDoc]:
        """Issues whose body starts with `marker`.

        One listing of the labelled issues per run answers for every note (consistent,
        unlike search, which lags behind new issues). The hinted issue is read too, in
        case someone removed its label; `thorough` (the caller may open an issue) adds a
        search by marker, which also finds unlabelled issues.
        """
        index = self._index()
        found = list(index.get(marker, [])) if index is not None else []
        if hint is not None and not any(d.handle == hint for d in found):
            hinted = self._hinted(int(hint), marker)
            found += [hinted] if hinted is not None else []
        if found or (index is not None and not thorough):
            return found
        searched = self._search(marker)
        if searched is None and index is None:
            raise SinkError(f"GitHub: could not look up the issues of {self.repo_name}")
        return searched or []

    def dashboard(self, handle: str, recorded: Mapping[str, Any] | None) -> IssueDoc | None:
        """The issue watch opened (its number recorded, by the recorded author or this
        token's account), else the oldest labelled one this token's account opened."""
        number, author = (recorded or {}).get("handle"), (recorded or {}).get("author")
        if number and str(number).isdigit():
            doc = self._hinted(int(number), markers.DASHBOARD)
            who = doc.author if doc is not None else None
            if who is not None and (who == author or self._vouched(who, author)):
                return doc
        me = self.own_login()
        if me is None or not self.label:  # unlabelled issues are never adopted
            return None
        index = self._index()
        if index is None:
            raise SinkError(f"GitHub: could not look up the dashboard of {self.repo_name}")
        docs = [d for d in index.get(markers.DASHBOARD, []) if d.author == me]
        return min(docs, key=lambda d: d.number or 0) if docs else None

    def _vouched(self, who: str, recorded: str | None) -> bool:
        """Whether an issue `who` opened, recorded as the dashboard by `recorded` (None: an
        earlier version, which kept no author), is ours: `who` is this token's account,
        or, for a token that cannot say whose it is, a GitHub App (`NAME[bot]`, a login no
        person can take, acting only where an admin installed it) as Actions tokens are."""
        me = self.own_login()
        return who == me or (me is None and recorded is None and who.endswith("[bot]"))

    def own_login(self) -> str | None:
        """The token's own account; None when the token cannot say (GitHub App and
        Actions tokens answer `GET /user` with 403)."""
        from github import GithubException

        if self._me is None:
            try:
                login = self._call("read own account", lambda: self._client().get_user().login)
                self._me = (str(login),)
            except SinkError as exc:
                cause = exc.__cause__
                if not (isinstance(cause, GithubException) and cause.status in (401, 403, 404)):
                    raise
                self._me = (None,)
        return self._me[0]

    def untrusted(self, doc: IssueDoc) -> str | None:
        editor = self._last_editor(doc)
        if editor is not None and editor in {doc.author, self.own_login()}:
            return None  # watch's own account: the body is as watch wrote it
        if editor is None:
            return "GitHub did not say who last edited its body"
        permission = self._permission(editor)
        if permission & WRITE:
            return None
        has = "/".join(sorted(permission)) or "no"
        return (
            f"its body was last edited by @{editor}, who has {has} access to {self.repo_name}; "
            "only people with write access may tick its boxes"
        )

    def _last_editor(self, doc: IssueDoc) -> str | None:
        """Who last edited the issue's body (its author when nobody did)."""
        owner, name = self.repo_name.split("/")
        variables = {"owner": owner, "name": name, "number": int(doc.handle)}
        _, data = self._call(
            "read last editor",
            lambda: self._client().requester.graphql_query(EDITOR_QUERY, variables),
        )
        issue = ((data.get("data") or {}).get("repository") or {}).get("issue") or {}
        who = issue.get("editor") or issue.get("author") or {}
        login = who.get("login")
        return str(login) if login else None

    def _permission(self, login: str) -> set[str]:
        """`login`'s permission and role on the repository; empty for no collaborator."""
        from github import UnknownObjectException

        url = f"/repos/{self.repo_name}/collaborators/{quote(login)}/permission"
        try:
            _, data = self._call(
                "read permission",
                lambda: self._client().requester.requestJsonAndCheck("GET", url),
            )
        except SinkError as exc:
            if isinstance(exc.__cause__, UnknownObjectException):
                return set()
            raise
        return {str(data.get(k)) for k in ("permission", "role_name") if data.get(k)}

    def ensure_labels(self, names: Sequence[str]) -> None:
        from github import GithubException

        existing: set[str] = self._call(
            "list labels", lambda: {lb.name.lower() for lb in self.repo.get_labels()}
        )
        for name in names:
            if name.lower() in existing:
                continue
            try:
                self._create_label(name)
            except SinkError as exc:  # 422 already_exists: created meanwhile by someone else
                if not (isinstance(exc.__cause__, GithubException) and exc.__cause__.status == 422):
                    raise

    def _create_label(self, name: str) -> None:
        color = LABEL_COLORS.get(name, "ededed")
        self._call("create label", lambda: self.repo.create_label(name, color))

    def create(self, note_id: str, title: str, body: str, labels: Sequence[str]) -> IssueDoc:
        title, body = redact(title), redact(body)  # upstream text and messages: no secrets
        marker = body.split("\n", 1)[0]
        issue: IssueDoc = self._call(
            "open issue",
            lambda: _doc(self.repo.create_issue(title=title, body=body, labels=list(labels))),
            recheck=lambda: self._created(marker),
        )
        return issue

    def comment(self, doc: IssueDoc, key: str, text: str) -> bool:
        issue = self._issue(doc)
        if self._last_key(issue) == key:
            return False
        body = markers.comment_marker(key) + "\n" + redact(text)
        self._call(
            "comment",
            lambda: issue.create_comment(body),
            recheck=lambda: True if self._last_key(issue) == key else None,
        )
        return True

    def update(
        self, doc: IssueDoc, *, title: str, body: str, labels: Sequence[str], state: State
    ) -> IssueDoc:
        issue = self._issue(doc)
        reason = "completed" if state == "closed" else "reopened"
        args: dict[str, Any] = {
            "title": redact(title),
            "body": redact(body),
            "labels": list(labels),
            "state": state,
        }
        if state != doc.state:
            args["state_reason"] = reason
        self._call("edit issue", lambda: issue.edit(**args))  # PATCH: safe to repeat
        return replace(doc, title=title, body=body, labels=tuple(labels), state=state)

    def open_pull(self, head: str, base: str, title: str, body: str) -> str:
        """The URL of the open pull request from branch `head` into `base`; opened when
        there is none (a branch pushed again keeps its pull request)."""
        owner = self.repo_name.split("/")[0]

        def existing() -> str | None:
            pulls = self._call(
                "list pull requests",
                lambda: list(self.repo.get_pulls(state="open", head=f"{owner}:{head}", base=base)),
            )
            return str(pulls[0].html_url) if pulls else None

        found = existing()
        if found is not None:
            return found
        title, body = redact(title), redact(body)
        pull = self._call(
            "open pull request",
            lambda: self.repo.create_pull(title=title, body=body, head=head, base=base).html_url,
            recheck=existing,
        )
        return str(pull)

    # --- lookups --------------------------------------------------------------------

    def _hinted(self, number: int, marker: str) -> IssueDoc | None:
        from github import UnknownObjectException

        try:
            doc = self._call("read issue", lambda: _doc(self.repo.get_issue(number)))
        except SinkError as exc:
            if isinstance(exc.__cause__, UnknownObjectException):
                return None  # deleted or transferred: found again by marker, or reopened
            raise
        return doc if markers.has_marker(doc.body, marker) else None

    def _search(self, marker: str) -> list[IssueDoc] | None:
        """Search by marker; None when search fails."""
        phrase = marker.removeprefix("<!-- ").removesuffix(" -->")
        query = f'"{phrase}" in:body repo:{self.repo_name} is:issue'
        try:
            hits = self._call(
                "search", lambda: [_doc(i) for i in self._client().search_issues(query)]
            )
        except SinkError:
            return None
        return [d for d in hits if markers.has_marker(d.body, marker)]

    def _index(self) -> dict[str, list[IssueDoc]] | None:
        """Labelled issues by their first line, listed once per run; None if listing fails."""
        if self._by_marker is None:
            try:
                docs = self._call("list issues", self._labelled)
            except SinkError:
                return None
            self._by_marker = {}
            for doc in docs:
                self._by_marker.setdefault(doc.body.split("\n", 1)[0].strip(), []).append(doc)
        return self._by_marker

    def _listed(self, marker: str) -> list[IssueDoc]:
        """Every issue carrying our first label, open or closed: consistent, unlike search."""
        docs = self._call("list issues", self._labelled)
        return [d for d in docs if markers.has_marker(d.body, marker)]

    def _labelled(self) -> list[IssueDoc]:
        kwargs: dict[str, Any] = {"state": "all", "sort": "created", "direction": "desc"}
        if self.label:
            kwargs["labels"] = [self.label]
        # Pull requests are issues too; reading `pull_request` would cost a request each.
        issues = self.repo.get_issues(**kwargs)
        return [_doc(i) for i in issues if "/pull/" not in (i.html_url or "")]

    def _created(self, marker: str) -> IssueDoc | None:
        """After an uncertain create: the open issue with this marker, if we made it."""
        me = self.own_login()
        # A token that cannot name its account (an Actions token) takes any: a duplicate
        # issue would be worse, and only people with triage access can label one.
        docs = [d for d in self._listed(marker) if d.state == "open" and me in (None, d.author)]
        return min(docs, key=lambda d: d.number or 0) if docs else None

    def _last_key(self, issue: Issue) -> str | None:
        keys = self._call(
            "list comments", lambda: [markers.comment_key(c.body) for c in issue.get_comments()]
        )
        return next((k for k in reversed(keys) if k), None)

    # --- plumbing -------------------------------------------------------------------

    @property
    def repo(self) -> Repository:
        if self._repo is None:
            self._repo = self._client().get_repo(self.repo_name)
        return self._repo

    def _issue(self, doc: IssueDoc) -> Issue:
        return self.repo.get_issue(int(doc.handle))  # lazy: no request until used

    def _client(self) -> Any:
        if self._gh is None:
            from github import Auth, Github

            spacing: dict[str, Any] = {}
            if not self.throttle:
                spacing = {"seconds_between_requests": 0.0, "seconds_between_writes": 0.0}
            self._gh = Github(
                base_url=self.api_url.rstrip("/"),
                auth=Auth.Token(self.token),
                retry=None,  # ours, below: bounded, and aware of uncertain POSTs
                timeout=self.timeout,
                per_page=100,
                lazy=True,  # objects fetch when read, inside _call, never by surprise
                **spacing,
            )
        return self._gh

    def _call(self, what: str, fn: Callable[[], T], recheck: Callable[[], Any] | None = None) -> T:
        """Run one API call with the retry policy; errors become scrubbed SinkErrors."""
        from watcher.issues.retry import run

        result: T = run(self, what, fn, recheck)
        return result

    def _scrub(self, text: str) -> str:
        return text.replace(self.token, "***") if self.token else text


def _doc(issue: Issue) -> IssueDoc:
    state: State = "closed" if issue.state == "closed" else "open"
    return IssueDoc(
        handle=str(issue.number),
        title=issue.title,
        body=issue.body or "",
        state=state,
        labels=tuple(lb.name for lb in issue.labels),
        url=issue.html_url,
        number=issue.number,
        author=issue.user.login if issue.user else None,
    )
