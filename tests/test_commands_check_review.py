"""Checking notes at review time: `--format github` annotations for `validate` and
`check`, and `check --changed REF` over only what a branch changed."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import Project
from tests.support import git
from watcher.gitbuild import Upstream

LIB = "src/lib.rs"
SOURCE = "pub fn a() -> u32 {\n    1\n}\n\npub fn b() -> u32 {\n    2\n}\n"
RULE = """\
[[rule]]
id = "b-returns-two"
note = "b"
path = "src/lib.rs"
query = '''(function_item name: (identifier) @n (#eq? @n "b") body: (block (_) @value)) @target'''
[[rule.claims]]
capture = "value"
equals = "2"
"""
COMMAND = re.compile(r"^::(error|warning|notice) ([^:]*)::(.*)$")


def commands(out: str) -> list[tuple[str, dict[str, str], str]]:
    """Each workflow command: its level, its properties, its message (unescaped)."""
    found = []
    for line in out.splitlines():
        if match := COMMAND.match(line):
            props = dict(p.split("=", 1) for p in match[2].split(","))
            props = {k: v.replace("%3A", ":").replace("%2C", ",") for k, v in props.items()}
            found.append((match[1], props, match[3].replace("%0A", "\n").replace("%25", "%")))
    return found


@pytest.fixture
def site(project: Project, upstream: Upstream) -> Project:
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("a", f"{base} {LIB}:1-3")
    project.note("b", f"{base} {LIB}:5-7")
    project.rules(RULE)
    return project


def test_validate_annotates_each_problem_where_it_is(
    site: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(site.root)
    site.note("typo", raw="---\nid: typo\ntitle: T\nsouces: []\n---\n")

    code, out, _ = site.run("validate", "--format", "github", capsys=capsys)

    assert code == 2
    ((level, props, message),) = commands(out)
    assert (level, props["file"], props["line"]) == ("error", "notes/typo.md", "4")
    assert message.startswith("unknown key `souces` (did you mean `sources`?)")
    assert out.splitlines()[-1] == "config.toml: 3 notes, 1 rule: 1 problem"

    site.config_file.write_text(site.config_file.read_text() + "colour = 1\n")
    code, out, _ = site.run("validate", "--format", "github", capsys=capsys)
    ((level, props, message),) = commands(out)
    assert code == 2 and props["title"] == "watch: config" and "colour" in message


def test_check_annotates_stale_items_on_their_citation_and_rule(
    site: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.chdir(site.root.parent)  # the workspace is above the site: paths say so
    upstream.commit("b returns three (#9)", {LIB: SOURCE.replace("    2", "    3")})

    code, out, _ = site.run("check", "--format", "github", "--no-issues", capsys=capsys)

    assert code == 1
    found = {(level, props["file"], props.get("line")) for level, props, _ in commands(out)}
    site_dir = site.root.name
    assert found == {
        ("warning", f"{site_dir}/notes/b.md", "7"),  # the line of `path: src/lib.rs:5-7`
        ("error", f"{site_dir}/rules/rules.toml", "1"),  # the broken rule's [[rule]]
    }
    (column,) = {p["col"] for _, p, _ in commands(out) if p["file"].endswith("b.md")}
    assert column == "11"  # where `src/lib.rs:5-7` starts on its line
    assert out.splitlines()[-1].startswith("3 items: 1 fresh, 1 changed, 1 broken")


def test_check_changed_checks_exactly_the_notes_a_branch_changed(
    site: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    root = site.root
    git(root, "init", "--quiet", "--initial-branch=main")
    git(root, "add", "--all")
    git(root, "-c", "user.name=M", "-c", "user.email=m@e", "commit", "--quiet", "-m", "site")
    git(root, "checkout", "--quiet", "-b", "edit")

    def changed_ids(ref: str = "main") -> set[str]:
        code, out, err = site.run("check", "--changed", ref, "--format", "json",
                                  "--no-issues", "--offline", capsys=capsys)  # fmt: skip
        assert code == 0, err
        return {r["note"] for r in json.loads(out)["results"]} if out else set()

    site.run("sync", capsys=capsys)
    assert changed_ids() == set()  # nothing changed: nothing checked (and says so)
    commit = ["-c", "user.name=M", "-c", "user.email=m@e", "commit", "--quiet", "-am"]
    (root / "notes" / "a.md").write_text((root / "notes" / "a.md").read_text() + "More.\n")
    git(root, *commit, "edit a")
    assert changed_ids() == {"a"}
    (root / "rules" / "rules.toml").write_text(RULE.replace('equals = "2"', "matches = '2'"))
    git(root, *commit, "edit b's rule")
    assert changed_ids() == {"a", "b"}  # a rule's change checks its note
    assert changed_ids("HEAD~1") == {"b"}
    code, _, err = site.run("check", "--changed", "no-such-ref", capsys=capsys)
    assert code == 2 and "--changed no-such-ref: not a commit" in err


def test_check_changed_never_hides_a_note_or_rule_the_branch_broke(
    site: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    root = site.root
    git(root, "init", "--quiet", "--initial-branch=main")
    git(root, "add", "--all")
    git(root, "-c", "user.name=M", "-c", "user.email=m@e", "commit", "--quiet", "-m", "site")
    git(root, "checkout", "--quiet", "-b", "edit")
    site.run("sync", capsys=capsys)
    commit = ["-c", "user.name=M", "-c", "user.email=m@e", "commit", "--quiet", "-am"]
    note = root / "notes" / "a.md"
    note.write_text(note.read_text().replace("id: a", "id: [a"))  # no longer YAML: no note
    git(root, *commit, "break a")

    code, out, err = site.run("check", "--changed", "main", "--no-issues", "--offline",
                              capsys=capsys)  # fmt: skip

    assert code == 2, out + err  # a note that no longer loads is an error, not "nothing"
    assert "notes/a.md" in out + err
    assert "nothing to check" not in err
