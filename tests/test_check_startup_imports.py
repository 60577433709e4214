"""A cold `watch check` (state empty, mirror synced) loads only what its items need.

Start-up is much of a one-item check (bench.shapes' scattered row): the YAML library is
imported only when a note has to be parsed (not when `notememo` remembers every note), a
pydantic model's validator is built only when the run uses the model (`defer_build`), not
for every model of every module imported, and of the tree-sitter grammars only those of
the cited files' languages are loaded; GitPython, PyGithub, APScheduler and rich not at all. Pinned by what a fresh process has imported and
built when the run ends, not by timings.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Project
from tests.support import in_fresh_process
from watcher.gitbuild import Upstream

PROBE = """\
import json, sys
from pydantic import BaseModel
from watcher.cli import main
code = main(sys.argv[2:])
built = sorted(
    f"{name}.{value.__name__}"
    for name, module in list(sys.modules.items())
    if name.startswith("watcher")
    for value in vars(module).values()
    if isinstance(value, type) and issubclass(value, BaseModel) and value.__module__ == name
    and value.__pydantic_complete__
)
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "modules": sorted(sys.modules), "built": built}, out)
"""

LIB = """\
pub fn alpha(input: u32) -> u32 {
    let doubled = input * 2;
    doubled + VALUE
}
"""

# Models of inputs this site has none of (rule files), of what a note's YAML is checked
# against once it is parsed, and of results this run has none of (claims, issues).
UNUSED = (
    "watcher.inputs.rules.RuleFile",
    "watcher.inputs.frontmatter.FrontMatter",
    "watcher.models.ClaimResult",
    "watcher.models.IssueAction",
    "watcher.models.Rule",
)


def cold_check(project: Project, tmp_path: Path) -> dict[str, Any]:
    """`watch check --offline` in a fresh process with the state folder emptied first."""
    shutil.rmtree(project.root / "state", ignore_errors=True)
    args = ["check", "--offline", "--no-issues", "--format", "json"]
    found: dict[str, Any] = in_fresh_process(project, PROBE, tmp_path / "probe.json", *args)
    return found


def test_a_cold_check_of_remembered_notes_imports_no_yaml_and_builds_only_used_models(
    project: Project, upstream: Upstream, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {"src/lib.rs": LIB.replace("VALUE", "1")})
    upstream.commit("alpha adds 3 (#2)", {"src/lib.rs": LIB.replace("VALUE", "3")})
    project.note("lib", f"{base} src/lib.rs:1-4")
    assert project.run("check", "--no-issues", capsys=capsys)[0] == 1  # syncs, remembers notes

    found = cold_check(project, tmp_path)

    assert found["code"] == 1  # alpha changed: judged afresh, and its history walked
    modules, built = set(found["modules"]), set(found["built"])
    assert {"watcher.locate.anchors", "watcher.history.attribute"} <= modules
    assert not {"yaml", "watcher.inputs.yamlfront"} & modules
    # Libraries for other commands stay out; of the grammars, only the cited file's.
    assert not {m.split(".")[0] for m in modules} & {"git", "github", "apscheduler", "rich"}
    grammars = {m.split(".")[0] for m in modules if m.startswith("tree_sitter_")}
    assert grammars == {"tree_sitter_rust"}
    assert {"watcher.config.Config", "watcher.models.Note", "watcher.models.Result"} <= built
    assert not set(UNUSED) & built


def test_a_note_parsed_afresh_still_reads_its_yaml(
    project: Project, upstream: Upstream, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {"src/lib.rs": LIB.replace("VALUE", "1")})
    project.note("lib", f"{base} src/lib.rs:1-4")
    assert project.run("check", "--no-issues", capsys=capsys)[0] == 0
    project.note("lib", f"{base} src/lib.rs:1-3")  # edited: not remembered

    found = cold_check(project, tmp_path)

    assert found["code"] == 0
    assert {"yaml", "watcher.inputs.yamlfront"} <= set(found["modules"])
    assert "watcher.inputs.frontmatter.FrontMatter" in set(found["built"])
