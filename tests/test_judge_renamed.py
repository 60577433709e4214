"""A cited definition edited, then renamed (`watcher.judge.renamed`): the rename is told
between the two versions its commit joins, so the item is found under its new name at
HEAD however much it had been edited before; a definition deleted beside a new unlike
one stays missing."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.support import check_results
from watcher.gitbuild import Upstream

GO = "cmd/root.go"
STEPS = ["load", "merge", "expand", "check", "apply", "report", "close", "flush"]


def root(name: str = "initConfig", edited: int = 0, extra: str = "") -> str:
    """A Go file whose `name` (lines 5-14) loads configuration in eight steps; `edited`:
    how many of those steps were rewritten since; `extra`: more code after it."""
    lines = [
        f"\tif err := {step}Config(path, {n}); err != nil {{ return err }}"
        if n >= edited
        else f"\tsettings.{step.title()}(viper.Get{step.title()}(), path)"
        for n, step in enumerate(STEPS)
    ]
    return (
        "package cmd\n"
        "\n"
        'import "os"\n'
        "\n"
        f"func {name}(path string) error {{\n" + "\n".join(lines) + "\n\treturn nil\n}\n"
        "\n"
        "func init() {\n"
        f"\tcobra.OnInitialize({name})\n"
        "}\n" + extra
    )


def test_a_definition_edited_then_renamed_is_found_under_its_new_name(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {GO: root()})
    assert root().splitlines()[4].startswith("func initConfig(")
    project.note("n", f"{base} {GO}:5-14")
    edits = [upstream.commit(f"edit (#{n})", {GO: root(edited=n)}) for n in (1, 2, 3)]
    rename = upstream.commit("export it (#9)", {GO: root("InitConfig", 3)})
    later = upstream.commit("one more (#10)", {GO: root("InitConfig", 4)})

    result = check_results(project, capsys)[f"n:{GO}:5-14"]

    # At HEAD it keeps about half of its cited tokens: under another name than its own,
    # `locate` would need 80% alike. The commit that renamed it joins two versions that
    # are all but the same, and the walk follows it there.
    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (5, 14)
    assert result["introduced_by"]["commit"] == edits[0]
    assert [c["commit"] for c in result["history"]] == [*edits, rename, later]
    _, out, _ = project.run("log", f"n:{GO}:5-14", "--offline", capsys=capsys)
    assert [line.split()[1] for line in out.splitlines()[1:]] == [
        c[:10] for c in [*edits, rename, later]
    ]


def test_a_definition_deleted_beside_an_unlike_new_one_stays_missing(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {GO: root()})
    project.note("n", f"{base} {GO}:5-14")
    upstream.commit("edit (#2)", {GO: root(edited=3)})
    other = '\nfunc InitConfig(path string) error {\n\treturn os.Setenv(path, "")\n}\n'
    gone = root(edited=3).split("func initConfig")[0] + "func init() {}\n" + other
    drop = upstream.commit("replace it (#3)", {GO: gone})

    result = check_results(project, capsys)[f"n:{GO}:5-14"]

    assert result["verdict"] == "missing"
    assert result["introduced_by"]["commit"] == drop


def test_backtest_follows_the_rename_as_check_does(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {GO: root()})
    project.note("n", f"{base} {GO}:5-14")
    first = upstream.commit("edit (#2)", {GO: root(edited=3)})
    upstream.commit("export it (#3)", {GO: root("InitConfig", 3)})

    _, out, _ = project.run("backtest", "--note", "n", capsys=capsys)

    assert out.splitlines()[0].endswith(f"fresh at {base[:12]}"), out
    assert [line.split()[1:4] for line in out.splitlines()[1:]] == [[first[:10], "fresh", "->"]], (
        out
    )
