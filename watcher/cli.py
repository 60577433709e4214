"""The command line: parse arguments, call one function per command, return its exit code.

watch keeps a compatibility-notes site honest (see DESCRIPTION). Each command's handler
turns the parsed options into explicit arguments of its function in watcher.commands,
imported only when it runs; the parser is built by a few `_add_*` functions, in the
order `watch --help` lists the commands."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from watcher import __version__
from watcher.errors import WatchError
from watcher.logs import configure_logging
from watcher.redact import RedactingStream

if TYPE_CHECKING:
    from watcher.judge.session import Counts

Handler = Callable[[argparse.Namespace], int]
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


DESCRIPTION = """\
watch keeps a compatibility-notes site honest. Notes cite upstream code (repository,
commit, FILE:START-END); watch mirrors each upstream (bare, blobless), finds every
cited construct with tree-sitter at the cited commit and at the branch head, gives it
a verdict (fresh, moved, changed, broken, missing, error), names the commit and release
that changed it, and files one stale-verification issue per affected note.

exit status: 0 nothing stale, 1 something changed/broke/went missing, 2 something could
not be judged (bad note, rule or config, unreachable upstream)."""

EPILOG = """\
start a site:  watch init notes-site --upstream OWNER/NAME
then:          watch validate && watch check
reference:     docs/notes.md, docs/config.md, docs/rules.md; `watch COMMAND --help`"""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; every option has help and every command an example.

    With `only="check"`, the other commands' parsers are not built: a warm `watch check`
    spends less on everything else it does than on building twenty parsers it does not use."""
    parser = argparse.ArgumentParser(
        prog="watch",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"watch {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log lines")
    parser.add_argument("-q", "--quiet", action="count", default=0, help="fewer log lines")
    parser.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="log lines on stderr as text (default) or one JSON object each",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in [_add_check] if only == "check" else ADDERS:
        add(sub)
    return parser


def _init(args: argparse.Namespace) -> int:
    from watcher.commands.init import init

    return init(args.directory, args.upstream, args.url, out=sys.stdout)


def _check(args: argparse.Namespace) -> int:
    from watcher.commands.check import check

    return check(
        args.config,
        upstream=args.upstream,
        note=tuple(args.note),
        rule=tuple(args.rule),
        changed=args.changed,
        fmt=args.format,
        offline=args.offline,
        dry_run=args.dry_run,
        no_issues=args.no_issues,
        implicit_upstreams=not args.no_implicit_upstreams,
        wait=args.wait,
        verbosity=args.verbose - args.quiet,
        log_format=args.log_format,
        counts=args.counts,
    )


def _validate(args: argparse.Namespace) -> int:
    from watcher.commands.validate import validate

    return validate(args.config, sys.stdout, args.format)


def _schema(args: argparse.Namespace) -> int:
    from watcher.inputs.schema import render

    sys.stdout.write(render(args.kind))
    return 0


def _sync(args: argparse.Namespace) -> int:
    from watcher.commands.sync import sync

    return sync(args.config, args.upstream, sys.stdout)


def _notes(args: argparse.Namespace) -> int:
    from watcher.commands.notes import notes

    return notes(args.config, sys.stdout)


def _upstreams(args: argparse.Namespace) -> int:
    from watcher.commands.upstreams import upstreams

    return upstreams(args.config, args.json, sys.stdout)


def _rules_lint(args: argparse.Namespace) -> int:
    from watcher.commands.rules import rules_lint

    return rules_lint(args.config, args.offline, sys.stdout, show=args.show)


def _rules_test(args: argparse.Namespace) -> int:
    from watcher.commands.rules import rules_test

    return rules_test(args.config, args.rule, sys.stdout)


def _rule_new(args: argparse.Namespace) -> int:
    from watcher.commands.rule import rule_new

    return rule_new(args.config, args.note_id, args.source, offline=args.offline, out=sys.stdout)


def _fix(args: argparse.Namespace) -> int:
    from watcher.commands.fix import fix

    return fix(
        args.config, write=args.write, offline=args.offline, out=sys.stdout, accept=args.accept
    )


def _backtest(args: argparse.Namespace) -> int:
    from watcher.commands.backtest import backtest

    if (args.rule_id is None) == (args.note is None):
        raise WatchError("backtest takes a RULE_ID or --note ID (one of them)")
    return backtest(args.config, args.rule_id, args.note, args.since, offline=args.offline,
                    out=sys.stdout, counts=args.counts)  # fmt: skip


def _log(args: argparse.Namespace) -> int:
    from watcher.commands.log import item_log

    return item_log(args.config, args.item_id, offline=args.offline, out=sys.stdout)


def _serve(args: argparse.Namespace) -> int:
    from watcher.commands.serve import serve

    return serve(args.config, once=args.once, lock_wait=args.wait)


def _status(args: argparse.Namespace) -> int:
    from watcher.commands.status import status

    return status(args.config, fmt=args.format)


def _action(args: argparse.Namespace) -> int:
    from watcher.commands.action import action

    return action(
        args.config,
        upstream=args.upstream,
        cache_dir=args.cache_dir,
        fail_on=args.fail_on,
        wait=args.wait,
        summary_file=args.summary_file,
        output_file=args.output_file,
        commit_state=args.commit_state,
        list_upstreams=args.list_upstreams,
    )


def _demo(args: argparse.Namespace) -> int:
    from watcher.commands import demo

    return demo.run(sys.stdout, keep=args.keep)


def _completion(args: argparse.Namespace) -> int:
    from watcher.commands.completion import script

    sys.stdout.write(script(build_parser(), args.shell))
    return 0


def _add_init(sub: Subparsers) -> None:
    """Starting a site."""
    init = _command(
        sub,
        "init",
        _init,
        "start a notes site: config.toml, notes/, rules/, workflow",
        "watch init notes-site --upstream modelcontextprotocol/rust-sdk",
        config=False,
    )
    init.add_argument(
        "directory",
        nargs="?",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="where to write the site (default: the current folder)",
    )
    init.add_argument(
        "--upstream",
        required=True,
        metavar="OWNER/NAME",
        help="the upstream repository the notes cite",
    )
    init.add_argument(
        "--url",
        metavar="URL",
        help="where to fetch it (default: its GitHub URL); file:// and paths work",
    )


def _add_check(sub: Subparsers) -> None:
    check = _command(
        sub,
        "check",
        _check,
        "check every note against its upstream",
        "watch check --note codex-reads-one-page-of-tools --format markdown --no-issues",
    )
    check.add_argument("--upstream", metavar="REPO", help="check only this upstream (OWNER/NAME)")
    _selectors(check, "check only")
    check.add_argument("--changed", metavar="REF", help="check only the notes (and notes of "
                       "rules) changed since REF: git diff --name-only REF...HEAD")  # fmt: skip
    check.add_argument("--format", choices=("table", "json", "markdown", "github"),
                       help="default: table on a terminal, json when piped")  # fmt: skip
    _offline(check)
    check.add_argument(
        "--dry-run", action="store_true", help="say what issues would change; touch none"
    )
    check.add_argument("--no-issues", action="store_true", help="report only; file no issues")
    check.add_argument(
        "--no-implicit-upstreams",
        action="store_true",
        help="a cited repository without an [[upstream]] is an error, not fetched from GitHub",
    )
    _wait(check)


def _add_site_files(sub: Subparsers) -> None:
    """The site's own files: checked offline, and their formats."""
    validate = _command(
        sub,
        "validate",
        _validate,
        "check config, notes and rules offline in one pass (also a pre-commit hook)",
        "watch validate --config config.toml",
    )
    validate.add_argument("--format", choices=("text", "github"), default="text",
                          help="github: workflow commands, shown on the diff")  # fmt: skip
    schema = _command(
        sub,
        "schema",
        _schema,
        "print the JSON Schema of config.toml, note front matter or rules",
        "watch schema note > note.schema.json",
        config=False,
    )
    schema.add_argument("kind", choices=("config", "note", "rule"), help="which file format")


def _add_upstreams(sub: Subparsers) -> None:
    """What the site cites, and the mirrors of it."""
    sync = _command(
        sub,
        "sync",
        _sync,
        "create or fetch the upstream mirrors only",
        "watch sync --upstream openai/codex",
    )
    sync.add_argument("--upstream", metavar="REPO", help="only this upstream (OWNER/NAME)")
    _command(
        sub,
        "notes",
        _notes,
        "list notes, their citations and the rules guarding them",
        "watch notes",
    )
    ups = _command(
        sub,
        "upstreams",
        _upstreams,
        "the upstreams a run checks (--json: for an Actions matrix)",
        "watch upstreams --json",
    )
    ups.add_argument("--json", action="store_true", help="one JSON line for strategy.matrix")


def _add_rule_commands(sub: Subparsers) -> None:
    """Writing, linting and testing rules."""
    rules = sub.add_parser("rules", help="lint and test rules", description="lint and test rules")
    rules_sub = rules.add_subparsers(dest="rules_command", required=True, metavar="COMMAND")
    lint = _command(
        rules_sub,
        "lint",
        _rules_lint,
        "compile every rule and check it at its baseline",
        "watch rules lint --show",
    )
    _offline(lint)
    lint.add_argument(
        "--show",
        action="store_true",
        help="print each capture's text and lines at the rule's baseline",
    )
    test = _command(
        rules_sub,
        "test",
        _rules_test,
        "run the rules' [[rule.tests]] snippets (exit 1 if one fails)",
        "watch rules test --rule codex-tools-list-cursor-gate",
    )
    test.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="ID",
        help="test only this rule (repeat for several)",
    )
    rule = sub.add_parser("rule", help="write rules", description="write rules")
    rule_sub = rule.add_subparsers(dest="rule_command", required=True, metavar="COMMAND")
    new = _command(
        rule_sub,
        "new",
        _rule_new,
        "write a starting rule for a note's citation",
        "watch rule new codex-reads-one-page-of-tools --source 2",
    )
    new.add_argument("note_id", metavar="NOTE_ID", help="the note whose citation to guard")
    new.add_argument(
        "--source",
        type=int,
        default=1,
        metavar="N",
        help="the note's Nth code citation, as `watch notes` lists them (default 1)",
    )
    _offline(new)


def _add_history(sub: Subparsers) -> None:
    """What changed upstream: moved citations, a rule over history, an item's log."""
    fix = _command(
        sub,
        "fix",
        _fix,
        "show (or --write) new commit and path of moved citations; --accept: re-base a note",
        "watch fix --accept NOTE_ID --write",
    )
    fix.add_argument("--write", action="store_true", help="update the notes (else: show a diff)")
    fix.add_argument(
        "--accept",
        metavar="NOTE_ID",
        help="after re-verifying the note: re-base all it tracks on HEAD, bump lastVerified",
    )
    _offline(fix)
    back = _command(
        sub,
        "backtest",
        _backtest,
        "replay a rule over history: where it would fire",
        "watch backtest codex-tools-list-cursor-gate --since rust-v0.40.0",
    )
    back.add_argument("rule_id", nargs="?", metavar="RULE_ID", help="the rule to replay")
    back.add_argument("--note", metavar="ID", help="replay a note's citations and rules instead")
    back.add_argument("--since", metavar="COMMIT", help="start here instead of the baseline")
    _offline(back)
    itemlog = _command(
        sub,
        "log",
        _log,
        "every upstream commit that changed an item since its baseline, with PR and release",
        "watch log codex-reads-one-page-of-tools:codex-rs/core/src/mcp.rs:40-52",
    )
    itemlog.add_argument("item_id", metavar="ITEM_ID", help="a rule id, or NOTE:FILE:LINES")
    _offline(itemlog)


def _add_unattended(sub: Subparsers) -> None:
    """Running unattended: the daemon, its health, GitHub Actions."""
    serve = _command(
        sub,
        "serve",
        _serve,
        "run checks on each upstream's schedule until stopped",
        "watch serve --config /srv/notes/config.toml",
    )
    serve.add_argument("--once", action="store_true", help="check every upstream once, then exit")
    serve.add_argument(
        "--wait",
        type=float,
        default=600,
        metavar="SECONDS",
        help="how long a run waits for another run's state lock (default: 600)",
    )
    status = _command(
        sub,
        "status",
        _status,
        "each upstream's last run; 2 if one failed or is late",
        "watch status --format json",
    )
    status.add_argument(
        "--format", choices=("table", "json"), default="table", help="output format"
    )
    action = _command(
        sub,
        "action",
        _action,
        "check inside GitHub Actions (what action.yml runs)",
        "watch action --cache-dir /tmp/mirrors --fail-on stale",
    )
    action.add_argument("--upstream", metavar="REPO", help="check only this upstream (OWNER/NAME)")
    action.add_argument("--cache-dir", type=Path, metavar="DIR", help="where mirrors are cached")
    action.add_argument(
        "--fail-on",
        choices=("error", "stale"),
        default="error",
        help="fail the step on errors only (default), or on stale notes too",
    )
    _wait(action)
    for option, variable in (
        ("--summary-file", "GITHUB_STEP_SUMMARY"),
        ("--output-file", "GITHUB_OUTPUT"),
    ):
        default = Path(os.environ[variable]) if os.environ.get(variable) else None
        action.add_argument(
            option, type=Path, default=default, metavar="FILE", help=f"default: ${variable}"
        )
    action.add_argument("--commit-state", action="store_true", help="commit and push state/ after")
    action.add_argument(
        "--list-upstreams",
        action="store_true",
        help="check nothing; write the upstreams (as `upstreams --json`) to the `upstreams` output",
    )


def _add_tools(sub: Subparsers) -> None:
    """The demo, and shell completion."""
    demo = _command(
        sub,
        "demo",
        _demo,
        "offline: build a small upstream, check it, show an issue",
        "watch demo --keep",
        config=False,
    )
    demo.add_argument("--keep", action="store_true", help="keep the demo folder and print its path")
    completion = _command(
        sub,
        "completion",
        _completion,
        "print a shell completion script (bash, zsh, tcsh)",
        "watch completion bash > ~/.local/share/bash-completion/completions/watch",
        config=False,
    )
    completion.add_argument("shell", choices=("bash", "zsh", "tcsh"), help="the shell")


ADDERS = (
    _add_init,
    _add_check,
    _add_site_files,
    _add_upstreams,
    _add_rule_commands,
    _add_history,
    _add_unattended,
    _add_tools,
)


def _only(argv: Sequence[str]) -> str | None:
    """`check` when it is the command (after global flags only): its parser alone is built.
    Anything else, `--help` and abbreviations included, builds the whole command line."""
    rest = list(argv)
    while rest and (re.fullmatch(r"-[vq]+|--verbose|--quiet|--log-format=.*", rest[0])):
        rest.pop(0)
    if rest[:1] == ["--log-format"]:
        return _only(rest[2:])
    return "check" if rest[:1] == ["check"] else None


def _command(
    sub: Subparsers, name: str, handler: Handler, text: str, example: str, *, config: bool = True
) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        name,
        help=text,
        description=text,
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if config:
        parser.add_argument(
            "--config",
            type=Path,
            default=Path("config.toml"),
            metavar="FILE",
            help="the site's config.toml (default: ./config.toml)",
        )
    parser.set_defaults(handler=handler)
    return parser


def _wait(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wait",
        type=float,
        default=0,
        metavar="SECONDS",
        help="wait this long for another run's state lock (default: fail at once)",
    )


def _offline(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--offline", action="store_true", help="no fetch: use the mirrors as they are"
    )


def _selectors(parser: argparse.ArgumentParser, verb: str) -> None:
    for kind in ("note", "rule"):
        parser.add_argument(
            f"--{kind}",
            action="append",
            default=[],
            metavar="ID",
            help=f"{verb} this {kind} (repeat for several)",
        )


def main(argv: Sequence[str] | None = None, *, counts: Counts | None = None) -> int:
    """Run one command; every expected failure is one message on stderr and exit 2.

    Everything the command prints passes the redaction point (watcher/redact.py). A bug
    (any other exception) prints its traceback and exits 2 as well: never 1, which
    means "stale notes found" and would pass for success. What a `check` did is counted
    in `counts` when given (`watcher.judge.session`: tests and the bench read it)."""
    argv = sys.argv[1:] if argv is None else argv
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")  # no 40 ms plugin scan
    args = build_parser(_only(argv)).parse_args(argv)
    args.counts = counts
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactingStream(out), RedactingStream(err)
    try:
        configure_logging(args.verbose - args.quiet, args.log_format)
        return _run(args)
    finally:
        sys.stdout.flush()  # a reader gone at the last write is met here, quietly
        sys.stdout, sys.stderr = out, err


def _run(args: argparse.Namespace) -> int:
    try:
        return int(args.handler(args))
    except WatchError as exc:
        print(f"watch: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("watch: interrupted", file=sys.stderr)
        return 130
    except Exception:  # a bug: show it, and fail the run
        import traceback

        traceback.print_exc(file=sys.stderr)
        print(
            "watch: internal error (a bug in watch, not in your notes); exit 2. "
            "Please report it with the traceback above.",
            file=sys.stderr,
        )
        return 2
