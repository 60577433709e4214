"""`watch init` makes a site that validates and checks clean; `watch validate` finds every
kind of bad input offline in one pass; `watch schema` prints the file formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from watcher.cli import build_parser, main
from watcher.commands.init import read_remote, release_glob
from watcher.gitbuild import Upstream

LIB = "src/lib.rs"
SOURCE = "pub fn answer() -> u32 {\n    42\n}\n\npub fn other() -> u32 {\n    1\n}\n"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def trunk(tmp_path: Path) -> Upstream:
    """An upstream whose default branch is not `main`, with releases tagged `lib-v*`."""
    upstream = Upstream(tmp_path / "upstream", branch="trunk")
    upstream.commit("first", {LIB: SOURCE})
    upstream.tag("lib-v0.1.0")
    upstream.tag("lib-macros-v0.1.0")
    upstream.commit("second", {"README.md": "hello\n"})
    upstream.tag("lib-v0.2.0")
    return upstream


def test_init_reads_the_remote_and_the_site_validates_and_checks_clean(
    tmp_path: Path, trunk: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "site"
    code, out, _ = run(capsys, "init", str(site), "--upstream", "acme/lib", "--url", trunk.url)
    assert code == 0, out
    assert "default branch trunk, releases lib-v*" in out
    for name in ("config.toml", "notes/example.md", "rules/example.toml", ".gitignore",
                 ".github/workflows/watch.yml", ".taplo.toml", ".schemas/note.schema.json"):  # fmt: skip
        assert (site / name).is_file(), name
    assert (
        json.loads((site / ".schemas/rule.schema.json").read_text())["title"] == "watch rule file"
    )
    config = (site / "config.toml").read_text()
    assert 'branch = "trunk"' in config and 'release_tags = "lib-v*"' in config
    assert "/state/.lock" in (site / ".gitignore").read_text()
    workflow = (site / ".github/workflows/watch.yml").read_text()
    assert "acme__lib" in workflow and "openai" not in workflow and "uses: ./\n" not in workflow
    assert trunk.head() in (site / "notes/example.md").read_text()  # the example commit

    cfg = str(site / "config.toml")
    assert run(capsys, "validate", "--config", cfg)[:2] == (
        0,
        "config.toml: 1 note, 0 rules: valid\n",
    )
    code, out, _ = run(capsys, "check", "--config", cfg, "--format", "json")
    assert code == 0 and json.loads(out)["summary"]["error"] == 0

    # Uncommenting the example citation (as its comment says) gives a tracked, fresh item.
    first = trunk.git("rev-list", "--max-parents=0", "HEAD").strip()
    note = site / "notes/example.md"
    note.write_text(
        note.read_text()
        .replace("  # - url:", "  - url:")
        .replace("  #   ", "    ")
        .replace(f"commit: {trunk.head()}", f"commit: {first}")
        .replace("path: src/lib.rs:10-20", f"path: {LIB}:1-3")  # the upstream's own folder
    )
    assert run(capsys, "validate", "--config", cfg)[0] == 0
    code, out, _ = run(capsys, "check", "--config", cfg, "--format", "json")
    assert code == 0, out
    assert [r["verdict"] for r in json.loads(out)["results"]] == ["fresh"]


def test_init_works_offline_and_never_overwrites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "site"
    gone = (tmp_path / "no-such-repo").as_uri()
    code, out, _ = run(capsys, "init", str(site), "--upstream", "acme/lib", "--url", gone)
    assert code == 0 and "not reachable now; assumed branch main" in out
    assert 'branch = "main"' in (site / "config.toml").read_text()
    assert run(capsys, "validate", "--config", str(site / "config.toml"))[0] == 0

    code, _, err = run(capsys, "init", str(site), "--upstream", "acme/lib")
    assert code == 2 and "already exists" in err


def test_init_rejects_a_malformed_upstream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "init", str(tmp_path / "s"), "--upstream", "just-a-name")
    assert code == 2 and "expected OWNER/NAME" in err
    assert not (tmp_path / "s").exists()


def test_read_remote_is_time_bound(tmp_path: Path, trunk: Upstream) -> None:
    assert read_remote(trunk.url).branch == "trunk"
    # No time at all: git is given up on, and init goes on with defaults.
    assert read_remote(trunk.url, timeout=0.0).reached is False


@pytest.mark.parametrize(
    ("tags", "glob"),
    [
        (["v1.0.0", "v1.1.0", "nightly"], "v*"),
        (["rust-v0.1.0", "rust-v0.2.0", "cli-0.1"], "rust-v*"),
        (["lib-v1.0", "lib-macros-v1.0"], "lib-v*"),
        (["1.0.0", "1.1.0"], "*"),
        ([], "*"),
    ],
)
def test_release_glob(tags: list[str], glob: str) -> None:
    assert release_glob(tags) == glob


def test_example_workflow_is_the_init_template() -> None:
    """examples/workflows/watch.yml and the file init writes cannot drift apart."""
    root = Path(__file__).resolve().parents[1]
    example = (root / "examples/workflows/watch.yml").read_text(encoding="utf-8")
    template = (root / "watcher/templates/workflow.yml").read_text(encoding="utf-8")
    assert template == example, "update watcher/templates/workflow.yml with the example"


def test_validate_reports_every_problem_offline_in_one_pass(
    tmp_path: Path, trunk: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "site"
    gone = (tmp_path / "nowhere").as_uri()  # validate never fetches: an unreachable URL is fine
    assert run(capsys, "init", str(site), "--upstream", "acme/lib", "--url", gone)[0] == 0
    (site / "notes/typo.md").write_text("---\nid: typo\nsouces: []\n---\n")
    (site / "notes/README.md").write_text("# About these notes\n")
    (site / "rules/bad.toml").write_text(
        "[[rule]]\nid = 'orphan'\nnote = 'nobody'\npath = 'src/lib.rs'\n"
        "query = '(function_item) @target'\n"
    )
    (site / "rules/tested.toml").write_text(
        "[[rule]]\nid = 'answer-is-42'\nnote = 'example-note'\npath = 'src/lib.rs'\n"
        "query = '(function_item name: (identifier) @n (#eq? @n \"answer\") body: (block) @body) @target'\n"
        "[[rule.claims]]\ncapture = 'body'\nequals = '{ 42 }'\n"
        "[[rule.tests]]\nname = 'as written'\nexpect = 'holds'\ncode = 'fn answer() -> u32 { 42 }'\n"
        "[[rule.tests]]\nname = 'wrong expectation'\nexpect = 'holds'\ncode = 'fn answer() -> u32 { 7 }'\n"
    )
    note = site / "notes/example.md"  # the rule's note needs a code citation of its file
    note.write_text(note.read_text().replace(
        "  - url: https://github.com/acme/lib\n    title: the upstream",
        "  - url: https://github.com/acme/lib\n    commit: abcdef12\n    path: src/lib.rs:1-3\n"
        "  - url: https://github.com/acme/lib\n    title: the upstream",
    ))  # fmt: skip

    code, out, err = run(capsys, "validate", "--config", str(site / "config.toml"))

    assert code == 2
    lines = out.splitlines()
    assert any(
        "notes/typo.md:3: unknown key `souces` (did you mean `sources`?)" in x for x in lines
    )
    assert any("rule orphan: note 'nobody' does not exist" in x for x in lines)
    assert any("test 'wrong expectation': expected holds, got broken" in x for x in lines)
    assert not any("as written" in x for x in lines)
    assert lines[-1] == "config.toml: 2 notes, 1 rule: 3 problems"
    assert "1 Markdown file without front matter" in err and "notes/README.md" in err


def test_validate_names_a_bad_config_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "config.toml").write_text("notes = 'notes'\ntrack_citation = true\n")
    code, _, err = run(capsys, "validate", "--config", str(tmp_path / "config.toml"))
    assert code == 2 and err.count("\n") == 1
    assert "key track_citation: unknown key (did you mean `track_citations`?)" in err


def test_pre_commit_hook_runs_validate() -> None:
    import yaml

    root = Path(__file__).resolve().parents[1]
    [hook] = yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "watch-validate" and hook["language"] == "python"
    assert hook["entry"] == "python -m watcher validate" and hook["pass_filenames"] is False
    args = build_parser().parse_args(hook["entry"].split()[3:])
    assert args.handler.__name__ == "_validate"


def _tree(root: Path) -> dict[str, str]:
    """Every entry below `root` (symlinks not followed) and what it is."""
    found = {}
    for path in sorted(root.rglob("*")):
        kind = "link" if path.is_symlink() else "dir" if path.is_dir() else "file"
        found[path.relative_to(root).as_posix()] = kind
    return found


@pytest.mark.parametrize("name", ["notes", "rules", ".github", ".schemas"])
def test_init_refuses_a_file_where_the_site_has_a_folder_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / name).write_text("mine\n")
    gone = (tmp_path / "no-such-repo").as_uri()

    code, _, err = run(capsys, "init", str(site), "--upstream", "acme/lib", "--url", gone)

    assert code == 2 and "Traceback" not in err
    assert f"{name} is a file where the site has a folder" in err
    assert "nothing was written" in err
    assert _tree(site) == {name: "file"} and (site / name).read_text() == "mine\n"
    # Moved away, a second run makes the whole site.
    (site / name).unlink()
    assert run(capsys, "init", str(site), "--upstream", "acme/lib", "--url", gone)[0] == 0
    assert (site / "config.toml").is_file() and (site / "rules/example.toml").is_file()


def test_init_refuses_a_folder_that_is_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "site"
    site.write_text("not a folder\n")
    code, _, err = run(capsys, "init", str(site), "--upstream", "acme/lib", "--url", "x")
    assert code == 2 and "is a file, not a folder" in err
    assert site.read_text() == "not a folder\n" and _tree(tmp_path) == {"site": "file"}


def test_init_never_writes_through_a_symlink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site, outside = tmp_path / "site", tmp_path / "outside"
    (site / ".github").mkdir(parents=True)
    outside.mkdir()
    (site / ".gitignore").symlink_to(outside / "gitignore")  # dangling, to a file
    (site / "notes").symlink_to(outside / "notes")  # dangling, to a folder
    (site / "rules").symlink_to(outside)  # to a folder that is there
    (site / ".github" / "workflows").symlink_to("/nonexistent-watch-test/workflows")
    (site / "config.toml").symlink_to(outside / "config.toml")
    before = _tree(site)

    code, _, err = run(capsys, "init", str(site), "--upstream", "acme/lib", "--url", "x")

    assert code == 2 and "Traceback" not in err
    for name in ("config.toml", ".gitignore", "notes", "rules", ".github/workflows"):
        assert f"{name} is a symlink (init never writes through one)" in err
    assert _tree(site) == before and _tree(outside) == {}


def test_init_into_a_folder_that_exists_keeps_its_files_and_writes_all_or_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from watcher.commands import init as init_command

    site = tmp_path / "site"
    (site / "notes").mkdir(parents=True)
    (site / "notes" / "mine.md").write_text("# mine\n")
    (site / ".gitignore").write_text("mine\n")
    before = _tree(site)
    made = init_command._create
    calls = []

    def disk_full(directory: Path, relative: str, text: str, created: list[Path]) -> None:
        calls.append(relative)
        if len(calls) == 4:  # config.toml, a note, a rule file written: then the disk fills
            raise OSError(28, "No space left on device", str(directory / relative))
        made(directory, relative, text, created)

    monkeypatch.setattr(init_command, "_create", disk_full)
    code, _, err = run(capsys, "init", str(site), "--upstream", "acme/lib", "--url", "x")
    assert code == 2 and "cannot write the site (No space left on device); nothing was" in err
    assert _tree(site) == before  # the files and folders it made are gone again

    monkeypatch.undo()
    code, out, _ = run(capsys, "init", str(site), "--upstream", "acme/lib", "--url", "x")
    assert code == 0 and "  kept     .gitignore (exists)\n" in out
    assert (site / ".gitignore").read_text() == "mine\n"
    assert (site / "rules" / "example.toml").is_file()


def test_a_new_site_folder_is_renamed_into_place_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from watcher.commands import init as init_command

    made = init_command._create

    def fails_late(directory: Path, relative: str, text: str, created: list[Path]) -> None:
        if relative == ".taplo.toml":
            raise OSError(28, "No space left on device", relative)
        made(directory, relative, text, created)

    monkeypatch.setattr(init_command, "_create", fails_late)
    code, _, err = run(capsys, "init", str(tmp_path / "a" / "site"), "--upstream", "acme/lib",
                       "--url", "x")  # fmt: skip
    assert code == 2 and "nothing was written" in err
    assert _tree(tmp_path) == {"a": "dir"}  # no half site, no temp folder left


@pytest.mark.parametrize("exists", [True, False])
def test_init_stopped_by_ctrl_c_leaves_nothing_and_runs_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    exists: bool,
) -> None:  # fmt: skip
    from watcher.commands import init as init_command

    site = tmp_path / "site"
    if exists:
        site.mkdir()
    made = init_command._create

    def interrupted(directory: Path, relative: str, text: str, created: list[Path]) -> None:
        if relative == ".github/workflows/watch.yml":
            raise KeyboardInterrupt
        made(directory, relative, text, created)

    monkeypatch.setattr(init_command, "_create", interrupted)
    code, _, err = run(capsys, "init", str(site), "--upstream", "acme/lib", "--url", "x")
    assert code == 130 and "interrupted" in err
    assert _tree(tmp_path) == ({"site": "dir"} if exists else {})

    monkeypatch.undo()
    assert run(capsys, "init", str(site), "--upstream", "acme/lib", "--url", "x")[0] == 0
    assert (site / ".github/workflows/watch.yml").is_file()


def test_a_leftover_temp_folder_of_a_killed_init_is_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    leftover = tmp_path / f".site.init-{os.getpid()}"
    (leftover / "notes").mkdir(parents=True)
    code, _, _ = run(capsys, "init", str(tmp_path / "site"), "--upstream", "acme/lib",
                     "--url", "x")  # fmt: skip
    assert code == 0 and (tmp_path / "site" / "config.toml").is_file()
    assert _tree(tmp_path)[leftover.name] == "dir" and (leftover / "notes").is_dir()


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("file:///srv/mirrors/lib.git", True),
        ("/srv/mirrors/lib.git", True),
        ("../lib", True),
        ("https://github.com/acme/lib.git", False),
        ("ssh://git@example.com/acme/lib.git", False),
        ("git@github.com:acme/lib.git", False),
    ],
)
def test_a_url_is_local_when_git_reads_it_from_disk(url: str, local: bool) -> None:
    from watcher.commands.init import is_local

    assert is_local(url) is local


def test_init_warns_that_ci_cannot_fetch_a_url_on_this_machine(
    tmp_path: Path, trunk: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "init", str(tmp_path / "site"), "--upstream", "acme/lib",
                       "--url", trunk.url)  # fmt: skip
    assert code == 0
    assert "--url is a path on this machine" in err and "every run would exit 2" in err
    assert "https://github.com/acme/lib.git" in err  # the fix
    assert str(tmp_path) not in err  # no local path in the message
    config = (tmp_path / "site" / "config.toml").read_text()
    assert "CI cannot fetch it" in config


def test_init_writes_the_examples_in_the_upstreams_language(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Python upstream gets a Python example: its main language is read from the file
    list at HEAD (tests and docs aside), fetched shallow and without blobs."""
    upstream = Upstream(tmp_path / "upstream")
    upstream.commit(
        "sdk",
        {
            "src/agents/run.py": "def run():\n    pass\n",
            "src/agents/tool.py": "def tool():\n    pass\n",
            "src/agents/util/x.py": "X = 1\n",
            "tests/test_a.py": "", "tests/test_b.py": "", "tests/test_c.py": "",
            "tests/test_d.py": "", "scripts/build.rs": "fn main() {}\n",
        },
    )  # fmt: skip
    site = tmp_path / "site"

    code, out, _ = run(capsys, "init", str(site), "--upstream", "acme/sdk", "--url", upstream.url)

    assert code == 0
    assert "mostly python, under src/agents/" in out
    note = (site / "notes/example.md").read_text()
    assert "path: src/agents/client.py:10-20" in note and "```python block" in note
    rule = (site / "rules/example.toml").read_text()
    assert 'path = "src/agents/client.py"' in rule and "(function_definition name:" in rule
    assert "function_item" not in rule + note and ".rs" not in rule + note
    assert run(capsys, "validate", "--config", str(site / "config.toml"))[0] == 0


def test_the_layout_is_the_commonest_language_of_the_sources() -> None:
    from watcher.commands.init import Layout, layout

    assert layout(["cmd/main.go", "pkg/a/a.go", "pkg/a/b.go", "web/x.ts"]) == Layout("go", "pkg/a")
    assert layout(["README.md", "docs/a.py"]) == Layout()  # nothing to go by: the default
    assert layout(["lib.rs"]) == Layout("rust", "")
