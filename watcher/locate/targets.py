"""A rule's @target in a parsed file, and which HEAD target is most like the baseline's."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from watcher.locate.alignment import likeness
from watcher.locate.anchors import Found
from watcher.models import Candidate
from watcher.parse.syntax import Parsed, node_tokens, normalize

if TYPE_CHECKING:
    from tree_sitter import Node

    from watcher.inputs.rules import Compiled


def targets(compiled: Compiled, path: str, parsed: Parsed) -> list[Found]:
    """Every distinct @target of a rule in one file, with the captures of its match."""
    from tree_sitter import QueryCursor

    if parsed.tree is None:  # not a language tree-sitter reads: no rule can match
        return []
    roots: list[Node] = [parsed.tree.root_node]
    if compiled.inside is not None:
        scopes = QueryCursor(compiled.inside).captures(parsed.tree.root_node).get("scope", [])
        roots = _outermost(scopes)
    seen: dict[tuple[int, int], Found] = {}
    for root in roots:
        for _, captures in QueryCursor(compiled.query).matches(root):
            nodes = captures.get("target", [])
            if not nodes or (nodes[0].start_byte, nodes[0].end_byte) in seen:
                continue
            node = nodes[0]
            seen[(node.start_byte, node.end_byte)] = _target(path, parsed, node, captures)
    return sorted(seen.values(), key=lambda f: f.start_line or 0)


def _outermost(nodes: list[Node]) -> list[Node]:
    """Scopes that are not inside another scope, so no target is found twice."""
    spans = sorted({(n.start_byte, -n.end_byte): n for n in nodes}.items())
    out: list[Node] = []
    for (start, neg_end), node in spans:
        if out and start < out[-1].end_byte and -neg_end <= out[-1].end_byte:
            continue
        out.append(node)
    return out


def _target(path: str, parsed: Parsed, node: Node, captures: dict[str, list[Node]]) -> Found:
    texts = {
        name: normalize(" ".join((n.text or b"").decode("utf-8", errors="replace") for n in nodes))
        for name, nodes in captures.items()
    }
    start_line, end_line = node.start_point[0] + 1, node.end_point[0] + 1
    return Found(
        path,
        start_line,
        end_line,
        False,
        parsed.lines(start_line, end_line),
        node_tokens(node, parsed.source),
        dict(texts),
    )


def best_target(baseline: Found, found: Sequence[Found]) -> Found | None:
    """The HEAD target that is most like the baseline one: identical first, then nearest."""
    if not found:
        return None
    same = [f for f in found if f.tokens == baseline.tokens]
    if same:
        chosen = min(
            same,
            key=lambda f: (
                f.path != baseline.path,
                abs((f.start_line or 0) - (baseline.start_line or 0)),
            ),
        )
        return Found(
            chosen.path,
            chosen.start_line,
            chosen.end_line,
            True,
            chosen.text,
            chosen.tokens,
            chosen.captures,
        )
    return max(found, key=lambda f: (likeness(baseline.tokens, f.tokens), f.path == baseline.path))


FOLLOWED = "at HEAD in the followed file"


def several(baseline: Found, found: Sequence[Found], chosen: Found) -> tuple[Candidate, ...]:
    """Every target at HEAD in the followed file(s) as a candidate, the judged one marked,
    when there are several (a rule must match one at its baseline; at HEAD a second one
    is news the result reports, not a choice made silently)."""
    if len(found) < 2:
        return ()
    return tuple(
        Candidate(
            path=f.path,
            start_line=f.start_line,
            end_line=f.end_line,
            identical=f.tokens == baseline.tokens,
            similarity=_alike(baseline, f),
            found=FOLLOWED,
            chosen=(f.path, f.start_line) == (chosen.path, chosen.start_line),
        )
        for f in found
    )


def _alike(baseline: Found, found: Found) -> float:
    same = found.tokens == baseline.tokens
    return 1.0 if same else round(likeness(baseline.tokens, found.tokens), 3)


def judged(candidates: Sequence[Candidate]) -> str:
    """`3 targets at HEAD, judged the one at lines 2-5 (why); also at lines 9-12, 20-23`:
    which of several targets at HEAD a rule's verdict is about, and why that one."""
    chosen = next(c for c in candidates if c.chosen)
    twins = sum(c.identical for c in candidates)
    why = (
        f"most like the baseline target ({chosen.similarity:.0%})"
        if not chosen.identical
        else "the one identical to the baseline target"
        if twins == 1
        else f"{twins} are identical to the baseline target: the nearest its lines"
    )
    one_file = len({c.path for c in candidates}) == 1
    others = ", ".join(_span(c, one_file) for c in candidates if not c.chosen)
    lines = "lines " if one_file else ""
    return (
        f"{len(candidates)} targets at HEAD, judged the one at {lines}{_span(chosen, one_file)} "
        f"({why}); also at {lines}{others}"
    )


def _span(candidate: Candidate, bare: bool) -> str:
    lines = f"{candidate.start_line}-{candidate.end_line}"
    return lines if bare else f"{candidate.path}:{lines}"


def literals(query: str) -> list[str]:
    """Strings a query insists on (`#eq?` arguments): a file without them cannot match."""
    return [m.group(1) for m in re.finditer(r'#eq\?\s+@[\w.]+\s+"((?:[^"\\]|\\.)*)"', query)]
