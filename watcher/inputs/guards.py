"""Which rule guards which citation: a rule guards the citations whose cited lines its
baseline target overlaps (same note, file and commit), not every citation of its file.

Each item is its own: a citation keeps its own verdict, HEAD span and history whatever
its rule found. A rule only hints where a missing citation's code may have gone: its
message names the rule's target at HEAD, and the issue shows both results.
"""

from __future__ import annotations

from collections.abc import Sequence

from watcher.models import CodeCitation, Location, Result, Verdict, span


def guards(rule: Result, citation: Result) -> bool:
    """Whether the rule's target at its baseline overlaps the citation's cited lines."""
    a, b = rule.baseline, citation.baseline
    if rule.kind != "rule" or citation.kind != "citation" or a is None or b is None:
        return False
    if (rule.note, rule.repo.lower(), a.commit, a.path) != (
        citation.note, citation.repo.lower(), b.commit, b.path,
    ):  # fmt: skip
        return False
    return _overlap(a, b)


def _overlap(a: Location, b: Location) -> bool:
    if None in (a.start_line, a.end_line, b.start_line, b.end_line):
        return True  # a whole file holds every target in it
    return (a.start_line or 0) <= (b.end_line or 0) and (b.start_line or 0) <= (a.end_line or 0)


def hint_rules(results: Sequence[Result]) -> list[Result]:
    """The results, each missing citation that a rule guards told where that rule's target
    is at HEAD: a hint of where its code went, never its verdict, span or history."""
    rules = [r for r in results if r.kind == "rule" and r.current is not None]
    out = []
    for result in results:
        rule = None
        if result.kind == "citation" and result.verdict is Verdict.MISSING:
            rule = next((r for r in rules if guards(r, result)), None)
        out.append(result if rule is None else _hinted(result, rule))
    return out


def _hinted(citation: Result, rule: Result) -> Result:
    assert rule.current is not None
    where = rule.current
    lines = span(where.start_line, where.end_line)
    hint = (
        f"; rule {rule.id}, which guards these lines, finds its target at {where.path}{lines} "
        f"({rule.verdict.value}): a hint of where the cited code went"
    )
    return citation.model_copy(update={"message": citation.message + hint})


def covers(target: Location | None, citation: CodeCitation, commit: str) -> bool | None:
    """Whether a rule whose last known baseline target is `target` guards the citation
    (None: not known yet, no run has judged the rule)."""
    if target is None:
        return None
    cited = Location(
        commit=commit, path=citation.path, start_line=citation.start_line,
        end_line=citation.end_line,
    )  # fmt: skip
    return target.path == citation.path and target.commit == commit and _overlap(target, cited)
