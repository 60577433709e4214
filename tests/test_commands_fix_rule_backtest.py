"""The maintainer's helpers: `watch fix`, `watch rule new`, `watch backtest`."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Project
from watcher.gitbuild import Upstream

LIB = "src/lib.rs"
SOURCE = (
    "#[derive(Debug)]\npub enum Mode {\n    Legacy,\n    Modern,\n}\n\n"
    'impl Client {\n    pub fn version(&self) -> &str {\n        "2025-06-18"\n    }\n}\n'
)


def test_fix_shows_then_writes_moved_citations(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    link = f"https://github.com/{project.repo}/blob/{base}/{LIB}#L8-L10"
    note = project.note(
        "n",
        raw=(
            f"---\nid: n\nsources:\n  - url: https://github.com/{project.repo}\n"
            f"    commit: '{base[:8]}'\n    path: {LIB}:2-5\n  - url: {link}\n    title: version\n"
            f"  - url: https://github.com/{project.repo}\n    commit: {base}\n    path: {LIB}:1\n"
            "---\n\nBody mentions src/lib.rs:2-5 and stays as written.\n"
        ),
    )
    head = upstream.commit("prepend", {LIB: "use std::fmt;\n\n" + SOURCE})

    code, shown, _ = project.run("fix", capsys=capsys)
    assert code == 0
    assert f"notes/n.md: {base[:8]} {LIB}:2-5 -> {head[:12]} {LIB}:4-7" in shown
    assert f"notes/n.md: {base[:12]} {LIB}:1 -> {head[:12]} {LIB}:3\n" in shown
    assert note.read_text().count(base) == 2  # nothing written yet

    project.run("fix", "--write", capsys=capsys)

    text = note.read_text()
    assert f"    commit: '{head}'\n    path: {LIB}:4-7\n" in text  # quoting style kept
    assert f"  - url: https://github.com/{project.repo}/blob/{head}/{LIB}#L10-L12\n" in text
    assert "Body mentions src/lib.rs:2-5 and stays as written." in text
    _, out, _ = project.run("check", "--format", "json", capsys=capsys)
    verdicts = {r["id"]: r["verdict"] for r in json.loads(out)["results"]}
    assert verdicts == {f"n:{LIB}:4-7": "fresh", f"n:{LIB}:10-12": "fresh", f"n:{LIB}:3": "fresh"}


def test_rule_new_targets_the_smallest_named_construct(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("n", f"{base} {LIB}:1-5", f"{base} {LIB}:9")

    code, out, _ = project.run("rule", "new", "n", "--source", "2", capsys=capsys)

    assert code == 0
    written = (project.root / "rules" / "n.toml").read_text()
    assert "inside = '''(impl_item type: (_) @name (#eq? @name \"Client\")) @scope'''" in written
    assert '(function_item name: (_) @name (#eq? @name "version")) @target' in written
    project.run("rule", "new", "n", "--source", "1", capsys=capsys)  # attribute + enum: the enum
    assert (
        '(enum_item name: (_) @name (#eq? @name "Mode")) @target'
        in (project.root / "rules" / "n.toml").read_text()
    )
    code, out, _ = project.run("rules", "lint", capsys=capsys)
    assert (code, out.strip()) == (0, "2 of 2 rules hold at their baseline; 0 errors")


def test_rule_new_refuses_a_second_copy(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("n", f"{base} {LIB}:9")
    project.run("rule", "new", "n", capsys=capsys)
    code, _, err = project.run("rule", "new", "n", capsys=capsys)
    assert code == 2 and "already has a rule n-version" in err


def test_backtest_lists_each_flip_with_its_release(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("n", f"{base} {LIB}:8-10")
    project.rules(
        '[[rule]]\nid = "pinned"\nnote = "n"\npath = "src/lib.rs"\n'
        "query = '''(function_item name: (identifier) @f (#eq? @f \"version\") "
        "body: (block (string_literal) @v)) @target'''\n"
        '[[rule.claims]]\ncapture = "v"\nequals = \'"2025-06-18"\'\n'
    )
    upstream.commit("unrelated (#1)", {"README.md": "x\n"})
    flip = upstream.commit("speak 2026 (#2)", {LIB: SOURCE.replace("2025-06-18", "2026-07-28")})
    upstream.tag("v2.0.0")
    back = upstream.commit("revert (#3)", {LIB: SOURCE})
    upstream.tag("v2.0.1")

    code, out, _ = project.run("backtest", "pinned", capsys=capsys)

    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"pinned (note n): fresh at {base[:12]}"
    assert f"{flip[:10]} fresh -> broken  [v2.0.0]  speak 2026 (#2)" in lines[1]
    assert f"{back[:10]} broken -> fresh  [v2.0.1]  revert (#3)" in lines[2]
    assert len(lines) == 3


def test_backtest_of_an_unknown_rule_names_it_and_no_flag(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {"src/lib.rs": "pub fn a() {}\n"})
    project.note("n", f"{base} src/lib.rs:1")

    code, _, err = project.run("backtest", "no-such-rule", "--offline", capsys=capsys)

    assert code == 2
    assert "rule no-such-rule: no rule has this id" in err and "--rule" not in err
