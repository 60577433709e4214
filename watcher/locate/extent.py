"""What an item occupies in one version of its file, read off its parse: its lines, the
code on either side of them, its tokens, and the names that decide where `locate` finds
it (guards). The history walk follows these bytes from version to version
(`watcher.history.follow`); a citation untouched since its baseline is followed to HEAD
the same way (`watcher.judge.untouched`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from watcher.locate.anchors import Anchor
from watcher.locate.definitions import defining, definition_node, keyword, named
from watcher.parse.languages import LANGUAGES
from watcher.parse.nodes import definition_names, is_definition, with_attributes
from watcher.parse.syntax import WORD, Parsed, tokens_between

if TYPE_CHECKING:
    from tree_sitter import Node

CONTEXT_BYTES = 256  # bytes first read on each side of an item for the code around it

# An item's spot: (state, path, start line, end line, tokens, the bytes followed for it,
# guards); lines and bytes None where it is missing.
Words = tuple[str, ...]
Spot = tuple[str, str | None, int | None, int | None, Words, tuple[int, int] | None, Words]


def same_extent(
    version: Parsed, path: str, start: int, end: int, anchor: Anchor
) -> tuple[tuple[int, int], Words] | None:
    """The bytes followed for a citation that is the same at lines start..end of `version`
    (its lines and the code around them) and its guards, as a walk follows it
    (`watcher.judge.untouched` follows the baseline's to HEAD)."""
    *_, span, guards = spotted(version, "same", path, start, end, anchor)
    return None if span is None else (span, guards)


def spotted(
    version: Parsed,
    state: str,
    path: str,
    start: int | None,
    end: int | None,
    anchor: Anchor,
) -> Spot:
    """The spot of an item placed at lines start..end of `version`, the file at `path`.
    Where it is the same, its tokens are the cited ones: its lines may take in more (the
    blank or comment lines the citation has around its tokens, kept on the match), and
    what those reach in one version or another is no change of the item."""
    span = None
    if start is not None and end is not None:
        low, high = _span(version, start, end)
        if state == "changed":
            low, high = _with_definition(version, anchor, low, high)
        span = _with_context(version, low, high)
    tokens = anchor.tokens if state == "same" else _tokens(version, start, end)
    return state, path, start, end, tokens, span, _guards(version, anchor)


def names_of(anchor: Anchor) -> tuple[str, ...]:
    return tuple(anchor.definition[1]) if anchor.definition else ()


def _guards(parsed: Parsed, anchor: Anchor) -> tuple[str, ...]:
    """What must occur as often in the version before for the item's place to be followed
    there (`walk.Place.guards`): the name of the definition that holds it, counted where
    it may name a definition (after `fn`, `def`, ..., after a Go method's receiver:
    `definitions.defining`; a kind written without a keyword, every whole word), and, for the
    definitions around that one (a Rust `impl`, a Python class), the first line of each,
    which names it. A commit that renamed one of them, or gave another definition of the
    same name the same path, changed how often its name or that line occurs; one that only
    used the names (`Config` in codex's 6,000-line `config/mod.rs`, in a commit out of
    eight, or called `build`) did not, and the version is followed, not judged. Overloads
    (several definitions of the path, fastmcp's `tool`) count together, when they share the
    definitions around them. Where the definition is not found, or its lines do not name
    it, its names are the guards."""
    names = names_of(anchor)
    if anchor.definition is None or parsed.tree is None:
        return names
    nodes = named(parsed, *anchor.definition)
    scopes = {_scope_lines(parsed, node) for node in nodes}
    if len(scopes) != 1:
        return names
    lines = scopes.pop()
    if lines is None:
        return names
    own = definition_names(nodes[0])
    word = _keyword(parsed.language, anchor.definition[0])
    if word is not None and WORD.fullmatch(own[-1].encode()):
        # A Go method's receiver type is on its own first line, which the item's holds.
        own = (defining(word.decode(), own[-1]),)
    return (*lines, *own)


def _keyword(language: str, kind: str) -> bytes | None:
    """What a definition's name follows (`definitions.keyword`); for a Go method, the
    parenthesis that closes its receiver."""
    if (language, kind) == ("go", "method_declaration"):
        return b")"
    return keyword(language, kind)


def _scope_lines(parsed: Parsed, node: Node) -> tuple[str, ...] | None:
    """The first line of each definition around `node`, outermost first; None where one
    of those lines does not name its definition."""
    kinds, source = LANGUAGES[parsed.language].definitions, parsed.source
    lines: list[str] = []
    parent = node.parent
    while parent is not None:
        if is_definition(parent, kinds):
            low = source.rfind(b"\n", 0, parent.start_byte) + 1
            high = source.find(b"\n", parent.start_byte)
            line = source[low : len(source) if high < 0 else high]
            held = set(WORD.findall(line))
            if not line.strip() or not all(
                w in held for n in definition_names(parent) for w in WORD.findall(n.encode())
            ):
                return None
            try:
                lines.append(line.decode())
            except UnicodeDecodeError:
                return None
        parent = parent.parent
    return tuple(lines[::-1])


def _with_definition(parsed: Parsed, anchor: Anchor, low: int, high: int) -> tuple[int, int]:
    """The bytes [low, high) of a changed item's lines widened to take in the whole
    definition that held the cited lines, when the file has it: `locate` chooses the lines
    most like the cited ones among all of its tokens, so a commit that changed any of
    them may have moved the item, though its own lines are untouched."""
    node = definition_node(parsed, anchor.definition, anchor.start_line or 0)
    if node is None:
        return low, high
    first, source = with_attributes(node).start_byte, parsed.source
    end = source.find(b"\n", node.end_byte)
    return min(low, source.rfind(b"\n", 0, first) + 1), max(high, len(source) if end < 0 else end)


def _span(parsed: Parsed, start: int, end: int) -> tuple[int, int]:
    """The bytes of lines start..end, without the newline that ends the last one."""
    starts, size = parsed.line_starts, parsed.size
    low = starts[start - 1] if start - 1 < len(starts) else size
    last = starts[end - 1] if end - 1 < len(starts) else size
    high = parsed.source.find(b"\n", last)
    return low, size if high < 0 else high


def _with_context(parsed: Parsed, low: int, high: int) -> tuple[int, int]:
    """The bytes [low, high) of an item's lines widened to the nearest code on each side:
    from the start of the line that holds the last token before them to the end of the
    line that holds the first token after. What lies between (blank lines, comments) and
    those lines themselves decide the item's extent as much as its own lines do: an
    attribute or decorator dropped above a definition, a statement dropped below the last
    line of a Python function. A commit that changed them is judged, not followed."""
    if parsed.tree is None:  # a file no grammar reads: compared line by line
        return low, high
    source = parsed.source
    before, after = _token_near(parsed, low, -1), _token_near(parsed, high, 1)
    wide_low = 0 if before is None else source.rfind(b"\n", 0, before) + 1
    wide_high = -1 if after is None else source.find(b"\n", after)
    return wide_low, len(source) if wide_high < 0 else wide_high


def _token_near(parsed: Parsed, at: int, direction: int) -> int | None:
    """Where the last token ending by `at` starts (direction -1), or the first token
    starting from `at` (direction 1); None when there is none. Only a window around `at`
    is read, widened until it holds one."""
    reach, size = CONTEXT_BYTES, parsed.size
    while True:
        low, high = (max(0, at - reach), at) if direction < 0 else (at, min(size, at + reach))
        starts = tokens_between(parsed, low, high, starting=direction > 0).start_bytes
        if starts:
            return starts[-1] if direction < 0 else starts[0]
        if (low if direction < 0 else size - high) == 0:
            return None
        reach *= 4


def _tokens(parsed: Parsed, start: int | None, end: int | None) -> tuple[str, ...]:
    """The tokens of lines start..end (the whole file without lines). Only those lines
    are tokenized: a walk judging a big file pays for the item, not the file."""
    if start is None or end is None:
        return parsed.token_texts()
    if parsed.tree is None:  # a file no grammar reads: its words
        return parsed.token_texts(*parsed.token_range(start, end))
    low, high = parsed.line_bytes(start, end)
    return tuple(tokens_between(parsed, low, high, placed=False).texts)
