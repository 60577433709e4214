"""Anchor a cited construct at its baseline: its tokens, the definition around them, and
its rarest tokens (the probes a search starts from). `Found` is where one was found.

Whitespace and comments are not tokens, so a reformat never looks like a change.
"""

from __future__ import annotations

import bisect
import functools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from watcher.locate.definitions import (
    Scope,
    definition_keys,
    name_path,
    of_last_name,
    scope_of,
)
from watcher.parse.languages import LANGUAGES, for_path, grammar
from watcher.parse.nodes import ATTRIBUTES, is_definition, with_attributes, wrapped
from watcher.parse.plain import line_marks
from watcher.parse.syntax import WORD, Parsed, Tokens, tokens_between

if TYPE_CHECKING:
    from tree_sitter import Node


class LocateError(Exception):
    """The cited lines cannot be anchored at the baseline (out of range, no code)."""


@dataclass(frozen=True)
class Anchor:
    """What a citation cites at its baseline: its tokens and the definition around them."""

    path: str
    start_line: int | None
    end_line: int | None
    tokens: tuple[str, ...]
    definition: tuple[str, tuple[str, ...]] | None
    share: float  # how much of that definition the citation covers
    text: str
    span: tuple[int, int] | None = None  # lines of the first and last cited token
    probes: tuple[str, ...] = ()  # its rarest tokens in the baseline file: see `matching.category`
    context: tuple[str, ...] = ()  # a file no grammar reads: all its lines at the baseline
    # Each token's line, counted from the first token's (a parsed file): where a similar
    # region starts is voted for by lines (`windows.line_votes`), with no index of the file.
    token_lines: tuple[int, ...] = ()
    # The enclosing definition's tokens (attributes included) and where the cited ones
    # start in them: what a version's definition is aligned with (`matching.carry`).
    body: tuple[str, ...] = field(default=(), compare=False)
    offset: int = field(default=0, compare=False)
    # Every definition (kind and name path) of the baseline file: a region like the
    # citation inside one of them at HEAD is that definition's own code, not the citation.
    known: frozenset[tuple[str, tuple[str, ...]]] = field(default=frozenset(), compare=False)
    # The kind of the statement its last cited token closes (a `try`, an `if` with its
    # branches), when the citation ends with one: at HEAD the item ends where that
    # statement does, so a line added at the end of its last branch is inside it.
    closes: str | None = field(default=None, compare=False)
    # Whether its first (last) token is punctuation of a construct reaching past its
    # lines: such an edge is its own, never trimmed at HEAD (`alignment.trimmed`).
    ragged: tuple[bool, bool] = field(default=(False, False), compare=False)
    # Each token of `body`'s line and that line's indentation (`alignment.line_marks`):
    # the alignment is made line by line first (`carry`).
    body_lines: tuple[tuple[int, int], ...] = field(default=(), compare=False)
    # Where it lies among the definitions of its file, with the file's bytes: what a
    # version is aligned through when its definition does not carry it (`scopes`).
    scope: Scope | None = field(default=None, compare=False, repr=False)
    # When it cites whole statements of one block of its definition (its body, or a
    # block inside it): each statement of that block (its tokens' range in `body`), and
    # the first and last cited one. A version's statements are paired with them
    # (`blocks.bounded`), so that code inserted at an edge of the citation stays outside
    # it, however like a cited line it reads.
    statements: tuple[tuple[int, int], ...] = field(default=(), compare=False)
    cited_statements: tuple[int, int] | None = field(default=None, compare=False)
    # The baseline file's other definitions of its definition's kind and name (a method of
    # the name in another `impl`), each name path with its tokens: one of them rewritten
    # into a likeness of the citation's more than of itself took the citation in
    # (`matching._moved`: two impls folded into one).
    namesakes: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = field(
        default=(), compare=False, repr=False
    )
    # Which cited tokens (their indices) are attributes or decorators written above an
    # item the citation also cites: they make it changed, never found (`carried`'s minor;
    # `probes` are drawn from the others).
    attributes: tuple[int, ...] = field(default=(), compare=False)
    # The kind of the construct its first token begins within its lines (`opens`): a
    # verbatim match whose first token begins another kind at HEAD is part of a construct
    # begun before it (`verbatim._wrapped`).
    opens: str | None = field(default=None, compare=False)

    @functools.cached_property
    def derived(self) -> dict[object, object]:
        """What other stages compute once from this anchor, kept as long as it is: whether
        its lines read as its tokens in a language (`probes`)."""
        return {}

    @functools.cached_property
    def names(self) -> frozenset[str]:
        """The cited names and literals: the tokens with a word in them that its grammar
        gives no kind of their own (keywords have one; Python's string quotes, read by its
        scanner, have none and no word). A region found for it by likeness or through its
        scope that holds none of them shares only its shape: `import type { ToolSet }
        from "ai"` is not the `import type { Client } from "..."` above it. Every token
        of a file no grammar reads."""
        language = for_path(self.path)
        if language not in LANGUAGES:
            return frozenset(self.tokens)
        kinds = grammar(language)
        words = (t for t in self.tokens if WORD.search(t.encode()))
        return frozenset(t for t in words if not kinds.id_for_node_kind(t, False))

    @property
    def whole(self) -> bool:
        """Whether the citation is its enclosing definition, attributes included: then it
        is compared whole at HEAD."""
        return bool(self.body) and len(self.body) == len(self.tokens)

    @functools.cached_property
    def encoded(self) -> tuple[bytes, ...] | None:
        """Its tokens' bytes, made once for every version a walk compares; None when a
        token was decoded with replacements (it does not encode back to its bytes)."""
        if any("\ufffd" in t for t in self.tokens):
            return None
        return tuple(t.encode() for t in self.tokens)

    @functools.cached_property
    def body_counts(self) -> tuple[tuple[bytes | None, int], ...]:
        """Each distinct token of `body`, as bytes (None: decoded with replacements), and
        how many times it occurs there, most frequent first: what a version's bytes are
        searched for to bound how alike a region's tokens can be (`matching.may_be_alike`)."""
        counts = Counter(self.body).most_common()
        return tuple((None if "\ufffd" in t else t.encode(), c) for t, c in counts)


@dataclass(frozen=True)
class Found:
    """Where an item was found in one version of the upstream."""

    path: str
    start_line: int | None
    end_line: int | None
    identical: bool
    text: str
    tokens: tuple[str, ...] = ()
    captures: dict[str, str | None] = field(default_factory=dict)


# Not found in a definition because the cited tokens went mostly into statements not
# cited (`blocks.bounded`): nothing else is to find the citation there.
REFUSED = Found("", None, None, False, "")
GONE = (None, REFUSED)


def anchor(parsed: Parsed, path: str, start: int | None, end: int | None) -> Anchor:
    """Anchor cited lines (or the whole file) in the baseline parse.

    Only the cited lines are tokenized, and the definition around them is found from
    the tree: the cost is the citation's and its definition's, not the file's (the
    whole file's token index is built only for a file no grammar reads)."""
    if start is None or end is None:
        return Anchor(path, None, None, parsed.token_texts(), None, 1.0, parsed.text())
    lines = parsed.line_count()
    if end > lines:
        raise LocateError(f"lines {start}-{end} are past the end of the file ({lines} lines)")
    if parsed.tree is None:
        return _anchor_by_index(parsed, path, start, end)
    low, high = parsed.line_bytes(start, end)
    cited = tokens_between(parsed, low, high, starting=True)  # starting on them
    if not cited.texts:
        raise LocateError(
            f"lines {start}-{end} hold no code of their own (blank lines, comments, or the "
            "inside of a string that starts above them)"
        )
    texts = tuple(cited.texts)
    parsed.stats.tokens_scanned += len(texts)
    if not _holds_construct(parsed, cited.start_bytes, high):
        shown = " ".join(dict.fromkeys(texts))
        raise LocateError(
            f"lines {start}-{end} hold only `{shown[:40]}`, punctuation or keywords of no "
            "statement of their own, which could be matched anywhere: cite the statement "
            "they belong to"
        )
    node = enclosing(parsed, cited.start_bytes[0], cited.start_bytes[-1])
    key, share, offset = None, 0.0, 0
    body: tuple[str, ...] = ()
    body_lines: tuple[tuple[int, int], ...] = ()
    statements: tuple[tuple[int, int], ...] = ()
    cited_statements = None
    if node is not None:
        first = with_attributes(node)  # a wrapping `export const x = 1;` ends it too
        around = _tokens_of(
            parsed, cited, low, high, first.start_byte, max(node.end_byte, first.end_byte)
        )
        parsed.stats.tokens_scanned += len(around.texts)
        key = (node.type, name_path(node, parsed.language))
        body = tuple(around.texts)
        body_lines = line_marks(parsed.source, around.start_bytes, around.start_lines)
        share = len(texts) / max(1, len(body))
        offset = bisect.bisect_left(around.start_bytes, cited.start_bytes[0])
        if body[offset : offset + len(texts)] != texts:  # cited lines reach past it
            body, body_lines, offset = (), (), 0
        statements = body_statements(
            node, around.start_bytes, (cited.start_bytes[0], cited.start_bytes[-1])
        )
        ends = [i for i, (a, b) in enumerate(statements) if b == offset + len(texts)]
        starts = [i for i, (a, b) in enumerate(statements) if a == offset]
        if body and starts and ends and len(texts) < len(body):
            cited_statements = (starts[0], ends[-1])
    # Its probes, which a region found by likeness must hold one of, are its item's own.
    attributes = _attributes(parsed, cited.start_bytes)
    return Anchor(
        path,
        start,
        end,
        texts,
        key,
        share,
        parsed.lines(start, end),
        (cited.start_lines[0], cited.end_lines[-1]),
        _rarest_bytes(parsed, tuple(t for i, t in enumerate(texts) if i not in attributes)),
        (),
        tuple(line - cited.start_lines[0] for line in cited.start_lines),
        body,
        offset,
        definition_keys(parsed),
        _closes(parsed, cited.start_bytes[0], cited.start_bytes[-1]),
        _ragged(parsed, cited),
        body_lines,
        scope_of(parsed, cited.start_bytes[0], cited.start_bytes[-1]),
        statements if cited_statements else (),
        cited_statements,
        _namesakes(parsed, key) if body else (),
        attributes,
        opens(parsed, cited.start_bytes[0], cited.start_bytes[-1]),
    )


def _tokens_of(parsed: Parsed, cited: Tokens, low: int, high: int, start: int, end: int) -> Tokens:
    """The tokens starting in bytes [start, end) of a parse: read off `cited` (those
    starting in [low, high)) when it holds them all, as it does for a definition cited
    whole, rather than walking the tree for them again."""
    if not (low <= start and end <= high):
        return tokens_between(parsed, start, end, starting=True)
    i = bisect.bisect_left(cited.start_bytes, start)
    j = bisect.bisect_left(cited.start_bytes, end)
    return Tokens(cited.texts[i:j], cited.start_lines[i:j], cited.end_lines[i:j],
                  cited.start_bytes[i:j])  # fmt: skip


def _attributes(parsed: Parsed, starts: Sequence[int]) -> tuple[int, ...]:
    """The indices of the tokens starting at `starts` that are inside an attribute or a
    decorator (`ATTRIBUTES`); none when every one is (the citation cites attributes).
    The attributes are found once, among the nodes around the tokens, not per token."""
    assert parsed.tree is not None
    top: Node | None = parsed.tree.root_node.descendant_for_byte_range(starts[0], starts[-1])
    node = top
    while node is not None:
        if node.type in ATTRIBUTES:
            return ()  # every token is inside it
        node = node.parent
    spans: list[tuple[int, int]] = []
    stack = [top] if top is not None else []
    while stack:
        node = stack.pop()
        if node.type in ATTRIBUTES:
            spans.append((node.start_byte, node.end_byte))
        else:  # only what reaches the tokens' stretch
            stack.extend(c for c in node.children
                         if c.end_byte > starts[0] and c.start_byte <= starts[-1])  # fmt: skip
    if not spans:
        return ()
    spans.sort()
    lows = [low for low, _ in spans]
    found = []
    for i, start in enumerate(starts):
        at = bisect.bisect_right(lows, start) - 1
        if at >= 0 and start < spans[at][1]:
            found.append(i)
    return tuple(found) if len(found) < len(starts) else ()


BLOCKS = frozenset({"block", "statement_block", "statement_list"})  # what holds statements


def body_statements(
    node: Node, starts: Sequence[int], around: tuple[int, int] | None = None
) -> tuple[tuple[int, int], ...]:
    """The statements of a definition's body, each as the range of its tokens among the
    definition's, whose tokens start at bytes `starts` (comments are no statements). With
    `around` (first and last bytes): those of the innermost block of it that holds both, a
    loop's or a `catch`'s (metamcp's `if (retry)` in its connect loop's `catch`)."""
    block = node.child_by_field_name("body")
    inner = None if around is None else node.descendant_for_byte_range(*around)
    while inner is not None and inner.start_byte > node.start_byte:
        if inner.type in BLOCKS:
            block = inner
            break
        inner = inner.parent
    if block is not None and [c.type for c in block.named_children] == ["statement_list"]:
        block = block.named_children[0]  # Go's block holds its statements in one
    if block is None:
        return ()
    found = []
    for child in block.named_children:
        if "comment" in child.type:
            continue
        first = bisect.bisect_left(starts, child.start_byte)
        last = bisect.bisect_left(starts, child.end_byte)
        if first < last:
            found.append((first, last))
    return tuple(found)


def _namesakes(
    parsed: Parsed, key: tuple[str, tuple[str, ...]] | None
) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """`Anchor.namesakes`: the other definitions of the file of this kind and last name."""
    if key is None:
        return ()
    found = []
    for node, names in of_last_name(parsed, key[0], key[1][-1:]):  # grouped once per parse
        if names != key[1]:
            first = with_attributes(node)
            texts = tokens_between(parsed, first.start_byte, max(node.end_byte, first.end_byte),
                                   starting=True, placed=False).texts  # fmt: skip
            parsed.stats.tokens_scanned += len(texts)
            found.append((names, tuple(texts)))
    return tuple(found)


def _holds_construct(parsed: Parsed, starts: Sequence[int], high: int) -> bool:
    """Whether the tokens starting at `starts` hold something of their own: a name or a
    literal (a named leaf), or a keyword that starts a construct ending by `high`
    (`return`, `pass`, `break;`). Lines of `)`, `}`, `) {` or `} else {` alone hold
    neither: they belong to a statement that starts above them."""
    assert parsed.tree is not None
    root = parsed.tree.root_node
    for at in starts:
        leaf: Node | None = root.descendant_for_byte_range(at, at)
        if leaf is None or leaf.is_named:
            return True
        node = leaf.parent
        while node is not None and node.start_byte == at and node.end_byte <= high:
            if node.is_named:
                return True
            node = node.parent
    return False


def _ragged(parsed: Parsed, cited: Tokens) -> tuple[bool, bool]:
    low, high = trimmed(parsed, cited, 0, len(cited.texts))
    return low > 0, high < len(cited.texts)


def opens(parsed: Parsed, first: int, last: int) -> str | None:
    """The kind of the largest construct that starts with the token at byte `first` and
    ends by the end of the token at byte `last`, short of a definition or its parts: a
    cited `this.cleanupResources()` opens an expression statement, a cited `self` a
    `self`; None when there is none."""
    assert parsed.tree is not None
    end = parsed.tree.root_node.descendant_for_byte_range(last, last)
    leaf = parsed.tree.root_node.descendant_for_byte_range(first, first)
    if leaf is None or end is None:
        return None
    stop = end.end_byte
    return _largest(parsed, leaf, lambda node: node.start_byte == first and node.end_byte <= stop)


def _closes(parsed: Parsed, first: int, last: int) -> str | None:
    """The kind of the largest statement that starts at or after byte `first` and ends
    with the token at byte `last`, short of a definition's own parts (its body block);
    None when that is a single token."""
    assert parsed.tree is not None
    leaf = parsed.tree.root_node.descendant_for_byte_range(last, last)
    if leaf is None:
        return None
    end = leaf.end_byte
    return _largest(
        parsed, leaf.parent, lambda node: node.end_byte == end and node.start_byte >= first
    )


def _largest(parsed: Parsed, node: Node | None, within: Callable[[Node], bool]) -> str | None:
    """The kind of the largest named node from `node` up that `within` keeps, short of a
    definition or a definition's own parts (its body block)."""
    kinds = LANGUAGES[parsed.language].definitions
    found = None
    while node is not None and within(node):
        if is_definition(node, kinds) or (node.parent and is_definition(node.parent, kinds)):
            break
        if node.is_named:
            found = node.type
        node = node.parent
    return found


def enclosing(parsed: Parsed, first: int, last: int) -> Node | None:
    """The smallest definition holding the tokens that start at bytes `first`..`last`, as
    the index counts them: a definition holds the tokens from its attributes to its end.
    Such a definition encloses the first token, or (the citation starting in its
    attributes, or in a statement wrapping it such as `export`) follows the attributes
    or is wrapped by the statement that does."""
    assert parsed.tree is not None
    kinds = LANGUAGES[parsed.language].definitions
    found: list[Node] = []
    node: Node | None = parsed.tree.root_node.descendant_for_byte_range(first, first + 1)
    while node is not None:
        if is_definition(node, kinds) and node.end_byte > last:
            found.append(node)
        inner = _unwrapped(node)  # `export const x = 1;`: the statement's end counts
        if inner is not None and is_definition(inner, kinds) and node.end_byte > last:
            found.append(inner)
        if node.type in ATTRIBUTES:  # a citation that starts in a definition's attributes
            after = _attributed(node, kinds)
            if after is not None and after.end_byte > last:
                found.append(after)
        node = node.parent
    return min(found, key=lambda d: d.end_byte - with_attributes(d).start_byte, default=None)


def _unwrapped(node: Node) -> Node | None:
    """What a statement wrapping one thing alone (`nodes.wrapped`) holds, through every
    such statement (`export const x = 1` holds a declaration of x, which holds x)."""
    inner = wrapped(node)
    while inner is not None and (deeper := wrapped(inner)) is not None:
        inner = deeper
    return inner


def _attributed(attribute: Node, kinds: frozenset[str]) -> Node | None:
    """The definition an attribute is written above, if any (as `with_attributes` reads it)."""
    after = attribute.next_named_sibling
    while after is not None and (after.type in ATTRIBUTES or "comment" in after.type):
        after = after.next_named_sibling
    if after is None or not is_definition(after, kinds):
        return None
    return after if with_attributes(after).start_byte <= attribute.start_byte else None


def _rarest_bytes(parsed: Parsed, tokens: tuple[str, ...], count: int = 16) -> tuple[str, ...]:
    """`_rarest`, estimated from the raw bytes with no token index: any of the cited tokens
    is a valid probe, rarer ones are cheaper. A token's count is that of its rarest word in
    the blob's word counts (shared by all its citations, so the cost is the citation's,
    not the file's); a token with no word (punctuation) comes last."""
    counts = parsed.word_counts
    unknown = len(parsed.source) + 1

    def rarity(text: str) -> tuple[int, int, str]:  # the text last: the same order every run
        words = WORD.findall(text.encode())
        return min((counts.get(w, 0) for w in words), default=unknown), -len(text), text

    return tuple(sorted(set(tokens), key=rarity)[:count])


def _anchor_by_index(parsed: Parsed, path: str, start: int, end: int) -> Anchor:
    """`anchor` from the whole file's token index (a file no grammar reads)."""
    first, last = parsed.token_range(start, end)
    if first >= last:
        raise LocateError(f"lines {start}-{end} hold no code (only blank lines or comments)")
    definition = parsed.enclosing(first, last)
    share = (
        (last - first) / max(1, definition.end_token - definition.first_token) if definition else 0
    )
    return Anchor(
        path,
        start,
        end,
        parsed.token_texts(first, last),
        definition.key if definition else None,
        share,
        parsed.lines(start, end),
        parsed.lines_of(first, last),
        _rarest(parsed, parsed.token_texts(first, last)),
        tuple(parsed.line_texts()) if parsed.tree is None else (),
    )


def _rarest(parsed: Parsed, tokens: tuple[str, ...], count: int = 16) -> tuple[str, ...]:
    """The cited tokens that occur least often in the whole baseline file: when a version
    drops one of them, it is most likely one of these (a literal, an identifier)."""
    parsed.stats.tokens_scanned += len(tokens)
    return tuple(sorted(set(tokens), key=lambda t: (parsed.count(t), -len(t), t))[:count])


def trimmed(
    parsed: Parsed, body: Tokens, low: int, high: int, keep: tuple[bool, bool] = (False, False)
) -> tuple[int, int]:
    """Tokens body[low:high] without the punctuation at their edges that belongs to a
    construct around them: a brace the alignment took for a cited one (of two `}` in a
    row, the function's). `keep` (start, end): an edge the citation itself left ragged at
    the baseline (its lines end inside a call opened above them) is kept. A span keeps at
    least one token."""
    assert parsed.tree is not None
    root, first = parsed.tree.root_node, body.start_bytes[low]
    while high - low > 1 and not keep[1]:
        leaf = root.descendant_for_byte_range(*[body.start_bytes[high - 1]] * 2)
        if leaf is None or leaf.is_named or leaf.parent is None or leaf.parent.start_byte >= first:
            break
        high -= 1
    end = body.start_bytes[high - 1] + len(body.texts[high - 1].encode())
    while high - low > 1 and not keep[0]:
        leaf = root.descendant_for_byte_range(*[body.start_bytes[low]] * 2)
        if leaf is None or leaf.is_named or leaf.parent is None or leaf.parent.end_byte <= end:
            break
        low += 1
    return low, high
