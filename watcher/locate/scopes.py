"""Carry a citation through a wider scope than its definition: the stretch of the file
between the definitions nearest it on either side that both versions still have (or the
file's edge), the way git carries lines through the hunks of a whole file's diff.

Its definition's alignment (`matching._carried`) decides while it carries the cited
tokens; this is asked only when it does not (fewer than FOUND_SHARE of them survive in
it: its header became a new function's), or when no one definition holds them (a class
and the aliases after it). The one rule is the same (`alignment.carry`), and the item is
then wherever the aligned tokens went, whichever definition holds them now.

What is aligned is bounded: the stretch between unchanged neighbours, without the tokens
both versions begin and end it with, and at most SCOPE_MOST tokens a side. The baseline's
tokens of it are read once per anchor (its bytes parsed again, on first need).
"""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from watcher.locate.alignment import carry, completed, holds_one, kept_count, substantial
from watcher.locate.anchors import Anchor, Found, trimmed
from watcher.locate.definitions import Key, Scope, named
from watcher.locate.editscript import myers
from watcher.parse.nodes import with_attributes
from watcher.parse.plain import line_marks
from watcher.parse.syntax import Parsed, Tokens, comment_kinds, parse, tokens_between

if TYPE_CHECKING:
    from tree_sitter import Node

# Tokens a side past which the scope is not aligned (difflib is quadratic at worst): the
# item is then judged as before, in its definition alone.
SCOPE_MOST = 8000
SCOPE_BYTES = 16 * SCOPE_MOST  # the same, told from the bytes before they are read


def through_scope(anchor: Anchor, path: str, parsed: Parsed) -> Found | None:
    """The citation carried through its scope into `parsed` (`carry`, the one rule):
    found where the aligned tokens are, completed to the statement it closed; None when
    fewer than FOUND_SHARE of the cited tokens survive, or no scope bounds it."""
    scope = anchor.scope
    if scope is None or parsed.tree is None or not anchor.tokens:
        return None
    top = _bound(parsed, scope.above, end=True)
    bottom = _bound(parsed, scope.below, end=False)
    if top is None or bottom is None or top[1] >= bottom[1]:
        return None
    baseline = _baseline(anchor, scope, top[0], bottom[0])
    if baseline is None or len(baseline.texts) > SCOPE_MOST:
        return None
    before, n = baseline.texts, len(anchor.tokens)
    at = bisect.bisect_left(baseline.start_bytes, scope.cited)
    if tuple(before[at : at + n]) != anchor.tokens:
        return None
    version = tokens_between(parsed, top[1], bottom[1], starting=True)
    after = version.texts
    parsed.stats.tokens_scanned += len(after)
    if len(after) > SCOPE_MOST:
        return None
    region = _hunk(baseline, version, at, at + n)
    if region is None:
        return None
    low, high, start, end = _within(anchor, parsed, version, region)
    lines = (
        line_marks(scope.source, baseline.start_bytes[low:high], baseline.start_lines[low:high]),
        line_marks(parsed.source, version.start_bytes[start:end], version.start_lines[start:end]),
    )
    minor = {at - low + i for i in anchor.attributes}
    span = carry(
        before[low:high], at - low, at - low + n, after[start:end], lines, paired=True, minor=minor
    )
    if span is None:
        return None
    first, last = _one_definition(anchor, parsed, version, start + span[0], start + span[1])
    first, last = trimmed(parsed, version, first, last, keep=anchor.ragged)
    if anchor.definition is None:
        first, last = _named_edges(anchor, parsed, version, first, last)
        if not holds_one(anchor.names, after[first:last]):
            return None  # its shape kept, none of its names: another import written there
    start_line, end_line = version.start_lines[first], version.end_lines[last - 1]
    found = Found(path, start_line, end_line, False, parsed.lines(start_line, end_line),
                  tuple(after[first:last]))  # fmt: skip
    return completed(anchor, parsed, found)


def _one_definition(
    anchor: Anchor, parsed: Parsed, version: Tokens, first: int, last: int
) -> tuple[int, int]:
    """Tokens [first, last) of `version`, where they run from one definition into another,
    without the definitions no cited statement went to: each of the citation's whole
    statements (`Anchor.statements`) went to the definition that keeps the most of it in
    order, and to those that hold its first line (strands' cited `try:`, whose body went
    to a new `_summarize_oldest` below, its `except` staying); the item runs from the
    first token kept in the first of those to the last kept in the last. mods' cited `if
    _, err := cli.Initialize(...); err != nil { return nil, fmt.Errorf("could not setup
    ...") }`, moved into a new `initMcpClient` above its function, was aligned with that
    one's check and with its own function's `return nil, fmt.Errorf("could not setup
    ...")` below, the span running across the function's header: the statement went to
    `initMcpClient`, and the item is the check there. python-sdk's cited docstring and
    guard, the guard handed to a new method below and the docstring kept, span both
    (`test_a_body_moved_into_a_new_method_below_...`). As they are for a citation that is
    not whole statements."""
    cited = anchor.cited_statements
    if cited is None or last - first < 2:
        return first, last
    kind = anchor.definition[0] if anchor.definition else ""
    owners = [_owner(parsed, version.start_bytes[k], kind) for k in range(first, last)]
    if len(set(owners)) < 2:
        return first, last
    cuts = [k for k in range(first + 1, last) if owners[k - first] != owners[k - first - 1]]
    pieces = list(zip([first, *cuts], [*cuts, last], strict=True))
    went = set()
    for a, b in anchor.statements[cited[0] : cited[1] + 1]:
        statement = anchor.body[a:b]
        kept = [kept_count(statement, version.texts[low:high]) for low, high in pieces]
        went.add(max(range(len(pieces)), key=lambda k: (kept[k], -k)))
        marks = anchor.body_lines[a:b] or [(0, 0)]
        opening = [t for t, (row, _) in zip(statement, marks, strict=False) if row == marks[0][0]]
        went.update(  # its first line too: a `try:` whose body went elsewhere
            k for k, (low, high) in enumerate(pieces) if _holds(version.texts[low:high], opening)
        )
    low, high = pieces[min(went)][0], pieces[max(went)][1]
    blocks = [b for b in _runs(anchor.tokens, version.texts[low:high]) if b.size]
    if not blocks:
        return low, high
    return low + blocks[0].b, low + blocks[-1].b + blocks[-1].size


def _holds(tokens: Sequence[str], wanted: Sequence[str]) -> bool:
    """Whether `tokens` hold `wanted`, in order (others between them)."""
    it = iter(tokens)
    return bool(wanted) and all(any(t == w for t in it) for w in wanted)


def _owner(parsed: Parsed, at: int, kind: str) -> tuple[int, int] | None:
    """The bytes of the nearest definition of `kind` (the citation's own kind: a function,
    not the local `const` it declares) around the token at byte `at`; None: none."""
    assert parsed.tree is not None
    node = parsed.tree.root_node.descendant_for_byte_range(at, at)
    while node is not None and node.type != kind:
        node = node.parent
    return None if node is None else (node.start_byte, node.end_byte)


def _runs(cited: Sequence[str], tokens: Sequence[str]) -> list[difflib.Match]:
    """The runs of the cited tokens that `tokens` keeps in order."""
    return difflib.SequenceMatcher(None, cited, tokens, autojunk=False).get_matching_blocks()


def _named_edges(
    anchor: Anchor, parsed: Parsed, version: Tokens, first: int, last: int
) -> tuple[int, int]:
    """Tokens [first, last) of `version` without the whole-line statements at their edges
    that hold none of the citation's names (`Anchor.names`): an import written above the
    cited ones is no part of them, though the alignment took its `import {` and `} from`
    for theirs (deepchat's client: three SDK imports merged into one, two imports of
    other modules written above). Only while each cited statement keeps one of its names
    in what is left (`_cited_names`): python-sdk's `import httpx`, become `import httpx2`,
    keeps none and is that line, changed. As they are where what the tokens span is not
    whole statements, each on lines of its own (a `const (` block's own tokens)."""
    pieces = _pieces(parsed, version, first, last)
    if pieces is None or not anchor.names:
        return first, last
    named = [k for k, (a, b) in enumerate(pieces) if holds_one(anchor.names, version.texts[a:b])]
    if not named:
        return first, last
    low, high = pieces[named[0]][0], pieces[named[-1]][1]
    if not all(holds_one(names, version.texts[low:high]) for names in _cited_names(anchor)):
        return first, last
    return low, high


def _cited_names(anchor: Anchor) -> list[frozenset[str]]:
    """The names each whole-line statement of the citation holds at the baseline (one
    set for all where they are not such statements), told once per anchor."""
    key = ("names by statement",)
    if key not in anchor.derived:
        assert anchor.scope is not None and anchor.span is not None
        parsed = reparsed(anchor.scope)
        end = parsed.line_bytes(*anchor.span)[1]
        tokens = tokens_between(parsed, anchor.scope.cited, end, starting=True)
        n = len(tokens.texts)
        pieces = _pieces(parsed, tokens, 0, n) or [(0, n)]
        anchor.derived[key] = [anchor.names & set(tokens.texts[a:b]) for a, b in pieces]
    return cast("list[frozenset[str]]", anchor.derived[key])


def _pieces(parsed: Parsed, tokens: Tokens, first: int, last: int) -> list[tuple[int, int]] | None:
    """Tokens [first, last) cut where the whole-line statements they span begin (comments
    aside); None where they span no two such statements, or the first begins after them
    (a block's own tokens before its statements)."""
    assert parsed.tree is not None
    if last - first < 2:
        return None
    low, high = tokens.start_bytes[first], tokens.start_bytes[last - 1]
    around = parsed.tree.root_node.descendant_for_byte_range(low, high)
    if around is None:
        return None
    comments = comment_kinds(parsed.language)
    parts = [
        c
        for c in around.named_children
        if c.end_byte > low and c.start_byte <= high and c.kind_id not in comments
    ]
    if len(parts) < 2 or parts[0].start_byte > low or parts[-1].end_byte <= high:
        return None
    if not all(_own_lines(parsed.source, c) for c in parts):
        return None
    bounds = [bisect.bisect_left(tokens.start_bytes, c.start_byte) for c in parts[1:]]
    return list(zip([first, *bounds], [*bounds, last], strict=True))


def _own_lines(source: bytes, node: Node) -> bool:
    """Whether a node starts its line and ends it (blanks aside)."""
    line_start = source.rfind(b"\n", 0, node.start_byte) + 1
    line_end = source.find(b"\n", node.end_byte)
    line_end = len(source) if line_end < 0 else line_end
    return (
        not source[line_start : node.start_byte].strip()
        and not source[node.end_byte : line_end].strip()
    )


def _bound(
    parsed: Parsed, edges: tuple[tuple[Key | None, int], ...], end: bool
) -> tuple[int, int] | None:
    """The nearest neighbour the version has, one of its kind and name: its byte in the
    baseline and in the version (after its end, or where it starts); the file's edge
    when none is left and the baseline's was the edge."""
    for key, byte in edges:
        if key is None:
            return byte, len(parsed.source) if not end else 0
        nodes: list[Node] = named(parsed, *key)
        if len(nodes) == 1:
            node = nodes[0]
            return byte, node.end_byte if end else with_attributes(node).start_byte
    return None


def _hunk(
    before: Tokens, after: Tokens, low: int, high: int
) -> tuple[int, int, int, int, tuple[int, ...]] | None:
    """The stretch of `before` around its tokens [low, high) and the stretch of `after`
    it became, as git's diff of their lines has it: bounded by the nearest lines, above
    and below the cited ones, that the longest common sequence of lines keeps (`myers`;
    a line is its tokens, so whitespace and comments aside). The tokens are aligned
    within it, never with a look-alike outside. None when the lines differ too much for
    the diff to be worth its cost."""
    a, b = _lines(before), _lines(after)
    pairs = myers([key for key, _, _ in a], [key for key, _, _ in b], MOST_EDITS)
    if pairs is None:
        return None
    region = [0, len(before.texts), 0, len(after.texts)]
    for i, j in pairs:
        if a[i][2] <= low:
            region[0], region[2] = a[i][2], b[j][2]
        elif a[i][1] >= high:
            region[1], region[3] = a[i][1], b[j][1]
            break
    kept = tuple(
        b[j][1] for _, j in pairs if region[2] <= b[j][1] < region[3] and substantial(b[j][0])
    )
    return region[0], region[1], region[2], region[3], kept


def _within(
    anchor: Anchor,
    parsed: Parsed,
    version: Tokens,
    hunk: tuple[int, int, int, int, tuple[int, ...]],
) -> tuple[int, int, int, int]:
    """The hunk, its version's side ended where the citation's definition ends when it
    starts inside it and the diff keeps no line of the hunk past that end (but lines of
    punctuation, a docstring's closing quotes, that match by coincidence): code there
    is all new, written after the definition (fastmcp's `register_with_docket`, below a
    `key` property whose return was rewritten), not what the cited code became, and no
    token of it is aligned with a cited one (a `self .` of it would pass for the
    rewritten return's). Where the diff keeps a cited line past the end (python-sdk's
    `handle_request`, its guard moved into a new `_handle_request` below it), or the
    side starts above the definition (its header rewritten: github-mcp-server's
    `prepareSearchArgs`), the side is left whole."""
    low, high, start, end, kept = hunk
    if anchor.definition is None or start >= end:
        return low, high, start, end
    first = version.start_bytes[start]
    for node in named(parsed, *anchor.definition):
        if with_attributes(node).start_byte <= first < node.end_byte:
            cut = bisect.bisect_left(version.start_bytes, node.end_byte, start, end)
            if all(line < cut for line in kept):
                end = cut
    return low, high, start, end


def _lines(tokens: Tokens) -> list[tuple[tuple[str, ...], int, int]]:
    """The lines of tokens: the texts of the tokens starting on each, and where they are."""
    lines: list[tuple[tuple[str, ...], int, int]] = []
    first = 0
    for index in range(1, len(tokens.texts) + 1):
        if index == len(tokens.texts) or tokens.start_lines[index] != tokens.start_lines[first]:
            lines.append((tuple(tokens.texts[first:index]), first, index))
            first = index
    return lines


# Lines that differ past which the diff is not run (Myers's cost is the lines times them).
MOST_EDITS = 400


def _baseline(anchor: Anchor, scope: Scope, low: int, high: int) -> Tokens | None:
    """The tokens of the baseline's bytes [low, high), read once per anchor and bounds (a
    walk asks at every version): from the process's parse of the baseline blob, which
    parses it again only if it no longer holds it (the anchor keeps no tree). None past
    SCOPE_BYTES."""
    if high - low > SCOPE_BYTES:
        return None
    key = ("scope tokens", low, high)
    if key not in anchor.derived:
        anchor.derived[key] = tokens_between(reparsed(scope), low, high, starting=True)
    return cast("Tokens", anchor.derived[key])


def reparsed(scope: Scope) -> Parsed:
    """The baseline file's parse: the process's parse of its blob, made again only if the
    process no longer holds it (an anchor keeps no tree)."""
    if scope.blob:
        return parse(scope.blob, scope.language, lambda: scope.source)
    from tree_sitter import Parser  # a parse made outside the cache (no blob to key it by)

    from watcher.parse.languages import grammar

    tree = Parser(grammar(scope.language)).parse(scope.source)
    return Parsed("", scope.language, tree, scope.source)
