"""One function per command: explicit arguments in, an exit code out."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from watcher import config as config_mod
from watcher.check import CheckOptions, gather, group, run_check
from watcher.errors import UpstreamError
from watcher.models import Verdict


def check(config_file: Path, options: CheckOptions, fmt: str | None, out: TextIO) -> int:
    """`watch check`: run the pipeline, print the report, exit 0/1/2."""
    from watcher.report import render

    config = config_mod.load(config_file)
    fmt = fmt or ("table" if out.isatty() else "json")
    report = run_check(config, options, _progress(fmt))
    render(report, fmt, out)
    return report.exit_code


def sync(config_file: Path, upstream: str | None, out: TextIO) -> int:
    """`watch sync`: create or fetch every mirror the notes need."""
    from watcher.mirrors import Mirror

    config = config_mod.load(config_file)
    options = CheckOptions(upstream=upstream)
    inputs = gather(config, options)
    status = 0
    for up, _items in group(config, inputs.items, options):
        if up is None:
            continue
        mirror = Mirror(up, config.cache, config.limits)
        try:
            mirror.sync()
            out.write(f"{up.repo}: {up.branch} at {mirror.head()[:12]} ({mirror.path})\n")
        except UpstreamError as exc:
            out.write(f"{up.repo}: error: {exc}\n")
            status = 2
        finally:
            mirror.close()
    return status


def notes(config_file: Path, out: TextIO) -> int:
    """`watch notes`: every note, its citations, and which are guarded by rules."""
    from watcher.notes import load_notes
    from watcher.rules import load_rules

    config = config_mod.load(config_file)
    loaded = load_notes(config.notes, display_root=config.root, limits=config.limits)
    rules = load_rules(config.rules, display_root=config.root, max_bytes=config.limits.rule_bytes)
    for note in loaded.notes.values():
        out.write(f"{note.id}  ({note.file})  {note.title}\n")
        guards = [r for r in rules.rules.values() if r.note == note.id]
        for number, citation in enumerate(note.citations, start=1):  # `rule new --source N`
            by = [r.id for r in guards if r.path == citation.path]
            guard = f"  guarded by {', '.join(by)}" if by else ""
            where = f"{citation.repo}@{citation.commit[:10]} {citation.cited}"
            out.write(f"  code {number:<2} {where}{guard}\n")
        for issue in note.issue_citations:
            out.write(f"  {issue.kind:<6} {issue.repo}#{issue.number}\n")
        for other in note.untracked:
            out.write(f"  other  {other} (not tracked)\n")
    for err in [*loaded.errors, *rules.errors]:
        out.write(f"error: {err}\n")
    return 2 if loaded.errors or rules.errors else 0


def rules_lint(config_file: Path, offline: bool, out: TextIO) -> int:
    """`watch rules lint`: compile every rule and check it at its note's baseline."""
    config = config_mod.load(config_file)
    report = run_check(config, CheckOptions(offline=offline, no_issues=True, citations=False), None)
    rule_ids = {r.id for r in report.results if r.kind == "rule"}
    bad = [
        r
        for r in report.results
        if r.verdict is Verdict.ERROR
        and (r.kind == "rule" or r.error in ("rule-invalid", "query-invalid"))
    ]
    for result in bad:
        out.write(f"error: {result.message}\n")
    out.write(
        f"{len(rule_ids) - len([b for b in bad if b.id in rule_ids])} of {len(rule_ids)} "
        f"rules hold at their baseline; {len(bad)} errors\n"
    )
    return 2 if bad else 0


def _progress(fmt: str) -> _RichProgress | None:
    return _RichProgress() if fmt == "table" and sys.stderr.isatty() else None


class _RichProgress:
    """A spinner on stderr while mirrors are fetched (terminals only)."""

    @contextlib.contextmanager
    def step(self, message: str) -> Iterator[None]:
        from rich.console import Console

        with Console(stderr=True).status(message):
            yield
