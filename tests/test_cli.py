"""The commands as a user runs them: outputs, filters, exit codes, the demo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import Project
from watcher.commands import demo
from watcher.gitbuild import Upstream

LIB = "src/lib.rs"
SOURCE = "pub fn a() -> u32 {\n    1\n}\n\npub fn b() -> u32 {\n    2\n}\n"
RULE = """\
[[rule]]
id = "b-returns-two"
note = "n"
path = "src/lib.rs"
query = '''(function_item name: (identifier) @n (#eq? @n "b") body: (block (_) @value)) @target'''
[[rule.claims]]
capture = "value"
equals = "2"
says = "b returns two"
"""


def _schema() -> dict[str, object]:
    text = resources.files("watcher").joinpath("schemas/check.schema.json").read_text()
    return dict(json.loads(text))


@pytest.fixture
def stale(project: Project, upstream: Upstream) -> Project:
    base = upstream.commit("lib", {LIB: SOURCE})
    upstream.tag("v1.0.0")
    project.note("n", f"{base} {LIB}:1-3", f"{base} {LIB}:5-7")
    project.note("m", f"{base} {LIB}:5-7")
    project.rules(RULE)
    upstream.commit("b returns three (#9)", {LIB: SOURCE.replace("    2", "    3")})
    upstream.tag("v1.1.0")
    return project


def test_json_output_validates_against_the_schema_for_every_verdict(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    demo_config = demo.prepare(project.root / "demo")
    text = demo_config.read_text().replace('sink = "files"', 'sink = "none"')
    demo_config.write_text(text)
    project.note("broken", "0123456789abcdef0123456789abcdef01234567 src/x.rs:1-2")
    from watcher.cli import main

    capsys.readouterr()
    code = main(["check", "--config", str(demo_config), "--format", "json"])
    report = json.loads(capsys.readouterr().out)

    jsonschema.validate(report, _schema())
    assert code == 1
    assert {r["verdict"] for r in report["results"]} == {
        "fresh",
        "moved",
        "changed",
        "broken",
        "missing",
    }


def test_error_results_validate_too(stale: Project, capsys: pytest.CaptureFixture[str]) -> None:
    stale.note("x", "0123456789abcdef0123456789abcdef01234567 src/x.rs:1-2")
    code, out, _ = stale.run("check", "--format", "json", capsys=capsys)
    jsonschema.validate(json.loads(out), _schema())
    assert code == 2


def test_two_identical_runs_print_identical_results(
    stale: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [json.loads(stale.run("check", "--format", "json", capsys=capsys)[1]) for _ in range(2)]
    assert runs[0]["results"] == runs[1]["results"]
    assert runs[0]["results"][0]["verdict"] == "broken"  # worst first


def test_filters(stale: Project, capsys: pytest.CaptureFixture[str]) -> None:
    def ids(*args: str) -> set[str]:
        out = stale.run("check", "--format", "json", *args, capsys=capsys)[1]
        return {r["id"] for r in json.loads(out)["results"]}

    assert ids("--note", "m") == {f"m:{LIB}:5-7"}
    assert ids("--rule", "b-returns-two") == {"b-returns-two"}
    assert ids("--upstream", "acme/client") == ids()
    for flag, value in (("--upstream", "other/repo"), ("--note", "nope"), ("--rule", "nope")):
        code, out, err = stale.run("check", "--format", "json", flag, value, capsys=capsys)
        named = "rule" if flag == "--rule" else flag  # as backtest's RULE_ID is named too
        assert (code, out) == (2, "") and f"{named} {value}: no " in err


def test_table_and_markdown(stale: Project, capsys: pytest.CaptureFixture[str]) -> None:
    code, table, _ = stale.run("check", "--format", "table", capsys=capsys)
    assert code == 1
    assert "broken" in table and "b-returns-two" in table and "v1.1.0" in table
    assert "4 items: 1 fresh, 2 changed, 1 broken" in table

    _, markdown, _ = stale.run("check", "--format", "markdown", capsys=capsys)
    assert markdown.startswith("## watch check")
    assert "| **broken** | `b-returns-two` |" in markdown


def test_notes_command(stale: Project, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = stale.run("notes", capsys=capsys)
    assert code == 0  # which lines the rule covers is known once a run has judged it
    assert f"{LIB}:5-7  (same file as b-returns-two: run `watch check`" in out
    stale.run("check", "--no-issues", capsys=capsys)
    code, out, _ = stale.run("notes", capsys=capsys)
    assert f"{LIB}:5-7  guarded by b-returns-two" in out
    assert f"{LIB}:1-3\n" in out  # the rule's target is not in these lines
    assert "  code 2  acme/client@" in out  # the number `watch rule new --source` takes
    assert "n  (notes/n.md)" in out


def test_sync_command(stale: Project, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = stale.run("sync", capsys=capsys)
    assert code == 0
    assert out.startswith("acme/client: main at ")
    assert (stale.root / "cache" / "acme__client.git" / "HEAD").is_file()


def test_rules_lint(stale: Project, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = stale.run("rules", "lint", capsys=capsys)
    assert (code, out.strip()) == (0, "1 of 1 rule holds at its baseline; 0 errors")

    stale.rules(
        RULE.replace('equals = "2"', 'equals = "5"').replace("b-returns-two", "wrong"), "wrong.toml"
    )
    code, out, _ = stale.run("rules", "lint", capsys=capsys)
    assert code == 2
    assert "error: rule wrong (rules/wrong.toml:1): claim on @value fails at its baseline" in out
    assert "(actual `2`, equals `5`)" in out  # as written, not repr'd

    stale.rules(
        RULE.replace('equals = "2"', "matches = '^\\d{2}$'").replace("b-returns-two", "wrong"),
        "wrong.toml",
    )
    code, out, _ = stale.run("rules", "lint", capsys=capsys)
    assert "(actual `2`, matches `^\\d{2}$`)" in out  # a regex reads as in the rule file


def test_a_single_line_is_shown_as_one_line(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("n", f"{base} {LIB}:2")
    upstream.commit("a line above", {LIB: "// lib\n" + SOURCE})

    _, out, _ = project.run("check", "--format", "json", "--no-issues", capsys=capsys)

    (result,) = json.loads(out)["results"]
    assert result["verdict"] == "moved" and f"{LIB}:3" in result["message"]
    assert ":3-3" not in result["message"]


def test_python_m_watcher_and_the_console_script_agree() -> None:
    for command in (
        [sys.executable, "-m", "watcher", "--version"],
        [str(Path(sys.executable).parent / "watch"), "--version"],
    ):
        assert subprocess.run(
            command, capture_output=True, text=True, check=True
        ).stdout.startswith("watch ")


def test_demo_runs_offline_in_a_fresh_process(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "-m", "watcher", "demo"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for verdict in ("fresh", "moved", "changed", "broken", "missing"):
        assert verdict in out
    assert "rust-v0.2.0" in out  # the flip ships in a later release
    assert "<!-- watch:note=" in out  # one generated issue is shown
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["notes"], 0),
        (["fix", "--offline"], 0),
        (["backtest", "b-returns-two", "--offline"], 0),
        (["check", "--offline", "--format", "json", "--no-issues"], 1),
        (["log", "b-returns-two", "--offline"], 0),
        (["schema", "note"], 0),
    ],
    ids=lambda a: " ".join(a) if isinstance(a, list) else str(a),
)
def test_every_command_exits_quietly_when_its_reader_goes_away(
    stale: Project, args: list[str], code: int
) -> None:
    """`watch notes | head -1`: the reader is gone before the first write. No traceback;
    the command runs to its end and exits as it would have (check: 1, stale)."""
    subprocess.run([sys.executable, "-m", "watcher", "sync", "--config", str(stale.config_file)],
                   capture_output=True, check=True, cwd=stale.root)  # fmt: skip
    command = [sys.executable, "-m", "watcher", *args]
    if args[0] != "schema":
        command += ["--config", str(stale.config_file)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=stale.root)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # as `head` does once it has its line: long before watch writes
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == code, err
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err
