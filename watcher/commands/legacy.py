"""One function per command: explicit arguments in, an exit code out."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from watcher import config as config_mod
from watcher.errors import UpstreamError, WatchError
from watcher.models import CodeCitation, Report, Rule, Verdict
from watcher.pipeline import CheckOptions, Progress, gather, group, run_check
from watcher.report import plural
from watcher.state import replay as warm

if TYPE_CHECKING:
    from watcher.commands.status import Run
    from watcher.state import warm as warmstore


def check(
    config_file: Path,
    options: CheckOptions,
    fmt: str | None,
    out: TextIO,
    book: warmstore.Book | None = None,
) -> int:
    """`watch check`: run the pipeline, print the report, exit 0/1/2; with `book`, tell
    watcher.state.replay what the run read and did, to answer the next run without one."""
    from watcher.report import render

    config = config_mod.load(config_file)
    fmt = fmt or ("table" if out.isatty() else "json")
    runs: list[tuple[str, Run]] = []
    report = checked(config, options, "check", _progress(fmt), runs)
    render(report, fmt, out)
    if book is not None:
        _tell(book, config, options, report, runs)
    return report.exit_code


def checked(
    config: config_mod.Config,
    options: CheckOptions,
    by: str,
    progress: Progress | None = None,
    runs: list[tuple[str, Run]] | None = None,
) -> Report:
    """Run a check and record it in `state/runs/` (so `watch status` sees every run);
    the runs recorded are added to `runs`.

    A dry run, or one filtered to a note or a rule, checks too little to say anything
    about an upstream's health, and is not recorded.
    """
    from watcher.commands.status import here, record

    started = here(by)
    report = run_check(config, options, progress)
    if not (options.dry_run or options.read_only or options.note or options.rule):
        recorded = record(config.state, report, started, wait=options.wait)
        if runs is not None:
            runs += recorded
    return report


def _tell(
    book: warmstore.Book,
    config: config_mod.Config,
    options: CheckOptions,
    report: Report,
    runs: list[tuple[str, Run]],
) -> None:
    """What watcher.state.replay stores: the upstreams fetched, the run records without their
    times, and whether the report depends on anything but files it can fingerprint."""
    from watcher.config import Upstream

    book.state, book.cache = config.state, config.cache
    book.started_at, book.code = report.started_at, report.exit_code
    fetched = [u for u in report.upstreams if u.url]
    for status in fetched:
        upstream = config.upstream_for(status.repo) or Upstream(repo=status.repo)
        book.upstreams.append({
            "repo": status.repo,
            "branch": upstream.branch,
            "fetch_seconds": config.fetch_seconds(upstream),
            "stall_seconds": config.limits.stall_seconds,
            "url": warm.digest(upstream.fetch_url),
        })  # fmt: skip
    timeless = {"started_at", "finished_at", "duration_s"}
    book.runs = [
        {"repo": repo, "run": run.model_dump(mode="json", exclude_none=True, exclude=timeless)}
        for repo, run in runs
    ]
    filing = not options.no_issues and config.issues.sink != "none"
    online = not options.offline and any(r.kind == "issue" for r in report.results)
    book.storable = (
        not (report.errors or any(u.error for u in report.upstreams))
        and not (filing and config.issues.sink == "github")  # GitHub's issues are its truth
        and not online  # tracked issues and pull requests are read from GitHub
        and len(runs) == len(fetched)
    )


def sync(config_file: Path, upstream: str | None, out: TextIO) -> int:
    """`watch sync`: create or fetch the mirror of every configured upstream, and of every
    repository the notes cite without one (unless implicit upstreams are off)."""
    from watcher.mirror.mirrors import Mirror

    config = config_mod.load(config_file)
    options = CheckOptions(upstream=upstream)
    inputs = gather(config, options)
    groups = [(up, items) for up, items in group(config, inputs.items, options) if up is not None]
    since = {up.repo: [i.commit for i in items] for up, items in groups}  # their trees too
    wanted = [u for u in config.upstream if upstream is None or _same(u.repo, upstream)]
    status = 0
    for up in [*wanted, *(u for u, _ in groups if config.upstream_for(u.repo) is None)]:
        mirror = Mirror(up, config.cache, config.limits)
        try:
            mirror.sync(since.get(up.repo, ()))
            out.write(f"{up.repo}: {mirror.branch} at {mirror.head()[:12]} ({mirror.path})\n")
        except UpstreamError as exc:
            out.write(f"{up.repo}: error: {exc}\n")
            status = 2
        finally:
            mirror.close()
    return status


def upstream_matrix(config: config_mod.Config) -> list[dict[str, object]]:
    """Every upstream a run checks, as GitHub Actions `strategy.matrix` entries.

    Configured upstreams first, in config order, then repositories the notes cite with
    no [[upstream]] (unless implicit upstreams are off). `slug` names the mirror
    (`CACHE-DIR/SLUG.git`) and `cache_key` is the prefix of its actions/cache key,
    which workflow expressions cannot compute from `repo` themselves.
    """
    from watcher.state.store import slug

    inputs = gather(config, CheckOptions())
    cited = [up for up, _items in group(config, inputs.items, CheckOptions()) if up is not None]
    implicit = [u for u in cited if config.upstream_for(u.repo) is None]
    return [
        {
            "repo": u.repo,
            "slug": slug(u.repo),
            "mirror": f"{slug(u.repo)}.git",
            "cache_key": f"watch-mirror-{slug(u.repo)}-",
            "implicit": u in implicit,
        }
        for u in [*config.upstream, *implicit]
    ]


def upstreams(config_file: Path, as_json: bool, out: TextIO) -> int:
    """`watch upstreams [--json]`: the upstreams to check, e.g. for an Actions matrix."""
    import json

    entries = upstream_matrix(config_mod.load(config_file))
    if as_json:  # one line: it goes into $GITHUB_OUTPUT as it is
        out.write(json.dumps(entries, separators=(",", ":")) + "\n")
        return 0
    for entry in entries:
        out.write(
            f"{entry['repo']}  {entry['mirror']}{'  (implicit)' if entry['implicit'] else ''}\n"
        )
    return 0


def _same(repo: str, other: str | None) -> bool:
    return other is not None and repo.lower() == other.lower()


def notes(config_file: Path, out: TextIO) -> int:
    """`watch notes`: every note, its citations, and which are guarded by rules."""
    from watcher.inputs.notememo import site_notes
    from watcher.inputs.rules import load_rules

    config = config_mod.load(config_file)
    loaded = site_notes(config)
    rules = load_rules(config.rules, display_root=config.root, max_bytes=config.limits.rule_bytes)
    for note in loaded.notes.values():
        out.write(f"{note.id}  ({note.file})  {note.title}\n")
        guards = [r for r in rules.rules.values() if r.note == note.id]
        for number, citation in enumerate(note.citations, start=1):  # `rule new --source N`
            guard = _guard_text(config, citation, [r for r in guards if r.path == citation.path])
            where = f"{citation.repo}@{citation.commit[:10]} {citation.cited}"
            out.write(f"  code {number:<2} {where}{guard}\n")
        for issue in note.issue_citations:
            out.write(f"  {issue.kind:<6} {issue.repo}#{issue.number}\n")
        for other in note.untracked:
            out.write(f"  other  {other} (not tracked)\n")
    for err in [*loaded.errors, *rules.errors]:
        out.write(f"error: {err}\n")
    return 2 if loaded.errors or rules.errors else 0


def _guard_text(config: config_mod.Config, citation: CodeCitation, rules: list[Rule]) -> str:
    """Which rules guard the citation: those whose baseline target (as the last run saw
    it) overlaps the cited lines; a rule not judged yet is named as such."""
    from watcher.inputs import guards
    from watcher.state.upstream import last_baselines

    if not rules:
        return ""
    baselines = last_baselines(config.state, citation.repo, [r.id for r in rules])
    guarding, unknown = [], []
    for rule in rules:
        target = baselines.get(rule.id)
        commit = target.commit if target and target.commit.startswith(citation.commit) else ""
        covers = guards.covers(target, citation, commit) if target else None
        if covers:
            guarding.append(rule.id)
        elif covers is None:
            unknown.append(rule.id)
    text = f"  guarded by {', '.join(guarding)}" if guarding else ""
    if unknown:
        text += f"  (same file as {', '.join(unknown)}: run `watch check` to see its lines)"
    return text


def rules_lint(config_file: Path, offline: bool, out: TextIO, *, show: bool = False) -> int:
    """`watch rules lint`: compile every rule and check it at its note's baseline;
    with `show`, print what each capture matched there."""
    config = config_mod.load(config_file)
    options = CheckOptions(offline=offline, no_issues=True, citations=False, read_only=True)
    report = run_check(config, options, None)
    rule_ids = {r.id for r in report.results if r.kind == "rule"}
    bad = [
        r
        for r in report.results
        if r.verdict is Verdict.ERROR
        and (r.kind == "rule" or r.error in ("rule-invalid", "query-invalid"))
    ]
    if show:
        from watcher.commands.ruletest import baseline_captures

        holding = rule_ids - {b.id for b in bad}
        out.write(baseline_captures(config, holding, offline=True))
    for result in bad:
        out.write(f"error: {result.message}\n")
    holding_count = len(rule_ids) - len([b for b in bad if b.id in rule_ids])
    verb = "holds at its" if len(rule_ids) == 1 else "hold at their"
    out.write(
        f"{holding_count} of {plural(len(rule_ids), 'rule')} {verb} baseline; "
        f"{plural(len(bad), 'error')}\n"
    )
    return 2 if bad else 0


def rules_test(config_file: Path, rule_ids: Sequence[str], out: TextIO) -> int:
    """`watch rules test`: run every `[[rule.tests]]` case; 1 if one fails, 2 if a rule
    does not load."""
    from watcher.commands.ruletest import run_all
    from watcher.inputs.rules import load_rules

    config = config_mod.load(config_file)
    loaded = load_rules(config.rules, display_root=config.root, max_bytes=config.limits.rule_bytes)
    unknown = [r for r in rule_ids if r not in loaded.rules]
    if unknown:
        raise WatchError(f"--rule {unknown[0]}: no rule has this id (or it failed to load)")
    rules = [r for r in loaded.rules.values() if not rule_ids or r.id in rule_ids]
    outcomes = run_all(rules)
    for outcome in outcomes:
        out.write(outcome.describe() + "\n")
    for err in loaded.errors:
        out.write(f"error: {err}\n")
    failed = sum(not o.passed for o in outcomes)
    untested = sum(not r.tests for r in rules)
    out.write(
        f"{plural(len(outcomes), 'test')} of {plural(len(rules), 'rule')}: "
        f"{len(outcomes) - failed} passed, {failed} failed"
        + (f"; {plural(untested, 'rule')} without tests" if untested else "")
        + "\n"
    )
    if loaded.errors:
        return 2
    return 1 if failed else 0


def validate(config_file: Path, out: TextIO) -> int:
    """`watch validate`: config, notes and rules (and rule tests) checked offline in one
    pass, as a pre-commit hook would; exit 2 when anything is wrong."""
    from watcher.commands.ruletest import run_all

    config = config_mod.load(config_file)
    inputs = gather(config, CheckOptions(offline=True))
    problems = [r.message for r in inputs.errors]
    rules = {i.rule.id: i.rule for i in inputs.items if i.rule is not None}
    problems += [o.describe() for o in run_all(rules.values()) if not o.passed]
    for problem in problems:
        out.write(f"{problem}\n")
    summary = f"{plural(len(inputs.notes), 'note')}, {plural(len(rules), 'rule')}: " + (
        f"{plural(len(problems), 'problem')}" if problems else "valid"
    )
    out.write(f"{config.display(config.file)}: {summary}\n")
    return 2 if problems else 0


def _progress(fmt: str) -> _RichProgress | None:
    return _RichProgress() if fmt == "table" and sys.stderr.isatty() else None


class _RichProgress:
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
