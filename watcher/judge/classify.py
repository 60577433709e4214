"""Judge one tracked item: plan what it needs from the mirror, then give it a verdict.

Planning reads only commits and trees, so the blobs of every item can be fetched in one
batch before anything is parsed.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from watcher.errors import Absent, Unreadable
from watcher.inputs import quotes
from watcher.inputs.rules import Compiled, InvalidRule, compile_rule
from watcher.judge.claims import claims
from watcher.judge.plan import Item, Plan
from watcher.mirror.mirrors import FULL_SHA, Mirror
from watcher.models import (
    Candidate,
    ClaimResult,
    CodeCitation,
    ErrorCode,
    Location,
    Note,
    Quote,
    Result,
    Rule,
    Verdict,
    span,
)
from watcher.parse import languages, syntax

if TYPE_CHECKING:  # judging imports them on first use: a warm run plans, and judges nothing
    from watcher.judge import relocate
    from watcher.judge.session import AnchorKey
    from watcher.locate.anchors import Anchor, Found


def citation_item(citation: CodeCitation, note_file: str) -> Item:
    return Item(
        id=citation.id,
        kind="citation",
        note=citation.note,
        note_file=note_file,
        repo=citation.repo,
        commit=citation.commit,
        path=citation.path,
        start_line=citation.start_line,
        end_line=citation.end_line,
    )


def quote_item(quote: Quote, note: Note) -> Item | Result:
    """A quote as an item, with the note's cited files it may quote: those of its
    language family, in the upstream the note cites most of them from. A quote of no
    cited file is an error result."""
    family = languages.family(quote.language)
    cited = [
        c
        for c in note.citations
        if (lang := languages.for_path(c.path)) and languages.family(lang) == family
    ]
    repos = [c.repo for c in cited]
    repo = max(dict.fromkeys(repos), key=repos.count) if repos else ""
    sources = tuple(dict.fromkeys((c.commit, c.path) for c in cited if c.repo == repo))
    first = sources[0] if sources else ("", "")
    item = Item(
        id=quote.id, kind="quote", note=note.id, note_file=note.file, repo=repo,
        commit=first[0], path=first[1], quote=quote, sources=sources,
    )  # fmt: skip
    if sources:
        return item
    return error(
        item,
        ErrorCode.QUOTE_UNSOURCED,
        f"{note.file}:{quote.line}: this {quote.language} block quotes no file the note "
        "cites; cite the file it comes from, or put `<!-- watch:ignore -->` before it "
        "if it is not a quote",
    )


def result(item: Item, verdict: Verdict, message: str, **fields: Any) -> Result:
    """A result for `item`; `fields` are the rest of Result (baseline, current, ...)."""
    kind = "rule" if item.rule else ("quote" if item.quote else "citation")
    return Result(
        id=item.id, kind=kind, note=item.note, note_file=item.note_file, repo=item.repo,
        verdict=verdict, message=message, **fields,
    )  # fmt: skip


def error(item: Item, code: ErrorCode, message: str, baseline: Location | None = None) -> Result:
    return result(item, Verdict.ERROR, message, baseline=baseline, error=code)


def plan(mirror: Mirror, head: str, item: Item, *, offline: bool) -> Plan | Result:
    """Resolve the baseline and follow the file to HEAD through its renames, reading no blob
    (only what similarity detection needs where a commit removed the file)."""
    if item.quote is not None:
        return _plan_quote(mirror, head, item, offline=offline)
    base = mirror.resolve_or_fetch(item.commit, offline=offline)
    if base is None:
        return error(item, ErrorCode.BASELINE_UNREACHABLE, _unreachable(mirror, item, offline))
    base_blob = mirror.blob_id(base, item.path)
    if base_blob is None:
        fix = (
            f"fix `path` of rule {item.rule.id} ({rule_where(item.rule)})"
            if item.rule
            else "check the note's path"
        )
        return error(
            item,
            ErrorCode.FILE_MISSING_AT_BASELINE,
            f"{item.path} does not exist at {base[:12]}; {fix}",
            Location(commit=base, path=item.path),
        )
    where = mirror.paths.where(base, head, item.path)
    return Plan(
        item, base, base_blob, head, where.files, not where.files, (), where.removed_by,
        where.removals, where.removed_path,
    )  # fmt: skip


def _head_files(mirror: Mirror, base: str, head: str, path: str) -> tuple[tuple[str, str], ...]:
    """The file at HEAD as (path, blob), followed through its renames."""
    return mirror.paths.where(base, head, path).files


def _plan_quote(mirror: Mirror, head: str, item: Item, *, offline: bool) -> Plan | Result:
    """A quote's cited files at their baselines and at HEAD."""
    assert item.quote is not None
    where = f"{item.note_file}:{item.quote.line}"
    bases: list[tuple[str, str, str]] = []
    files: dict[str, str] = {}
    for commit, path in item.sources:
        base = mirror.resolve_or_fetch(commit, offline=offline)
        blob = mirror.blob_id(base, path) if base else None
        if base is None or blob is None:
            continue  # the citation itself reports it
        bases.append((path, base, blob))
        files.update(_head_files(mirror, base, head, path))
    if not bases:
        return error(
            item,
            ErrorCode.BASELINE_UNREACHABLE,
            f"{where}: none of the files this quote may come from can be read at the note's "
            "commits; fix the note's citations",
        )
    path, base, blob = bases[0]
    return Plan(item, base, blob, head, tuple(files.items()), False, tuple(bases))


def judge(mirror: Mirror, plan: Plan) -> Result:
    """The verdict on a planned item (its blobs already fetched)."""
    from watcher.locate.anchors import LocateError

    item = plan.item
    try:
        if item.rule is not None:
            return _judge_rule(mirror, plan, item.rule)
        if item.quote is not None:
            return _judge_quote(mirror, plan, item.quote)
        return _judge_citation(mirror, plan)
    except LocateError as exc:
        return error(
            item,
            ErrorCode.LINES_OUT_OF_RANGE,
            f"{item.path}: {exc}; fix the note's lines",
            _baseline(plan, item.start_line, item.end_line),
        )
    except Unreadable as exc:
        return error(
            item,
            _unreadable(plan, exc),
            f"{item.path}: {exc}",
            _baseline(plan, item.start_line, item.end_line),
        )


def _unreadable(plan: Plan, exc: Unreadable) -> ErrorCode:
    """What an item that reads a file version watch cannot read is: too large; or not on
    the upstream, the note's error where it is the cited version, else the upstream's."""
    if isinstance(exc, Absent):
        cited = exc.blob == plan.base_blob
        return ErrorCode.BASELINE_UNREACHABLE if cited else ErrorCode.UPSTREAM_UNREACHABLE
    return ErrorCode.FILE_TOO_LARGE


def parse_at(
    mirror: Mirror,
    path: str,
    blob: str,
    language: str | None = None,
    read: Callable[[str], bytes] | None = None,
) -> syntax.Parsed:
    """The parse of a blob at `path`; its bytes read by `read` (a walk's own `cat-file`)
    when given, else from the mirror, and only when it is not parsed already."""
    language = language or languages.for_path(path) or syntax.TEXT
    stats = mirror.session.counts.parse
    return syntax.parse(blob, language, lambda: (read or mirror.read)(blob), path, stats)


# --- citations ------------------------------------------------------------------------


def _anchor_key(plan: Plan) -> AnchorKey:
    item = plan.item
    return (plan.base_blob, item.path, item.start_line, item.end_line)


def known_anchor(mirror: Mirror, plan: Plan) -> Anchor | None:
    """The plan's anchor if this process has it (a worker's, to send back)."""
    return mirror.session.anchors.get(_anchor_key(plan))


def remember_anchor(mirror: Mirror, plan: Plan, anchor: Anchor | None) -> None:
    """Keep an anchor another process made for this plan, for the run (its session)."""
    if anchor is not None and plan.item.start_line is not None:
        mirror.session.remember_anchor(_anchor_key(plan), anchor)


def anchor_of(mirror: Mirror, plan: Plan) -> Anchor:
    """The plan's anchor: made once per run (a stale citation needs it again for its
    history walk, by when its baseline's parse has long left the parse cache)."""
    from watcher.locate import anchors

    found = mirror.session.anchor(_anchor_key(plan))
    if found is None:
        item = plan.item
        parsed = parse_at(mirror, item.path, plan.base_blob)
        found = anchors.anchor(parsed, item.path, item.start_line, item.end_line)
        remember_anchor(mirror, plan, found)  # (a whole file's tokens are not kept)
    return found


def find_citation(mirror: Mirror, anchor: Anchor, files: Sequence[tuple[str, str]]) -> Found | None:
    from watcher.locate import matching

    return matching.find(anchor, [(p, parse_at(mirror, p, b)) for p, b in files])


def _judge_citation(mirror: Mirror, plan: Plan) -> Result:
    from watcher.judge import relocate, untouched

    anchor = anchor_of(mirror, plan)
    baseline = functools.partial(parse_at, mirror, plan.item.path, plan.base_blob)
    found = untouched.found(plan, anchor, baseline, mirror.read) or find_citation(
        mirror, anchor, plan.files
    )
    for renamed in mirror.session.renamed.get(anchor, ()) if found is None else ():
        found = find_citation(mirror, renamed, plan.files)  # under a new name: `judge.renamed`
        if found is not None:
            break
    candidates: tuple[Candidate, ...] = ()
    if found is None and (plan.search_repo or plan.removals):
        found, candidates = relocate.citation(mirror, plan, anchor, parser(mirror))
    elif found is not None:  # identical in a copy too: say where
        candidates = relocate.twins(plan, anchor, found, parser(mirror))
    if found is None:
        cited = _baseline(plan, plan.item.start_line, plan.item.end_line)
        return _result(plan, Verdict.MISSING, cited, None, _missing(plan, candidates),
                       diff=None, candidates=candidates, code=anchor.text)  # fmt: skip
    return placed(plan, anchor, found, candidates)


def placed(plan: Plan, anchor: Anchor, found: Found, candidates: tuple[Candidate, ...]) -> Result:
    """A citation's result where it was found at HEAD (`candidates`: other places)."""
    item = plan.item
    verdict = _location_verdict(found, item.path, item.start_line, item.end_line)
    current = Location(
        commit=plan.head, path=found.path, start_line=found.start_line, end_line=found.end_line
    )
    diff = unified(anchor.text, found.text) if verdict is Verdict.CHANGED else None
    message = _message(verdict, current, gone=_gone(plan, candidates))
    return _result(plan, verdict, _baseline(plan, item.start_line, item.end_line), current,
                   message, diff=diff, candidates=candidates, code=anchor.text)  # fmt: skip


def gone(plan: Plan, judged: Result) -> Result:
    """A citation judged found, told missing after all (by its history walk)."""
    return judged.model_copy(update={"verdict": Verdict.MISSING, "current": None, "diff": None,
                                     "candidates": (), "message": _missing(plan)})  # fmt: skip


def parser(mirror: Mirror) -> relocate.Parse:
    """Parse a candidate file through the run's parse cache (`relocate.Parse`)."""
    return lambda path, blob: parse_at(mirror, path, blob)


def _gone(plan: Plan, candidates: tuple[Candidate, ...]) -> str:
    """What to say of an item found in a file it was not followed to, or in several."""
    from watcher.judge import relocate
    from watcher.locate.targets import FOLLOWED, judged

    if not candidates:
        return ""
    told = {FOLLOWED: judged, relocate.COPIES: relocate.explain}.get(candidates[0].found)
    if told is not None:  # several targets of a rule in its file, or identical in a copy too
        return told(candidates)
    if plan.search_repo:
        lead = f"{_removed(plan)} with no rename git could see"
    else:
        lead = f"not in {', '.join(p for p, _ in plan.files)}, where git followed the file"
    return f"{lead}; {relocate.explain(candidates)}"


# --- quotes ---------------------------------------------------------------------------


def quote_baseline(
    mirror: Mirror, plan: Plan, quote: Quote
) -> tuple[quotes.Pattern, Location, str] | Result:
    """Where the quote occurs at its baseline (location and lines), or an error saying why
    it does not: a quote that never matched is a typo in the note, not upstream news."""
    pattern = quotes.pattern(quote.text, quote.language)
    where = f"{plan.item.note_file}:{quote.line}"
    if not pattern.segments:
        return error(plan.item, ErrorCode.QUOTE_BASELINE, f"{where}: the quote holds no code")
    best: tuple[float, str] | None = None
    for path, base, blob in plan.bases:
        parsed = parse_at(mirror, path, blob)
        match = quotes.closest(pattern, parsed)
        if match is None:
            continue
        start, end = quotes.lines(parsed, match)
        if match.exact:
            text = parsed.lines(start, end)
            return pattern, Location(commit=base, path=path, start_line=start, end_line=end), text
        if best is None or match.score > best[0]:
            best = (match.score, f"; closest: {path}{span(start, end)} ({match.score:.0%} alike)")
    return error(
        plan.item,
        ErrorCode.QUOTE_BASELINE,
        f"{where}: the quote does not occur in the cited files at the note's commits"
        f"{best[1] if best else ''}; copy it from the cited code (`…` elides a part)",
    )


def _judge_quote(mirror: Mirror, plan: Plan, quote: Quote) -> Result:
    base = quote_baseline(mirror, plan, quote)
    if isinstance(base, Result):
        return base
    pattern, baseline, code = base
    best: tuple[quotes.Match, str, syntax.Parsed] | None = None
    for path, blob in plan.files:
        parsed = parse_at(mirror, path, blob)
        match = quotes.closest(pattern, parsed)
        if match is not None and (best is None or match.score > best[0].score):
            best = (match, path, parsed)
        if match is not None and match.exact:
            break
    if best is None:
        message = f"quote not found at HEAD in {_quoted_files(plan)}"
        return _result(plan, Verdict.MISSING, baseline, None, message, diff=None, code=code)
    match, path, parsed = best
    start, end = quotes.lines(parsed, match)
    current = Location(commit=plan.head, path=path, start_line=start, end_line=end)
    if match.exact:
        message = f"the quote occurs at {path}{span(start, end)}"
        return _result(plan, Verdict.FRESH, baseline, current, message, diff=None)
    closest = quotes.excerpt(parsed, match, pattern.marker)
    message = (
        f"the quote no longer occurs at HEAD; closest match {path}{span(start, end)} "
        f"({match.score:.0%} alike): update the quote in the note"
    )
    diff = unified(quote.text, closest)
    return _result(plan, Verdict.CHANGED, baseline, current, message, diff=diff, code=code)


def quote_now(mirror: Mirror, text: str, language: str, path: str, blob: str) -> str | None:
    """The code a quote comes closest to in a file, as a quote (for `fix --accept`)."""
    pattern = quotes.pattern(text, language)
    parsed = parse_at(mirror, path, blob)
    match = quotes.closest(pattern, parsed)
    return quotes.excerpt(parsed, match, pattern.marker) if match else None


def _quoted_files(plan: Plan) -> str:
    paths = list(dict.fromkeys(p for p, _, _ in plan.bases))
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


# --- rules ----------------------------------------------------------------------------


def rule_baseline(mirror: Mirror, plan: Plan, rule: Rule) -> tuple[Compiled, Found] | Result:
    """The rule's single @target at its baseline, or an error result saying why not."""
    from watcher.locate.targets import targets

    try:
        compiled = compile_rule(rule)
    except InvalidRule as exc:  # checked at load; a rule trusted there is judged here
        code = ErrorCode.QUERY_INVALID if exc.query else ErrorCode.RULE_INVALID
        return error(plan.item, code, str(exc))
    parsed = parse_at(mirror, rule.path, plan.base_blob, compiled.language)
    found = targets(compiled, rule.path, parsed)
    where = _baseline(plan, None, None)
    if parsed.tree is None and parsed.size > syntax.TREE_BYTES:  # too big for a tree
        return error(
            plan.item,
            ErrorCode.FILE_TOO_LARGE,
            f"rule {rule.id} ({rule_where(rule)}): {rule.path} is {parsed.size:,} bytes at "
            f"{plan.base[:12]}, above the {syntax.TREE_BYTES:,} a syntax tree is built for "
            "(a tree takes 20-80x its file); guard it with a citation of its lines instead",
            where,
        )
    if len(found) != 1:
        return error(
            plan.item,
            ErrorCode.RULE_BASELINE,
            f"rule {rule.id} ({rule_where(rule)}) matches {len(found)} @target nodes in "
            f"{rule.path} at {plan.base[:12]} (the commit of note {plan.item.note}'s citation "
            f"of that file); it must match exactly one: "
            + (
                "tighten the query or its `inside` scope"
                if found
                else "check the query against the file at that commit"
            ),
            where,
        )
    target = found[0]
    failing = [c for c in claims(rule, target) if not c.holds]
    if failing:
        bad = failing[0]
        return error(
            plan.item,
            ErrorCode.RULE_BASELINE,
            f"rule {rule.id} ({rule_where(rule)}): claim on @{bad.capture} fails at its "
            f"baseline {plan.base[:12]} (actual {shown(bad.actual)}, {bad.test} "
            f"{shown(bad.expected)}); "
            "fix the claim, or the note's commit if the rule is right",
            _baseline(plan, target.start_line, target.end_line),
        )
    return compiled, target


def shown(text: str | None) -> str:
    """A capture's text or a claim's pattern as written, between backticks: a regex reads
    `\\d+`, not its repr `'\\\\d+'`."""
    return "nothing (no such capture)" if text is None else f"`{text}`"


def rule_where(rule: Rule) -> str:
    """`rules/x.toml:12`: the rule file and the line of its [[rule]] header."""
    return f"{rule.file}:{rule.line}" if rule.line else rule.file


NOWHERE_ELSE = ", nor anywhere else in the repository"  # a rule's target: searched there too


def _judge_rule(mirror: Mirror, plan: Plan, rule: Rule) -> Result:
    base = rule_baseline(mirror, plan, rule)
    if isinstance(base, Result):
        return base
    compiled, target = base
    baseline = _baseline(plan, target.start_line, target.end_line)
    from watcher.judge import relocate

    parse = functools.partial(parse_at, mirror, language=compiled.language)
    found, candidates = relocate.rule_target(mirror, plan, compiled, target, parse)
    code = target.text
    if found is None:
        message = _missing(plan) + ("" if plan.search_repo else NOWHERE_ELSE)
        return _result(plan, Verdict.MISSING, baseline, None, message, diff=None, code=code)
    results = claims(rule, found)
    current = Location(
        commit=plan.head, path=found.path, start_line=found.start_line, end_line=found.end_line
    )
    if not all(c.holds for c in results):
        verdict = Verdict.BROKEN
        bad = next(c for c in results if not c.holds)
        message = (
            f"claim on @{bad.capture} fails: {bad.test} {shown(bad.expected)}, "
            f"actual {shown(bad.actual)}"
        )
    else:
        verdict = _location_verdict(found, rule.path, target.start_line, target.end_line)
        message = _message(verdict, current, rule=True, gone=_gone(plan, candidates))
    if candidates and verdict is Verdict.BROKEN:
        message += "; " + _gone(plan, candidates)
    diff = unified(target.text, found.text) if not found.identical else None
    return _result(
        plan, verdict, baseline, current, message, diff=diff, claims=results,
        candidates=candidates, code=code,
    )  # fmt: skip


# --- shared ---------------------------------------------------------------------------


def _location_verdict(found: Found, path: str, start: int | None, end: int | None) -> Verdict:
    if not found.identical:
        return Verdict.CHANGED
    same = found.path == path and (found.start_line, found.end_line) == (start, end)
    return Verdict.FRESH if same else Verdict.MOVED


def _baseline(plan: Plan, start: int | None, end: int | None) -> Location:
    return Location(commit=plan.base, path=plan.item.path, start_line=start, end_line=end)


def _result(
    plan: Plan,
    verdict: Verdict,
    baseline: Location,
    current: Location | None,
    message: str,
    *,
    diff: str | None,
    claims: tuple[ClaimResult, ...] = (),
    code: str = "",
    candidates: tuple[Candidate, ...] = (),
) -> Result:
    # The baseline code goes into issues (and state) only for items that moved or went stale.
    shown = baseline_code(code) if verdict is not Verdict.FRESH and code else None
    return result(
        plan.item, verdict, message, baseline=baseline, current=current, claims=claims,
        diff=diff, baseline_code=shown, candidates=candidates,
    )  # fmt: skip


def baseline_code(text: str, lines: int = 200) -> str:
    """At most `lines` lines of the baseline code, saying what was cut."""
    kept = text.splitlines()
    if len(kept) <= lines:
        return text
    return "\n".join([*kept[:lines], f"... ({len(kept) - lines} more lines cut)"])


def _missing(plan: Plan, namesakes: Sequence[Candidate] = ()) -> str:
    if not plan.search_repo:
        return f"not found at HEAD in {', '.join(p for p, _ in plan.files)}"
    if namesakes:
        from watcher.judge import relocate

        listed = ", ".join(f"{relocate.where(c)} ({c.similarity:.0%} alike)" for c in namesakes)
        return (f"{_removed(plan)} with no rename git could see; definitions of its name at "
                f"HEAD are too unlike it to be it: {listed}")  # fmt: skip
    return f"{_removed(plan)} with no rename git could see, and no file at HEAD has the construct"


def _removed(plan: Plan) -> str:
    """Which path was removed, by which commit: the cited one, or the one git followed it
    to (a maintainer's `git log -- PATH` shows the cited path renamed, not removed)."""
    by = f" by {plan.removed_by[:12]}" if plan.removed_by else ""
    path = plan.item.path
    if plan.removed_path and plan.removed_path != path:
        return f"{path}, followed to {plan.removed_path}, was removed{by}"
    return f"{path} was removed{by}"


def _unreachable(mirror: Mirror, item: Item, offline: bool) -> str:
    candidates = mirror.commits_like(item.commit)
    if len(candidates) > 1:
        listed = ", ".join(f"{c[:12]} ({mirror.info(c).summary})" for c in candidates[:4])
        return f"commit {item.commit} is ambiguous in {item.repo}: {listed}; cite more digits"
    if not FULL_SHA.match(item.commit):  # only a whole id can be fetched off the branch
        return (
            f"commit {item.commit} is not on the branch of {item.repo}; check the note's "
            "commit, or cite it by its full 40-character id (a commit off the branch, on a "
            "pull request's branch for one, is fetched only by its full id)"
        )
    if offline:  # a commit off the branch is fetched by its id, which --offline forbids
        return (
            f"commit {item.commit} is not in the mirror of {item.repo}; run without --offline "
            "to fetch it"
        )
    return (
        f"commit {item.commit} is not in {item.repo} (not on the branch, and not fetchable); "
        "check the note's commit"
    )


def _message(verdict: Verdict, current: Location, *, rule: bool = False, gone: str = "") -> str:
    lines = span(current.start_line, current.end_line)
    moved = "the rule still finds it" if rule else "update the citation (`watch fix`)"
    message = {
        Verdict.FRESH: "unchanged at HEAD",
        Verdict.MOVED: f"unchanged, now at {current.path}{lines}: {moved}",
        Verdict.CHANGED: f"text differs at {current.path}{lines}: re-verify the note",
    }[verdict]
    return f"{message}; {gone}" if gone else message


def unified(before: str, after: str, limit: int = 400) -> str:
    """A unified diff of the baseline and HEAD texts, at most `limit` lines."""
    lines = list(
        difflib.unified_diff(
            before.splitlines(), after.splitlines(), "baseline", "HEAD", lineterm=""
        )
    )
    if len(lines) > limit:
        lines = [*lines[:limit], f"... ({len(lines) - limit} more diff lines cut)"]
    return "\n".join(lines)
