"""Secrets never leave the process: redaction runs last, on the text as it is written
(after Markdown escaping, templating and cutting), in both sinks and on stdout; and a
token pasted where the name of its variable belongs is refused without being echoed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Project
from tests.github_server import GithubServer
from tests.rust_client import LIST_TOOLS
from watcher import redact

LIB = "src/client.rs"
TOKEN = "ghp_TheRealTokenOfThisSite0123456789ab"  # the sink's token, in GITHUB_TOKEN
OTHER = "ghp_SomeoneElsesToken0123456789abcdefgh"  # shaped like a token, not registered
PASSWORD = "pa_ss*wo|rd<&>"  # a registered secret that Markdown and HTML would escape


def _stale_note_with_secrets_in_its_title(project: Project, sink: str, issues: str) -> None:
    base = project.upstream.commit("first", {LIB: LIST_TOOLS})
    title = f"Leak {TOKEN} and {OTHER} and {PASSWORD} " + "x" * 480 + f" {TOKEN}"
    project.note(
        "leaky",
        raw=f"---\nid: leaky\ntitle: '{title}'\nsources:\n"
        f"  - url: https://github.com/{project.repo}\n    commit: {base}\n"
        f"    path: {LIB}:1-7\n---\n\nBody.\n",
    )
    project.config(sink=sink)
    with project.config_file.open("a", encoding="utf-8") as handle:
        handle.write(f'repo = "notes/site"\ndashboard = true\n{issues}')
    text = LIST_TOOLS.replace("Mode::Legacy => None,", "Mode::Legacy => response.next_cursor,")
    project.upstream.commit("Send the cursor (#42)", {LIB: text})


def _assert_no_secret(text: str) -> None:
    for secret in (TOKEN, OTHER, PASSWORD):
        assert secret not in text
    # ... nor any escaped form or a piece long enough to be of use
    for piece in ("TheRealTokenOfThis", "SomeoneElsesToken", "wo\\|rd", "wo|rd", "pa\\_ss"):
        assert piece not in text


def test_a_token_in_a_note_title_never_reaches_an_issue_file_or_stdout(
    project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    redact.add_secret(PASSWORD)
    _stale_note_with_secrets_in_its_title(project, "files", "")

    code, out, err = project.run("check", "--format", "markdown", capsys=capsys)

    issues = project.root / "state" / "issues"
    document = (issues / "leaky.md").read_text(encoding="utf-8")
    board = (issues / "_dashboard" / "acme__client.md").read_text(encoding="utf-8")
    assert code == 1 and "Leak \\*\\*\\*" in document  # the title is there, masked
    for text in (document, board, out, err):
        _assert_no_secret(text)
    _, out, err = project.run("check", "--format", "json", capsys=capsys)
    assert json.loads(out)["summary"]["changed"] == 1
    _assert_no_secret(out + err)
    for file in (project.root / "state").rglob("*"):
        if file.is_file():
            _assert_no_secret(file.read_text(encoding="utf-8"))


def test_a_token_in_a_note_title_never_reaches_a_github_issue(
    project: Project,
    capsys: pytest.CaptureFixture[str],
    api: GithubServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    redact.add_secret(PASSWORD)
    _stale_note_with_secrets_in_its_title(project, "github", f'api_url = "{api.url}"\n')

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    assert code == 1
    assert [i["action"] for i in json.loads(out)["issues"]] == ["opened"]
    sent = [r.body for r in api.writes()]
    assert len(sent) >= 2  # the note's issue and the dashboard
    for issue in api.issues():
        _assert_no_secret(issue["title"] + issue["body"])
    _assert_no_secret(json.dumps(sent) + out + err)


@pytest.mark.parametrize(
    "written",
    [
        "ghp\\_TheRealTokenOfThisSite0123456789ab",  # Markdown
        "ghp\\\\_TheRealTokenOfThisSite0123456789ab",  # Markdown inside JSON
        "github\\_pat\\_11AAAAAAA0\\_abcdefghijklmnopqrstu",
        "pa\\_ss\\*wo\\|rd\\<\\&\\>",  # a registered secret, Markdown-escaped
        "pa_ss*wo|rd&lt;&amp;&gt;",  # HTML entities
        "pa_ss%2Awo%7Crd%3C%26%3E",  # percent-encoded
        "pa_ss*wo|rd\\u003c\\u0026\\u003e",  # JSON escaped for HTML
    ],
)
def test_every_escaped_form_of_a_secret_is_masked(written: str) -> None:
    redact.add_secret(PASSWORD)
    assert redact.redact(f"before {written} after") == "before *** after"


def test_a_cut_never_leaves_the_head_of_a_token() -> None:
    from watcher.issues import markdown as md

    shown = md.text("x" * 90 + " ghp_" + "A1b2" * 10 + " " + "y" * 100, 100)
    assert "A1b2" not in shown and "more characters cut" in shown


# --- token_env --------------------------------------------------------------------

HEX_TOKEN = "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3"  # a classic 40-hex token


@pytest.mark.parametrize(
    "value",
    [
        HEX_TOKEN,
        HEX_TOKEN.upper(),  # also a valid-looking upper-case name
        "ghp_" + "x" * 36,
        "github_pat_11ABCDEFG0" + "y" * 40,
        "glpat-abcdefghijklmnopqrst",
        "c29tZS1iYXNlNjQtc2VjcmV0LXZhbHVl",  # base64
        "github_token",  # lower case: not how a variable is named
        "GITHUB TOKEN",
        "1TOKEN",
        "GITHUB_TOKEN\n",
    ],
)
def test_token_env_takes_only_a_variable_name_and_never_echoes_the_value(
    value: str, project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.config(sink="github")
    with project.config_file.open("a", encoding="utf-8") as handle:
        handle.write(f'repo = "notes/site"\ntoken_env = {json.dumps(value)}\n')

    check = project.run("check", "--format", "json", capsys=capsys)
    validate = project.run("validate", capsys=capsys)

    for code, out, err in (check, validate):
        assert code == 2 and "key issues.token_env" in err and "Traceback" not in err
        assert value not in out + err and (len(value) < 20 or value[4:16] not in out + err)
        assert "is not set: dry run" not in err


@pytest.mark.parametrize("name", ["GITHUB_TOKEN", "WATCH_TOKEN_2", "_TOKEN", "NOTES_SITE_TOKEN"])
def test_token_env_accepts_a_variable_name(name: str, tmp_path: Path) -> None:
    from watcher.config import load

    (tmp_path / "notes").mkdir()
    file = tmp_path / "config.toml"
    file.write_text(f'[issues]\nsink = "github"\ntoken_env = "{name}"\n', encoding="utf-8")
    assert load(file).issues.token_env == name
