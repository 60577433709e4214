"""A GitHub REST server for tests: the issue operations PyGithub uses, on 127.0.0.1.

It follows GitHub's published contract (tests/data/github/issues-openapi.json): objects
carry every required field, `url`/`html_url` point back at this server, lists paginate
with `Link` headers (next pages through `/repositories/{id}/...` as GitHub does),
creation answers 201 with `Location`, unknown labels are created on issue creation.
Faults can be queued: 5xx (before or after the write happened), slow responses that
time the client out (likewise), primary and secondary rate limits with GitHub's headers
and messages, and a search index that lags behind writes.
People: each token is one account (`GET /user`); the collaborators' permissions answer
`GET /repos/{owner}/{repo}/collaborators/{username}/permission`; an issue is authored by
the account whose token opened it, and `edit_body` edits one as a person does in the web
UI. GitHub's REST API does not say who last edited an issue body, its GraphQL API does
(`Issue.editor`, `Issue.lastEditedAt`): `POST /graphql` answers that one query.
Every response is recorded so the tests can validate it against the OpenAPI document.
"""

from __future__ import annotations

import copy
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

from tests.support import LocalServer

SPEC_FILE = Path(__file__).parent / "data" / "github" / "issues-openapi.json"
STAMP = "2026-12-02T09:00:00Z"
DOCS = "https://docs.github.com/rest"
BOT = "watch-bot"  # the account of the default token
PERSON = "octocat"  # anyone: the author of issues a test adds by hand


@dataclass
class Fault:
    """Applies to the next `times` requests whose `METHOD path` matches `match` (a regex).

    kind: "500" | "500-after" (the write happens, then 500) | "timeout" |
    "timeout-after" | "primary" | "primary-429" | "secondary" (retry-after) |
    "secondary-429" | "secondary-bare" (message only) | "search-422" | "forbidden".
    """

    match: str
    kind: str
    times: int = 1
    delay: float = 2.0


@dataclass
class Recorded:
    method: str
    path: str
    operation: str
    status: int
    headers: dict[str, str]
    body: Any


@dataclass
class Repo:
    id: int
    owner: str
    name: str
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)
    labels: dict[str, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    indexed: set[int] = field(default_factory=set)  # issues the search index has seen
    pulls: dict[int, str] = field(default_factory=dict)  # number -> title
    pull_fields: dict[int, dict[str, Any]] = field(default_factory=dict)  # e.g. merged_at
    editors: dict[int, tuple[str, str]] = field(default_factory=dict)  # number -> (login, when)
    permissions: dict[str, str] = field(default_factory=dict)  # collaborator -> permission

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


class GithubServer:
    """Start with `with GithubServer(token) as gh:`; `gh.url` is the API base URL."""

    def __init__(self, token: str = "test-token", *, repos: tuple[str, ...] = ("notes/site",)):
        self.token = token
        self.accounts: dict[str, str] = {}  # other tokens -> login (`token` is BOT's)
        self.repos = {
            name.lower(): Repo(1000 + n, *name.split("/"), permissions={BOT: "admin"})
            for n, name in enumerate(repos)
        }
        self.faults: list[Fault] = []
        self.recorded: list[Recorded] = []
        self.search_lag = False  # True: search never sees new issues (GitHub's index lags)
        self.lock = threading.RLock()
        self._ids = iter(range(5000, 10**9))
        self._server = LocalServer(_handler(self))
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> GithubServer:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    # --- inspection helpers for tests ------------------------------------------------

    def repo(self, name: str = "notes/site") -> Repo:
        return self.repos[name.lower()]

    def issues(self, name: str = "notes/site", state: str | None = None) -> list[dict[str, Any]]:
        issues = sorted(self.repo(name).issues.values(), key=lambda i: i["number"])
        return [i for i in issues if state is None or i["state"] == state]

    def comments(self, number: int, name: str = "notes/site") -> list[dict[str, Any]]:
        return list(self.repo(name).comments.get(number, []))

    def writes(self) -> list[Recorded]:
        return [r for r in self.recorded if r.method in ("POST", "PATCH") and r.status < 300]

    def pulls(self, name: str = "notes/site") -> list[dict[str, Any]]:
        """Pull requests opened through the API, with their head and base branches."""
        repo = self.repo(name)
        return [
            {"number": n, "title": repo.pulls[n], **repo.pull_fields[n]}
            for n in sorted(repo.pulls)
            if "head_ref" in repo.pull_fields.get(n, {})
        ]

    def merge_pull(self, number: int, name: str = "notes/site") -> None:
        """Merge a pull request, as a maintainer would in the web UI (the test moves the
        branch itself: this server holds no git data)."""
        with self.lock:
            self.repo(name).pull_fields[number].update(
                state="closed", merged=True, merged_at=STAMP, closed_at=STAMP
            )

    def add_issue(
        self,
        title: str,
        body: str,
        labels: tuple[str, ...] = (),
        name: str = "notes/site",
        author: str = PERSON,
    ) -> int:
        """An issue written by a person (`author`: by default one with no access to the
        repository, as anyone may open an issue), as if through the web UI."""
        with self.lock:
            data = {"title": title, "body": body, "labels": list(labels)}
            _, _, issue = _create_issue(self, self.repo(name), data, author)
            return int(issue["number"])

    def add_account(
        self, login: str, permission: str | None = None, token: str | None = None
    ) -> None:
        """Another GitHub account: a collaborator of every repository with `permission`
        (admin, maintain, write, triage, read), or none; with `token`, it can call the API."""
        with self.lock:
            if token is not None:
                self.accounts[token] = login
            for repo in self.repos.values():
                if permission is not None:
                    repo.permissions[login] = permission

    def edit_body(self, number: int, body: str, login: str, name: str = "notes/site") -> None:
        """`login` edits an issue's body in the web UI (ticking a box is such an edit)."""
        with self.lock:
            repo = self.repo(name)
            repo.issues[number]["body"] = body
            repo.issues[number]["updated_at"] = STAMP
            repo.editors[number] = (login, STAMP)

    def save(self) -> dict[str, Repo]:
        """A copy of every repository, to `restore` later (replays a history cheaply)."""
        with self.lock:
            return copy.deepcopy(self.repos)

    def restore(self, saved: dict[str, Repo]) -> None:
        with self.lock:
            self.repos = copy.deepcopy(saved)
            self.recorded = []

    def next_id(self) -> int:
        return next(self._ids)

    def take_fault(self, method: str, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.times > 0 and re.search(fault.match, f"{method} {path}"):
                    fault.times -= 1
                    return fault
        return None


# --- object builders ---------------------------------------------------------------


def _user(base: str, login: str = BOT) -> dict[str, Any]:
    u = f"{base}/users/{login}"
    uid = 1 if login == BOT else 100 + sum(map(ord, login))
    return {
        "login": login,
        "id": uid,
        "node_id": f"U_{uid}",
        "avatar_url": f"{base}/avatars/{uid}",
        "gravatar_id": "",
        "url": u,
        "html_url": f"{base}/{login}",
        "followers_url": f"{u}/followers",
        "following_url": f"{u}/following{{/other_user}}",
        "gists_url": f"{u}/gists{{/gist_id}}",
        "starred_url": f"{u}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{u}/subscriptions",
        "organizations_url": f"{u}/orgs",
        "repos_url": f"{u}/repos",
        "events_url": f"{u}/events{{/privacy}}",
        "received_events_url": f"{u}/received_events",
        "type": "Bot" if login == BOT or login.endswith("[bot]") else "User",
        "site_admin": False,
    }


def _label(
    base: str, repo: Repo, name: str, color: str = "ededed", desc: str | None = None
) -> dict[str, Any]:
    lid = 300 + len(repo.labels)
    return {
        "id": lid,
        "node_id": f"LA_{lid}",
        "url": f"{base}/repos/{repo.full_name}/labels/{name}",
        "name": name,
        "description": desc,
        "color": color,
        "default": False,
    }


def _issue(
    base: str, repo: Repo, number: int, data: dict[str, Any], author: str = BOT
) -> dict[str, Any]:
    url = f"{base}/repos/{repo.full_name}/issues/{number}"
    return {
        "id": 7000 + number,
        "node_id": f"I_{number}",
        "url": url,
        "repository_url": f"{base}/repos/{repo.full_name}",
        "labels_url": f"{url}/labels{{/name}}",
        "comments_url": f"{url}/comments",
        "events_url": f"{url}/events",
        "html_url": f"{base}/{repo.full_name}/issues/{number}",
        "number": number,
        "state": "open",
        "state_reason": None,
        "title": data.get("title", ""),
        "body": data.get("body"),
        "user": _user(base, author),
        "labels": [],
        "assignee": None,
        "assignees": [],
        "milestone": None,
        "locked": False,
        "active_lock_reason": None,
        "comments": 0,
        "closed_at": None,
        "created_at": STAMP,
        "updated_at": STAMP,
        "author_association": "NONE",
    }


def _comment(base: str, repo: Repo, number: int, cid: int, body: str) -> dict[str, Any]:
    return {
        "id": cid,
        "node_id": f"IC_{cid}",
        "url": f"{base}/repos/{repo.full_name}/issues/comments/{cid}",
        "html_url": f"{base}/{repo.full_name}/issues/{number}#issuecomment-{cid}",
        "issue_url": f"{base}/repos/{repo.full_name}/issues/{number}",
        "body": body,
        "user": _user(base),
        "created_at": STAMP,
        "updated_at": STAMP,
        "author_association": "NONE",
    }


def skeleton(spec: dict[str, Any], schema: dict[str, Any], base: str, depth: int = 0) -> Any:
    """A minimal valid instance of `schema` (required fields only), for big objects."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return skeleton(spec, spec["components"]["schemas"][name], base, depth + 1)
    if schema.get("nullable") and depth > 0:
        return None
    for key in ("allOf", "oneOf", "anyOf"):
        if key in schema:
            return skeleton(spec, schema[key][0], base, depth + 1)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {
            k: skeleton(spec, props.get(k, {}), base, depth + 1) for k in schema.get("required", [])
        }
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return False
    if "enum" in schema:
        return schema["enum"][0]
    if schema.get("format") == "date-time":
        return STAMP
    if schema.get("format") == "uri":
        return base
    return ""


# --- the handler ---------------------------------------------------------------------

_ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    (m, re.compile(p), op)
    for m, p, op in [
        ("GET", r"^/rate_limit$", "rate-limit/get"),
        ("GET", r"^/user$", "users/get-authenticated"),
        ("POST", r"^/graphql$", "graphql"),
        (
            "GET",
            r"^/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/collaborators/(?P<u>[^/]+)/permission$",
            "repos/get-collaborator-permission-level",
        ),
        ("GET", r"^/search/issues$", "search/issues-and-pull-requests"),
        ("GET", r"^/repos/(?P<o>[^/]+)/(?P<r>[^/]+)$", "repos/get"),
        (
            "GET",
            r"^/(?:repos/(?P<o>[^/]+)/(?P<r>[^/]+)|repositories/(?P<rid>\d+))/issues$",
            "issues/list-for-repo",
        ),
        ("POST", r"^/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/issues$", "issues/create"),
        (
            "PATCH",
            r"^/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/issues/comments/(?P<c>\d+)$",
            "issues/update-comment",
        ),
        ("GET", r"^/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/issues/(?P<n>\d+)$", "issues/get"),
        ("PATCH", r"^/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/issues/(?P<n>\d+)$", "issues/update"),
        (
            "GET",
            r"^/(?:repos/(?P<o>[^/]+)/(?P<r>[^/]+)|repositories/(?P<rid>\d+))/issues/(?P<n>\d+)/comments$",
            "issues/list-comments",
        ),
        (
            "POST",
            r"^/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/issues/(?P<n>\d+)/comments$",
            "issues/create-comment",
        ),
        (
            "POST",
            r"^/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/issues/(?P<n>\d+)/labels$",
            "issues/add-labels",
        ),
        (
            "GET",
            r"^/(?:repos/(?P<o>[^/]+)/(?P<r>[^/]+)|repositories/(?P<rid>\d+))/labels$",
            "issues/list-labels-for-repo",
        ),
        ("POST", r"^/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/labels$", "issues/create-label"),
        ("GET", r"^/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/pulls/(?P<n>\d+)$", "pulls/get"),
        (
            "GET",
            r"^/(?:repos/(?P<o>[^/]+)/(?P<r>[^/]+)|repositories/(?P<rid>\d+))/pulls$",
            "pulls/list",
        ),
        ("POST", r"^/repos/(?P<o>[^/]+)/(?P<r>[^/]+)/pulls$", "pulls/create"),
    ]
]


class HttpError(Exception):
    def __init__(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None):
        self.status, self.body, self.headers = status, body, headers or {}


def _handler(gh: GithubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in separate writes: without this, Nagle's algorithm
            # and delayed ACKs add 40 ms to every answer.
            self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_PATCH(self) -> None:
            self._serve("PATCH")

        def _serve(self, method: str) -> None:
            parsed = urlparse(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            operation = "unknown"
            status, headers, body = 404, {}, {"message": "Not Found", "documentation_url": DOCS}
            try:
                operation, match = _route(method, parsed.path)
                match["caller"] = self._auth()
                fault = gh.take_fault(method, parsed.path)
                args = (
                    gh,
                    operation,
                    match,
                    parse_qs(parsed.query),
                    json.loads(raw) if raw else None,
                )
                status, headers, body = _apply_fault(gh, fault, lambda: _dispatch(*args))
            except HttpError as err:
                status, headers, body = err.status, err.headers, err.body
            except _Timeout:
                return  # the client has given up; nothing is sent
            self._send(method, parsed.path, operation, status, headers, body)

        def _auth(self) -> str:
            """The login whose token the request carries."""
            given = str(self.headers.get("Authorization") or "").split(" ", 1)[-1]
            with gh.lock:
                login = BOT if given == gh.token else gh.accounts.get(given)
            if login is None:
                raise HttpError(401, {"message": "Bad credentials", "documentation_url": DOCS})
            return login

        def _send(
            self, method: str, path: str, op: str, status: int, headers: dict[str, str], body: Any
        ) -> None:
            data = json.dumps(body).encode() if body is not None else b""
            all_headers = {
                "Content-Type": "application/json; charset=utf-8",
                "X-RateLimit-Limit": "5000",
                "X-RateLimit-Remaining": "4999",
                "X-RateLimit-Reset": str(int(time.time()) + 3600),
                "X-RateLimit-Used": "1",
                "X-RateLimit-Resource": "search" if "search" in path else "core",
                **headers,
                "Content-Length": str(len(data)),
            }
            with gh.lock:
                gh.recorded.append(Recorded(method, path, op, status, all_headers, body))
            try:
                self.send_response(status)
                for key, value in all_headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


class _Timeout(Exception):
    pass


def _route(method: str, path: str) -> tuple[str, dict[str, str]]:
    for m, pattern, op in _ROUTES:
        match = pattern.match(path)
        if m == method and match:
            return op, {k: v for k, v in match.groupdict().items() if v is not None}
    raise HttpError(404, {"message": "Not Found", "documentation_url": DOCS})


def _apply_fault(gh: GithubServer, fault: Fault | None, do: Any) -> tuple[int, dict[str, str], Any]:
    if fault is None:
        return do()  # type: ignore[no-any-return]
    if fault.kind.endswith("-after"):
        do()  # the write happens; its answer is lost
    if fault.kind.startswith("500"):
        return 500, {}, {"message": "Server Error"}
    if fault.kind.startswith("timeout"):
        time.sleep(fault.delay)
        raise _Timeout()
    return _limited(fault.kind)


_SECONDARY = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)
_CREATION = (
    "You have exceeded a secondary rate limit and have been temporarily blocked from "
    "content creation. Please retry your request again later."
)


def _limited(kind: str) -> tuple[int, dict[str, str], Any]:
    """GitHub's rate-limit answers, with the headers and messages it documents."""
    reset = str(int(time.time()) + 30)
    primary = {"message": "API rate limit exceeded for user ID 1.", "documentation_url": DOCS}
    answers: dict[str, tuple[int, dict[str, str], Any]] = {
        "primary": (403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset}, primary),
        "primary-429": (429, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset}, primary),
        "secondary": (
            403,
            {"Retry-After": "7"},
            {"message": _SECONDARY, "documentation_url": DOCS},
        ),
        "secondary-429": (
            429,
            {"Retry-After": "7"},
            {"message": _SECONDARY, "documentation_url": DOCS},
        ),
        "secondary-bare": (
            403,
            {"X-RateLimit-Remaining": "14"},
            {"message": _CREATION, "documentation_url": DOCS},
        ),
        "search-422": (
            422,
            {},
            {
                "message": "Validation Failed",
                "documentation_url": DOCS,
                "errors": [{"resource": "Search", "field": "q", "code": "invalid"}],
            },
        ),
        "forbidden": (
            403,
            {},
            {"message": "Resource not accessible by integration", "documentation_url": DOCS},
        ),
    }
    return answers[kind]


# --- operations ------------------------------------------------------------------------


def _dispatch(
    gh: GithubServer, op: str, m: dict[str, str], query: dict[str, list[str]], body: Any
) -> tuple[int, dict[str, str], Any]:
    base = gh.url
    with gh.lock:
        if op == "rate-limit/get":
            return 200, {}, _rate_limit()
        if op == "users/get-authenticated":
            return 200, {}, _account(gh, m["caller"])
        if op == "graphql":
            return 200, {}, _graphql(gh, body)
        if op == "search/issues-and-pull-requests":
            return 200, {}, _search(gh, query)
        repo = _repo(gh, m)
        if op == "repos/get":
            return 200, {}, _full_repo(gh, repo)
        if op == "issues/list-for-repo":
            return _page(gh, f"/repositories/{repo.id}/issues", query, _list_issues(repo, query))
        if op == "issues/create":
            return _create_issue(gh, repo, body, m["caller"])
        if op == "repos/get-collaborator-permission-level":
            return 200, {}, _permission(gh, repo, m["u"])
        if op == "issues/list-labels-for-repo":
            return _page(gh, f"/repositories/{repo.id}/labels", query, list(repo.labels.values()))
        if op == "issues/create-label":
            return _create_label(base, repo, body)
        if op == "pulls/get":
            return 200, {}, _pull(gh, repo, int(m["n"]))
        if op == "pulls/list":
            pulls = [_pull(gh, repo, n, simple=True) for n in sorted(repo.pulls, reverse=True)]
            return _page(gh, f"/repositories/{repo.id}/pulls", query, _filter_pulls(pulls, query))
        if op == "pulls/create":
            return _create_pull(gh, repo, body)
        if op == "issues/update-comment":
            return _update_comment(repo, int(m["c"]), body)
        issue = repo.issues.get(int(m["n"]))
        if issue is None:
            raise HttpError(404, {"message": "Not Found", "documentation_url": DOCS})
        return _issue_op(gh, repo, issue, op, query, body, m["caller"])


def _issue_op(
    gh: GithubServer,
    repo: Repo,
    issue: dict[str, Any],
    op: str,
    query: dict[str, list[str]],
    body: Any,
    caller: str,
) -> tuple[int, dict[str, str], Any]:
    number = issue["number"]
    if op == "issues/get":
        return 200, {}, issue
    if op == "issues/update":
        if isinstance(body, dict) and "body" in body and body["body"] != issue["body"]:
            repo.editors[number] = (caller, STAMP)
        return 200, {}, _update_issue(gh, repo, issue, body)
    if op == "issues/list-comments":
        return _page(
            gh,
            f"/repositories/{repo.id}/issues/{number}/comments",
            query,
            repo.comments.get(number, []),
        )
    if op == "issues/create-comment":
        if not isinstance(body, dict) or not isinstance(body.get("body"), str):
            raise _invalid("IssueComment", "body")
        comment = _comment(gh.url, repo, number, gh.next_id(), body["body"])
        repo.comments.setdefault(number, []).append(comment)
        issue["comments"] += 1
        return 201, {"Location": comment["url"]}, comment
    if op == "issues/add-labels":
        names = body if isinstance(body, list) else (body or {}).get("labels", [])
        _set_labels(gh, repo, issue, [*(lb["name"] for lb in issue["labels"]), *names])
        return 200, {}, issue["labels"]
    raise HttpError(404, {"message": "Not Found", "documentation_url": DOCS})


def _account(gh: GithubServer, login: str) -> dict[str, Any]:
    """`GET /user`: the token's own account (GitHub's private-user, required fields)."""
    data: dict[str, Any] = skeleton(spec(), {"$ref": "#/components/schemas/private-user"}, gh.url)
    data.update({k: v for k, v in _user(gh.url, login).items() if k in data})
    data["user_view_type"] = "private"  # the schema's discriminator: one's own account
    return data


def _permission(gh: GithubServer, repo: Repo, login: str) -> dict[str, Any]:
    """A collaborator's permission; GitHub answers 404 for an account that is none."""
    permission = repo.permissions.get(login)
    if permission is None:
        raise HttpError(404, {"message": f"{login} is not a user", "documentation_url": DOCS})
    legacy = {"maintain": "write", "triage": "read"}.get(permission, permission)
    schema = spec()["components"]["schemas"]["nullable-collaborator"]  # depth 0: not null
    user: dict[str, Any] = skeleton(spec(), schema, gh.url)
    user.update({k: v for k, v in _user(gh.url, login).items() if k in user})
    user["role_name"] = permission
    return {"permission": legacy, "role_name": permission, "user": user}


EDITOR_QUERY = re.compile(r"issue\(number:\s*\$number\)\s*\{\s*author\s*\{\s*login\s*\}\s*"
                          r"editor\s*\{\s*login\s*\}\s*lastEditedAt\s*\}")  # fmt: skip


def _graphql(gh: GithubServer, body: Any) -> dict[str, Any]:
    """GitHub's GraphQL answer to the one query watch sends: an issue's author, the
    editor of its body's last edit and when (both null when never edited)."""
    query, variables = (body or {}).get("query", ""), (body or {}).get("variables") or {}
    if not EDITOR_QUERY.search(query):
        raise HttpError(400, {"message": "Problems parsing the query", "documentation_url": DOCS})
    repo = gh.repos.get(f"{variables.get('owner')}/{variables.get('name')}".lower())
    issue = repo.issues.get(int(variables.get("number", 0))) if repo else None
    if repo is None or issue is None:
        return {
            "data": {"repository": None if repo is None else {"issue": None}},
            "errors": [
                {"type": "NOT_FOUND", "path": ["repository"], "message": "Could not resolve"}
            ],
        }
    editor, when = repo.editors.get(issue["number"], (None, None))
    return {
        "data": {
            "repository": {
                "issue": {
                    "author": {"login": issue["user"]["login"]},
                    "editor": {"login": editor} if editor else None,
                    "lastEditedAt": when,
                }
            }
        }
    }


def _repo(gh: GithubServer, m: dict[str, str]) -> Repo:
    if "rid" in m:
        repo = next((r for r in gh.repos.values() if r.id == int(m["rid"])), None)
    else:
        repo = gh.repos.get(f"{m['o']}/{m['r']}".lower())
    if repo is None:
        raise HttpError(404, {"message": "Not Found", "documentation_url": DOCS})
    return repo


def _invalid(resource: str, fieldname: str, code: str = "missing_field") -> HttpError:
    return HttpError(
        422,
        {
            "message": "Validation Failed",
            "documentation_url": DOCS,
            "errors": [{"resource": resource, "field": fieldname, "code": code}],
        },
    )


def _create_issue(
    gh: GithubServer, repo: Repo, body: Any, author: str
) -> tuple[int, dict[str, str], Any]:
    if not isinstance(body, dict) or not isinstance(body.get("title"), str) or not body["title"]:
        raise _invalid("Issue", "title")
    if len(body.get("body") or "") > 65536:
        raise _invalid("Issue", "body", "custom")
    number = max([*repo.issues, *repo.pulls], default=0) + 1  # one sequence, as on GitHub
    issue = _issue(gh.url, repo, number, body, author)
    repo.issues[number] = issue
    _set_labels(gh, repo, issue, body.get("labels") or [])
    if not gh.search_lag:
        repo.indexed.add(number)
    return 201, {"Location": issue["url"]}, issue


def _update_issue(gh: GithubServer, repo: Repo, issue: dict[str, Any], body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise _invalid("Issue", "body", "invalid")
    if len(body.get("body") or "") > 65536:
        raise _invalid("Issue", "body", "custom")
    for key in ("title", "body"):
        if key in body:
            issue[key] = body[key]
    if "labels" in body:
        _set_labels(gh, repo, issue, body["labels"])
    state = body.get("state")
    if state in ("open", "closed") and state != issue["state"]:
        issue["state"] = state
        issue["closed_at"] = STAMP if state == "closed" else None
        issue["state_reason"] = body.get("state_reason") or (
            "completed" if state == "closed" else "reopened"
        )
    issue["updated_at"] = STAMP
    return issue


def _set_labels(gh: GithubServer, repo: Repo, issue: dict[str, Any], names: list[Any]) -> None:
    labels = []
    for name in dict.fromkeys(n if isinstance(n, str) else n["name"] for n in names):
        label = repo.labels.get(name.lower())
        if label is None:  # GitHub creates unknown labels for users with push access
            label = repo.labels[name.lower()] = _label(gh.url, repo, name)
        labels.append(label)
    issue["labels"] = labels


def _create_label(base: str, repo: Repo, body: Any) -> tuple[int, dict[str, str], Any]:
    name = (body or {}).get("name")
    color = (body or {}).get("color", "ededed")
    if not isinstance(name, str) or not re.fullmatch(r"[0-9a-fA-F]{6}", str(color)):
        raise _invalid("Label", "color" if isinstance(name, str) else "name", "invalid")
    if name.lower() in repo.labels:
        raise _invalid("Label", "name", "already_exists")
    label = repo.labels[name.lower()] = _label(base, repo, name, color, body.get("description"))
    return 201, {"Location": label["url"]}, label


def _update_comment(repo: Repo, cid: int, body: Any) -> tuple[int, dict[str, str], Any]:
    for comments in repo.comments.values():
        for comment in comments:
            if comment["id"] == cid:
                comment["body"] = (body or {}).get("body", comment["body"])
                return 200, {}, comment
    raise HttpError(404, {"message": "Not Found", "documentation_url": DOCS})


def _list_issues(repo: Repo, query: dict[str, list[str]]) -> list[dict[str, Any]]:
    state = query.get("state", ["open"])[0]
    wanted = {n.lower() for n in query.get("labels", [""])[0].split(",") if n}
    issues = [
        i
        for i in repo.issues.values()
        if (state == "all" or i["state"] == state)
        and wanted <= {lb["name"].lower() for lb in i["labels"]}
    ]
    reverse = query.get("direction", ["desc"])[0] == "desc"
    return sorted(issues, key=lambda i: i["number"], reverse=reverse)


def _search(gh: GithubServer, query: dict[str, list[str]]) -> dict[str, Any]:
    """GitHub issue search for the qualifiers watch uses: repo:, is:, in:body, quoted phrases."""
    q = query.get("q", [""])[0]
    phrases = [p.lower() for p in re.findall(r'"([^"]*)"', q)]
    rest = re.sub(r'"[^"]*"', " ", q).split()
    repos = [t.split(":", 1)[1].lower() for t in rest if t.startswith("repo:")]
    words = [t.lower() for t in rest if ":" not in t]
    states = [
        t.split(":", 1)[1]
        for t in rest
        if t in ("is:open", "is:closed", "state:open", "state:closed")
    ]
    items = []
    for repo in gh.repos.values():
        if repos and repo.full_name.lower() not in repos:
            continue
        for number in sorted(repo.indexed):
            issue = repo.issues[number]
            text = f"{issue['title']}\n{issue.get('body') or ''}".lower()
            if (
                all(p in text for p in phrases)
                and all(w in text for w in words)
                and (not states or issue["state"] in states)
            ):
                items.append({**issue, "score": 1.0})
    return {
        "total_count": len(items),
        "incomplete_results": False,
        "items": items,
        "search_type": "lexical",
    }


def _page(
    gh: GithubServer, path: str, query: dict[str, list[str]], items: list[Any]
) -> tuple[int, dict[str, str], Any]:
    """One page of `items`, with GitHub's Link header (next/last/first/prev)."""
    per_page = min(100, int(query.get("per_page", ["30"])[0]))
    page = int(query.get("page", ["1"])[0])
    last = max(1, -(-len(items) // per_page))
    params = {k: v[0] for k, v in query.items() if k != "page"}

    def link(n: int, rel: str) -> str:
        return f'<{gh.url}{path}?{urlencode({**params, "page": n})}>; rel="{rel}"'

    links = []
    if page < last:
        links += [link(page + 1, "next"), link(last, "last")]
    if page > 1:
        links += [link(page - 1, "prev"), link(1, "first")]
    headers = {"Link": ", ".join(links)} if links else {}
    return 200, headers, items[(page - 1) * per_page : page * per_page]


def _rate_limit() -> dict[str, Any]:
    reset = int(time.time()) + 3600
    core = {"limit": 5000, "remaining": 4999, "reset": reset, "used": 1}
    search = {"limit": 30, "remaining": 30, "reset": reset, "used": 0}
    return {"resources": {"core": core, "search": search}, "rate": core}


_SPEC: dict[str, Any] = {}


def spec() -> dict[str, Any]:
    if not _SPEC:
        _SPEC.update(json.loads(SPEC_FILE.read_text(encoding="utf-8")))
    return _SPEC


def _full_repo(gh: GithubServer, repo: Repo) -> dict[str, Any]:
    doc = spec()
    data: dict[str, Any] = skeleton(doc, {"$ref": "#/components/schemas/full-repository"}, gh.url)
    api = f"{gh.url}/repos/{repo.full_name}"
    for key in data:
        if key.endswith("_url") and isinstance(data[key], str):
            data[key] = f"{api}/{key.removesuffix('_url')}"
    data.update(
        {
            "id": repo.id,
            "node_id": f"R_{repo.id}",
            "name": repo.name,
            "full_name": repo.full_name,
            "url": api,
            "html_url": f"{gh.url}/{repo.full_name}",
            "owner": _user(gh.url),
            "issues_url": f"{api}/issues{{/number}}",
            "labels_url": f"{api}/labels{{/name}}",
            "has_issues": True,
            "default_branch": "main",
            "private": False,
            "clone_url": f"{gh.url}/{repo.full_name}.git",
            "git_url": f"git://127.0.0.1/{repo.full_name}.git",
            "ssh_url": f"git@127.0.0.1:{repo.full_name}.git",
            "svn_url": f"{gh.url}/{repo.full_name}",
            "open_issues_count": sum(i["state"] == "open" for i in repo.issues.values()),
        }
    )
    return data


def _pull(gh: GithubServer, repo: Repo, number: int, *, simple: bool = False) -> dict[str, Any]:
    if number not in repo.pulls:
        raise HttpError(404, {"message": "Not Found", "documentation_url": DOCS})
    schema = "pull-request-simple" if simple else "pull-request"
    data: dict[str, Any] = skeleton(spec(), {"$ref": f"#/components/schemas/{schema}"}, gh.url)
    api = f"{gh.url}/repos/{repo.full_name}"
    fields = dict(repo.pull_fields.get(number, {}))
    if simple:
        fields.pop("merged", None)  # pull-request-simple has no `merged`
    data.update(
        {
            "number": number,
            "title": repo.pulls[number],
            "state": "closed",
            "url": f"{api}/pulls/{number}",
            "html_url": f"{gh.url}/{repo.full_name}/pull/{number}",
            "user": _user(gh.url),
            **({} if simple else {"merged": True}),
            **fields,
        }
    )
    for side in ("head", "base"):  # a branch of this repository
        ref = fields.get(f"{side}_ref")
        if ref:
            data[side] = {**data[side], "ref": ref, "label": f"{repo.owner}:{ref}"}
        data.pop(f"{side}_ref", None)
    return data


def _create_pull(gh: GithubServer, repo: Repo, body: Any) -> tuple[int, dict[str, str], Any]:
    for name in ("title", "head", "base"):
        if not isinstance(body, dict) or not isinstance(body.get(name), str) or not body[name]:
            raise _invalid("PullRequest", name)
    head = body["head"].split(":")[-1]
    for fields in repo.pull_fields.values():
        if fields.get("head_ref") == head and fields.get("state") == "open":
            raise _invalid("PullRequest", "head", "custom")  # GitHub: one open PR per head
    number = max([*repo.issues, *repo.pulls], default=0) + 1
    repo.pulls[number] = body["title"]
    repo.pull_fields[number] = {
        "state": "open",
        "merged": False,
        "merged_at": None,
        "body": body.get("body"),
        "head_ref": head,
        "base_ref": body["base"],
    }
    pull = _pull(gh, repo, number)
    return 201, {"Location": pull["url"]}, pull


def _filter_pulls(pulls: list[dict[str, Any]], query: dict[str, list[str]]) -> list[dict[str, Any]]:
    state = query.get("state", ["open"])[0]
    head = query.get("head", [None])[0]
    base = query.get("base", [None])[0]
    return [
        p
        for p in pulls
        if state in ("all", p["state"])
        and (head is None or p["head"]["label"] == head)
        and (base is None or p["base"]["ref"] == base)
    ]


def iter_operations() -> Iterator[tuple[str, str, str]]:
    """(METHOD, path template, operationId) of every operation in the document."""
    for path, item in spec()["paths"].items():
        for method, operation in item.items():
            if isinstance(operation, dict) and "operationId" in operation:
                yield method.upper(), path, operation["operationId"]


# --- contract checks ---------------------------------------------------------------------

_OPS: dict[tuple[str, str], dict[str, Any]] = {}


def _operation(method: str, op_id: str) -> dict[str, Any]:
    if not _OPS:
        for path, item in spec()["paths"].items():
            for m, operation in item.items():
                if isinstance(operation, dict) and "operationId" in operation:
                    _OPS[(m.upper(), operation["operationId"])] = {**operation, "path": path}
    return _OPS[(method, op_id)]


def _nullable_enums(node: Any) -> Any:
    """GitHub returns null for nullable enums (state_reason); OAS 3.0 validators need it listed."""
    if isinstance(node, dict):
        node = {k: _nullable_enums(v) for k, v in node.items()}
        if node.get("nullable") and "enum" in node and None not in node["enum"]:
            node["enum"] = [*node["enum"], None]
        return node
    if isinstance(node, list):
        return [_nullable_enums(v) for v in node]
    return node


_VALIDATORS: dict[str, Any] = {}


def _validator(ref: str) -> Any:
    from openapi_schema_validator import OAS30Validator

    if ref not in _VALIDATORS:
        components = _nullable_enums(spec()["components"])
        _VALIDATORS[ref] = OAS30Validator({"components": components, "allOf": [{"$ref": ref}]})
    return _VALIDATORS[ref]


def response_schema(method: str, op_id: str, status: int) -> dict[str, Any] | None:
    """The JSON schema GitHub publishes for this operation's answer with `status`."""
    responses = _operation(method, op_id)["responses"]
    response = responses.get(str(status))
    if response is None:
        return None
    if "$ref" in response:
        response = spec()["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
    schema: dict[str, Any] | None = (
        response.get("content", {}).get("application/json", {}).get("schema")
    )
    return schema


def contract_errors(recorded: list[Recorded]) -> list[str]:
    """Every recorded answer that GitHub's contract does not allow, one message each."""
    errors = []
    for rec in recorded:
        if rec.operation in ("unknown", "graphql") or rec.status in (401, 429) or rec.status >= 500:
            continue  # not described per operation (401/429/5xx are generic GitHub answers)
        if rec.status == 403 and rec.body.get("message", "").lower().startswith(
            ("api rate", "you have")
        ):
            continue  # rate limits: checked by their headers in the tests
        schema = response_schema(rec.method, rec.operation, rec.status)
        if schema is None:
            errors.append(
                f"{rec.method} {rec.path}: status {rec.status} not documented for {rec.operation}"
            )
            continue
        ref = schema.get("$ref")
        validator = _validator(ref) if ref else None
        if validator is None:
            from openapi_schema_validator import OAS30Validator

            wrapped = {
                "components": _nullable_enums(spec()["components"]),
                **_nullable_enums(schema),
            }
            validator = OAS30Validator(wrapped)
        for err in validator.iter_errors(rec.body):
            where = "/".join(str(p) for p in err.absolute_path)
            errors.append(
                f"{rec.method} {rec.path} ({rec.operation} {rec.status}) at {where}: {err.message[:200]}"
            )
    return errors
