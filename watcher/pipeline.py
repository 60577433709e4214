"""`watch check`: the whole pipeline for one run, from inputs to a Report and saved state."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, field_validator

from watcher.config import Config, Upstream
from watcher.errors import InputError, UpstreamError, WatchError
from watcher.inputs import guards
from watcher.inputs.notememo import site_notes
from watcher.inputs.rules import Compiles, InvalidRule, load_rules
from watcher.judge import classify, pool, tracked_issues
from watcher.judge.plan import Item, Plan
from watcher.judge.rule_items import rule_item, unusable
from watcher.judge.session import Counts, Session
from watcher.mirror.mirrors import Mirror
from watcher.models import ErrorCode, Note, Report, Result, Rule, Summary, UpstreamStatus, Verdict
from watcher.parse import languages
from watcher.report import plural
from watcher.state import store
from watcher.state.bookkeeping import Scope, run_scope
from watcher.state.upstream import Memo, UpstreamState, last_results

log = logging.getLogger("watch")


class CheckOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    upstream: str | None = None
    note: tuple[str, ...] = ()  # only these notes (`--note`, repeatable); () = all
    rule: tuple[str, ...] = ()  # only these rules (`--rule`, repeatable); () = all
    offline: bool = False
    dry_run: bool = False
    no_issues: bool = False
    implicit_upstreams: bool = True
    citations: bool = True  # False: rules only (`watch rules lint`)
    issue_citations: bool = True  # False: no GitHub reads (`watch fix`)
    read_only: bool = False  # no lock, no state written, no issues (`rules lint`, `fix`)
    wait: float = 0.0
    # Upstreams this process fetched already (watcher.state.replay): repo -> the fetch's error,
    # or None; they are not fetched again.
    fetched: dict[str, str | None] = {}

    @field_validator("note", "rule", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        """`note="x"` is one id; `None` is none (as before --note was repeatable)."""
        if value is None:
            return ()
        return (value,) if isinstance(value, str) else value

    @property
    def filtered(self) -> bool:
        """A run that checks part of the items: it must leave the others' state alone."""
        return bool(self.upstream) or self.partial

    @property
    def partial(self) -> bool:
        """A run that checks part of each upstream's items (`--upstream` checks all of one)."""
        return bool(self.note or self.rule) or not self.citations


class Progress(Protocol):
    """What a run shows while it works. A step that `forks` may spread its work over
    forked workers (`watcher.judge.pool`), which happens only from a process with one thread:
    it must start none (no spinner)."""

    def step(
        self, message: str, *, forks: bool = False
    ) -> contextlib.AbstractContextManager[None]: ...


class _Quiet:
    def step(self, message: str, *, forks: bool = False) -> contextlib.AbstractContextManager[None]:
        log.debug(message)
        return contextlib.nullcontext()


@dataclass
class Inputs:
    """Notes and rules as loaded, the items to check, and results for what failed to load."""

    notes: dict[str, Note]
    selected: list[Note]  # the notes this run checks (all, or the one --note names)
    items: list[Item]
    errors: list[Result] = field(default_factory=list)


def run_check(
    config: Config,
    options: CheckOptions,
    progress: Progress | None = None,
    counts: Counts | None = None,
) -> Report:
    """Check every selected item against its upstream; save state; file issues. Each
    upstream is checked in a session of its own (`watcher.judge.session`), whose caches
    go with it; what they all did is counted in `counts` when given.

    Run-level failures (an upstream that cannot be fetched, GitHub unreachable) are
    reported once each, as an ERROR log line and in the report (exit 2); the items they
    hit are `upstream-unreachable` in the report only: they never touch a note's issue,
    and state keeps their last verdicts.
    """
    started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    lock = (
        contextlib.nullcontext()
        if options.read_only  # reads a consistent snapshot: state files are replaced whole
        else store.locked(config.state, wait=options.wait)
    )
    errors: list[str] = []
    with lock:
        if not options.read_only:
            store.remove_leftovers(config.state)
        inputs = gather(config, options)
        statuses: list[UpstreamStatus] = []
        results: list[Result] = list(inputs.errors)
        for upstream, items in group(config, inputs.items, options):
            status, found = check_upstream(
                config, upstream, items, options, progress or _Quiet(), counts
            )
            statuses.append(status)
            results.extend(found)
        if not options.rule and options.citations and options.issue_citations:
            notes = _issue_notes(inputs, options)
            results += tracked_issues.check(config, notes, offline=options.offline)
        results.sort(key=lambda r: (-r.verdict.severity, r.note, r.id))
        actions = _file_issues(config, options, inputs, results, statuses, errors)
    # One ERROR line per run-level failure: an upstream not fetched, GitHub not read
    # (an issue citation) or not written (`errors`: the issue sink, for the whole run).
    unreachable = [s.error for s in statuses if s.error]
    unreachable += [f"{r.id}: {r.message}" for r in results if _run_level(r) and r.kind == "issue"]
    for error in [*unreachable, *errors]:
        log.error("%s", error)
    return Report(
        started_at=started,
        upstreams=tuple(statuses),
        results=tuple(results),
        issues=tuple(actions),
        summary=summarize(results),
        errors=tuple(errors),
    )


def _run_level(result: Result) -> bool:
    """An item that could not be judged because git or GitHub could not be reached."""
    return result.error is ErrorCode.UPSTREAM_UNREACHABLE


def gather(config: Config, options: CheckOptions) -> Inputs:
    """Load notes and rules and turn them into items; bad input becomes error results."""
    notes = site_notes(config)
    compiles = Compiles.load(config.cache)
    rules = load_rules(
        config.rules,
        display_root=config.root,
        compiles=compiles,
        max_bytes=config.limits.rule_bytes,
    )
    compiles.save(config.cache)
    selected = [n for n in notes.notes.values() if _picked(options.note, n.id)]
    inputs = Inputs(notes.notes, selected, [])
    files = {n.file for n in selected} if options.note else None  # --note: its own errors only
    bad = [e for e in notes.errors if files is None or e.file in files]
    inputs.errors += [_input_error(e, ErrorCode.NOTE_INVALID) for e in bad]
    for err in rules.errors:  # one the rule of a note owns is that note's error
        code = ErrorCode.QUERY_INVALID if "query error" in err.detail else ErrorCode.RULE_INVALID
        if not isinstance(err, InvalidRule):
            inputs.errors.append(_input_error(err, code, kind="rule"))
        elif _picked(options.rule, err.rule.id) and _picked(options.note, err.rule.note):
            inputs.errors.append(unusable(err, rule_item(err.rule, notes.notes, notes.duplicates)))
    _check_filters(config, options, notes.notes, rules.rules | rules.unusable, notes.duplicates)
    if config.track_citations and options.citations and not options.rule:
        inputs.items += [classify.citation_item(c, n.file) for n in selected for c in n.citations]
        for quoted in [classify.quote_item(q, n) for n in selected for q in n.quotes]:
            if isinstance(quoted, Result):
                inputs.errors.append(quoted)
            else:
                inputs.items.append(quoted)
    for rule in rules.rules.values():
        if not _picked(options.rule, rule.id) or not _picked(options.note, rule.note):
            continue
        item = rule_item(rule, notes.notes, notes.duplicates)
        if isinstance(item, Result):
            inputs.errors.append(item)
        else:
            inputs.items.append(item)
    return inputs


def _picked(chosen: tuple[str, ...], item_id: str) -> bool:
    return not chosen or item_id in chosen


def _check_filters(
    config: Config,
    options: CheckOptions,
    notes: dict[str, Note],
    rules: dict[str, Rule],
    duplicates: dict[str, list[str]],
) -> None:
    """A filter that names nothing is a typo, not a clean run: say so (exit 2)."""
    for note_id in (n for n in options.note if n not in notes):
        twins = f"this id is in {' and '.join(duplicates.get(note_id, []))}; give each its own"
        why = twins if note_id in duplicates else "no note has this id; `watch notes` lists them"
        raise WatchError(f"--note {note_id}: {why}")
    for rule_id in (r for r in options.rule if r not in rules):  # named as RULE_ID is too
        raise WatchError(f"rule {rule_id}: no rule has this id (or its file failed to load)")
    cited = {c.repo.lower() for n in notes.values() for c in n.citations}
    cited |= {c.repo.lower() for n in notes.values() for c in n.issue_citations}
    known = cited | {u.repo.lower() for u in config.upstream}
    if options.upstream is not None and options.upstream.lower() not in known:
        raise WatchError(f"--upstream {options.upstream}: no [[upstream]] and no note cites it")


def _issue_notes(inputs: Inputs, options: CheckOptions) -> list[Note]:
    """The selected notes, with only the issue citations of the selected upstream."""
    notes = inputs.selected
    if options.upstream is None:
        return notes
    wanted = options.upstream.lower()
    return [
        n.model_copy(
            update={
                "issue_citations": tuple(c for c in n.issue_citations if c.repo.lower() == wanted)
            }
        )
        for n in notes
    ]


def group(
    config: Config, items: Sequence[Item], options: CheckOptions
) -> Iterator[tuple[Upstream | None, list[Item]]]:
    """Items by upstream, in config order; implicit upstreams after, by name."""
    by_repo: dict[str, list[Item]] = {}
    for item in items:
        by_repo.setdefault(item.repo.lower(), []).append(item)
    for key in sorted(by_repo, key=lambda r: (config.upstream_for(r) is None, r)):
        upstream = config.upstream_for(key)
        if upstream is None and options.implicit_upstreams and config.implicit_upstreams:
            upstream = Upstream(repo=by_repo[key][0].repo)
        if options.upstream and (
            upstream is None or upstream.repo.lower() != options.upstream.lower()
        ):
            continue
        yield upstream, by_repo[key]


def check_upstream(
    config: Config,
    upstream: Upstream | None,
    items: list[Item],
    options: CheckOptions,
    progress: Progress,
    counts: Counts | None = None,
) -> tuple[UpstreamStatus, list[Result]]:
    """Sync one mirror and judge its items; an unreachable upstream fails only its items."""
    if upstream is None:  # a note-level error: the notes cite a repository nobody configured
        repo = items[0].repo
        message = (
            f"no [[upstream]] for {repo} in config.toml, and implicit upstreams are off "
            "(implicit_upstreams = false, or --no-implicit-upstreams); add an [[upstream]] for it"
        )
        status = UpstreamStatus(repo=repo, url="", branch="")
        return status, [classify.error(i, ErrorCode.NO_UPSTREAM, message) for i in items]
    mirror = Mirror(upstream, config.cache, config.limits, Session(counts))
    since = [i.commit for i in items]  # the trees their history walks read
    try:
        if upstream.repo in options.fetched:
            if (failed := options.fetched[upstream.repo]) is not None:
                raise UpstreamError(failed)
            mirror.complete_trees(since)
        elif options.offline:
            # The branch stays where it is; what its items need and the mirror lacks is
            # fetched as blobs are, trees in one batch, not one by one by git.
            mirror.check_health()
            mirror.complete_trees(since)
        else:
            with progress.step(f"fetching {upstream.repo}"):
                mirror.sync(since)
        head = mirror.head()
        # Only the dashboard shows it ("last seen fresh"): a warm run needs no extra git.
        head_date = mirror.date(head) if _dashboard(config, options) else None
        checking = f"checking {plural(len(items), 'item')} of {upstream.repo}"
        with progress.step(checking, forks=True):
            results = judge_all(config, mirror, upstream, head, items, options)
            results = guards.hint_rules(results)  # not saved: it depends on the rule's run
        mirror.tidy()
    except UpstreamError as exc:  # unreachable, or stalled past its time limit mid-run
        status = UpstreamStatus(
            repo=upstream.repo, url=upstream.display_url, branch=mirror.branch, error=str(exc)
        )
        return status, [classify.error(i, ErrorCode.UPSTREAM_UNREACHABLE, str(exc)) for i in items]
    finally:
        mirror.close()
    status = UpstreamStatus(
        repo=upstream.repo,
        url=upstream.display_url,
        branch=mirror.branch,
        head=head,
        head_date=head_date,
    )
    return status, results


def _judged(mirror: Mirror, waiting: list[tuple[int, Plan]], workers: pool.Pool) -> list[Result]:
    """The verdicts of these plans, spread over the pool (one file's in one process).
    What the history walks of stale citations need again comes back with each verdict:
    the citation's anchor, and its place at HEAD, told while HEAD's parse is at hand."""
    if not waiting:
        return []
    from watcher.history import spots

    def judge(plan: Plan) -> tuple[Result, Any, Any, Any]:
        verdict = classify.judge(mirror, plan)
        stale = verdict.verdict in (Verdict.CHANGED, Verdict.MISSING)
        spot = spots.head_spot(mirror, plan, verdict) if stale else None
        holder = spots.head_holder(mirror, plan, verdict)
        return verdict, classify.known_anchor(mirror, plan), spot, holder

    judged = pool.spread([plan for _, plan in waiting], key=_judging_key, work=judge, pool=workers)
    for (_, plan), (_, anchor, spot, holder) in zip(waiting, judged, strict=True):
        classify.remember_anchor(mirror, plan, anchor)
        spots.remember_spot(mirror, plan, spot)
        spots.remember_holder(mirror, plan, holder)
    return [verdict for verdict, _, _, _ in judged]


def _judging_key(plan: Plan) -> Hashable:
    """Which items one process judges together: those of one file (each version parsed
    once), and all the items whose file is gone in a language, which share one search of
    HEAD (`headsearch.head_search`): one process builds it, beside the others' judging."""
    language = _searched(plan)
    if language is not None:
        return ("searched", language)
    return plan.files or plan.item.path  # a file gone: by its path


def _searched(plan: Plan) -> str | None:
    """The language a citation whose file is gone is searched for at HEAD in, if any."""
    if plan.item.kind != "citation" or not plan.search_repo:
        return None
    return languages.for_path(plan.item.path)


def _dashboard(config: Config, options: CheckOptions) -> bool:
    wanted = config.issues.dashboard and config.issues.sink != "none"
    return wanted and not (options.no_issues or options.read_only)


def judge_all(
    config: Config,
    mirror: Mirror,
    upstream: Upstream,
    head: str,
    items: list[Item],
    options: CheckOptions,
) -> list[Result]:
    """Plan every item, fetch the blobs the new ones need in one batch, judge, save state."""
    saved = UpstreamState.read(config.state, upstream.repo)
    # Where each cited file went, remembered by (baseline, path) with the HEAD it reached:
    # an unchanged upstream asks git nothing, a moved one only about the new commits.
    mirror.paths.recall(saved.paths())
    followed = [(b, i.path) for i in items if (b := mirror.resolve(i.commit)) is not None]
    mirror.paths.prepare(head, followed)
    plans = [classify.plan(mirror, head, i, offline=options.offline) for i in items]
    fresh = [p for p in plans if isinstance(p, Plan) and not saved.holds(p.item.id, p)]
    # Items whose file is gone are searched for in every file at HEAD in their language
    # (`_judged`): those files come in the same fetch as the cited ones.
    searched = sorted({lang for p in fresh if (lang := _searched(p)) is not None})
    extensions = [languages.LANGUAGES[lang].extensions for lang in searched]
    every = [b for ends in extensions for b in mirror.files(head, ends).values()]
    mirror.prefetch([*(b for p in fresh for b in p.blobs), *every])
    tags = mirror.tags_key(upstream.release_tags)
    same_tags = saved.tags == tags  # else every cached release is recomputed
    releases = saved.releases() if same_tags else {}
    mirror.remember_releases(upstream.release_tags, releases)
    if not same_tags:  # every cached result's release is asked again: all in one pass
        held = [(p.item.id, p) for p in plans if isinstance(p, Plan)]
        mirror.releases(upstream.release_tags, saved.blamed(held))
    found: dict[int, Result] = {}  # position -> result
    waiting: list[tuple[int, Plan]] = []  # to judge afresh: not in the cache
    for position, planned in enumerate(plans):
        if isinstance(planned, Result):
            found[position] = planned
        elif hit := _from_cache(mirror, upstream, saved, planned, same_tags=same_tags):
            found[position] = hit
        else:
            waiting.append((position, planned))
    # Judged file by file: the citations of one file parse its versions once, where the
    # parse cache (a few files' worth) would drop them between citations in note order.
    # A big site's files are dealt out to worker processes, one core each.
    waiting.sort(key=lambda pp: (pp[1].base_blob, pp[1].files))
    workers = pool.pool(mirror, config.limits.processes)
    for (position, _), verdict in zip(waiting, _judged(mirror, waiting, workers), strict=True):
        found[position] = verdict
    judged = {position: (planned, found[position]) for position, planned in waiting}
    results = [found[position] for position in range(len(plans))]
    if judged:  # history walks: imported only when an item was judged afresh
        from watcher.history import attribute

        mirror.session.judged()  # the searches of HEAD: only judging reads them
        attributed = attribute.attribute(
            mirror, list(judged.values()), upstream.release_tags, workers
        )
        for position, result in zip(judged, attributed, strict=True):
            results[position] = result
    if not options.read_only:
        memo = Memo(tags, releases, mirror.paths.remembered(_followed(plans)))
        _save(saved, upstream, head, plans, results, memo, partial=options.partial)
    return results


def _followed(plans: Sequence[Plan | Result]) -> Iterator[tuple[str, str]]:
    return ((p.base, p.item.path) for p in plans if isinstance(p, Plan))


def _save(
    saved: UpstreamState,
    upstream: Upstream,
    head: str,
    plans: Sequence[Plan | Result],
    results: Sequence[Result],
    memo: Memo,
    *,
    partial: bool,
) -> None:
    """Save each planned item's result under its key, and what later runs reuse."""
    # Remembered per (commit, tag set): a re-judged item blamed on a known commit
    # asks git nothing; new tags start the memo afresh.
    blamed = {r.introduced_by.commit: r.released_in for r in results if r.introduced_by}
    blamed |= {c.commit: c.released_in for r in results for c in r.history}
    keyed = [(p.key_for(r), r) for p, r in zip(plans, results, strict=True) if isinstance(p, Plan)]
    memo = saved.remembered(memo, blamed, partial=partial)
    saved.save(upstream, head, keyed, memo, prune=not partial)


def _from_cache(
    mirror: Mirror, upstream: Upstream, saved: UpstreamState, plan: Plan, *, same_tags: bool
) -> Result | None:
    """A result from an earlier run with the same key: same item, baseline and blobs
    (None when there is none, or it is damaged); its releases asked again when the tags
    moved."""
    result = saved.result(plan.item.id, plan.head) if saved.holds(plan.item.id, plan) else None
    if result is None or same_tags:
        return result
    tags = upstream.release_tags
    history = tuple(
        c.model_copy(update={"released_in": mirror.first_release(c.commit, tags)})
        for c in result.history
    )
    commit = result.introduced_by.commit if result.introduced_by else None
    released = mirror.first_release(commit, tags) if commit else None
    return result.model_copy(update={"released_in": released, "history": history})


def summarize(results: Sequence[Result]) -> Summary:
    counts = {v.value: 0 for v in Verdict}
    for result in results:
        counts[result.verdict.value] += 1
    return Summary(**counts)


def _input_error(
    err: InputError, code: ErrorCode, kind: Literal["citation", "rule"] = "citation"
) -> Result:
    """A note or rule file that cannot be read, as a result: kind `rule` for a rules file;
    an error of one citation or rule is that item's, for its note."""
    return Result(
        id=err.item or (f"{err.file}:{err.line}" if err.line else err.file),
        kind=kind,
        note=err.note,
        note_file=err.file,
        repo=err.repo,
        verdict=Verdict.ERROR,
        message=str(err),
        error=code,
    )


def _file_issues(
    config: Config,
    options: CheckOptions,
    inputs: Inputs,
    results: list[Result],
    statuses: list[UpstreamStatus],
    errors: list[str],
) -> list[Any]:
    """Sync the issues of the notes this run owns; never those a run-level failure touched."""
    if options.no_issues or options.read_only or config.issues.sink == "none":
        return []
    from watcher.issues.sync import sync_issues

    scope = run_scope(
        config,
        inputs.notes,
        statuses,
        upstream=options.upstream,
        partial=options.partial,
        filtered=options.filtered,
    )
    failed = {s.repo.lower() for s in statuses if s.error}
    touched = {r.note for r in results if r.repo.lower() in failed or _run_level(r)}
    mine = [
        r
        for r in [*results, *_others(config, inputs, statuses, scope)]
        if r.note and r.note not in touched and scope.owner(r.note) in scope.shards
    ]
    owned = {r.note for r in mine}  # built once: a set per note was notes x results
    return sync_issues(
        config,
        {k: v for k, v in inputs.notes.items() if k in owned},
        mine,
        statuses,
        dry_run=options.dry_run,
        log=_log_line,
        scope=scope,
        failures=errors,
    )


def _others(
    config: Config, inputs: Inputs, statuses: Sequence[UpstreamStatus], scope: Scope
) -> list[Result]:
    """Last verdicts of items this run did not check, of notes it owns (other upstreams)."""
    checked = {s.repo.lower() for s in statuses}
    by_repo: dict[str, list[Item]] = {}
    for item in inputs.items:
        if item.repo.lower() not in checked and scope.owner(item.note) in scope.shards:
            by_repo.setdefault(item.repo, []).append(item)
    found: list[Result] = []
    for repo, items in by_repo.items():
        upstream = config.upstream_for(repo)
        found += last_results(
            config.state, upstream.repo if upstream else repo, [i.id for i in items]
        )
    return found


def _log_line(message: str) -> None:
    log.info(message)
