"""Frozen models that flow between the stages of the pipeline.

config -> mirrors -> notes/rules -> locate -> classify -> attribute -> report -> state
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Verdict(StrEnum):
    FRESH = "fresh"
    MOVED = "moved"
    CHANGED = "changed"
    BROKEN = "broken"
    MISSING = "missing"
    ERROR = "error"

    @property
    def severity(self) -> int:
        return _SEVERITY[self]

    @property
    def stale(self) -> bool:
        return self not in (Verdict.FRESH, Verdict.MOVED)


_SEVERITY = {
    Verdict.FRESH: 0,
    Verdict.MOVED: 1,
    Verdict.CHANGED: 2,
    Verdict.MISSING: 3,
    Verdict.BROKEN: 4,
    Verdict.ERROR: 5,
}


def worst(verdicts: list[Verdict]) -> Verdict:
    """The most severe verdict; `fresh` for none."""
    return max(verdicts, key=lambda v: v.severity, default=Verdict.FRESH)


class ErrorCode(StrEnum):
    BASELINE_UNREACHABLE = "baseline-unreachable"
    FILE_MISSING_AT_BASELINE = "file-missing-at-baseline"
    RULE_BASELINE = "rule-baseline"
    QUERY_INVALID = "query-invalid"
    UPSTREAM_UNREACHABLE = "upstream-unreachable"
    NOTE_INVALID = "note-invalid"
    RULE_INVALID = "rule-invalid"
    LINES_OUT_OF_RANGE = "lines-out-of-range"
    LANGUAGE_UNSUPPORTED = "language-unsupported"
    QUOTE_BASELINE = "quote-baseline"
    QUOTE_UNSOURCED = "quote-unsourced"
    FILE_TOO_LARGE = "file-too-large"
    NO_UPSTREAM = "no-upstream"  # cited, not configured, and implicit upstreams are refused


# --- inputs -----------------------------------------------------------------------


class CodeCitation(Frozen):
    """A note's citation of upstream code: repository + commit + file (+ lines)."""

    note: str
    repo: str  # OWNER/NAME
    commit: str  # as written; may be abbreviated
    path: str
    start_line: int | None = None
    end_line: int | None = None
    cited: str  # the path as cited, `FILE:START-END`
    title: str = ""
    index: int  # position in the note's sources[]
    suffix: str = ""  # `@COMMIT` when the note cites the same lines at two commits
    line: int | None = None  # where the note writes it: its `path:` (or link) line

    @property
    def id(self) -> str:
        return f"{self.note}:{self.cited}{self.suffix}"


class IssueCitation(Frozen):
    """A note's citation of an upstream GitHub issue or pull request."""

    note: str
    repo: str
    kind: Literal["issue", "pull"]
    number: int
    url: str
    title: str = ""
    date: str = ""  # when the note's author read it, as cited


class Quote(Frozen):
    """A fenced code block in a note's body: upstream code the note quotes (SPEC 4)."""

    note: str
    index: int  # 1-based, among the note's tracked quotes
    language: str  # a registered language
    text: str  # as written, elisions (`…`, `...`) included
    line: int  # the line of the opening fence in the note file

    @property
    def id(self) -> str:
        return f"{self.note}:quote:{self.index}"


class Note(Frozen):
    id: str
    file: str  # as shown to users, relative to the config's folder
    title: str = ""
    clients: tuple[str, ...] = ()
    status: str = ""
    last_verified: str = ""
    snooze_until: str = ""  # YYYY-MM-DD: its issue is muted until then
    citations: tuple[CodeCitation, ...] = ()
    issue_citations: tuple[IssueCitation, ...] = ()
    untracked: tuple[str, ...] = ()  # sources that are neither code nor issue citations
    quotes: tuple[Quote, ...] = ()


class Claim(Frozen):
    capture: str
    test: Literal["equals", "matches", "not_matches"]
    expected: str
    says: str = ""


class RuleTest(Frozen):
    """A snippet (or fixture file) on which a rule must hold, break or find nothing."""

    name: str
    code: str
    expect: Literal["holds", "broken", "missing"]
    fails: tuple[str, ...] = ()  # for `broken`: the captures whose claims fail


class Rule(Frozen):
    id: str
    note: str
    path: str
    repo: str | None = None
    language: str | None = None
    query: str
    inside: str | None = None
    claims: tuple[Claim, ...] = ()
    tests: tuple[RuleTest, ...] = ()
    file: str  # the rule file, for messages
    line: int | None = None  # where the rule starts in its file


# --- results ----------------------------------------------------------------------


def span(start: int | None, end: int | None) -> str:
    """`:1880` for one line, `:1880-1890` for several, "" for a whole file."""
    if start is None:
        return ""
    return f":{start}" if end in (None, start) else f":{start}-{end}"


class Location(Frozen):
    commit: str
    path: str
    start_line: int | None = None
    end_line: int | None = None

    @property
    def cited(self) -> str:
        """`FILE:START-END` (`FILE:LINE` for one line, `FILE` for a whole file)."""
        return self.path + span(self.start_line, self.end_line)


class ClaimResult(Frozen):
    capture: str
    says: str
    test: str
    expected: str
    actual: str | None
    holds: bool


class Attribution(Frozen):
    commit: str
    date: str
    author: str
    summary: str
    pr: int | None = None


class Change(Frozen):
    """One first-parent commit that changed an item since its baseline (`history`)."""

    commit: str
    state: str  # the item after it, against its baseline: same, changed, broken or missing
    pr: int | None = None
    released_in: str | None = None
    date: str = ""
    summary: str = ""


class Candidate(Frozen):
    """One place at HEAD where an item whose file is gone could be now."""

    path: str
    start_line: int | None = None
    end_line: int | None = None
    identical: bool = False  # token for token the baseline construct
    similarity: float = 0.0  # token similarity to the baseline construct, 0-1
    found: str = ""  # how it was found: "added by <commit>" or "elsewhere at HEAD"
    chosen: bool = False


class Result(Frozen):
    """The verdict on one tracked item (a citation or a rule) in one run."""

    id: str
    kind: Literal["citation", "rule", "issue", "quote"]
    note: str
    note_file: str
    repo: str
    verdict: Verdict
    baseline: Location | None = None
    current: Location | None = None
    claims: tuple[ClaimResult, ...] = ()
    introduced_by: Attribution | None = None
    released_in: str | None = None
    diff: str | None = None
    baseline_code: str | None = None  # what the item tracks at its baseline (not for fresh)
    candidates: tuple[Candidate, ...] = ()  # several places it could be: all of them
    history: tuple[Change, ...] = ()  # stale items: every commit that changed it, oldest first
    message: str
    error: ErrorCode | None = None


class UpstreamStatus(Frozen):
    repo: str
    url: str
    branch: str
    head: str | None = None
    head_date: str | None = None  # the head commit's date: when notes were last seen fresh
    error: str | None = None  # a run-level failure: the upstream could not be checked


class IssueAction(Frozen):
    note: str
    action: Literal[
        "opened",
        "commented",
        "closed",
        "reopened",
        "unchanged",
        "would-open",
        "would-comment",
        "would-close",
        "failed",
    ]
    url: str | None = None
    number: int | None = None


class Summary(Frozen):
    fresh: int = 0
    moved: int = 0
    changed: int = 0
    broken: int = 0
    missing: int = 0
    error: int = 0


class Report(Frozen):
    """Everything one `watch check` produced; the JSON document of SPEC 6.1."""

    schema_: str = Field("watch.check/1", serialization_alias="schema")
    started_at: str
    upstreams: tuple[UpstreamStatus, ...] = ()
    results: tuple[Result, ...] = ()
    issues: tuple[IssueAction, ...] = ()
    summary: Summary = Summary()
    errors: tuple[str, ...] = ()  # run-level failures of the whole run (issues not filed): exit 2

    @property
    def exit_code(self) -> int:
        verdicts = {r.verdict for r in self.results}
        if Verdict.ERROR in verdicts or self.errors or any(u.error for u in self.upstreams):
            return 2
        return 1 if any(v.stale for v in verdicts) else 0
