"""Whether a cited range is the code it means: read off the tree of the cited file.

A range should hold whole statements and definitions. One that starts or ends inside
one (the second half of a call, a function without its closing brace, the header of a
function without its body) is told with the range that holds it whole; one that holds
a whole definition and stray lines around it is told with the definition's own lines.
A range inside one statement that touches neither of its ends (some arms of a match,
an argument of a call, the entries of a long literal) cites a part of it on purpose,
as lines inside a function's body do: nothing is said of it.
`watch validate` says so as a warning: the note still checks, but it cites less, or
more, than its author meant, and a later change to the part left out is news it misses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from watcher.models import span
from watcher.parse.languages import LANGUAGES
from watcher.parse.nodes import definition_name, is_definition, with_attributes, wrapped
from watcher.parse.syntax import Parsed, tokens_between

if TYPE_CHECKING:
    from tree_sitter import Node

# Node types a reader calls a statement, in every grammar watch reads: `let_declaration`,
# `expression_statement`, `match_arm`, `switch_case`, Go's `short_var_declaration`...
# (a parameter's declaration is part of its function's header, not a statement).
STATEMENT = re.compile(
    r"(_statement|_declaration|_definition|_item|_arm|_case|_variant|case_clause)$"
)
# Covering a cut statement can cut the one around it (`} else {`): the range grows again,
# this many times at most.
ROUNDS = 8
# Node types that hold a list of statements or items: `block`, `class_body`, `match_block`,
# `declaration_list`, Python's `argument_list`.
BODIES = ("block", "body", "_list")
LONGEST_LABEL = 60  # characters of a definition's head shown (`pub fn build`)


@dataclass(frozen=True)
class Finding:
    """What a cited range cuts or holds besides what it means, and the lines to cite."""

    says: str  # "starts inside the statement at 38-44"
    start: int
    end: int

    def describe(self) -> str:
        return f"{self.says}; cite {span(self.start, self.end)[1:]}"


@dataclass(frozen=True)
class _Range:
    """A cited range's lines that hold code (`first`..`last`), and its lines as cited."""

    start: int
    end: int
    first: int
    last: int
    code: frozenset[int]  # its lines that hold a token other than a comment


def lint(parsed: Parsed, start: int, end: int) -> Finding | None:
    """What is wrong with citing lines `start`..`end` (1-based) of this parse, or None.

    Nothing is said of a file no grammar reads, of lines past its end, of lines that
    hold no code, or of lines that hold punctuation alone (`validate` refuses those)."""
    if parsed.tree is None or not 1 <= start <= end <= parsed.line_count():
        return None
    cited = _range(parsed, start, end)
    if cited is None:
        return None
    tree = _Tree(parsed)
    inside, head, tail = tree.cuts(cited)
    if (held := tree.stray(cited, inside)) is not None:
        return held
    if head is None and tail is None:
        return None
    low, high = tree.cover(cited.first, cited.last)
    return Finding(tree.cut_text(head, tail), low, high)


def _range(parsed: Parsed, start: int, end: int) -> _Range | None:
    starts = parsed.line_starts
    low = starts[start - 1]
    high = starts[end] if end < len(starts) else len(parsed.source)
    tokens = tokens_between(parsed, low, high, starting=True)
    if not any(any(ch.isalnum() or ch == "_" for ch in text) for text in tokens.texts):
        return None  # no code, or punctuation alone
    code = frozenset(
        line
        for text, first, last in zip(
            tokens.texts, tokens.start_lines, tokens.end_lines, strict=True
        )
        if not text.isspace()
        for line in range(first, min(last, end) + 1)
    )
    return _Range(start, end, min(code), max(code), code)


def _lines(node: Node) -> tuple[int, int]:
    """The first and last line of a node's code: a comment it ends with (Python keeps
    one after a block's last statement in the block) is not code."""
    return _edge(node, 0).start_point.row + 1, _edge(node, -1).end_point.row + 1


def _edge(node: Node, side: int) -> Node:
    """The first (`side` 0) or last (-1) token of a node that is not a comment."""
    while node.child_count:
        code = [c for c in node.children if "comment" not in c.type and c.end_byte > c.start_byte]
        if not code:
            break
        node = code[side]
    return node


def _overlaps(node: Node, cited: _Range) -> bool:
    first, last = _lines(node)
    return (
        first <= cited.last
        and last >= cited.first
        and node.end_byte > node.start_byte
        and "comment" not in node.type
    )


def _ancestors(node: Node) -> list[Node]:
    found: list[Node] = []
    current: Node | None = node
    while current is not None:
        found.append(current)
        current = current.parent
    return found


def _is_list(node: Node) -> bool:
    """A node that holds a list: a body (`block`, `class_body`, `declaration_list`), or
    what brackets hold (a call's arguments, an array, a macro's tokens)."""
    if node.type.endswith(BODIES) or node.parent is None:
        return True
    own = [c for c in node.children if "comment" not in c.type]
    return bool(own) and _bracket(own[0], "([{") and _bracket(own[-1], ")]}")


def _bracket(token: Node, brackets: str) -> bool:
    return not token.is_named and token.type in brackets


class _Tree:
    """One parse's tree, read for one cited range."""

    def __init__(self, parsed: Parsed) -> None:
        assert parsed.tree is not None
        self.parsed = parsed
        self.root = parsed.tree.root_node
        self.kinds = LANGUAGES[parsed.language].definitions

    def cuts(self, cited: _Range) -> tuple[Node, Node | None, Node | None]:
        """The smallest node that holds the range's code, and what the range starts
        inside and ends inside (None: a whole statement or definition starts or ends it).

        Down from the root, as long as one child holds more than all of it. Where it
        stops, the range must hold the children at its edges whole, and hold only
        items of what the node lists (a block's statements, a call's arguments), unless
        it holds the whole node: a part of the node's own construct (its braces, its
        keyword, a function's signature, a method call's receiver) in the range cuts it."""
        node = self.root
        while True:
            kids = [c for c in node.children if _overlaps(c, cited)]
            if not kids:
                return node, None, None
            first, last = _lines(kids[0])
            if len(kids) == 1 and first <= cited.first and last >= cited.last:
                if kids[0].child_count == 0:
                    return node, None, None  # inside one token: a long string's lines
                if (first, last) != (cited.first, cited.last):
                    node = kids[0]
                    continue
            head = self.unit(kids[0]) if first < cited.first else None
            tail = self.unit(kids[-1]) if _lines(kids[-1])[1] > cited.last else None
            if any(self.is_part(kid, node) for kid in kids):
                low, high = _lines(node)  # it holds the node's own start or end, not both
                head = self.unit(node) if low < cited.first else head
                tail = self.unit(node) if high > cited.last else tail
            return node, head, tail

    def is_part(self, kid: Node, node: Node) -> bool:
        """Whether `kid` is a piece of `node`'s own construct, not one of a list it
        holds (`_is_list`): its first or last token (a brace, a keyword), or any child
        of a node that is no list (a call's receiver, a function's signature, an `if`'s
        branch) but a statement, a definition or a body."""
        if not kid.is_named:
            own = [c for c in node.children if "comment" not in c.type]
            return kid in (own[0], own[-1])
        return not (self.is_unit(kid) or kid.type.endswith(BODIES) or _is_list(node))

    def unit(self, node: Node) -> Node:
        """The statement or definition a cut node belongs to: itself, or the nearest
        above it. One of a list (`_is_list`: a block's statements, an array's elements,
        a call's arguments) is a unit as well; a part of a construct (a function's body,
        an `if`'s branch) is not."""
        for current in _ancestors(node):
            if (inner := self.wrapped_definition(current)) is not None:
                return inner
            parent = current.parent
            if parent is None or self.is_unit(current):
                return current
            if current.is_named and _is_list(parent):  # one of a list
                # A statement that is its expression alone is named a statement.
                return (
                    parent
                    if self.is_unit(parent) and _lines(parent) == _lines(current)
                    else current
                )
        return node

    def wrapped_definition(self, node: Node) -> Node | None:
        """The definition a wrapping holds (a decorated Python one, `export function
        f`, `export const f = ...`): it is named as the definition it wraps."""
        inner = node.child_by_field_name("definition") or wrapped(node)
        while inner is not None and not self.is_definition(inner):
            inner = wrapped(inner)
        return inner

    def is_unit(self, node: Node) -> bool:
        if not node.is_named or "parameter" in node.type:
            return False
        return bool(STATEMENT.search(node.type)) or self.is_definition(node)

    def is_definition(self, node: Node) -> bool:
        return is_definition(node, self.kinds)

    def lines(self, node: Node) -> tuple[int, int]:
        """A unit's lines: a definition's with the attributes written above it."""
        first = with_attributes(node) if self.is_definition(node) else node
        return first.start_point.row + 1, _lines(node)[1]

    def cover(self, start: int, end: int) -> tuple[int, int]:
        """The smallest range from `start`..`end` out that cuts no statement or
        definition (or as near as ROUNDS of widening get)."""
        low, high = start, end
        for _ in range(ROUNDS):
            cited = _range(self.parsed, low, high)
            if cited is None:
                break
            spans = [self.lines(n) for n in self.cuts(cited)[1:] if n is not None]
            wider = min([low, *(s[0] for s in spans)]), max([high, *(s[1] for s in spans)])
            if wider == (low, high):
                break
            low, high = wider
        return low, high

    def cut_text(self, head: Node | None, tail: Node | None) -> str:
        if head is not None and tail is not None:
            if head == tail:
                return f"starts and ends inside {self.name(head)}"
            return f"starts inside {self.name(head)} and ends inside {self.name(tail)}"
        if head is not None:
            return f"starts inside {self.name(head)}"
        assert tail is not None
        return f"ends inside {self.name(tail)}"

    def name(self, node: Node) -> str:
        """`the statement at 38-44`, a definition by its head: `fn build` (41-60), or
        anything else by its first line: `FeatureSpec {` (1164-1169)."""
        low, high = self.lines(node)
        if self.is_definition(node):
            return f"`{self.label(node)}` ({span(low, high)[1:]})"
        if self.is_unit(node):
            return f"the statement at {span(low, high)[1:]}"
        line = self.parsed.lines(low, low).strip()
        shown = line if len(line) <= LONGEST_LABEL else line[: LONGEST_LABEL - 1] + "…"
        return f"`{shown}` ({span(low, high)[1:]})"

    def label(self, node: Node) -> str:
        """A definition's head as written, up to its name: `pub fn build`, `class
        Client`, `func (c *Conn) Close`, `export const handler`; its bare name when
        that is long."""
        first = node
        while (parent := first.parent) is not None and wrapped(parent) == first:
            first = parent
        names = (node.child_by_field_name(f) for f in ("name", "left", "type"))
        name = next((n for n in names if n is not None), None)
        if name is not None:
            text = self.parsed.source[first.start_byte : name.end_byte]
            head = " ".join(text.decode("utf-8", "replace").split())
            if len(head) <= LONGEST_LABEL:
                return head
        return definition_name(node)

    def stray(self, cited: _Range, inside: Node) -> Finding | None:
        """A range that holds one whole definition and fewer code lines outside it than
        in it, unless it lies in a function's body (there the lines around a nested
        definition are the body's own)."""
        if any(self.is_definition(n) and _function_like(n) for n in _ancestors(inside)):
            return None
        held = self.held(cited)
        if len(held) != 1:
            return None
        low, high = self.lines(held[0])
        before = sum(1 for line in cited.code if line < low)
        after = sum(1 for line in cited.code if line > high)
        if before + after == 0 or before + after >= high - low + 1:
            return None  # whole, or so much else that the definition may not be the point
        around = " and ".join(
            f"{_count(n)} {where} it" for n, where in ((before, "before"), (after, "after")) if n
        )
        says = f"holds `{self.label(held[0])}` ({span(low, high)[1:]}) and {around}"
        return Finding(says, low, high)

    def held(self, cited: _Range) -> list[Node]:
        """The outermost definitions whose lines lie in the range (attributes aside)."""
        found: list[Node] = []
        stack = [self.root]
        while stack:
            node = stack.pop()
            for child in node.children:
                if not _overlaps(child, cited):
                    continue
                if self.is_definition(child):  # its attributes may be left out
                    low, high = _lines(child)
                    if cited.start <= low and high <= cited.end:
                        found.append(child)
                        continue
                if not _function_like(child):  # what a body defines is the body's
                    stack.append(child)
        return found


def _count(lines: int) -> str:
    return f"{lines} line" + ("" if lines == 1 else "s")


def _function_like(node: Node) -> bool:
    """A function, a method, a closure or a lambda: what its body holds is its own."""
    return any(word in node.type for word in ("function", "method", "closure", "lambda"))
