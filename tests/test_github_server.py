"""The local GitHub server keeps GitHub's published contract, so the issue tests mean something.

Every operation of tests/data/github/issues-openapi.json is driven through the real
PyGithub client, and every answer is validated against the document's schemas. The one
GraphQL query (who last edited an issue body) is checked against an excerpt of GitHub's
published GraphQL schema.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from github import Auth, Github, GithubException

from tests.github_server import (
    Fault,
    GithubServer,
    Recorded,
    contract_errors,
    iter_operations,
)

TOKEN = "server-test-token"


@pytest.fixture
def api() -> Iterator[GithubServer]:
    with GithubServer(TOKEN) as server:
        yield server


def client(server: GithubServer, per_page: int = 30, token: str = TOKEN) -> Github:
    return Github(
        base_url=server.url, auth=Auth.Token(token), retry=None, per_page=per_page,
        seconds_between_requests=0, seconds_between_writes=0,
    )  # fmt: skip


def test_every_operation_answers_within_the_published_contract(api: GithubServer) -> None:
    gh = client(api, per_page=2)
    repo = gh.get_repo("notes/site")
    issue = repo.create_issue(title="t", body="b", labels=["one"])
    repo.create_label("two", "00ff00", "second label")
    issue.add_to_labels("two")
    comment = issue.create_comment("c")
    comment.edit("c2")
    issue.edit(state="closed", state_reason="completed")
    for n in range(4):
        repo.create_issue(title=f"more {n}", body="search me")
    api.repo().pulls[9] = "a pull request"

    assert [i.number for i in repo.get_issues(state="all")] == [5, 4, 3, 2, 1]
    assert repo.get_issue(1).state_reason == "completed"
    assert [c.body for c in issue.get_comments()] == ["c2"]
    assert [lb.name for lb in repo.get_labels()] == ["one", "two"]
    assert gh.search_issues('"search me" repo:notes/site is:issue').totalCount == 4
    assert gh.get_rate_limit().resources.core.limit == 5000
    assert repo.get_pull(9).title == "a pull request"
    opened = repo.create_pull(title="accept", body="why", head="watch/accept/n", base="main")
    assert (opened.number, opened.state, opened.head.ref) == (10, "open", "watch/accept/n")
    listed = repo.get_pulls(state="open", head="notes:watch/accept/n", base="main")
    assert [p.number for p in listed] == [10]
    api.merge_pull(10)
    assert repo.get_pull(10).merged and list(repo.get_pulls(state="open")) == []
    api.add_account("maintainer", "maintain")
    assert gh.get_user().login == "watch-bot"
    assert repo.get_collaborator_permission("maintainer") == "write"  # legacy name of maintain
    assert repo.get_collaborator_role_name("watch-bot") == "admin"

    served = {r.operation for r in api.recorded}
    assert served == {op for _, _, op in iter_operations()}
    assert contract_errors(api.recorded) == []


def test_errors_answer_as_github_does(api: GithubServer) -> None:
    repo = client(api).get_repo("notes/site")
    repo.create_label("bug", "ff0000")

    with pytest.raises(GithubException) as bad_color:
        repo.create_label("x", "not-a-colour")
    with pytest.raises(GithubException) as missing:
        repo.get_issue(99)
    with pytest.raises(GithubException) as credentials:
        client(api, token="wrong").get_repo("notes/site").create_issue(title="t")

    assert bad_color.value.status == 422
    assert bad_color.value.data["errors"] == [
        {"resource": "Label", "field": "color", "code": "invalid"}
    ]
    assert missing.value.status == 404
    assert credentials.value.status == 401
    assert contract_errors(api.recorded) == []


def test_pagination_links_follow_githubs_form(api: GithubServer) -> None:
    repo = client(api, per_page=3).get_repo("notes/site")
    for n in range(7):
        repo.create_issue(title=f"i{n}")

    numbers = [i.number for i in repo.get_issues(state="all", direction="asc")]

    pages = [r for r in api.recorded if r.operation == "issues/list-for-repo"]
    assert numbers == [1, 2, 3, 4, 5, 6, 7]
    assert len(pages) == 3
    first = pages[0].headers["Link"]
    assert f"<{api.url}/repositories/1000/issues?" in first and 'rel="next"' in first
    assert 'rel="last"' in first and pages[1].path == "/repositories/1000/issues"
    assert 'rel="prev"' in pages[2].headers["Link"] and "Link" in pages[1].headers


@pytest.mark.parametrize(
    ("kind", "status", "headers"),
    [
        ("primary", 403, {"X-RateLimit-Remaining": "0"}),
        ("primary-429", 429, {"X-RateLimit-Remaining": "0"}),
        ("secondary", 403, {"Retry-After": "7"}),
        ("secondary-429", 429, {"Retry-After": "7"}),
        ("secondary-bare", 403, {"X-RateLimit-Remaining": "14"}),
    ],
)
def test_rate_limits_carry_the_documented_headers(
    api: GithubServer, kind: str, status: int, headers: dict[str, str]
) -> None:
    api.faults = [Fault(r"^GET /repos/notes/site$", kind)]

    with pytest.raises(GithubException) as limited:
        client(api).get_repo("notes/site").full_name  # noqa: B018  (fetches)

    assert limited.value.status == status
    answer: Recorded = api.recorded[-1]
    assert headers.items() <= answer.headers.items()
    assert "X-RateLimit-Reset" in answer.headers
    message: Any = answer.body["message"].lower()
    assert "rate limit" in message


def test_graphql_names_the_last_editor_of_an_issue_body(api: GithubServer) -> None:
    """GitHub's REST API does not say who edited an issue body; GraphQL does: `editor`
    and `lastEditedAt` are null until someone edits it, then name the last editor."""
    gh = client(api)
    number = gh.get_repo("notes/site").create_issue(title="t", body="b").number
    query = (
        "query($owner: String!, $name: String!, $number: Int!) { repository(owner: $owner, "
        "name: $name) { issue(number: $number) { author { login } editor { login } "
        "lastEditedAt } } }"
    )
    variables = {"owner": "notes", "name": "site", "number": number}

    def ask() -> Any:
        return gh.requester.graphql_query(query, variables)[1]["data"]["repository"]["issue"]

    never = ask()
    api.add_account("mallory")
    api.edit_body(number, "b, edited", "mallory")
    edited = ask()

    assert never == {"author": {"login": "watch-bot"}, "editor": None, "lastEditedAt": None}
    assert edited["editor"] == {"login": "mallory"} and edited["lastEditedAt"]
    with pytest.raises(GithubException):
        gh.requester.graphql_query(query, {**variables, "number": 99})


GRAPHQL = Path(__file__).parent / "data" / "github" / "graphql-issue-editor.graphql"


def _schema_fields() -> dict[str, dict[str, str]]:
    """Type name -> field -> return type, from the vendored excerpt of GitHub's schema."""
    text = re.sub(r'"""(?:(?!""").)*"""', "", GRAPHQL.read_text(encoding="utf-8"), flags=re.S)
    types = {}
    for name, body in re.findall(r"(?:type|interface) (\w+) \{(.*?)\n\}", text, re.S):
        fields = re.findall(r"\n  (\w+)(?:\(.*?\n  \))?: (\w+!?)", body, re.S)
        types[name] = dict(fields)
    return types


def _selections(query: str) -> dict[str, Any]:
    """The query's selection set as nested dicts (arguments dropped)."""
    tokens = re.findall(r"[{}]|\w+(?=\s*[({}\s])", re.sub(r"\([^)]*\)", " ", query))
    stack: list[dict[str, Any]] = [{}]
    last = ""
    for token in tokens[tokens.index("{") + 1 : -1]:  # inside the operation's braces
        if token == "{":
            child: dict[str, Any] = {}
            if last:
                stack[-1][last] = child
            stack.append(child)
        elif token == "}":
            stack.pop()
        else:
            stack[-1][token], last = None, token
    return stack[0]


def test_the_editor_query_asks_only_what_githubs_graphql_schema_has(api: GithubServer) -> None:
    """Every field `watch` selects exists in GitHub's published schema, and the server's
    answer gives each the type the schema says (nullable Actor and DateTime)."""
    from watcher.issues.github import EDITOR_QUERY

    types = _schema_fields()

    def check(selection: dict[str, Any], on: str, answer: Any) -> None:
        for name, sub in selection.items():
            kind = types[on][name]
            value = answer.get(name) if isinstance(answer, dict) else None
            assert value is not None or not kind.endswith("!"), f"{on}.{name} is {kind}"
            if sub is not None and value is not None:
                check(sub, kind.rstrip("!"), value)
            elif sub is None and value is not None:
                assert isinstance(value, str), f"{on}.{name}: {value!r}"

    number = client(api).get_repo("notes/site").create_issue(title="t", body="b").number
    variables = {"owner": "notes", "name": "site", "number": number}
    gh = client(api)
    check(
        _selections(EDITOR_QUERY),
        "Query",
        gh.requester.graphql_query(EDITOR_QUERY, variables)[1]["data"],
    )
    api.add_account("maintainer", "write")
    api.edit_body(number, "edited", "maintainer")
    answer = gh.requester.graphql_query(EDITOR_QUERY, variables)[1]["data"]
    check(_selections(EDITOR_QUERY), "Query", answer)
    assert answer["repository"]["issue"]["editor"] == {"login": "maintainer"}
    assert _selections(EDITOR_QUERY) == {
        "repository": {
            "issue": {"author": {"login": None}, "editor": {"login": None}, "lastEditedAt": None}
        }
    }
