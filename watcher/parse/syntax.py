"""Parse a blob once: its token sequence, its named definitions, and its tree for queries.

Everything here is keyed by blob id, so an unchanged file is never parsed twice in a process.
Tokens are kept as columns (interned texts, integer arrays): a large file's parse costs
about a megabyte, not the tens of megabytes one object per token would.
"""

from __future__ import annotations

import bisect
import functools
import sys
import weakref
from array import array
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from operator import add
from typing import TYPE_CHECKING

from watcher.parse import plain
from watcher.parse.diffs import differing
from watcher.parse.languages import LANGUAGES, grammar
from watcher.parse.nodes import definition_names, is_definition, with_attributes
from watcher.parse.plain import Tokens as Tokens  # where other stages take it from
from watcher.parse.words import WORD as WORD
from watcher.parse.words import Edits, edits, moved_places, recount
from watcher.parse.words import is_word_byte as is_word_byte
from watcher.parse.words import word_places as word_places
from watcher.parse.words import words as words

if TYPE_CHECKING:
    from tree_sitter import Node, Tree

# Parses kept, in bytes of source (a tree takes ~30x its source). A cold check of 1,000
# codex citations peaked at 297 MB with 2 MB, 271 MB with 1 MB, in the same time and with
# the same verdicts (2,455 parses against 2,446: a parse evicted is sometimes asked again).
CACHE_BYTES = 2**20
# A file larger than this gets no syntax tree: its tree would take 20-80x its size (80x
# for dense generated code: 800 MB for 10 MB), and its tokens are its lines, whitespace
# normalized (24 bytes a line, where a token each would take 24 bytes a token).
TREE_BYTES = 2 * 2**20
# A version is parsed from another's tree when what differs is at most this share of it:
# beyond, tree-sitter checking what it may reuse costs as much as parsing afresh or more.
# Measured on the 1,010 version pairs of 1,000 codex citations, all parsed either way:
# 3.9 s at 0.25, 3.5 s at 0.35, 3.3 s at 0.4 to 0.6 (1.5x a fresh parse past 70%).
REPARSE_SHARE = 0.4


@dataclass
class Stats:
    """Counters that pin the cost model in tests and the bench: a run's are its
    session's (`watcher.judge.session`), and each parse counts into those of whoever got
    it from the cache last (`parse`)."""

    parses: int = 0
    reparsed: int = 0  # of the parses, those that reused the tree of another version
    parsed_blobs: list[str] = field(default_factory=list)
    indexed: int = 0  # blobs whose token index was built (once each, shared by citations)
    tokens_scanned: int = 0  # tokens compared while locating citations, index lookups included
    aligned: int = 0  # definitions aligned with a citation's: once per anchor and version
    captured: int = 0  # definition nodes that queries for one kind of definition returned
    listed: int = 0  # bytes queried for the definitions of every kind (`definition_nodes`)
    counted: int = 0  # bytes whose words were counted (`Parsed.word_counts`)
    placed: int = 0  # bytes searched for where a word occurs (`word_places`)

    def reset(self) -> None:
        self.parses = 0
        self.reparsed = 0
        self.parsed_blobs.clear()
        self.indexed = 0
        self.tokens_scanned = 0
        self.aligned = 0
        self.captured = 0
        self.listed = 0
        self.counted = 0
        self.placed = 0


def line_starts(source: bytes) -> array[int]:
    """The byte offset of each line's start (tree-sitter's lines: split at newlines),
    summed from the lines' lengths in C (a third faster than a regex's matches)."""
    lines = source[:-1].split(b"\n")  # a newline ending the file starts no line
    starts = array("Q", accumulate(map(add, map(len, lines), repeat(1)), initial=0))
    starts.pop()  # the end of the last line
    return starts


TEXT = "text"  # any other file: compared word by word, with no definitions


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


class Parsed:
    """A parsed blob. Its tokens and definitions are read off the tree on first use:
    a rule's query needs only the tree, so walks that judge rules never pay for them."""

    def __init__(
        self, blob: str, language: str, tree: Tree | None, source: bytes, stats: Stats | None = None
    ) -> None:
        self.blob = blob
        self.language = language  # a registered language, or TEXT for other files
        self.tree = tree
        self.source = source
        self._places: dict[bytes, list[tuple[int, int]]] = {}  # word -> where it occurs
        # Any bytes -> where they start, kept for who searches them (`locate`'s probes).
        self.starts: dict[bytes, list[int]] = {}
        # Another version's places and the stretches where it differs (`counted_from`).
        self._edited: tuple[dict[bytes, list[tuple[int, int]]], Edits] | None = None
        # What reading it costs is counted here: the run's counters (`parse` points a
        # parse kept from an earlier run at the counters of the run that gets it now).
        self.stats = stats if stats is not None else Stats()
        # What other stages compute once from this parse, kept as long as it is: a
        # quote's compact text (`inputs.quotes`), the definitions of a kind (`locate`).
        self.derived: dict[object, object] = {}
        # Parsed from another version's tree: what it knows of that one (`Reused`).
        self.reused: Reused | None = None

    @functools.cached_property
    def _index(self) -> tuple[Tokens, list[Definition]]:
        if self.tree is None:
            return (
                plain.by_word(self.source)
                if self.size <= TREE_BYTES
                else plain.by_line(self.source)
            ), []
        return _index(self.tree.root_node, self.source, LANGUAGES[self.language].definitions)

    @functools.cached_property
    def positions(self) -> Mapping[str, array[int]]:
        """Where each token text occurs, in order: built once per blob and shared by every
        citation of it, so finding a citation costs time in its own tokens, not the file's.
        A file tokenized by line is scanned for the few texts asked instead: an index of
        its every line would cost several times the file."""
        self.stats.indexed += 1
        if self.tree is None and self.size > TREE_BYTES:
            return plain.Scanned(self.tokens.texts)
        index: dict[str, array[int]] = {}
        for position, text in enumerate(self.tokens.texts):
            found = index.get(text)
            if found is None:
                index[text] = found = array("I")
            found.append(position)
        return index

    @functools.cached_property
    def word_counts(self) -> dict[bytes, int]:
        """How often each identifier-like word occurs in the source bytes: counted once per
        blob, in C, and shared by every citation of it (no tokenizing)."""
        self.stats.counted += len(self.source)
        return Counter(words(self.source))

    def counted_from(self, other: Parsed) -> None:
        """Take another version's word counts, when it has them, edited where the bytes
        differ (`words.edits`, `words.recount`): a walk counts a big file's words once, not per
        version. Where its words occur (`places`) is then read off the other's the same
        way. Nothing is taken when so much differs that counting afresh is as fast."""
        known = other.__dict__.get("word_counts")  # counted already: no counting here
        if known is None or "word_counts" in self.__dict__:
            return
        found = edits(other.source, self.source)
        if found is not None:
            counted = recount(known, other.source, self.source, found, self.stats)
            self.__dict__["word_counts"] = counted
            self._edited = (other._places, found)

    def places(self, word: bytes) -> list[tuple[int, int]]:
        """Where a word occurs whole (`word_places`), in order; found once per blob and
        word. A version counted from another (`counted_from`) that knows the word's places
        shifts them past the stretches that differ and searches only those stretches."""
        found = self._places.get(word)
        if found is None:
            edited = self._edited
            known = edited[0].get(word) if edited is not None else None
            if edited is None or known is None:
                found = list(word_places(self.source, word, stats=self.stats))
            else:
                found = moved_places(known, edited[1], self.source, word, self.stats)
            self._places[word] = found
        return found

    def count(self, text: str) -> int:
        """How many tokens of the file have this text."""
        found = self.positions.get(text)
        return 0 if found is None else len(found)

    @functools.cached_property
    def by_key(self) -> dict[tuple[str, tuple[str, ...]], list[Definition]]:
        """The definitions by (kind, name path); a name may be defined more than once."""
        index: dict[tuple[str, tuple[str, ...]], list[Definition]] = {}
        for definition in self.definitions:
            index.setdefault(definition.key, []).append(definition)
        return index

    @functools.cached_property
    def line_starts(self) -> array[int]:
        """The byte offset of each line's start (`line_starts`)."""
        return line_starts(self.source)

    def text(self) -> str:
        """The whole source, bytes that are not UTF-8 replaced."""
        return self.source.decode("utf-8", errors="replace")

    def line_texts(self) -> list[str]:
        """Each line's text, as a line diff compares them. A file too big for a tree
        gives its line tokens (whitespace normalized, "" for a blank line): the strings
        its tokens hold, not the whole file decoded and split once more."""
        if self.tree is not None or self.size <= TREE_BYTES:
            return self.text().splitlines()
        found = [""] * self.line_count()
        for text, line in zip(self.tokens.texts, self.tokens.start_lines, strict=True):
            found[line - 1] = text
        return found

    def line_bytes(self, start: int, end: int) -> tuple[int, int]:
        """The bytes of lines start..end (1-based, inclusive), the last one's newline in."""
        starts, size = self.line_starts, len(self.source)
        low = starts[max(0, start - 1)] if start - 1 < len(starts) else size
        return low, starts[end] if end < len(starts) else size

    def lines(self, start: int, end: int) -> str:
        """The text of lines start..end (1-based, inclusive), line ends dropped and joined
        by newlines; only those lines' bytes are decoded."""
        first, last = self.line_bytes(start, end)
        return "\n".join(self.source[first:last].decode("utf-8", "replace").splitlines())

    @property
    def tokens(self) -> Tokens:
        return self._index[0]

    @property
    def definitions(self) -> list[Definition]:
        return self._index[1]

    def token_texts(self, start: int = 0, end: int | None = None) -> tuple[str, ...]:
        return tuple(self.tokens.texts[start:end])

    def token_range(self, start_line: int, end_line: int) -> tuple[int, int]:
        """Indices [first, end) of the tokens that start within the given lines."""
        starts = self.tokens.start_lines
        return bisect.bisect_left(starts, start_line), bisect.bisect_right(starts, end_line)

    def lines_of(self, first: int, end: int) -> tuple[int, int]:
        """The first and last line of the tokens [first, end)."""
        return self.tokens.start_lines[first], self.tokens.end_lines[end - 1]

    def enclosing(self, first: int, end: int) -> Definition | None:
        """The smallest definition that contains the tokens [first, end)."""
        inside = [d for d in self.definitions if d.first_token <= first and end <= d.end_token]
        return min(inside, key=lambda d: d.end_token - d.first_token, default=None)

    def line_count(self) -> int:
        return len(self.line_starts)

    @property
    def size(self) -> int:
        return len(self.source)


class Cache:
    """An LRU of parses by (blob id, language), bounded by the bytes of source it holds.

    It also remembers which of its parses is the latest of each path: a new version of
    that path is parsed from it (`_reparse`). Only parses still held are reused, so the
    bound holds; what is remembered beyond them is a key per path."""

    def __init__(self, budget: int = CACHE_BYTES) -> None:
        self.budget = budget
        self.held = 0
        self.items: OrderedDict[tuple[str, str], Parsed] = OrderedDict()
        self.latest: dict[tuple[str, str], tuple[str, str]] = {}  # (path, language) -> key

    def get(
        self,
        blob: str,
        language: str,
        load: Callable[[], bytes],
        path: str | None = None,
        stats: Stats | None = None,
    ) -> Parsed:
        key = (blob, language)
        stats = stats if stats is not None else Stats()
        parsed = self.items.get(key)
        if parsed is not None:
            self.items.move_to_end(key)
            parsed.stats = stats
        else:
            previous = self.items.get(self.latest.get((path, language), key)) if path else None
            parsed = _parse(blob, language, load(), previous, stats)
            if previous is not None:
                parsed.counted_from(previous)
            self._add(key, parsed)
        if path is not None:
            self.latest[(path, language)] = key
        return parsed

    def _add(self, key: tuple[str, str], parsed: Parsed) -> None:
        self.items[key] = parsed
        self.held += parsed.size
        # At least the two latest stay, however big: a judgment reads a baseline and a
        # HEAD version, and two files over the budget must not evict each other in turn.
        while self.held > self.budget and len(self.items) > 2:
            _, dropped = self.items.popitem(last=False)
            self.held -= dropped.size
        if len(self.latest) > 4 * len(self.items) + 64:  # forget paths whose parse is gone
            self.latest = {p: k for p, k in self.latest.items() if k in self.items}


# The parses of this process, by blob id: kept across runs on purpose, as a grammar is.
# A parse is a function of the blob's bytes, which its id names (content-addressed, so
# never stale), and the cache is bounded in bytes: a daemon's next run, or `rules lint`
# after `check` in one process, parses no unchanged file again. What reading a parse
# costs is counted in the counters of the run that asked for it (`stats`), not here.
_CACHE = Cache()


def parse(
    blob: str,
    language: str,
    load: Callable[[], bytes],
    path: str | None = None,
    stats: Stats | None = None,
) -> Parsed:
    """The parse of a blob, from the cache when this process has parsed it before
    (then its bytes are not even read: `load` is called only on a miss). With the
    blob's `path`, a parse of another version of that path still held is reused:
    tree-sitter parses again only what differs, and the tree is the same. What parsing
    and reading it cost is counted in `stats` (a run's: `watcher.judge.session`)."""
    return _CACHE.get(blob, language, load, path, stats)


def _parse(
    blob: str,
    language: str,
    source: bytes,
    previous: Parsed | None = None,
    stats: Stats | None = None,
) -> Parsed:
    from tree_sitter import Parser

    stats = stats if stats is not None else Stats()
    stats.parses += 1
    stats.parsed_blobs.append(blob)
    if language == TEXT or len(source) > TREE_BYTES:  # no tree: compared by word or line
        return Parsed(blob, TEXT, None, source, stats)
    parser = Parser(grammar(language))
    old = None
    if previous is not None and previous.tree is not None:
        old = edited(previous.tree, previous.source, source)
    if old is None:
        return Parsed(blob, language, parser.parse(source), source, stats)
    stats.reparsed += 1
    copy, regions = old
    parsed = Parsed(blob, language, parser.parse(source, copy), source, stats)
    assert previous is not None and parsed.tree is not None
    changed = tuple((r.start_byte, r.end_byte) for r in copy.changed_ranges(parsed.tree))
    parsed.reused = Reused(weakref.ref(previous), tuple(regions), changed)
    return parsed


Region = tuple[int, int, int, int]  # bytes [low, high) of one version, then of the other


@dataclass(frozen=True)
class Reused:
    """What a version parsed from another's tree knows of that other: the other itself,
    while something else (a cache) holds it, the stretches where their bytes differ
    (`differing`: the other's [low, high), then this one's), and where tree-sitter found
    the two trees' shapes differ (`Tree.changed_ranges`, in this version's bytes). What
    lies outside both is the same nodes, shifted: `locate.definitions` reads the other's
    definitions there instead of querying the whole tree again."""

    previous: weakref.ref[Parsed]
    regions: tuple[Region, ...]
    changed: tuple[tuple[int, int], ...]


def edited(tree: Tree, old: bytes, new: bytes) -> tuple[Tree, list[Region]] | None:
    """A copy of `old`'s tree told where `new` differs from it (`differing`), for
    tree-sitter to parse `new` reusing the rest, and the stretches that differ; None when
    what differs is so much of `new` that a fresh parse is faster. The tree itself is
    left alone: others may hold it."""
    regions = differing(old, new, 0, len(old), 0, len(new))
    if sum(high - low for _, _, low, high in regions) > REPARSE_SHARE * len(new):
        return None
    copy = tree.copy()
    rows_before = _Rows(new)
    for old_low, old_high, low, high in regions:  # in order: what precedes is `new` already
        row, column = rows_before.point(low)
        rows = old.count(b"\n", old_low, old_high)
        end = old_high - old.rfind(b"\n", old_low, old_high) - 1 if rows else column + high - low
        copy.edit(
            start_byte=low,
            old_end_byte=low + old_high - old_low,
            new_end_byte=high,
            start_point=(row, column),
            old_end_point=(row + rows, end),
            new_end_point=rows_before.point(high),
        )
    return copy, regions


class _Rows:
    """Tree-sitter's (row, byte column) of offsets asked in increasing order: newlines are
    counted (in C) from the last offset asked, not from the start each time; a version far
    from the last one differs in up to 64 stretches."""

    def __init__(self, source: bytes) -> None:
        self.source, self.at, self.rows = source, 0, 0

    def point(self, at: int) -> tuple[int, int]:
        self.rows += self.source.count(b"\n", self.at, at)
        self.at = at
        return self.rows, at - self.source.rfind(b"\n", 0, at) - 1


def tokens_between(
    parsed: Parsed, low: int, high: int, *, starting: bool = False, placed: bool = True
) -> Tokens:
    """The tokens lying wholly within bytes [low, high) (with `starting`: those that start
    there, as the whole file's index counts a span's tokens): only the nodes that overlap
    the range are visited, so a window of a big file costs the window, not the file.
    Without `placed`, only their texts (no lines or bytes: a walk compares texts).

    Walks and judging read many windows: the loop reads each node's fields once, and
    tells comments by kind id (`comment_kinds`), not by building each node's type name."""
    assert parsed.tree is not None
    tokens = Tokens()
    texts, intern, source = tokens.texts, sys.intern, parsed.source
    comments = comment_kinds(parsed.language)
    cursor = parsed.tree.root_node.walk()
    while True:
        node = cursor.node
        assert node is not None
        start, end, kind = node.start_byte, node.end_byte, node.kind_id
        if end > low and start < high and kind not in comments:
            if node.child_count == 0:
                if low <= start < end and (starting or end <= high):
                    texts.append(intern(source[start:end].decode("utf-8", "replace")))
                    if placed:
                        tokens.start_lines.append(node.start_point.row + 1)
                        tokens.end_lines.append(node.end_point.row + 1)
                        tokens.start_bytes.append(start)
            elif start < low:
                # Straight to the first child that reaches the range: a window in a
                # big file skips what comes before it without visiting it. Tree-sitter
                # finds none when `low` is whitespace between children some grammars
                # keep apart with hidden tokens (Go's top-level declarations, a blank
                # line between them): those children are then read from the first.
                if cursor.goto_first_child_for_byte(low) is not None or cursor.goto_first_child():
                    continue
            elif cursor.goto_first_child():
                continue
        if start >= high:
            return tokens  # past the range: nothing after it counts
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return tokens


@functools.cache  # pure: what a grammar says of its own node kinds, read once per process
def comment_kinds(language: str) -> frozenset[int]:
    """The ids of the node kinds of `language` that are comments: "comment" in their name."""
    kinds = grammar(language)
    return frozenset(
        kind
        for kind in range(kinds.node_kind_count)
        if "comment" in (kinds.node_kind_for_id(kind) or "")
    )


def node_tokens(node: Node, source: bytes) -> tuple[str, ...]:
    """The token texts of one node's subtree (comments left out)."""
    return tuple(_walk(node, source, frozenset())[0].texts)


def tokenize(node: Node, source: bytes) -> Tokens:
    """The tokens of one node's subtree with their positions (comments left out)."""
    return _walk(node, source, frozenset())[0]


def _index(root: Node, source: bytes, kinds: frozenset[str]) -> tuple[Tokens, list[Definition]]:
    tokens, spans = _walk(root, source, kinds)
    starts = tokens.start_bytes
    definitions = []
    for node, names in spans:
        first = with_attributes(node)
        definitions.append(
            Definition(
                kind=node.type,
                name=names[-1],
                path=names,
                start_line=first.start_point[0] + 1,
                end_line=node.end_point[0] + 1,
                first_token=bisect.bisect_left(starts, first.start_byte),
                end_token=bisect.bisect_left(starts, node.end_byte),
            )
        )
    return tokens, definitions


def _walk(
    root: Node, source: bytes, kinds: frozenset[str]
) -> tuple[Tokens, list[tuple[Node, tuple[str, ...]]]]:
    """Leaf tokens (comments left out) and named definitions, in document order.

    A cursor walk: it visits each node once without building lists of children. The
    whole file's index is built here, a token at a time: the loop binds what it calls."""
    tokens = Tokens()
    spans: list[tuple[Node, tuple[str, ...]]] = []
    enclosing: list[tuple[int, str]] = []  # (depth, name) of the definitions we are in
    texts, intern = tokens.texts.append, sys.intern
    start_lines, end_lines = tokens.start_lines.append, tokens.end_lines.append
    start_bytes = tokens.start_bytes.append
    cursor = root.walk()
    first_child, next_sibling, parent = (
        cursor.goto_first_child,
        cursor.goto_next_sibling,
        cursor.goto_parent,
    )
    depth, descend = 0, True
    while True:
        if descend:
            node = cursor.node
            assert node is not None
            kind = node.type
            if "comment" not in kind:
                if kind in kinds and is_definition(node, kinds):
                    enclosing.extend((depth, name) for name in definition_names(node))
                    spans.append((node, tuple(name for _, name in enclosing)))
                if first_child():
                    depth += 1
                    continue
                low, high = node.start_byte, node.end_byte
                if high > low:
                    texts(intern(source[low:high].decode("utf-8", "replace")))
                    start_lines(node.start_point[0] + 1)
                    end_lines(node.end_point[0] + 1)
                    start_bytes(low)
        while enclosing and enclosing[-1][0] >= depth:
            enclosing.pop()
        if next_sibling():
            descend = True
            continue
        if not parent():
            return tokens, spans
        depth, descend = depth - 1, False


def normalize(text: str) -> str:
    """Whitespace-normalized text: runs of whitespace collapsed, ends stripped."""
    return " ".join(text.split())
