"""`watch rules lint` and `watch rules test`: rules you can see and test.

`[[rule.tests]]` snippets run with the watcher's own matcher (`watch rules test`, and
`watch validate`), and every capture of a rule's match is shown with its lines
(`watch rules lint --show`)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from watcher.config import Config, load
from watcher.errors import WatchError
from watcher.inputs.rules import Compiled, compile_rule, load_rules
from watcher.judge.claims import claims
from watcher.locate import targets
from watcher.locate.anchors import Found
from watcher.models import Result, Rule, RuleTest, Verdict
from watcher.parse import syntax
from watcher.pipeline import CheckOptions, run_check
from watcher.report import plural

if TYPE_CHECKING:
    from tree_sitter import Node


def rules_lint(config_file: Path, offline: bool, out: TextIO, *, show: bool = False) -> int:
    """`watch rules lint`: compile every rule and check it at its note's baseline;
    with `show`, print what each capture matched there."""
    config = load(config_file)
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
    config = load(config_file)
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


@dataclass(frozen=True)
class Outcome:
    """How one rule test went: what it expected, what the rule did, and whether they agree."""

    rule: Rule
    test: RuleTest
    got: str  # holds | broken | missing | ambiguous
    failing: tuple[str, ...]  # captures whose claims failed
    targets: int

    @property
    def passed(self) -> bool:
        if self.got != self.test.expect:
            return False
        return not self.test.fails or set(self.test.fails) == set(self.failing)

    def describe(self) -> str:
        where = f"{self.rule.file}: rule {self.rule.id}: test {self.test.name!r}"
        if self.passed:
            return f"ok    {where}: {self.got}"
        got = self.got + (f" (claims on {', '.join(self.failing)} fail)" if self.failing else "")
        if self.got == "ambiguous":
            got = f"{self.targets} @target matches, not one"
        wanted = self.test.expect + (
            f" (claims on {', '.join(self.test.fails)} fail)" if self.test.fails else ""
        )
        return f"FAIL  {where}: expected {wanted}, got {got}"


def parse_text(code: str, language: str) -> syntax.Parsed:
    """A snippet parsed like an upstream blob (cached by its content hash)."""
    raw = code.encode("utf-8")
    return syntax.parse(hashlib.sha1(raw).hexdigest(), language, lambda: raw)


def run(rule: Rule, test: RuleTest) -> Outcome:
    """Run one test of a rule on its snippet."""
    compiled = compile_rule(rule)
    found = targets.targets(compiled, rule.path, parse_text(test.code, compiled.language))
    if not found:
        return Outcome(rule, test, "missing", (), 0)
    if len(found) > 1:
        return Outcome(rule, test, "ambiguous", (), len(found))
    failing = tuple(dict.fromkeys(c.capture for c in claims(rule, found[0]) if not c.holds))
    return Outcome(rule, test, "broken" if failing else "holds", failing, 1)


def run_all(rules: Iterable[Rule]) -> list[Outcome]:
    """Every test of every rule, in rule order."""
    return [run(rule, test) for rule in rules for test in rule.tests]


@dataclass(frozen=True)
class Capture:
    name: str
    start_line: int
    end_line: int
    text: str


def captures(compiled: Compiled, parsed: syntax.Parsed, target: Found) -> list[Capture]:
    """Every capture of the match whose @target is `target`, with its lines."""
    from tree_sitter import QueryCursor

    if parsed.tree is None:
        return []
    roots: list[Node] = [parsed.tree.root_node]
    if compiled.inside is not None:
        scopes = QueryCursor(compiled.inside).captures(parsed.tree.root_node)
        roots = scopes.get("scope", [])
    for root in roots:
        for _, match in QueryCursor(compiled.query).matches(root):
            nodes = match.get("target", [])
            if nodes and nodes[0].start_point[0] + 1 == target.start_line:
                return sorted(
                    (_capture(name, node) for name, group in match.items() for node in group),
                    key=lambda c: (c.start_line, c.name != "target", c.name),
                )
    return []


def _capture(name: str, node: Node) -> Capture:
    text = (node.text or b"").decode("utf-8", errors="replace")
    return Capture(name, node.start_point[0] + 1, node.end_point[0] + 1, text)


def show(rule_id: str, found: Iterable[Capture], limit: int = 6) -> str:
    """The captures as a listing: `@name  lines 3-9`, then the text (long ones cut)."""
    lines = [f"{rule_id}:"]
    for capture in found:
        span = (
            f"line {capture.start_line}"
            if capture.start_line == capture.end_line
            else f"lines {capture.start_line}-{capture.end_line}"
        )
        lines.append(f"  @{capture.name}  {span}")
        text = capture.text.splitlines() or [""]
        cut = text[:limit] + ([f"… ({len(text) - limit} more lines)"] if len(text) > limit else [])
        lines += [f"    | {t}" for t in cut]
    return "\n".join(lines) + "\n"


def baseline_captures(config: Config, rule_ids: set[str], *, offline: bool) -> str:
    """Each rule's captures at its baseline, as `show` lists them (for `rules lint --show`).

    Rules that do not hold at their baseline are skipped: lint has already said why."""
    from watcher.judge.classify import parse_at, plan, rule_baseline
    from watcher.mirror.mirrors import Mirror
    from watcher.pipeline import gather, group

    inputs = gather(config, CheckOptions(offline=offline, citations=False))
    items = [i for i in inputs.items if i.rule is not None and i.rule.id in rule_ids]
    text = []
    for upstream, group_items in group(config, items, CheckOptions(offline=offline)):
        if upstream is None:
            continue
        mirror = Mirror(upstream, config.cache)
        try:
            head = mirror.head()
            for item in group_items:
                assert item.rule is not None
                planned = plan(mirror, head, item, offline=True)
                if isinstance(planned, Result):
                    continue
                base = rule_baseline(mirror, planned, item.rule)
                if isinstance(base, Result):
                    continue
                compiled, target = base
                parsed = parse_at(mirror, item.rule.path, planned.base_blob, compiled.language)
                header = f"{item.rule.id} at {planned.base[:12]} {item.rule.path}"
                text.append(show(header, captures(compiled, parsed, target)))
        finally:
            mirror.close()
    return "".join(text)
