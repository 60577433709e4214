"""Paths stay inside: a citation, a rule or config.toml naming a file outside the upstream
repository (or a repository that is a path) is refused where it is written, as that
item's error; the rest of the upstream is judged, and git never sees the value."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Project
from tests.support import Trace
from watcher.commands.init import read_remote
from watcher.gitbuild import Upstream
from watcher.inputs.inside import path_problem, repo_problem

LIB = "src/lib.py"
SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("../../etc/passwd", "leaves the repository"),
        ("src/../../x.py", "leaves the repository"),
        ("/etc/passwd", "is absolute"),
        ("\\etc\\passwd", "is absolute"),
        ("C:\\Windows\\x.py", "is absolute"),
        ("~/x.py", "starts with `~`"),
        ("src/\0x.py", "control character"),
        ("./src/lib.py", "write it as src/lib.py"),
        ("src//lib.py", "write it as src/lib.py"),
    ],
)
def test_a_path_that_is_not_inside_a_repository_is_refused(path: str, says: str) -> None:
    problem = path_problem(path)
    assert problem is not None and says in problem


@pytest.mark.parametrize("path", ["src/lib.py", "a..b/c.py", ".github/x.yml", "README"])
def test_paths_inside_are_kept(path: str) -> None:
    assert path_problem(path) is None


@pytest.mark.parametrize(
    "repo", ["../..", "./x", "a/..", "a/.", "-a/b", "a/-b", "a", "a/b/c", "a/b\n"]
)
def test_a_repo_that_is_a_path_or_an_option_is_refused(repo: str) -> None:
    assert "expected OWNER/NAME" in (repo_problem(repo) or "")


def test_escaping_citations_are_their_own_errors_and_the_upstream_is_judged(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    note = project.note(
        "n", f"{base} {LIB}:1-2", f"{base} ../../etc/passwd:1-2", f"{base} /etc/passwd"
    )
    project.note("other", f"{base} {LIB}:5-6")

    code, out, _ = project.run("validate", capsys=capsys)
    assert code == 2
    assert (
        "notes/n.md:10: sources[1]: path '../../etc/passwd' leaves the repository (a `..` "
        "part); write the path from the repository root, like src/lib.rs"
    ) in out
    assert "notes/n.md:13: sources[2]: path '/etc/passwd' is absolute" in out

    code, out, err = project.run("check", "--format", "json", capsys=capsys)
    report = json.loads(out)
    assert code == 2 and "Traceback" not in err
    assert [u["error"] for u in report["upstreams"]] == [None]  # the upstream was judged
    results = {r["id"]: r for r in report["results"]}
    assert results[f"n:{LIB}:1-2"]["verdict"] == "fresh"
    assert results[f"other:{LIB}:5-6"]["verdict"] == "fresh"
    for cited, line in (("../../etc/passwd:1-2", 10), ("/etc/passwd", 13)):
        item = results[f"n:{cited}"]
        assert (item["verdict"], item["error"], item["note"]) == ("error", "note-invalid", "n")
        assert item["message"].startswith(f"notes/n.md:{line}: sources[")
    assert str(project.root) not in out + err  # no path of this machine
    assert note.is_file()

    project.config(sink="files")  # the note's issue names its bad citation and the fix
    project.run("check", capsys=capsys)
    issue = (project.root / "state" / "issues" / "n.md").read_text()
    assert "| `n:../../etc/passwd:1-2` | citation | **error** |" in issue
    assert "path '/etc/passwd' is absolute; a citation names a file inside" in issue
    assert not (project.root / "state" / "issues" / "other.md").exists()  # fresh: no issue


def test_a_permalink_leaving_the_repository_is_refused(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    link = f"https://github.com/acme/client/blob/{base}/../../etc/passwd#L1-L2"
    project.note("n", raw=f"---\nid: n\nsources:\n  - url: {link}\n---\n")
    code, out, _ = project.run("validate", capsys=capsys)
    assert code == 2 and "notes/n.md:4: sources[0]: path '../../etc/passwd' leaves" in out


def test_a_rule_path_or_repo_leaving_the_repository_is_that_rules_error(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("n", f"{base} {LIB}:1-2")
    project.rules(
        """\
        [[rule]]
        id = "escapes"
        note = "n"
        path = "../../../etc/passwd"
        language = "python"
        query = '(function_definition) @target'

        [[rule]]
        id = "not-a-repo"
        note = "n"
        path = "src/lib.py"
        repo = "../.."
        query = '(function_definition) @target'
        """
    )
    code, out, _ = project.run("validate", capsys=capsys)
    assert code == 2
    assert "rules/rules.toml:1: rule escapes: path '../../../etc/passwd' leaves the" in out
    assert "rules/rules.toml:8: rule not-a-repo: repo: expected OWNER/NAME" in out

    code, out, _ = project.run("check", "--format", "json", capsys=capsys)
    report = json.loads(out)
    results = {r["id"]: r for r in report["results"]}
    assert [u["error"] for u in report["upstreams"]] == [None]
    assert results[f"n:{LIB}:1-2"]["verdict"] == "fresh"
    for rule in ("escapes", "not-a-repo"):  # the rule's own error, for its note
        assert (results[rule]["kind"], results[rule]["note"]) == ("rule", "n")
        assert results[rule]["error"] == "rule-invalid"


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('repo = "../.."', "key upstream.1.repo: expected OWNER/NAME"),
        ('repo = "a/b"\nurl = "--upload-pack=touch x"', "key upstream.1.url: starts"),
        ('repo = "a/b"\nbranch = "--orphan"', "is not a branch name"),
        ('repo = "a/b"\nbranch = "main:refs/heads/x"', "is not a branch name"),
    ],
)
def test_config_refuses_a_repo_url_or_branch_git_could_misread(
    project: Project, capsys: pytest.CaptureFixture[str], line: str, says: str
) -> None:
    with project.config_file.open("a") as handle:
        handle.write(f"\n[[upstream]]\n{line}\n")
    code, _, err = project.run("validate", capsys=capsys)
    assert code == 2 and says in err, err


def test_init_never_runs_an_option_given_as_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], trace: Trace
) -> None:
    from watcher.cli import main

    flag = tmp_path / "ran"
    trace.start()
    code = main(["init", str(tmp_path / "site"), "--upstream", "a/b",
                 f"--url=--upload-pack=touch {flag}"])  # fmt: skip
    _, err = capsys.readouterr()
    assert code == 2 and "not a URL or a path" in err
    assert not flag.exists() and not (tmp_path / "site").exists()
    assert trace.commands("ls-remote") == []
    # Even handed straight to git, the value is a repository to ls-remote, not an option.
    assert read_remote(f"--upload-pack=touch {flag}").reached is False
    assert not flag.exists()
    assert ["--symref", "--", f"--upload-pack=touch {flag}", "HEAD", "refs/tags/*"] in (
        trace.commands("ls-remote")
    )


def test_git_is_never_handed_a_revision_it_could_read_as_an_option(
    project: Project, upstream: Upstream
) -> None:
    from watcher.config import load
    from watcher.mirror.mirrors import Mirror

    upstream.commit("lib", {LIB: SOURCE})
    config = load(project.config_file)
    mirror = Mirror(config.upstream[0], config.cache)
    try:
        mirror.sync()
        assert mirror.resolve("--git-dir") is None  # rev-parse would print the git dir
        assert mirror.resolve("main") == upstream.head()
    finally:
        mirror.close()


def test_a_git_failure_never_shows_the_mirror_cache_path(tmp_path: Path) -> None:
    from watcher.errors import UpstreamError
    from watcher.mirror.git import run

    bare = tmp_path / "cache" / "acme__client.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    with pytest.raises(UpstreamError) as caught:
        run(bare, "--literal-pathspecs", "log", "--", "../../etc/passwd")
    assert "outside repository" in str(caught.value)
    assert str(tmp_path) not in str(caught.value) and "acme__client.git" in str(caught.value)


def test_a_missing_mirror_is_named_without_the_cache_path(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("n", f"{base} {LIB}:1-2")
    code, out, err = project.run("check", "--offline", "--format", "json", capsys=capsys)
    report = json.loads(out)
    assert code == 2
    assert report["upstreams"][0]["error"] == (
        "acme/client: no mirror in the cache yet; run `watch sync` (or drop --offline)"
    )
    assert str(project.root) not in out + err


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/../../issues/1",
        "https://github.com/acme/..",
    ],
)
def test_a_url_naming_a_path_for_a_repository_is_refused(
    project: Project, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    extra = "    commit: abcdef12\n    path: src/lib.py\n" if "issues" not in url else ""
    project.note("n", raw=f"---\nid: n\nsources:\n  - url: {url}\n{extra}---\n")
    code, out, _ = project.run("validate", capsys=capsys)
    assert code == 2 and "notes/n.md:4: sources[0]: url: expected OWNER/NAME" in out


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/acme/notes",
        "https://github.com/acme/notes.git",
        "https://github.com/acme/notes/issues/3",
        "https://x-access-token:ghp_secret0123456789@github.com/acme/notes",
    ],
)
def test_a_url_where_owner_name_belongs_is_refused_with_what_to_write(
    project: Project, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    text = project.config_file.read_text().replace(
        '[issues]\nsink = "none"', f'[issues]\nsink = "none"\nrepo = "{url}"'
    )
    project.config_file.write_text(text)
    code, _, err = project.run("validate", capsys=capsys)
    assert code == 2
    assert "key issues.repo: expected OWNER/NAME, got a URL; write acme/notes" in err
    assert "ghp_secret" not in err


def test_a_token_pasted_where_owner_name_belongs_is_not_echoed() -> None:
    token = "ghp_" + "A1b2C3d4E5" * 4
    problem = repo_problem(token) or ""
    assert "expected OWNER/NAME" in problem and token not in problem
