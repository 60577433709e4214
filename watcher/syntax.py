"""Parse a blob once: its token sequence, its named definitions, and its tree for queries.

Everything here is keyed by blob id, so an unchanged file is never parsed twice in a process.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from watcher.languages import LANGUAGES, grammar

if TYPE_CHECKING:
    from tree_sitter import Node, Tree


@dataclass
class Stats:
    """Counters that pin the cost model in tests and the bench."""

    parses: int = 0
    parsed_blobs: list[str] = field(default_factory=list)

    def reset(self) -> None:
        self.parses = 0
        self.parsed_blobs.clear()


STATS = Stats()
TEXT = "text"  # any other file: compared word by word, with no definitions


@dataclass(frozen=True)
class Token:
    text: str
    start_line: int  # 1-based
    end_line: int
    start_byte: int


@dataclass(frozen=True)
class Definition:
    """A named construct (function, struct, impl, ...) and the tokens it spans."""

    kind: str
    name: str
    path: tuple[str, ...]  # names of the enclosing definitions, outermost first, then own
    start_line: int
    end_line: int
    first_token: int
    end_token: int  # exclusive

    @property
    def key(self) -> tuple[str, tuple[str, ...]]:
        return (self.kind, self.path)


@dataclass
class Parsed:
    blob: str
    language: str  # a registered language, or TEXT for files tree-sitter cannot read
    tree: Tree | None
    source: bytes
    tokens: list[Token]
    definitions: list[Definition]

    def token_texts(self, start: int = 0, end: int | None = None) -> tuple[str, ...]:
        return tuple(t.text for t in self.tokens[start:end])

    def token_range(self, start_line: int, end_line: int) -> tuple[int, int]:
        """Indices [first, end) of the tokens that start within the given lines."""
        starts = [t.start_line for t in self.tokens]
        return bisect.bisect_left(starts, start_line), bisect.bisect_right(starts, end_line)

    def token_index_at_byte(self, byte: int) -> int:
        return bisect.bisect_left([t.start_byte for t in self.tokens], byte)

    def enclosing(self, first: int, end: int) -> Definition | None:
        """The smallest definition that contains the tokens [first, end)."""
        inside = [d for d in self.definitions if d.first_token <= first and end <= d.end_token]
        return min(inside, key=lambda d: d.end_token - d.first_token, default=None)

    def line_count(self) -> int:
        return self.source.count(b"\n") + (0 if self.source.endswith(b"\n") else 1)


class _Cache:
    """A bounded LRU of parses by (blob id, language): trees are large, ids are not."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self.items: OrderedDict[tuple[str, str], Parsed] = OrderedDict()

    def get(self, blob: str, language: str, source: bytes) -> Parsed:
        key = (blob, language)
        if key in self.items:
            self.items.move_to_end(key)
            return self.items[key]
        parsed = _parse(blob, language, source)
        self.items[key] = parsed
        if len(self.items) > self.size:
            self.items.popitem(last=False)
        return parsed


_CACHE = _Cache()


def parse(blob: str, language: str, source: bytes) -> Parsed:
    """The parse of a blob, from the cache when this process has parsed it before."""
    return _CACHE.get(blob, language, source)


def _parse(blob: str, language: str, source: bytes) -> Parsed:
    from tree_sitter import Parser

    STATS.parses += 1
    STATS.parsed_blobs.append(blob)
    if language == TEXT:
        return Parsed(blob, language, None, source, _words(source), [])
    tree = Parser(grammar(language)).parse(source)
    tokens: list[Token] = []
    spans: list[tuple[Node, tuple[str, ...]]] = []
    _walk(tree.root_node, LANGUAGES[language].definitions, (), tokens, spans)
    starts = [t.start_byte for t in tokens]
    definitions = [
        Definition(
            kind=node.type,
            name=names[-1],
            path=names,
            start_line=node.start_point[0] + 1,
            end_line=node.end_point[0] + 1,
            first_token=bisect.bisect_left(starts, node.start_byte),
            end_token=bisect.bisect_left(starts, node.end_byte),
        )
        for node, names in spans
    ]
    return Parsed(blob, language, tree, source, tokens, definitions)


def _walk(
    root: Node,
    kinds: frozenset[str],
    names: tuple[str, ...],
    tokens: list[Token],
    spans: list[tuple[Node, tuple[str, ...]]],
) -> None:
    """Collect leaf tokens (comments left out) and named definitions, in document order."""
    stack: list[tuple[Node, tuple[str, ...]]] = [(root, names)]
    while stack:
        node, scope = stack.pop()
        if "comment" in node.type:
            continue
        if node.type in kinds:
            scope = (*scope, definition_name(node))
            spans.append((node, scope))
        if node.child_count == 0:
            if node.end_byte > node.start_byte:
                tokens.append(_token(node))
            continue
        stack.extend((child, scope) for child in reversed(node.children))


def _words(source: bytes) -> list[Token]:
    tokens: list[Token] = []
    offset = 0
    for number, line in enumerate(source.decode("utf-8", errors="replace").splitlines(), 1):
        tokens.extend(
            Token(word, number, number, offset + i) for i, word in enumerate(line.split())
        )
        offset += len(line) + 1
    return tokens


def _token(node: Node) -> Token:
    text = (node.text or b"").decode("utf-8", errors="replace")
    return Token(text, node.start_point[0] + 1, node.end_point[0] + 1, node.start_byte)


def definition_name(node: Node) -> str:
    """A readable name for a definition node: `fn foo`, `impl Trait for Type`, ..."""
    for field_name in ("name", "type"):
        child = node.child_by_field_name(field_name)
        if child is not None:
            text = (child.text or b"").decode("utf-8", errors="replace")
            trait = node.child_by_field_name("trait") if node.type == "impl_item" else None
            if trait is not None:
                text = f"{(trait.text or b'').decode(errors='replace')} for {text}"
            return text
    return node.type


def normalize(text: str) -> str:
    """Whitespace-normalized text: runs of whitespace collapsed, ends stripped."""
    return " ".join(text.split())
