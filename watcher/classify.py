"""Judge one tracked item: plan what it needs from the mirror, then give it a verdict.

Planning reads only commits and trees, so the blobs of every item can be fetched in one
batch before anything is parsed.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from watcher import languages, locate, syntax
from watcher.locate import Anchor, Found, LocateError
from watcher.mirrors import Mirror
from watcher.models import (
    ClaimResult,
    CodeCitation,
    ErrorCode,
    Location,
    Result,
    Rule,
    Verdict,
)
from watcher.rules import Compiled, compile_rule

# Part of every cached result's key: bump it whenever locating or judging changes, so
# that no state/ written by an older watch is taken for this one's verdict.
JUDGE_VERSION = 2


@dataclass(frozen=True)
class Item:
    """A citation or a rule, with the note it protects and the commit it was verified at."""

    id: str
    kind: str  # "citation" | "rule"
    note: str
    note_file: str
    repo: str
    commit: str  # as cited; may be abbreviated
    path: str
    start_line: int | None = None
    end_line: int | None = None
    rule: Rule | None = None

    @property
    def fingerprint(self) -> str:
        """Changes whenever anything that decides this item's verdict is edited."""
        rule = self.rule.model_dump(exclude={"file", "line"}) if self.rule else None
        data = [self.id, self.commit, self.path, self.start_line, self.end_line, rule]
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


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


@dataclass(frozen=True)
class Plan:
    """An item resolved against the mirror: the blobs it needs at baseline and HEAD."""

    item: Item
    base: str
    base_blob: str
    head: str
    files: tuple[tuple[str, str], ...]  # (path, blob) at HEAD: the file, or its renames
    search_repo: bool  # a rule whose file is gone: look for its target everywhere

    @property
    def key(self) -> str:
        """Same key, same verdict: the cache key for a result across runs."""
        head = self.head if self.search_repo or not self.files else ""
        files = list(self.files)
        parts = [JUDGE_VERSION, self.item.fingerprint, self.base, self.base_blob, files, head]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:24]

    @property
    def blobs(self) -> list[str]:
        return [self.base_blob, *(blob for _, blob in self.files)]


def result(item: Item, verdict: Verdict, message: str, **fields: Any) -> Result:
    """A result for `item`; `fields` are the rest of Result (baseline, current, ...)."""
    kind = "rule" if item.rule else "citation"
    return Result(
        id=item.id, kind=kind, note=item.note, note_file=item.note_file, repo=item.repo,
        verdict=verdict, message=message, **fields,
    )  # fmt: skip


def error(item: Item, code: ErrorCode, message: str, baseline: Location | None = None) -> Result:
    return result(item, Verdict.ERROR, message, baseline=baseline, error=code)


def plan(mirror: Mirror, head: str, item: Item, *, offline: bool) -> Plan | Result:
    """Resolve the baseline and find the file at HEAD (renames included), reading no blob."""
    base = mirror.resolve_or_fetch(item.commit, offline=offline)
    if base is None:
        return error(item, ErrorCode.BASELINE_UNREACHABLE, _unreachable(mirror, item))
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
    head_blob = mirror.blob_id(head, item.path)
    if head_blob is not None:
        files: tuple[tuple[str, str], ...] = ((item.path, head_blob),)
    else:
        moved = mirror.renamed(base, head, item.path)
        files = tuple((p, b) for p in moved if (b := mirror.blob_id(head, p)) is not None)
    search = item.rule is not None and not files
    return Plan(item, base, base_blob, head, files, search)


def judge(mirror: Mirror, plan: Plan) -> Result:
    """The verdict on a planned item (its blobs already fetched)."""
    item = plan.item
    try:
        if item.rule is not None:
            return _judge_rule(mirror, plan, item.rule)
        return _judge_citation(mirror, plan)
    except LocateError as exc:
        return error(
            item,
            ErrorCode.LINES_OUT_OF_RANGE,
            f"{item.path}: {exc}; fix the note's lines",
            _baseline(plan, item.start_line, item.end_line),
        )


def parse_at(mirror: Mirror, path: str, blob: str, language: str | None = None) -> syntax.Parsed:
    language = language or languages.for_path(path) or syntax.TEXT
    return syntax.parse(blob, language, lambda: mirror.read(blob))


# --- citations ------------------------------------------------------------------------


def anchor_of(mirror: Mirror, plan: Plan) -> Anchor:
    item = plan.item
    parsed = parse_at(mirror, item.path, plan.base_blob)
    return locate.anchor(parsed, item.path, item.start_line, item.end_line)


def find_citation(mirror: Mirror, anchor: Anchor, files: Sequence[tuple[str, str]]) -> Found | None:
    return locate.find(anchor, [(p, parse_at(mirror, p, b)) for p, b in files])


def _judge_citation(mirror: Mirror, plan: Plan) -> Result:
    item = plan.item
    anchor = anchor_of(mirror, plan)
    found = find_citation(mirror, anchor, plan.files)
    baseline = _baseline(plan, item.start_line, item.end_line)
    if found is None:
        return _result(plan, Verdict.MISSING, baseline, None, _missing(item), diff=None)
    verdict = _location_verdict(found, item.path, item.start_line, item.end_line)
    current = Location(
        commit=plan.head, path=found.path, start_line=found.start_line, end_line=found.end_line
    )
    diff = unified(anchor.text, found.text) if verdict is Verdict.CHANGED else None
    return _result(plan, verdict, baseline, current, _message(verdict, current), diff=diff)


# --- rules ----------------------------------------------------------------------------


def rule_baseline(mirror: Mirror, plan: Plan, rule: Rule) -> tuple[Compiled, Found] | Result:
    """The rule's single @target at its baseline, or an error result saying why not."""
    compiled = compile_rule(rule)
    parsed = parse_at(mirror, rule.path, plan.base_blob, compiled.language)
    found = locate.targets(compiled, rule.path, parsed)
    where = _baseline(plan, None, None)
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
            f"baseline {plan.base[:12]} (actual {bad.actual!r}, {bad.test} {bad.expected!r}); "
            "fix the claim, or the note's commit if the rule is right",
            _baseline(plan, target.start_line, target.end_line),
        )
    return compiled, target


def rule_where(rule: Rule) -> str:
    """`rules/x.toml:12`: the rule file and the line of its [[rule]] header."""
    return f"{rule.file}:{rule.line}" if rule.line else rule.file


def head_targets(mirror: Mirror, plan: Plan, compiled: Compiled, rule: Rule) -> list[Found]:
    files = list(plan.files)
    if plan.search_repo:
        files = _repo_candidates(mirror, plan.head, compiled, rule)
    return [
        t
        for p, b in files
        for t in locate.targets(compiled, p, parse_at(mirror, p, b, compiled.language))
    ]


def _judge_rule(mirror: Mirror, plan: Plan, rule: Rule) -> Result:
    base = rule_baseline(mirror, plan, rule)
    if isinstance(base, Result):
        return base
    compiled, target = base
    baseline = _baseline(plan, target.start_line, target.end_line)
    found = locate.best_target(target, head_targets(mirror, plan, compiled, rule))
    if found is None:
        return _result(plan, Verdict.MISSING, baseline, None, _missing(plan.item), diff=None)
    results = claims(rule, found)
    current = Location(
        commit=plan.head, path=found.path, start_line=found.start_line, end_line=found.end_line
    )
    if not all(c.holds for c in results):
        verdict = Verdict.BROKEN
        bad = next(c for c in results if not c.holds)
        message = (
            f"claim on @{bad.capture} fails: {bad.test} {bad.expected!r}, actual {bad.actual!r}"
        )
    else:
        verdict = _location_verdict(found, rule.path, target.start_line, target.end_line)
        message = _message(verdict, current, rule=True)
    diff = unified(target.text, found.text) if not found.identical else None
    return _result(plan, verdict, baseline, current, message, diff=diff, claims=results)


def claims(rule: Rule, target: Found) -> tuple[ClaimResult, ...]:
    return tuple(
        _claim(c.capture, c.test, c.expected, c.says, target.captures.get(c.capture))
        for c in rule.claims
    )


def _claim(capture: str, test: str, expected: str, says: str, actual: str | None) -> ClaimResult:
    if actual is None:
        holds = test == "not_matches"
    elif test == "equals":
        holds = actual == syntax.normalize(expected)
    elif test == "matches":
        holds = re.search(expected, actual) is not None
    else:
        holds = re.search(expected, actual) is None
    return ClaimResult(
        capture=capture, says=says, test=test, expected=expected, actual=actual, holds=holds
    )


def _repo_candidates(
    mirror: Mirror, head: str, compiled: Compiled, rule: Rule
) -> list[tuple[str, str]]:
    """Files at HEAD in the rule's language that hold every literal its query insists on."""
    files = mirror.files(head, languages.LANGUAGES[compiled.language].extensions)
    mirror.prefetch(files.values())
    needles = [s.encode() for s in locate.literals(rule.query)]
    return [(p, b) for p, b in sorted(files.items()) if all(n in mirror.read(b) for n in needles)]


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
) -> Result:
    return result(
        plan.item, verdict, message, baseline=baseline, current=current, claims=claims, diff=diff
    )


def _missing(item: Item) -> str:
    where = "the repository" if item.rule else f"{item.path} or its renames"
    return f"not found at HEAD in {where}"


def _unreachable(mirror: Mirror, item: Item) -> str:
    candidates = mirror.commits_like(item.commit)
    if len(candidates) > 1:
        listed = ", ".join(f"{c[:12]} ({mirror.info(c).summary})" for c in candidates[:4])
        return f"commit {item.commit} is ambiguous in {item.repo}: {listed}; cite more digits"
    return (
        f"commit {item.commit} is not in {item.repo} (not on the branch, and not fetchable); "
        "check the note's commit"
    )


def _message(verdict: Verdict, current: Location, *, rule: bool = False) -> str:
    lines = f":{current.start_line}-{current.end_line}" if current.start_line else ""
    moved = "the rule still finds it" if rule else "update the citation (`watch fix`)"
    return {
        Verdict.FRESH: "unchanged at HEAD",
        Verdict.MOVED: f"unchanged, now at {current.path}{lines}: {moved}",
        Verdict.CHANGED: f"text differs at {current.path}{lines}: re-verify the note",
    }[verdict]


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
