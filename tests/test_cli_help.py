"""The command line explains itself: every option has help, every command ends its help
with an example, repeated --note/--rule select several, and completion scripts come
from the same parser."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from tests.conftest import Project
from watcher.cli import build_parser, main
from watcher.gitbuild import Upstream


def commands(
    parser: argparse.ArgumentParser, prefix: str = ""
) -> list[tuple[str, argparse.ArgumentParser]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.append((f"{prefix}{name}", sub))
                found += commands(sub, f"{prefix}{name} ")
    return found


def test_top_level_help_describes_the_tool(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "keeps a compatibility-notes site honest" in out
    assert "watch init" in out and "exit status" in out


@pytest.mark.parametrize(
    ("name", "parser"), commands(build_parser()), ids=lambda x: x if isinstance(x, str) else ""
)
def test_every_option_has_help_and_every_command_an_example(
    name: str, parser: argparse.ArgumentParser
) -> None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
            continue
        assert action.help, f"watch {name}: {action.option_strings or action.dest} has no help"
    has_subcommands = any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)
    if not has_subcommands:
        assert parser.epilog and parser.epilog.startswith("example:\n  watch "), name
        assert parser.format_help().rstrip().splitlines()[-1].strip().startswith("watch ")


@pytest.mark.parametrize("shell", ["bash", "zsh", "tcsh"])
def test_completion_scripts_know_the_commands(
    shell: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["completion", shell]) == 0
    script = capsys.readouterr().out
    for word in ("init", "validate", "schema", "check", "completion"):
        assert word in script, word
    if shell != "tcsh":  # shtab's tcsh script completes commands, not options
        assert "--no-issues" in script
    # The script's header says where to put it, as docs/editors.md does.
    editors = (Path(__file__).resolve().parents[1] / "docs" / "editors.md").read_text()
    (install,) = [line for line in script.splitlines()[:6] if "watch completion" in line]
    assert f".venv/bin/{install.removeprefix('#').strip()}\n" in editors
    assert "bash_completion/" not in script.split("\n\n")[0]  # shtab's own suggestion


def test_repeated_note_selects_several(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {"src/lib.rs": "fn a() {}\nfn b() {}\nfn c() {}\n"})
    for name, line in (("na", 1), ("nb", 2), ("nc", 3)):
        project.note(name, f"{base} src/lib.rs:{line}")
    code, out, _ = project.run(
        "check", "--format", "json", "--note", "na", "--note", "nc", capsys=capsys
    )
    assert code == 0
    assert sorted(r["note"] for r in json.loads(out)["results"]) == ["na", "nc"]
    code, _, err = project.run("check", "--note", "na", "--note", "typo", capsys=capsys)
    assert code == 2 and "--note typo" in err


@pytest.mark.parametrize(
    ("argv", "only"),
    [
        (["check", "--format", "json"], "check"),
        (["-v", "-qq", "--log-format", "json", "check"], "check"),
        (["--log-format=json", "--quiet", "check", "--offline"], "check"),
        (["--help", "check"], None),
        (["--verb", "check"], None),  # an abbreviation: the whole command line decides
        (["status"], None),
        ([], None),
    ],
)
def test_a_check_builds_only_its_own_parser_with_the_same_options(
    argv: list[str], only: str | None
) -> None:
    """A warm check spends less on its own work than on building twenty parsers."""
    from watcher.cli import _only

    assert _only(argv) == only
    alone = dict(commands(build_parser("check")))
    assert list(alone) == ["check"]
    whole = dict(commands(build_parser()))
    assert alone["check"].format_help() == whole["check"].format_help()
    args = ["-v", "check", "--note", "a", "--note", "b", "--offline", "--config", "c.toml"]
    assert vars(build_parser("check").parse_args(args)) == vars(build_parser().parse_args(args))
