"""`[[rule.tests]]` run by `watch rules test` (exit 0/1/2), the shipped rules' own tests,
and `watch rules lint --show` (every capture with its lines at the baseline)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Project
from watcher.cli import main
from watcher.gitbuild import Upstream
from watcher.inputs.rules import load_rules

ROOT = Path(__file__).resolve().parents[1]
LIB = "src/lib.rs"
SOURCE = "pub fn limit() -> u32 {\n    // the page size\n    50\n}\n\npub fn other() -> u32 {\n    1\n}\n"
RULE = """\
[[rule]]
id = "limit-is-50"
note = "limits"
path = "src/lib.rs"
query = '''(function_item name: (identifier) @name (#eq? @name "limit") body: (block (integer_literal) @value)) @target'''
[[rule.claims]]
capture = "value"
equals = "50"
says = "the page size is 50"
"""


def case(name: str, expect: str, code: str, fails: str = "") -> str:
    extra = f"fails = [{fails}]\n" if fails else ""
    return f"[[rule.tests]]\nname = {name!r}\nexpect = {expect!r}\n{extra}code = '''{code}'''\n"


def test_the_shipped_rules_pass_their_own_tests(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["rules", "test", "--config", str(ROOT / "config.toml")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "FAIL" not in out and "without tests" not in out
    for rule in load_rules(ROOT / "rules", display_root=ROOT).rules.values():
        expects = {t.expect for t in rule.tests}
        assert {"holds", "broken"} <= expects, f"{rule.id}: needs a holds and a broken case"


def test_rules_test_passes_fails_and_reports(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.rules(
        RULE
        + case("as upstream has it", "holds", "fn limit() -> u32 { 50 }")
        + case("a smaller page", "broken", "fn limit() -> u32 { 10 }", '"value"')
        + case("gone", "missing", "fn other() -> u32 { 50 }")
        + case("wrong on purpose", "holds", "fn limit() -> u32 { 10 }")
        + case(
            "two of them", "holds", "fn limit() -> u32 { 50 }\nmod m { fn limit() -> u32 { 50 } }"
        )
    )
    code, out, _ = project.run("rules", "test", capsys=capsys)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(
        "ok    rules/rules.toml: rule limit-is-50: test 'as upstream has it'"
    )
    assert "ok    rules/rules.toml: rule limit-is-50: test 'a smaller page': broken" in lines
    assert any("'gone': missing" in x and x.startswith("ok") for x in lines)
    assert any(
        "FAIL" in x and "'wrong on purpose': expected holds, got broken (claims on value fail)" in x
        for x in lines
    )
    assert any("'two of them': expected holds, got 2 @target matches, not one" in x for x in lines)
    assert lines[-1] == "5 tests of 1 rule: 3 passed, 2 failed"


def test_fixture_files_and_load_errors(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    fixtures = project.root / "rules" / "fixtures"
    fixtures.mkdir(parents=True)
    (fixtures / "limit.rs").write_text("fn limit() -> u32 {\n    50\n}\n")
    project.rules(
        RULE
        + "[[rule.tests]]\nname = 'from a file'\nexpect = 'holds'\nfile = 'fixtures/limit.rs'\n"
    )
    code, out, _ = project.run("rules", "test", capsys=capsys)
    assert code == 0 and "'from a file': holds" in out

    project.rules(
        RULE.replace("limit-is-50", "other-rule")
        + "[[rule.tests]]\nname = 'lost'\nexpect = 'holds'\nfile = 'fixtures/nope.rs'\n",
        name="other.toml",
    )
    code, out, _ = project.run("rules", "test", capsys=capsys)
    assert code == 2
    assert (
        "rules/other.toml:1: rule other-rule: test 'lost': cannot read file fixtures/nope.rs: "
        "No such file or directory\n"
    ) in out  # and not the file's path on this machine
    assert str(project.root) not in out

    outside = project.root.parent / "secret.rs"
    outside.write_text("fn limit() -> u32 {\n    50\n}\n")
    project.rules(
        RULE.replace("limit-is-50", "other-rule")
        + "[[rule.tests]]\nname = 'out'\nexpect = 'holds'\nfile = '../../secret.rs'\n",
        name="other.toml",
    )
    code, out, _ = project.run("rules", "test", capsys=capsys)
    assert code == 2
    assert "test 'out': file ../../secret.rs is outside the notes site; keep fixtures" in out

    code, _, err = project.run("rules", "test", "--rule", "nope", capsys=capsys)
    assert code == 2 and "--rule nope" in err


def test_lint_show_prints_each_capture_with_its_lines(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("limits", f"{base} {LIB}:1-4")
    project.rules(RULE)
    code, out, _ = project.run("rules", "lint", "--show", capsys=capsys)
    assert code == 0, out
    assert out.splitlines()[:9] == [
        f"limit-is-50 at {base[:12]} src/lib.rs:",
        "  @target  lines 1-4",
        "    | pub fn limit() -> u32 {",
        "    |     // the page size",
        "    |     50",
        "    | }",
        "  @name  line 1",
        "    | limit",
        "  @value  line 3",
    ]
    assert out.splitlines()[-1] == "1 of 1 rule holds at its baseline; 0 errors"
