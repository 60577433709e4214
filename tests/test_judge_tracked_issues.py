"""Issue citations (SPEC 6.4) against the local GitHub server: closed and merged after the
note's date is `changed`, with the release that ships a merged pull request."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.conftest import Project
from tests.github_server import GithubServer
from watcher.gitbuild import Upstream

LIB = "src/lib.rs"


@pytest.fixture
def github() -> Iterator[GithubServer]:
    with GithubServer(repos=("notes/site", "acme/client")) as gh:
        yield gh


def _note(project: Project, base: str, *sources: tuple[str, str]) -> None:
    items = "".join(f"  - url: {url}\n    date: {day}\n" for url, day in sources)
    project.note("n", raw=(
        f"---\nid: n\nlastVerified: 2026-03-01\nsources:\n"
        f"  - url: https://github.com/{project.repo}\n    commit: {base}\n    path: {LIB}:1\n"
        f"{items}---\n"
    ))  # fmt: skip


def _close(github: GithubServer, number: int, when: str, reason: str = "completed") -> None:
    issue = github.repo("acme/client").issues[number]
    issue.update({"state": "closed", "state_reason": reason, "closed_at": when})


def _results(
    project: Project, capsys: pytest.CaptureFixture[str], *args: str
) -> dict[str, dict[str, object]]:
    _, out, _ = project.run("check", "--format", "json", *args, capsys=capsys)
    return {r["id"]: r for r in json.loads(out)["results"] if r["kind"] == "issue"}


def test_issue_and_pull_request_states(
    project: Project,
    upstream: Upstream,
    github: GithubServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", github.token)
    base = upstream.commit("lib", {LIB: "fn a() {}\n"})
    merged = upstream.commit("Refresh tools on list_changed (#12)", {LIB: "fn a() { b() }\n"})
    upstream.tag("v1.2.0")
    project.config(extra="", upstream_extra="")
    text = project.config_file.read_text().replace('[issues]\nsink = "none"',
                                                   f'[issues]\nsink = "none"\napi_url = "{github.url}"')  # fmt: skip
    project.config_file.write_text(text)
    repo = github.repo("acme/client")
    opened = [github.add_issue(f"issue {i}", "body", name="acme/client") for i in range(3)]
    _close(github, opened[1], "2026-02-01T00:00:00Z")  # before the note's date
    _close(github, opened[2], "2026-05-01T00:00:00Z", "not_planned")  # after it
    repo.pulls[12] = "Refresh tools on list_changed"
    repo.pull_fields[12] = {"merged_at": "2026-04-02T10:00:00Z", "merge_commit_sha": merged,
                            "closed_at": "2026-04-02T10:00:00Z"}  # fmt: skip
    url = "https://github.com/acme/client"
    _note(project, base, *((f"{url}/issues/{n}", "2026-03-01") for n in opened),
          (f"{url}/pull/12", "2026-03-01"))  # fmt: skip

    results = _results(project, capsys)

    verdicts = {k.split("#")[1]: (v["verdict"], v["released_in"]) for k, v in results.items()}
    assert verdicts == {
        str(opened[0]): ("fresh", None),
        str(opened[1]): ("fresh", None),
        str(opened[2]): ("changed", None),
        "12": ("changed", "v1.2.0"),
    }
    assert "closed (not_planned) on 2026-05-01, after the note was verified on 2026-03-01" in str(
        results[f"n:acme/client#{opened[2]}"]["message"]
    )
    assert _results(project, capsys, "--offline") == {}  # GitHub is the only source


def test_unreachable_github_is_an_error_item_not_a_crash(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: "fn a() {}\n"})
    text = project.config_file.read_text().replace(
        '[issues]\nsink = "none"', '[issues]\nsink = "none"\napi_url = "http://127.0.0.1:9"'
    )
    project.config_file.write_text(text)
    _note(project, base, ("https://github.com/acme/client/issues/5", "2026-03-01"))

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    results = {r["id"]: r for r in json.loads(out)["results"]}
    assert code == 2 and "Traceback" not in err
    assert results["n:acme/client#5"]["error"] == "upstream-unreachable"
    assert results[f"n:{LIB}:1"]["verdict"] == "fresh"
    assert "run again later, or use --offline" in results["n:acme/client#5"]["message"]


def test_an_issue_github_does_not_have_names_the_fix(
    project: Project,
    upstream: Upstream,
    github: GithubServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", github.token)
    base = upstream.commit("lib", {LIB: "fn a() {}\n"})
    text = project.config_file.read_text().replace(
        '[issues]\nsink = "none"', f'[issues]\nsink = "none"\napi_url = "{github.url}"'
    )
    project.config_file.write_text(text)
    _note(project, base, ("https://github.com/acme/client/issues/404", "2026-03-01"))

    results = _results(project, capsys)

    assert results["n:acme/client#404"]["message"] == (
        "cannot read https://github.com/acme/client/issues/404: GitHub answered 404; check "
        "that acme/client has issue 404 (the url in the note), and for a private repository "
        "that $GITHUB_TOKEN holds a token that can read it"
    )
