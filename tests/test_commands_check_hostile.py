"""Hostile conditions: silent upstreams, crashes, damaged mirrors and state, huge input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Project
from watcher.gitbuild import Upstream

LIB = "src/lib.rs"
SOURCE = "pub fn a() -> u32 {\n    1\n}\n"


def _two_upstreams(project: Project, upstream: Upstream, url: str, extra: str = "") -> str:
    """A note on the good upstream, and one on `acme/silent`, fetched from `url`."""
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("good", f"{base} {LIB}:1-3")
    (project.root / "notes" / "other.md").write_text(
        f"---\nid: other\nsources:\n  - url: https://github.com/acme/silent\n"
        f"    commit: {base}\n    path: {LIB}:1-3\n---\n"
    )
    with project.config_file.open("a") as handle:
        handle.write(f'\n[[upstream]]\nrepo = "acme/silent"\nurl = "{url}"\n{extra}')
    return base


@pytest.mark.parametrize("scheme", ["git", "http"])
def test_a_silent_upstream_ends_within_its_limit_and_the_others_are_judged(
    scheme: str,
    silent_port: int,
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GIT_ALLOW_PROTOCOL", "file:git:http")
    url = f"{scheme}://127.0.0.1:{silent_port}/acme/silent.git"
    _two_upstreams(project, upstream, url, extra="fetch_seconds = 1\n")

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    report = json.loads(out)
    assert code == 2 and "Traceback" not in err
    by_repo = {u["repo"]: u for u in report["upstreams"]}
    assert "no answer within 1 s" in by_repo["acme/silent"]["error"]
    assert "fetch_seconds" in by_repo["acme/silent"]["error"]  # the fix is named
    verdicts = {r["id"]: (r["verdict"], r["error"]) for r in report["results"]}
    assert verdicts[f"other:{LIB}:1-3"] == ("error", "upstream-unreachable")
    assert verdicts[f"good:{LIB}:1-3"] == ("fresh", None)


def test_an_unexpected_exception_exits_2_with_its_traceback(
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("good", f"{base} {LIB}:1-3")

    def bug(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in watch")

    monkeypatch.setattr("watcher.judge.classify.judge", bug)
    code, _out, err = project.run("check", "--format", "json", capsys=capsys)

    assert code == 2  # never 1, which means "stale notes" and passes for success
    assert "Traceback" in err and "RuntimeError: a bug in watch" in err
    assert err.strip().splitlines()[-1].startswith("watch: internal error")


# --- secrets ------------------------------------------------------------------------

SECRET = "ghp_" + "S3cr3tT0k3nN3v3rSh0wnAnywh3r3xyz0123"  # shaped like a real token
WRONG = "WrongPassw0rdAlsoSecret"
API_TOKEN = "ghp_ApiTokenOfTheNotesRepoNeverShown42"


def _everything_written(project: Project, *texts: str) -> str:
    """Every output and every file the runs left (state, issues, mirror config): all but
    config.toml, which the user wrote, and git's object files."""
    files = [
        p
        for p in project.root.rglob("*")
        if p.is_file() and "objects" not in p.parts and p != project.config_file
    ]
    return "\n".join([*texts, *(p.read_text(errors="replace") for p in files)])


@pytest.mark.parametrize("working", [True, False], ids=["fetch-works", "fetch-fails"])
def test_credentials_in_an_upstream_url_never_leave_the_process(
    working: bool,
    tmp_path: Path,
    project: Project,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    unpaced: None,
) -> None:
    from tests.git_http import GitHttpServer
    from tests.github_server import GithubServer

    monkeypatch.setenv("GIT_ALLOW_PROTOCOL", "file:http")
    monkeypatch.setenv("GITHUB_TOKEN", API_TOKEN)
    served = Upstream(tmp_path / "srv" / "acme" / "client")
    base = served.commit("lib", {LIB: SOURCE})
    served.commit("a returns two (#7)", {LIB: SOURCE.replace("    1", "    2")})
    project.note("n", f"{base} {LIB}:1-3")
    with (
        GitHttpServer(tmp_path / "srv", "x-access-token", SECRET) as git_server,
        GithubServer(API_TOKEN) as api,
    ):
        password = SECRET if working else WRONG
        url = f"http://x-access-token:{password}@127.0.0.1:{git_server.port}/acme/client"
        project.config_file.write_text(
            'notes = "notes"\nrules = "rules"\nstate = "state"\ncache = "cache"\n'
            f'[[upstream]]\nrepo = "acme/client"\nurl = "{url}"\n'
            f'[issues]\nsink = "github"\nrepo = "notes/site"\napi_url = "{api.url}"\n'
            "dashboard = true\n"
        )
        code, out, err = project.run("-v", "check", "--format", "json", capsys=capsys)
        outputs, summary = tmp_path / "outputs.txt", tmp_path / "summary.md"
        action_code, action_out, action_err = project.run(
            "action", "--output-file", str(outputs), "--summary-file", str(summary), capsys=capsys
        )
        bodies = [i["body"] for i in api.issues()] + [
            c["body"] for i in api.issues() for c in api.comments(i["number"])
        ]

    report = json.loads(out)
    shown = f"http://127.0.0.1:{git_server.port}/acme/client"
    assert report["upstreams"][0]["url"] == shown  # the URL is shown, its user-info is not
    if working:
        assert (code, action_code) == (1, 0)  # the action succeeds: it filed the issue
        assert report["results"][0]["verdict"] == "changed"
        assert any("<!-- watch:note=n -->" in b for b in bodies)
    else:
        assert (code, action_code) == (2, 2)
        assert report["upstreams"][0]["error"] and shown in report["upstreams"][0]["error"]
        assert all(status == 401 for _, status in git_server.requests)
    written = _everything_written(
        project,
        out,
        err,
        action_out,
        action_err,
        outputs.read_text(),
        summary.read_text(),
        *bodies,
    )
    for secret in (SECRET, WRONG, API_TOKEN, "x-access-token:"):
        assert secret not in written
    mirror = project.root / "cache" / "acme__client.git"
    if working:
        mirror_config = (mirror / "config").read_text()
        assert f"url = {shown}\n" in mirror_config  # the cached mirror holds no credentials
    else:
        assert not mirror.exists()  # a failed first clone leaves nothing behind


def test_a_token_pasted_into_token_env_is_refused_without_echoing_it(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.config(sink="github")
    with project.config_file.open("a") as handle:
        handle.write(f'repo = "notes/site"\ntoken_env = "{SECRET}"\n')

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    assert (code, out) == (2, "")
    assert "key issues.token_env" in err and "revoke" in err and "Traceback" not in err
    assert SECRET not in err and SECRET[4:] not in err
    assert len(err.strip().splitlines()) == 1


def test_redaction_masks_userinfo_tokens_and_registered_secrets() -> None:
    from watcher import redact

    redact.add_secret("hunter2-the-password")
    text = (
        "fetch https://bob:hunter2-the-password@example.com/x.git failed; token "
        f"{SECRET} and github_pat_{'A' * 30}; ssh git@github.com:o/r kept; "
        "plain hunter2-the-password too"
    )
    assert redact.redact(text) == (
        "fetch https://example.com/x.git failed; token *** and ***; ssh git@github.com:o/r "
        "kept; plain *** too"
    )


# --- notes: forms that used to be dropped or doubled ---------------------------------


def test_permalink_forms_a_bom_and_repeated_citations(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    blob = f"https://github.com/acme/client/blob/{base}/{LIB}"
    project.note(
        "forms",
        raw="\ufeff---\nid: forms\nsources:\n"  # saved with a byte-order mark
        f"  - url: {blob}?plain=1#L1-L3\n"
        f"  - url: {blob}#L1C1-L3C2\n"
        + "".join(
            f"  - url: https://github.com/acme/client\n    commit: {c}\n    path: {LIB}:1-3\n"
            for c in (base, base, base[:10])  # the same lines three times
        )
        + "---\n",
    )
    (project.root / "notes" / "drafts.md").mkdir()  # a folder named like a note

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    results = json.loads(out)["results"]
    assert code == 0, err
    assert [(r["id"], r["verdict"]) for r in results] == [(f"forms:{LIB}:1-3", "fresh")]


# --- a huge cited file ----------------------------------------------------------------


def test_a_50_mb_cited_file_is_refused_by_the_size_limit(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    line = "pub const DATA: [u8; 4] = [1, 2, 3, 4];\n"
    big = line * (50 * 2**20 // len(line))
    base = upstream.commit("lib and generated data", {LIB: SOURCE, "src/generated.rs": big})
    project.note("big", f"{base} src/generated.rs:1-3", f"{base} {LIB}:1-3")

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    verdicts = {r["id"]: r for r in json.loads(out)["results"]}
    refused = verdicts["big:src/generated.rs:1-3"]
    assert code == 2 and "Traceback" not in err
    assert (refused["verdict"], refused["error"]) == ("error", "file-too-large")
    assert "src/generated.rs: 52,428," in refused["message"]
    assert "above [limits] file_bytes (10,000,000)" in refused["message"]
    assert verdicts[f"big:{LIB}:1-3"]["verdict"] == "fresh"  # the note's other citation


# --- damaged state ----------------------------------------------------------------------

CONFLICT = """{
<<<<<<< HEAD
  "notes": {"n": {"handle": "1", "state": "open"}}
=======
  "notes": {}
>>>>>>> origin/main
}
"""


def test_conflicted_bookkeeping_is_set_aside_and_no_issue_is_opened_twice(
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    unpaced: None,
) -> None:
    from tests.github_server import GithubServer

    base = upstream.commit("lib", {LIB: SOURCE})
    upstream.commit("a returns two", {LIB: SOURCE.replace("    1", "    2")})
    project.note("n", f"{base} {LIB}:1-3")
    monkeypatch.setenv("GITHUB_TOKEN", API_TOKEN)
    with GithubServer(API_TOKEN) as api:
        project.config(sink="github")
        with project.config_file.open("a") as handle:
            handle.write(f'repo = "notes/site"\napi_url = "{api.url}"\n')
        first, _, _ = project.run("check", "--format", "json", capsys=capsys)
        book = project.root / "state" / "bookkeeping" / "acme__client.json"
        book.write_text(CONFLICT)  # what a concurrent state commit can leave

        code, out, err = project.run("check", "--format", "json", capsys=capsys)
        issues = api.issues()

    assert (first, code) == (1, 1) and "Traceback" not in err
    assert "acme__client.json: state file is damaged (not valid JSON at line 2" in err
    assert len(issues) == 1  # found again by its marker, not opened a second time
    assert [i["action"] for i in json.loads(out)["issues"]] == ["unchanged"]
    assert len(list(book.parent.glob("acme__client.json.corrupt-*"))) == 1
    assert json.loads(book.read_text())["notes"]["n"]["handle"] == str(issues[0]["number"])


def test_random_bytes_in_a_state_file_and_leftover_temp_files(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("n", f"{base} {LIB}:1-3")
    project.run("check", "--format", "json", capsys=capsys)
    state = project.root / "state"
    (state / "acme__client.json").write_bytes(bytes(range(256)) * 4)
    leftover = state / ".acme__client.json.k2j3h4.tmp"  # a run killed mid-write
    leftover.write_text("{")

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    assert code == 0 and "Traceback" not in err
    assert "acme__client.json: state file is damaged (not UTF-8" in err
    assert json.loads(out)["results"][0]["verdict"] == "fresh"
    assert json.loads((state / "acme__client.json").read_text())["items"]  # rebuilt
    assert not leftover.exists()


# --- damaged mirrors, shared caches -------------------------------------------------------


def _mirror(project: Project) -> Path:
    return project.root / "cache" / "acme__client.git"


def _corrupt_pack(mirror: Path) -> None:
    for pack in (mirror / "objects" / "pack").glob("*.pack"):
        pack.chmod(0o644)
        data = bytearray(pack.read_bytes())
        for at in range(12, len(data) - 20, 97):  # past the header, before the trailer
            data[at] ^= 0xFF
        pack.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "damage", ["corrupt pack", "no HEAD", "empty folder", "a file", "garbage config"]
)
def test_a_damaged_mirror_is_cloned_again_by_itself(
    damage: str, project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    upstream.commit("a returns two", {LIB: SOURCE.replace("    1", "    2")})
    project.note("n", f"{base} {LIB}:1-3")
    _, before, _ = project.run("check", "--format", "json", capsys=capsys)
    mirror = _mirror(project)
    if damage == "corrupt pack":
        _corrupt_pack(mirror)
    elif damage == "no HEAD":
        (mirror / "HEAD").unlink()
    elif damage == "a file":  # the mirror's path is a file
        import shutil

        shutil.rmtree(mirror)
        mirror.write_text("not a mirror\n")
    elif damage == "garbage config":
        (mirror / "config").write_bytes(bytes(range(256)) + b"\n[core\n")
    else:
        for child in mirror.iterdir():
            if child.is_dir():
                import shutil

                shutil.rmtree(child)
            else:
                child.unlink()

    code, after, err = project.run("check", "--format", "json", capsys=capsys)
    again, _, again_err = project.run("check", "--format", "json", capsys=capsys)

    assert code == 1 and "Traceback" not in err
    assert "is damaged" in err and "cloning it again" in err
    assert json.loads(after)["results"] == json.loads(before)["results"]
    assert "not in acme/client" not in after  # never blamed on the notes
    assert again == 1 and "damaged" not in again_err  # healed for good


def test_two_processes_creating_one_mirror_take_turns(
    tmp_path: Path, project: Project, upstream: Upstream
) -> None:
    import subprocess
    import sys

    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("n", f"{base} {LIB}:1-3")
    other = Project(tmp_path / "second-site", upstream)
    other.note("n", f"{base} {LIB}:1-3")
    shared = tmp_path / "shared-cache"
    for site in (project, other):
        text = site.config_file.read_text().replace('cache = "cache"', f'cache = "{shared}"')
        site.config_file.write_text(text)

    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "watcher", "check", "--format", "json", "--config", str(site)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for site in (project.config_file, other.config_file)
    ]
    finished = [run.communicate(timeout=120) for run in runs]

    assert [run.returncode for run in runs] == [0, 0], finished
    assert all(json.loads(out)["results"][0]["verdict"] == "fresh" for out, _ in finished)


def test_an_unwritable_cache_is_one_clear_error(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("n", f"{base} {LIB}:1-3")
    (project.root / "blocker").write_text("a file where the cache's parent should be")
    text = project.config_file.read_text().replace('cache = "cache"', 'cache = "blocker/cache"')
    project.config_file.write_text(text)

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    assert code == 2 and "Traceback" not in err
    message = json.loads(out)["upstreams"][0]["error"]
    assert "cannot write the mirror cache" in message and "set `cache` in config.toml" in message


def test_a_silent_github_api_is_given_up_within_its_timeout(
    silent_port: int,
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    upstream.commit("a returns two", {LIB: SOURCE.replace("    1", "    2")})
    project.note("n", f"{base} {LIB}:1-3")
    project.note(
        "i", raw="---\nid: i\nsources:\n  - url: https://github.com/acme/client/issues/3\n---\n"
    )
    monkeypatch.setenv("GITHUB_TOKEN", API_TOKEN)
    project.config(sink="github")
    with project.config_file.open("a") as handle:
        handle.write(
            f'repo = "notes/site"\napi_url = "http://127.0.0.1:{silent_port}"\n'
            "timeout_seconds = 1\nretries = 0\n"
        )

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    report = json.loads(out)
    assert code == 2 and "Traceback" not in err
    verdicts = {r["id"]: (r["verdict"], r["error"]) for r in report["results"]}
    assert verdicts[f"n:{LIB}:1-3"] == ("changed", None)  # the upstream is still judged
    assert ("error", "upstream-unreachable") in verdicts.values()  # the issue citation
    # GitHub unreachable is run-level: note `n` fails to file (and says so), while note `i`,
    # whose only item is the unreadable issue citation, is left alone rather than filed
    # as an error
    assert [(i["note"], i["action"]) for i in report["issues"]] == [("n", "failed")]
    assert report["errors"]
    assert API_TOKEN not in out + err


def test_damaged_entries_in_a_valid_state_file_are_judged_again(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("n", f"{base} {LIB}:1-3")
    project.run("check", "--format", "json", capsys=capsys)
    file = project.root / "state" / "acme__client.json"
    saved = json.loads(file.read_text())
    for entry in saved["items"].values():
        entry["result"] = {"verdict": "no such verdict"}  # a hand edit gone wrong
    saved["items"]["stray"] = 5
    saved["paths"] = ["not", "a", "mapping"]
    saved["releases"] = "neither"
    file.write_text(json.dumps(saved))

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    assert code == 0 and "Traceback" not in err
    assert json.loads(out)["results"][0]["verdict"] == "fresh"


def test_offline_a_damaged_mirror_is_one_clear_error(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("n", f"{base} {LIB}:1-3")
    project.run("check", "--format", "json", capsys=capsys)
    _corrupt_pack(_mirror(project))

    code, out, err = project.run("check", "--format", "json", "--offline", capsys=capsys)

    assert code == 2 and "Traceback" not in err
    message = json.loads(out)["upstreams"][0]["error"]
    assert "fails its checksum" in message and "run without --offline" in message
