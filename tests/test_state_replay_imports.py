"""A warm run answered by `watcher.state.replay` imports only what it uses.

When the upstream has nothing new, `watch check` reads refs, trees and its state file:
no tree-sitter, no GitPython, no PyGithub, no APScheduler, and none of the watcher's own
judging and history-walking modules. Pinned by the modules a fresh process has imported
when the run ends, not by timings.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Project
from tests.support import in_fresh_process
from watcher.gitbuild import Upstream

HEAVY = ("tree_sitter", "git", "gitdb", "github", "apscheduler", "rich", "markdown_it")
UNUSED = (
    "watcher.issues",
    "watcher.commands.serve",
    "watcher.commands.rule",
    "watcher.commands.backtest",
)
# Judging and history walks: a warm run takes every verdict from state.
JUDGING = (
    "watcher.locate.",
    "watcher.judge.relocate",
    "watcher.judge.headsearch",
    "watcher.history.walk",
    "watcher.history.attribute",
)

PROBE = """\
import json, sys
from watcher.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "modules": sorted(sys.modules)}, out)
"""

LIB = """\
pub fn alpha(input: u32) -> u32 {
    let doubled = input * 2;
    doubled + VALUE
}

pub fn beta() -> &'static str {
    "beta"
}
"""

RULES = """\
[[rule]]
id = "beta-says-beta"
note = "lib"
path = "src/lib.rs"
query = '''(function_item name: (identifier) @n (#eq? @n "beta") body: (block (string_literal) @s)) @target'''
[[rule.claims]]
capture = "s"
equals = '"beta"'
says = "beta returns its name"
"""


def run_in_fresh_process(project: Project, tmp_path: Path, *args: str) -> tuple[int, list[str]]:
    data = in_fresh_process(project, PROBE, tmp_path / "modules.json", *args)
    return data["code"], data["modules"]


def heavy(modules: list[str]) -> list[str]:
    return sorted(
        m
        for m in modules
        if m.split(".")[0] in HEAVY or m.startswith((*UNUSED, *JUDGING)) or "tree_sitter" in m
    )


def site(project: Project, upstream: Upstream) -> tuple[str, ...]:
    """An upstream where `alpha` changed after the note's commit; the check's arguments."""
    base = upstream.commit("base (#1)", {"src/lib.rs": LIB.replace("VALUE", "1")})
    upstream.commit("alpha adds 3 (#2)", {"src/lib.rs": LIB.replace("VALUE", "3")})
    project.note("lib", f"{base} src/lib.rs:1-4", f"{base} src/lib.rs:6-8")
    project.rules(RULES)
    return ("check", "--no-issues", "--format", "json")


def test_a_warm_run_imports_no_parser_git_library_github_or_scheduler(
    project: Project, upstream: Upstream, tmp_path: Path
) -> None:
    args = site(project, upstream)

    cold_code, cold = run_in_fresh_process(project, tmp_path, *args)
    assert cold_code == 1  # alpha changed
    assert "tree_sitter" in cold  # the cold run did parse: the probe sees imports
    assert {"watcher.locate.anchors", "watcher.history.attribute"} <= set(
        cold
    )  # and judged, and walked

    warm_code, warm = run_in_fresh_process(project, tmp_path, *args)

    assert warm_code == 1
    assert heavy(warm) == []


def test_an_unchanged_warm_run_decides_before_importing_pydantic(
    project: Project, upstream: Upstream, tmp_path: Path
) -> None:
    """watcher.state.replay answers from the last run's record: no models, no config parsing."""
    args = site(project, upstream)
    for _ in range(2):  # cold, then a warm run that changes nothing and is recorded
        assert run_in_fresh_process(project, tmp_path, *args)[0] == 1

    code, modules = run_in_fresh_process(project, tmp_path, *args)

    assert code == 1
    assert "watcher.state.replay" in modules and "watcher.mirror.mirrors" in modules  # it did fetch
    loaded = [m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core", "filelock")]
    assert loaded == []
    assert not {"watcher.models", "watcher.config", "watcher.pipeline", "yaml"} & set(modules)
