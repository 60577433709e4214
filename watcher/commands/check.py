"""`watch check`: the last run's report again when nothing changed (watcher.state.replay),
else the whole pipeline, recorded in `state/runs/`.

Imported by a warm run before anything heavy: pydantic, the models and the pipeline are
imported only when the full run starts.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from watcher.state import replay
from watcher.state.replay import Request

if TYPE_CHECKING:
    from watcher.config import Config
    from watcher.judge.session import Counts
    from watcher.models import Report
    from watcher.pipeline import CheckOptions, Progress
    from watcher.state.runs import Run
    from watcher.state.warm import Book


def check(
    config: Path,
    *,
    upstream: str | None = None,
    note: tuple[str, ...] = (),
    rule: tuple[str, ...] = (),
    changed: str | None = None,
    fmt: str | None = None,
    offline: bool = False,
    dry_run: bool = False,
    no_issues: bool = False,
    implicit_upstreams: bool = True,
    wait: float = 0.0,
    verbosity: int = 0,
    log_format: str = "text",
    out: TextIO | None = None,
    counts: Counts | None = None,
) -> int:
    """`watch check`: print the report, exit 0 (fresh), 1 (stale) or 2 (could not judge);
    what it did is counted in `counts` when given.

    With `changed` (a git ref), only the notes changed since it are checked, with those
    whose rules changed: every note when config.toml changed, none when nothing did."""
    if changed is not None:
        picked = changed_notes(config, changed)
        note = note if picked is None else (*note, *picked)
        if picked is not None and not note:
            print(f"watch: no note or rule changed since {changed}; nothing to check",
                  file=sys.stderr)  # fmt: skip
            return 0
    request = Request(
        config=config,
        upstream=upstream,
        note=note,
        rule=rule,
        fmt=fmt,
        offline=offline,
        dry_run=dry_run,
        no_issues=no_issues,
        implicit_upstreams=implicit_upstreams,
        wait=wait,
        verbosity=verbosity,
        log_format=log_format,
    )
    out = out or sys.stdout
    warm = counts.warm if counts is not None else None
    return replay.check(
        request, out, lambda fetched, book, to: _full(request, fetched, book, to, counts), warm
    )


def changed_notes(config_file: Path, ref: str) -> tuple[str, ...] | None:
    """The ids of the notes that `git diff --name-only REF...HEAD` (in the notes
    repository) names, or whose rules it names. None (check every note) when config.toml
    changed, or when a changed note or rule file no longer loads: its errors belong to no
    note that could be picked, and a check of the others would hide them."""
    from watcher.config import load
    from watcher.errors import WatchError
    from watcher.inputs import checkout
    from watcher.inputs.notememo import site_notes
    from watcher.inputs.rules import Compiles, InvalidRule, load_rules

    config = load(config_file)
    top = checkout.toplevel(config.root)
    code, _ = checkout.try_git(top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if code:
        raise WatchError(f"--changed {ref}: not a commit in the notes repository; fetch it "
                         "(actions/checkout: fetch-depth: 0) or name another")  # fmt: skip
    names = checkout.git(top, "diff", "--name-only", "-z", f"{ref}...HEAD").split("\0")
    paths = {(top / name).resolve() for name in names if name}

    def touched(file: str) -> bool:
        return (config.root / file).resolve() in paths

    loaded = site_notes(config)
    rules = load_rules(config.rules, display_root=config.root,
                       compiles=Compiles.load(config.cache),
                       max_bytes=config.limits.rule_bytes)  # fmt: skip
    broken = [e for e in (*loaded.errors, *rules.errors) if not isinstance(e, InvalidRule)]
    if config.file.resolve() in paths or any(touched(e.file) for e in broken):
        return None
    chosen = {n.id for n in loaded.notes.values() if touched(n.file)}
    chosen |= {r.note for r in (*rules.rules.values(), *rules.unusable.values()) if touched(r.file)}
    return tuple(sorted(chosen & set(loaded.notes)))


def _rule_places(config: Config) -> dict[str, tuple[str, int | None]]:
    """Where each rule is, for annotations: its file and the line of its `[[rule]]`."""
    from watcher.inputs.rules import Compiles, load_rules

    found = load_rules(config.rules, display_root=config.root, compiles=Compiles.load(config.cache))
    return {r.id: (r.file, r.line) for r in found.rules.values()}


def _full(
    request: Request,
    fetched: dict[str, str | None],
    book: Book | None,
    out: TextIO,
    counts: Counts | None = None,
) -> int:
    """The whole run; with `book`, tell watcher.state.replay what it read and did, to
    answer the next run without one."""
    from watcher.config import load
    from watcher.pipeline import CheckOptions
    from watcher.report import render

    config = load(request.config)
    options = CheckOptions(
        upstream=request.upstream,
        note=request.note,
        rule=request.rule,
        offline=request.offline,
        dry_run=request.dry_run,
        no_issues=request.no_issues,
        implicit_upstreams=request.implicit_upstreams,
        wait=request.wait,
        fetched=fetched,
    )
    fmt = request.fmt or ("table" if out.isatty() else "json")
    runs: list[tuple[str, Run]] = []
    report = checked(config, options, "check", _progress(fmt), runs, counts)
    render(report, fmt, out, config.root, _rule_places(config) if fmt == "github" else None)
    if book is not None:
        replay.tell(book, config, request, report, runs)
    return report.exit_code


def checked(
    config: Config,
    options: CheckOptions,
    by: str,
    progress: Progress | None = None,
    runs: list[tuple[str, Run]] | None = None,
    counts: Counts | None = None,
) -> Report:
    """Run a check and record it in `state/runs/` (so `watch status` sees every run);
    the runs recorded are added to `runs`.

    A dry run, or one filtered to a note or a rule, checks too little to say anything
    about an upstream's health, and is not recorded.
    """
    from watcher.pipeline import run_check
    from watcher.state.runs import here, record

    started = here(by)
    report = run_check(config, options, progress, counts)
    if not (options.dry_run or options.read_only or options.note or options.rule):
        recorded = record(config.state, report, started, wait=options.wait)
        if runs is not None:
            runs += recorded
    return report


def _progress(fmt: str) -> RichProgress | None:
    return RichProgress() if fmt == "table" and sys.stderr.isatty() else None


class RichProgress:
    """A spinner on stderr while mirrors are fetched, a plain line while items are
    checked (terminals only). The spinner runs in a thread of its own, and a step that
    forks workers must start none (`watcher.pipeline.Progress`)."""

    @contextlib.contextmanager
    def step(self, message: str, *, forks: bool = False) -> Iterator[None]:
        from rich.console import Console

        console = Console(stderr=True)
        if forks:
            console.print(f"{message}…", style="dim", highlight=False)
            yield
            return
        with console.status(message):
            yield
