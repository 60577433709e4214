"""Find a cited construct in a parsed file by its token sequence, or a rule's @target.

Whitespace and comments are not tokens, so a reformat never looks like a change.
"""

from __future__ import annotations

import bisect
import difflib
import functools
import re
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from watcher.parse.languages import BLOCK_COMMENT, LANGUAGES, grammar
from watcher.parse.syntax import (
    ATTRIBUTES,
    STATS,
    TEXT,
    WORD,
    Parsed,
    Tokens,
    definition_names,
    differing,
    is_definition,
    is_word_byte,
    node_tokens,
    normalize,
    tokens_between,
    with_attributes,
    word_places,
    wrapped,
)

# Where two versions differ, as `differing` tells it: (old start, old end, new start, new end).
Stretches = list[tuple[int, int, int, int]]

if TYPE_CHECKING:
    from tree_sitter import Node, Query, TreeCursor

    from watcher.inputs.rules import Compiled

# A cited region whose definition is found by name counts as found when it covers most
# of that definition; a smaller region must still resemble what it maps to, or keep most
# of its tokens there in order (code inserted in its middle makes it no less there).
WHOLE_DEFINITION = 0.6
SIMILAR_IN_DEFINITION = 0.5
KEPT_IN_DEFINITION = 0.8
SIMILAR_IN_FILE = 0.8
# A region found by likeness alone holds one of the citation's this many rarest tokens:
# one that shares only its shape (another method of the same class) is another construct.
IDENTITY = 3
# A definition is looked for by a query around each place its name occurs, up to this
# many places; a name that occurs more often is looked for by one query over the file.
NAMED_PLACES = 64
PLAIN_NAME = re.compile(r"\w+")


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
    probes: tuple[str, ...] = ()  # its rarest tokens in the baseline file: see `category`
    context: tuple[str, ...] = ()  # a file no grammar reads: all its lines at the baseline
    # Each token's line, counted from the first token's (a parsed file): where a similar
    # region starts is voted for by lines (`_line_votes`), with no index of the file.
    token_lines: tuple[int, ...] = ()

    @functools.cached_property
    def encoded(self) -> tuple[bytes, ...] | None:
        """Its tokens' bytes, made once for every version a walk compares; None when a
        token was decoded with replacements (it does not encode back to its bytes)."""
        if any("\ufffd" in t for t in self.tokens):
            return None
        return tuple(t.encode() for t in self.tokens)


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


def anchor(parsed: Parsed, path: str, start: int | None, end: int | None) -> Anchor:
    """Anchor cited lines (or the whole file) in the baseline parse.

    Only the cited lines are tokenized, and the definition around them is found from
    the tree: the cost is the citation's and its definition's, not the file's (the
    whole file's token index is built only for a file no grammar reads)."""
    if start is None or end is None:
        return Anchor(path, None, None, parsed.token_texts(), None, 1.0, _text(parsed))
    lines = parsed.line_count()
    if end > lines:
        raise LocateError(f"lines {start}-{end} are past the end of the file ({lines} lines)")
    if parsed.tree is None:
        return _anchor_by_index(parsed, path, start, end)
    starts = parsed.line_starts
    low = starts[max(0, start - 1)] if start - 1 < len(starts) else parsed.size
    high = starts[end] if end < len(starts) else parsed.size
    cited = tokens_between(parsed, low, high, starting=True)  # starting on them
    if not cited.texts:
        raise LocateError(
            f"lines {start}-{end} hold no code of their own (blank lines, comments, or the "
            "inside of a string that starts above them)"
        )
    texts = tuple(cited.texts)
    STATS.tokens_scanned += len(texts)
    node = _enclosing(parsed, cited.start_bytes[0], cited.start_bytes[-1])
    key, share = None, 0.0
    if node is not None:
        # Only counted (the citation's share of it): no lines or bytes read.
        body = tokens_between(parsed, with_attributes(node).start_byte, node.end_byte,
                              starting=True, placed=False)  # fmt: skip
        STATS.tokens_scanned += len(body.texts)
        key = (node.type, _name_path(node, parsed.language))
        share = len(texts) / max(1, len(body.texts))
    return Anchor(
        path,
        start,
        end,
        texts,
        key,
        share,
        _lines(parsed, start, end),
        (cited.start_lines[0], cited.end_lines[-1]),
        _rarest_bytes(parsed, texts),
        (),
        tuple(line - cited.start_lines[0] for line in cited.start_lines),
    )


def _enclosing(parsed: Parsed, first: int, last: int) -> Node | None:
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
    """What a statement wrapping one thing alone (`syntax.wrapped`) holds, through every
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
        _lines(parsed, start, end),
        parsed.lines_of(first, last),
        _rarest(parsed, parsed.token_texts(first, last)),
        tuple(_text(parsed).splitlines()) if parsed.tree is None else (),
    )


def _rarest(parsed: Parsed, tokens: tuple[str, ...], count: int = 16) -> tuple[str, ...]:
    """The cited tokens that occur least often in the whole baseline file: when a version
    drops one of them, it is most likely one of these (a literal, an identifier)."""
    STATS.tokens_scanned += len(tokens)
    return tuple(sorted(set(tokens), key=lambda t: (parsed.count(t), -len(t), t))[:count])


def find(anchor: Anchor, files: Sequence[tuple[str, Parsed]]) -> Found | None:
    """The anchor in `files` (the cited file, or its renames, first is preferred)."""
    if anchor.start_line is None:
        return _whole_file(anchor, files)
    exact = [f for path, parsed in files for f in _verbatim(anchor, path, parsed)]
    if exact:
        best = min(exact, key=lambda f: (f.path != anchor.path, abs(_shift(anchor, f))))
        return _with_margins(anchor, best)
    for path, parsed in files:
        if anchor.context and parsed.tree is None:
            found = _by_lines(anchor, path, parsed)
        else:
            found = _in_definition(anchor, path, parsed) or _in_file(anchor, path, parsed)
        if found is not None:
            return found
    return None


def _verbatim(anchor: Anchor, path: str, parsed: Parsed) -> list[Found]:
    """Every verbatim occurrence of the anchor's tokens in one file, in order.

    In a parsed file, with no token index of it: each place where the bytes of the
    anchor's rarest token start a token is compared token by token, outward from there,
    so the cost is the anchor's length times that token's count, whatever the file's
    size. Files no grammar reads (and probes that are not valid UTF-8) use the index."""
    probe = anchor.probes[0] if anchor.probes else ""
    if parsed.tree is None or not probe or "\ufffd" in probe:
        return [
            _found(anchor, path, parsed, i, i + len(anchor.tokens), True)
            for i in _occurrences(parsed, anchor.tokens)
        ]
    STATS.tokens_scanned += len(anchor.tokens)
    return _matches(anchor, path, parsed, 0, parsed.size)


def _matches(anchor: Anchor, path: str, parsed: Parsed, low: int, high: int) -> list[Found]:
    """The verbatim matches of the anchor whose rarest token (its first probe) starts
    within bytes [low, high): each place those bytes start a token is compared token by
    token, outward from there (`_match_at`)."""
    probe = anchor.probes[0]
    needle, k = probe.encode(), anchor.tokens.index(probe)
    found = []
    for at in _starts_in(parsed.source, needle, low, high):
        lines = _match_at(parsed, anchor.tokens, k, at, len(needle))
        if lines is not None:
            found.append(Found(path, *lines, True, _lines(parsed, *lines), anchor.tokens))
    return found


def _match_at(
    parsed: Parsed, needle: tuple[str, ...], k: int, at: int, size: int
) -> tuple[int, int] | None:
    """The first and last line of `needle` in the file when its token `k` is the token
    at bytes [at, at + size); None when no token is there or the tokens differ."""
    back = _token_at(parsed, at, size)
    if back is None:
        return None
    source = parsed.source
    start = back.node.start_point[0] + 1  # type: ignore[union-attr]
    end = back.node.end_point[0] + 1  # type: ignore[union-attr]
    for text in reversed(needle[:k]):
        STATS.tokens_scanned += 1
        if not _step(back, forward=False) or _text_of(back, source) != text:
            return None
        start = back.node.start_point[0] + 1  # type: ignore[union-attr]
    ahead = _token_at(parsed, at, size) if k + 1 < len(needle) else None
    for text in needle[k + 1 :]:
        STATS.tokens_scanned += 1
        if ahead is None or not _step(ahead, forward=True) or _text_of(ahead, source) != text:
            return None
        end = ahead.node.end_point[0] + 1  # type: ignore[union-attr]
    return start, end


def _token_at(parsed: Parsed, at: int, size: int) -> TreeCursor | None:
    """A cursor on the token at bytes [at, at + size), or None when no token is there (a
    part of a longer token, a comment). Its own cursor each time: a copied cursor is not
    safe to walk backwards with."""
    assert parsed.tree is not None
    cursor = parsed.tree.walk()
    while cursor.goto_first_child_for_byte(at) is not None:
        if "comment" in cursor.node.type:  # type: ignore[union-attr]
            return None
    node = cursor.node
    if node is None or node.child_count or (node.start_byte, node.end_byte) != (at, at + size):
        return None
    return cursor


def _step(cursor: TreeCursor, *, forward: bool) -> bool:
    """Move to the next (or previous) token in the file, as the index lists them:
    non-empty leaves, comments left out. False at the file's edge."""
    while True:
        while not (cursor.goto_next_sibling() if forward else cursor.goto_previous_sibling()):
            if not cursor.goto_parent():
                return False
        while True:
            node = cursor.node
            if node is None or "comment" in node.type:
                break
            if node.child_count == 0:
                if node.end_byte > node.start_byte:
                    return True
                break
            if forward:
                cursor.goto_first_child()
            else:
                cursor.goto_last_child()


def _text_of(cursor: TreeCursor, source: bytes) -> str:
    node = cursor.node
    assert node is not None
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _by_lines(anchor: Anchor, path: str, parsed: Parsed) -> Found | None:
    """A file no grammar reads (JSON, TOML, ...), compared line by line: the cited lines
    are where a line diff of the two versions maps them, changed if any was edited."""
    start, end = (anchor.start_line or 1) - 1, anchor.end_line or 0
    after = _text(parsed).splitlines()
    matcher = difflib.SequenceMatcher(None, anchor.context, after, autojunk=False)
    mapped: list[int] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if (i1 < end and start < i2) or (i1 == i2 and start < i1 < end):  # inside the cited lines
            if tag == "equal":
                lo, hi = max(i1, start), min(i2, end)
                mapped += [j1 + lo - i1, j1 + hi - i1 - 1]
            elif j2 > j1:
                mapped += [j1, j2 - 1]
    if not mapped:
        return None  # every cited line was deleted
    first, last = min(mapped) + 1, max(mapped) + 1
    text = "\n".join(after[first - 1 : last])
    tokens = tuple(text.split())
    return Found(path, first, last, tokens == anchor.tokens, text, tokens)


def category(anchor: Anchor, files: Sequence[tuple[str, Parsed]]) -> str:
    """What `find` would make of the anchor in `files`: same, changed or missing.

    A history walk asks this of every version. When the citation is most of a definition
    that still exists, and some token of it is nowhere in the files' bytes (so it cannot
    occur verbatim), the answer is `changed` without tokenizing the files: the same
    answer `find` gives, at a fraction of the cost.
    """
    return place(anchor, files)[0]


def place(
    anchor: Anchor, files: Sequence[tuple[str, Parsed]]
) -> tuple[str, str | None, int | None, int | None]:
    """`category`, with the path and lines the item occupies in the files (none when
    missing, or when the citation is a whole file).

    The same answer `find` gives, reading as little of the files as it can: exact
    matches are looked for only in windows around its rarest token, a definition is
    found with a query, and only a citation with no definition left falls back to
    tokenizing the whole file. A history walk asks this of every version it judges.
    """
    plain = any(parsed.tree is None for _, parsed in files)  # text files: compared by line
    if plain or anchor.start_line is None or any("\ufffd" in t for t in anchor.probes):
        return _placed(find(anchor, files))
    if not _could_occur(anchor, files) and _definition_survives(anchor, files):
        path, parsed = files[0]
        span = definition_span(parsed, anchor.definition, anchor.start_line)
        if span is not None:
            return "changed", path, span[0], span[1]
    exact = [f for path, parsed in files for f in _exact_in_windows(anchor, path, parsed)]
    if exact:
        best = min(exact, key=lambda f: (f.path != anchor.path, abs(_shift(anchor, f))))
        return _placed(_with_margins(anchor, best))
    for path, parsed in files:
        if anchor.context and parsed.tree is None:  # as `find`: a text file, line by line
            found = _by_lines(anchor, path, parsed)
        else:
            found = _definition_by_query(anchor, path, parsed) or _in_file(anchor, path, parsed)
        if found is not None:
            return _placed(found)
    return "missing", None, None, None


def _placed(found: Found | None) -> tuple[str, str | None, int | None, int | None]:
    if found is None:
        return "missing", None, None, None
    return ("same" if found.identical else "changed"), found.path, found.start_line, found.end_line


def _exact_in_windows(anchor: Anchor, path: str, parsed: Parsed) -> list[Found]:
    """Verbatim matches of the anchor, looking only around the byte offsets of its rarest
    token: every match holds that token, and lies within a window sized by the anchor.
    Only the windows whose bytes may hold a match are compared, token by token outward
    from each place of that token (`_matches`), not tokenized whole."""
    if parsed.tree is None or not anchor.tokens or not anchor.probes:
        return [
            _found(anchor, path, parsed, i, i + len(anchor.tokens), True)
            for i in _occurrences(parsed, anchor.tokens)
        ]
    windows = _probe_ranges(anchor, parsed)
    found = []
    # A match's tokens lie within its window, so the window's bytes hold every one of
    # them: a window lacking one of the other probes is not compared (a changed item's
    # windows often lack the very token that changed).
    needles = [p.encode() for p in anchor.probes[1:]]
    source = parsed.source
    # Nor is one whose bytes do not hold the anchor's tokens in order, each after the
    # last: a verbatim match's tokens are there so (`_in_order`, memchr-speed finds).
    # A token decoded with replacements does not encode back to its bytes: no test.
    ordered = anchor.encoded or ()
    for low, high in windows:
        if not all(source.find(needle, low, high) >= 0 for needle in needles):
            continue
        if not _in_order(source, ordered, low, high):
            continue
        STATS.tokens_scanned += len(anchor.tokens)
        found += _matches(anchor, path, parsed, low, high)
    return found


def _in_order(source: bytes, parts: Sequence[bytes], low: int, high: int) -> bool:
    """Whether source[low:high] holds the parts one after another (anything between
    them), each taken at its first place after the one before: the earliest places
    leave the most room, so this finds them in order if any places do."""
    find, at = source.find, low
    for part in parts:
        found = find(part, at, high)
        if found < 0:
            return False
        at = found + len(part)
    return True


def _probe_ranges(
    anchor: Anchor, parsed: Parsed, after: tuple[Parsed, Stretches] | None = None
) -> list[tuple[int, int]]:
    """The windows a verbatim match can lie in: around each occurrence of the anchor's
    rarest token, as far as twice its length reaches, overlapping windows merged. With
    `after` (the version after this one, and where the two differ), its occurrences are
    read off that version's where the bytes are shared (`_probe_starts`)."""
    probe = (anchor.probes or anchor.tokens)[0].encode()
    reach = 2 * len(anchor.text.encode()) + 1024
    size = len(parsed.source)
    windows: list[tuple[int, int]] = []
    for at in _probe_starts(probe, parsed, after):
        low, high = max(0, at - reach), min(size, at + len(probe) + reach)
        if windows and low <= windows[-1][1]:
            windows[-1] = (windows[-1][0], high)
        else:
            windows.append((low, high))
    return windows


def _probe_starts(
    probe: bytes, parsed: Parsed, after: tuple[Parsed, Stretches] | None = None
) -> list[int]:
    """Where `probe` starts in a version's bytes, in order, found once per version. With
    `after` (the version after it and where the two differ, `differing(parsed, after)`)
    whose starts are known, only the stretches are searched: a walk asks of each version
    as the older of two and then as the newer, and a start clear of every stretch is one
    of the later version's, shifted."""
    found = parsed.starts.get(probe)
    if found is None:
        known = after[0].starts.get(probe) if after is not None else None
        if after is None or known is None:
            found = _starts_in(parsed.source, probe, 0, len(parsed.source))
        else:
            found = _moved_starts(known, after[1], parsed.source, probe)
        parsed.starts[probe] = found
    return found


def _moved_starts(known: list[int], stretches: Stretches, source: bytes, probe: bytes) -> list[int]:
    """A probe's starts in `source` from its `known` starts in the other version of
    `stretches` (old: `source`, new: the other): those clear of every stretch shifted,
    those touching one, straddling its ends included, searched for afresh."""
    found: list[int] = []
    width = len(probe)
    at, shift = 0, 0  # known starts before stretch n shift by what the stretches before did
    for old_low, old_high, low, high in stretches:
        while at < len(known) and known[at] + width <= low:  # clear of it, before it
            found.append(known[at] + shift)
            at += 1
        while at < len(known) and known[at] < high:  # touching it: searched below
            at += 1
        start = max(found[-1] + 1 if found else 0, old_low - width + 1, 0)
        found += _starts_in(source, probe, start, min(len(source), old_high + width - 1))
        shift = old_high - high
    found += [start + shift for start in known[at:]]  # clear of them all, after the last
    return found


def _starts_in(source: bytes, probe: bytes, low: int, high: int) -> list[int]:
    """Where `probe` (not empty) starts within source[low:high], occurrences wholly
    inside it, overlapping ones too, in order. Searched from the end: on CPython 3.11
    `rfind` ran 2.5-4x as fast as `find` through a 1.1 MB file, for a rare probe or none."""
    found = []
    at = source.rfind(probe, low, high)
    while at >= 0:
        found.append(at)
        at = source.rfind(probe, low, at + len(probe) - 1)  # those starting before it
    found.reverse()
    return found


def _definition_by_query(anchor: Anchor, path: str, parsed: Parsed) -> Found | None:
    """`_in_definition`, with the definition found by a query and only its own tokens read."""
    if anchor.definition is None or parsed.tree is None:
        return None
    node = definition_node(parsed, anchor.definition, anchor.start_line or 0)
    if node is None:
        return None
    first = with_attributes(node)
    if anchor.share >= WHOLE_DEFINITION:  # the whole definition: its lines, no tokens read
        start_line, end_line = first.start_point[0] + 1, node.end_point[0] + 1
        return Found(path, start_line, end_line, False, _lines(parsed, start_line, end_line))
    body = tokens_between(parsed, first.start_byte, node.end_byte)
    STATS.tokens_scanned += len(body.texts)
    region = _in_body(anchor.tokens, tuple(body.texts))
    if region is None:
        return None
    start, end = region
    first_line, last_line = body.start_lines[start], body.end_lines[end - 1]
    return Found(
        path,
        first_line,
        last_line,
        False,
        _lines(parsed, first_line, last_line),
        tuple(body.texts[start:end]),
    )


def definition_span(
    parsed: Parsed, key: tuple[str, tuple[str, ...]] | None, near: int
) -> tuple[int, int] | None:
    """The lines of the definition with this key nearest to line `near` (its attributes
    included), read off the tree with a query: the file is not tokenized."""
    node = definition_node(parsed, key, near)
    if node is None:
        return None
    return with_attributes(node).start_point[0] + 1, node.end_point[0] + 1


def definition_node(
    parsed: Parsed, key: tuple[str, tuple[str, ...]] | None, near: int
) -> Node | None:
    """The definition node with this key whose first line (attributes included) is
    nearest to line `near`, as `_in_definition` chooses."""
    if parsed.tree is None or key is None:
        return None
    kind, names = key
    nodes = _named(parsed, kind, names)

    def distance(node: Node) -> int:
        return abs(with_attributes(node).start_point[0] + 1 - near)

    if len(nodes) > 1 and [distance(n) for n in nodes].count(min(map(distance, nodes))) > 1:
        # A tie goes to the first in the order of a query over the whole file, which is
        # not always the order of the file: ask that query.
        nodes = [node for path, node in _of_kind(parsed, kind) if path == names]
    return min(nodes, key=distance, default=None)


@functools.lru_cache(maxsize=4)  # each holds a parse: its tree stays alive
def _named(parsed: Parsed, kind: str, names: tuple[str, ...]) -> list[Node]:
    """The definitions of one kind with this name path, in the file's order. A definition
    named by a plain word holds that word (its name node): the query looks only where the
    word occurs, unless it occurs more than NAMED_PLACES times (then the whole file)."""
    from tree_sitter import QueryCursor

    assert parsed.tree is not None
    name = names[-1] if names else ""
    places = None
    if PLAIN_NAME.fullmatch(name) and name not in LANGUAGES[parsed.language].definitions:
        places = _word_places(parsed.source, name.encode(), NAMED_PLACES)
    if places is None:
        return [node for path, node in _of_kind(parsed, kind) if path == names]
    found: dict[tuple[int, int], Node] = {}
    for low, high in places:
        cursor = QueryCursor(_kind_query(parsed.language, kind))
        cursor.set_byte_range(low, high)
        for node in cursor.captures(parsed.tree.root_node).get("d", []):
            STATS.captured += 1
            found.setdefault((node.start_byte, node.end_byte), node)
    kinds = LANGUAGES[parsed.language].definitions
    return [
        node
        for _, node in sorted(found.items())
        if is_definition(node, kinds) and _name_path(node, parsed.language) == names
    ]


def _word_places(source: bytes, word: bytes, most: int) -> list[tuple[int, int]] | None:
    """The byte ranges where `word` occurs as a whole word (`syntax.word_places`); None
    past `most` of them."""
    places: list[tuple[int, int]] = []
    for place in word_places(source, word):
        if len(places) == most:
            return None
        places.append(place)
    return places


@functools.lru_cache(maxsize=4)  # each holds a parse: its tree stays alive
def _of_kind(parsed: Parsed, kind: str) -> list[tuple[tuple[str, ...], Node]]:
    """Every definition of one kind in a parse, with its name path: one query per parse
    and kind, however many citations of it a walk judges."""
    from tree_sitter import QueryCursor

    assert parsed.tree is not None
    nodes = QueryCursor(_kind_query(parsed.language, kind)).captures(parsed.tree.root_node)
    kinds = LANGUAGES[parsed.language].definitions
    STATS.captured += len(nodes.get("d", []))
    return [
        (_name_path(node, parsed.language), node)
        for node in nodes.get("d", [])
        if is_definition(node, kinds)
    ]


def _definition_survives(anchor: Anchor, files: Sequence[tuple[str, Parsed]]) -> bool:
    if anchor.start_line is None or anchor.definition is None or not files:
        return False
    return anchor.share >= WHOLE_DEFINITION and has_definition(files[0][1], anchor.definition)


def _could_occur(anchor: Anchor, files: Sequence[tuple[str, Parsed]]) -> bool:
    """False when one of the anchor's rarest tokens is in none of the files' bytes: then no
    verbatim match can exist. True is only "maybe": `find` decides."""
    if anchor.start_line is None or any("\ufffd" in t for t in anchor.probes):
        return True  # whole files, and baselines that were not valid UTF-8: no shortcut
    return any(all(t.encode() in parsed.source for t in anchor.probes) for _, parsed in files)


def has_definition(parsed: Parsed, key: tuple[str, tuple[str, ...]]) -> bool:
    """Whether the file has a definition of this kind and name path, read off the tree
    with a query instead of a walk over every token."""
    if parsed.tree is None:
        return False
    kind, names = key
    return bool(_named(parsed, kind, names))


def definition_keys(parsed: Parsed) -> frozenset[tuple[str, tuple[str, ...]]]:
    """Every definition's (kind, name path) in a parse, from one query over all the
    language's kinds: `has_definition` of any key, with no walk over the tokens."""
    if parsed.tree is None:
        return frozenset()
    from tree_sitter import QueryCursor

    query = _kinds_query(parsed.language)
    nodes = QueryCursor(query).captures(parsed.tree.root_node).get("d", [])
    kinds = LANGUAGES[parsed.language].definitions
    return frozenset(
        (node.type, _name_path(node, parsed.language))
        for node in nodes
        if is_definition(node, kinds)
    )


# Definition kinds whose name comes right after a keyword, with nothing but whitespace
# and comments between (`fn NAME`, `def NAME`, `class NAME`): `may_define` reads them off
# the bytes.
_JS_LIKE = ("javascript", "typescript", "tsx")
_KEYWORDS: dict[tuple[str, str], bytes] = {
    ("rust", "function_item"): b"fn",
    ("rust", "function_signature_item"): b"fn",
    ("rust", "struct_item"): b"struct",
    ("rust", "enum_item"): b"enum",
    ("rust", "trait_item"): b"trait",
    ("rust", "mod_item"): b"mod",
    ("python", "function_definition"): b"def",
    ("python", "class_definition"): b"class",
    ("go", "function_declaration"): b"func",
    **{(language, "function_declaration"): b"function" for language in _JS_LIKE},
    **{(language, "class_declaration"): b"class" for language in _JS_LIKE},
}
_SPACE = frozenset(b" \t\f\v\r")


def may_define(source: bytes, language: str, key: tuple[str, tuple[str, ...]]) -> bool:
    """Whether `source` may hold a definition with this key, told from its bytes without a
    parse. Of a kind whose name follows a keyword, some whole-word occurrence of the name
    must follow that keyword with only spaces between, or follow what may end a comment:
    a line break (the name first on its line) or a `/` (`*/`). Other kinds: always."""
    keyword = _KEYWORDS.get((language, key[0]))
    if keyword is None or not key[1] or "\ufffd" in key[1][-1]:
        return True
    places = word_places(source, key[1][-1].encode())
    return any(_after_keyword(source, at, keyword) for at, _ in places)


def _after_keyword(source: bytes, at: int, keyword: bytes) -> bool:
    """Whether what precedes `at`, spaces aside, is `keyword` (a whole word), a line
    break or a `/`: anything else is a token of the code, and the name there no
    definition's."""
    before = at - 1
    while before >= 0 and source[before] in _SPACE:
        before -= 1
    if before < 0 or source[before] in b"\n/":
        return True
    start = before + 1 - len(keyword)
    return source[start : before + 1] == keyword and not (start and is_word_byte(source[start - 1]))


@functools.cache
def _kinds_query(language: str) -> Query:
    from tree_sitter import Query

    kinds = " ".join(f"({kind})" for kind in sorted(LANGUAGES[language].definitions))
    return Query(grammar(language), f"[{kinds}] @d")


@functools.cache
def _kind_query(language: str, kind: str) -> Query:
    from tree_sitter import Query

    return Query(grammar(language), f"({kind}) @d")


def _name_path(node: Node, language: str) -> tuple[str, ...]:
    kinds = LANGUAGES[language].definitions
    names: list[str] = []
    current: Node | None = node
    while current is not None:
        if is_definition(current, kinds):
            names.extend(reversed(definition_names(current)))
        current = current.parent
    return tuple(reversed(names))


def _shift(anchor: Anchor, found: Found) -> int:
    return (found.start_line or 0) - (anchor.span[0] if anchor.span else 0)


def _with_margins(anchor: Anchor, found: Found) -> Found:
    """An identical match, widened by the blank or comment lines the citation has around
    its tokens: lines 23-32 whose line 23 is a doc comment are still 23-32 when nothing moved."""
    if anchor.span is None or anchor.start_line is None or anchor.end_line is None:
        return found
    above, below = anchor.span[0] - anchor.start_line, anchor.end_line - anchor.span[1]
    start, end = found.start_line or 0, found.end_line or 0
    return replace(found, start_line=start - above, end_line=end + below)


def _whole_file(anchor: Anchor, files: Sequence[tuple[str, Parsed]]) -> Found | None:
    if not files:
        return None
    path, parsed = files[0]
    identical = parsed.token_texts() == anchor.tokens
    return Found(path, None, None, identical, _text(parsed))


def _occurrences(parsed: Parsed, needle: tuple[str, ...]) -> list[int]:
    """Where `needle` occurs verbatim: only the places of its rarest token are compared, so
    the cost is the needle's length times that token's count, whatever the file's size."""
    if not needle:
        return []
    at, rarest = min(enumerate(needle), key=lambda pair: parsed.count(pair[1]))
    places = parsed.positions.get(rarest, ())
    texts, wanted, n = parsed.tokens.texts, list(needle), len(needle)
    STATS.tokens_scanned += n + n * len(places)
    return [i for p in places if (i := p - at) >= 0 and texts[i : i + n] == wanted]


def _in_definition(anchor: Anchor, path: str, parsed: Parsed) -> Found | None:
    """The cited region in the definition that held it, found by a query: only that
    definition's tokens are read. Of two definitions as near the cited line, the first
    in the file (as the whole file's index lists them, whatever order a query gives)."""
    if anchor.definition is None or parsed.tree is None:
        return None
    kind, names = anchor.definition
    near = anchor.start_line or 0

    def place(node: Node) -> tuple[int, int]:  # nearest first; a tie to the first in the file
        return abs(with_attributes(node).start_point[0] + 1 - near), node.start_byte

    node = min(_named(parsed, kind, names), key=place, default=None)
    if node is None:
        return None
    body = tokens_between(parsed, with_attributes(node).start_byte, node.end_byte,
                          starting=True)  # fmt: skip
    texts = tuple(body.texts)
    if not texts:
        return None
    start, end = 0, len(texts)
    if anchor.share < WHOLE_DEFINITION:
        STATS.tokens_scanned += len(texts)
        region = _in_body(anchor.tokens, texts)
        if region is None:
            return None
        start, end = region
    first_line, last_line = body.start_lines[start], body.end_lines[end - 1]
    text = _lines(parsed, first_line, last_line)
    return Found(path, first_line, last_line, False, text, texts[start:end])


def _in_file(anchor: Anchor, path: str, parsed: Parsed) -> Found | None:
    """The region of the file most like the anchor, when it is similar enough. Only the
    windows its rarest words point at are read and compared, never the whole file."""
    if parsed.tree is None or not anchor.token_lines:
        return _in_index(anchor, path, parsed)
    n, best = len(anchor.tokens), None
    identity = set(anchor.probes[:IDENTITY])
    bag = Counter(anchor.tokens)
    for line in _line_votes(anchor, parsed):
        window = _window(parsed, line, anchor, identity)
        if window is None:
            continue
        texts = window.texts
        offset = bisect.bisect_left(window.start_lines, line)
        for start in _starts(anchor.tokens, texts, offset):
            end = min(len(texts), start + n)
            if start >= end:
                continue
            region = texts[start:end]
            # The tokens both hold, order aside, bound the ratio from above (difflib's
            # quick_ratio): a region that cannot be similar enough is not aligned.
            least = SIMILAR_IN_FILE if best is None else max(SIMILAR_IN_FILE, best[0])
            shared = sum((bag & Counter(region)).values())
            if 2 * shared / (n + len(region)) < least:
                continue
            ratio = _ratio(anchor.tokens, region)
            if ratio < SIMILAR_IN_FILE or (best is not None and ratio <= best[0]):
                continue
            if not identity.isdisjoint(region):
                best = (ratio, window, start, end)
    if best is None:
        return None
    _, window, start, end = best
    start, end = _trimmed(anchor.tokens, window.texts, start, end)
    first, last = window.start_lines[start], window.end_lines[end - 1]
    tokens = tuple(window.texts[start:end])
    return Found(path, first, last, False, _lines(parsed, first, last), tokens)


def _trimmed(needle: tuple[str, ...], texts: list[str], start: int, end: int) -> tuple[int, int]:
    """texts[start:end] without the tokens at its edges that match none of the needle's.
    Regions as like it tie when one takes in a token more on one side and the other on
    the other (the `}` that closes the function above, the `fn` of the one below):
    trimmed, they are the same, wherever the window read around them began."""
    matcher = difflib.SequenceMatcher(None, needle, texts[start:end], autojunk=False)
    blocks = [b for b in matcher.get_matching_blocks() if b.size]
    return start + blocks[0].b, start + blocks[-1].b + blocks[-1].size


def _starts(needle: tuple[str, ...], texts: list[str], offset: int) -> list[int]:
    """Where a region like `needle` may start near `offset` in `texts`. The longest run
    they share places it by its own offset, which is off by as many tokens as were added
    above that run; the vote's offset is where its first tokens are. Both are tried: the
    better-aligned one wins."""
    n = len(needle)
    low, high = max(0, offset - n), min(len(texts), offset + 2 * n)
    STATS.tokens_scanned += high - low
    matcher = difflib.SequenceMatcher(None, needle, texts[low:high], autojunk=False)
    a, b, size = matcher.find_longest_match(0, n, 0, high - low)
    return [] if size == 0 else list(dict.fromkeys((max(0, low + b - a), max(0, offset))))


def _line_votes(anchor: Anchor, parsed: Parsed, tries: int = 3) -> list[int]:
    """The lines where the anchor most likely starts in the file: each whole-word
    occurrence of one of its rarest words votes for the line it implies, rarest words
    first (counted in the blob's bytes, once per blob). The votes cast are bounded by the
    anchor's length, not the file's."""
    at: dict[str, list[int]] = {}
    for text, line in zip(anchor.tokens, anchor.token_lines, strict=True):
        if WORD.fullmatch(text.encode()):
            at.setdefault(text, []).append(line)
    counts, starts = parsed.word_counts, parsed.line_starts
    budget = 4 * len(anchor.tokens) + 64
    votes: Counter[int] = Counter()
    for text in sorted(at, key=lambda t: (counts.get(t.encode(), 0), t)):
        cost = counts.get(text.encode(), 0) * len(at[text])
        if cost == 0:
            continue  # not in the file
        if votes and cost > budget:
            break
        budget -= cost
        places = parsed.places(text.encode())
        lines = [bisect.bisect_right(starts, start) for start, _ in places]
        votes.update(line - own for line in lines for own in at[text])
    return [line for line, _ in votes.most_common(tries)]


def _window(parsed: Parsed, line: int, anchor: Anchor, identity: set[str]) -> Tokens | None:
    """The tokens of the lines around a voted line (`_window_bytes`); None, without
    tokenizing, when its bytes hold none of the `identity` tokens a region must hold.
    The tokens are those starting there, so a token may end past the window's end."""
    assert parsed.tree is not None
    source = parsed.source
    low, high = _window_bytes(source, parsed.line_starts, line, anchor)
    if not any("\ufffd" in t for t in identity):  # else a token's text is not its bytes
        needles = [t.encode() for t in identity]
        if all(source.find(needle, low, high + len(needle)) < 0 for needle in needles):
            return None
    return tokens_between(parsed, low, high, starting=True)


def _window_bytes(source: bytes, starts: array[int], line: int, anchor: Anchor) -> tuple[int, int]:
    """The bytes of the lines around a voted line: as many lines as the anchor's before it,
    and after it three times as many, or as many as hold twice its bytes (the regions
    compared start up to its length on). Read off the bytes alone, so that an older
    version can be told to hold the same windows without parsing it (`stays_missing`)."""
    span = anchor.token_lines[-1] + 1

    def start_of(number: int) -> int:  # the byte where 1-based line `number` starts
        return 0 if number <= 1 else starts[number - 1] if number <= len(starts) else len(source)

    low, high = start_of(line - span), start_of(line + 3 * span)
    wanted = start_of(line) + 2 * len(anchor.text.encode())
    if high < wanted:
        end = source.find(b"\n", wanted)
        high = len(source) if end < 0 else end + 1
    return low, high


def stays_missing(anchor: Anchor, language: str, newer: Parsed, older: Parsed) -> bool:
    """Whether `place` finds the anchor in `older` (a file in `language`) no more than in
    `newer`, where it is missing, told from their bytes alone (no parse). `place` reads
    the windows around its rarest token's occurrences (for a verbatim match) and around
    the lines its words vote for (for a similar region), and the definition it looks for
    by name: each window of `older` must be one of `newer`'s, or lack what a match needs
    there (every probe for a verbatim match, one of the rarest tokens for a similar
    region: `IDENTITY`), and `older` must not hold the definition: some word of its name
    is not there, or no occurrence of the name can be a definition's (`may_define`)."""
    if anchor.start_line is None or anchor.context or not anchor.token_lines:
        return False
    if any("\ufffd" in t for t in anchor.probes):
        return False
    if anchor.definition is not None:
        own = anchor.definition[1][-1].encode()
        named = all(_word_places(older.source, w, 0) is None for w in WORD.findall(own))
        if named and may_define(older.source, language, anchor.definition):
            return False  # the definition may be there
    probes = [t.encode() for t in anchor.probes or anchor.tokens]
    identity = probes[:IDENTITY]
    if identity and not any(p in older.source for p in identity):
        return True  # a window holds a match only with one of these: no window is read
    seen_probes, seen_votes = _windows(anchor, newer)
    probe_windows, vote_windows = _windows(anchor, older)
    if any(w not in seen_probes and all(p in w for p in probes) for w in probe_windows):
        return False
    return all(w in seen_votes or not any(p in w for p in identity) for w in vote_windows)


def stays_unmatched(anchor: Anchor, language: str, newer: Parsed, older: Parsed) -> bool:
    """Whether `place` finds no verbatim match of the anchor in `older` either, where
    `newer` has none (the item is changed there), and looks for it the same way, told from
    their bytes alone: each file holds every probe in both or in neither (with one
    missing, `place` takes the definition whole: `_could_occur`), and each window around
    the rarest token's occurrences in `older` is one of `newer`'s, or lacks a probe or the
    anchor's tokens in order (what `_exact_in_windows` would compare). A file no grammar
    reads is compared otherwise: not told."""
    if language == TEXT or anchor.start_line is None or anchor.context or not anchor.probes:
        return False
    ordered = anchor.encoded
    if ordered is None:
        return False
    probes = [p.encode() for p in anchor.probes]
    source = older.source
    stretches = differing(source, newer.source, 0, len(source), 0, len(newer.source))
    if not _held_alike(probes, newer.source, source, stretches):
        return False
    needles = probes[1:]
    written = _written(anchor, language)
    gap = _gap(language)
    seen = _probe_windows(anchor, newer)
    for low, high in _probe_ranges(anchor, older, (newer, stretches)):
        if source[low:high] in seen:
            continue
        if not all(source.find(n, low, high) >= 0 for n in needles):
            continue
        if not written or not _plain(source[low:high], language):
            if _in_order(source, ordered, low, high):
                return False
        elif _written_in(source, ordered, gap, low, high):
            return False
    return True


def _held_alike(probes: Sequence[bytes], newer: bytes, older: bytes, stretches: Stretches) -> bool:
    """Whether both versions hold every probe, or neither does. Only the probes found
    near where they differ (`stretches`, from `differing(older, newer)`) can be in one
    and not the other: only those are looked for in the whole of both, and the rest
    only when those alone would tell them apart. "Near" is looked for in one string of
    the bytes around every stretch, on both sides: a probe found across two of them, or
    near a stretch though not touching it, is only looked for in full needlessly."""
    reach = max(map(len, probes), default=0)
    sides = [(newer, low, high) for _, _, low, high in stretches]
    sides += [(older, low, high) for low, high, _, _ in stretches]
    near = b"\0".join(source[max(0, low - reach) : high + reach] for source, low, high in sides)
    touched = [p for p in probes if p in near]
    if all(p in newer for p in touched) == all(p in older for p in touched):
        return True
    return not all(p in newer for p in probes if p not in touched)


# Whitespace in UTF-8 besides ASCII's, which grammars skip as they do spaces (`\s` in
# their rules is Unicode's), and the byte order mark.
SPACES = (
    rb"\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f"
    rb"|\xe3\x80\x80|\xef\xbb\xbf"
)
_BLOCK_COMMENT = re.compile(BLOCK_COMMENT)


@functools.cache
def _gap(language: str) -> re.Pattern[bytes]:
    """What may lie between two tokens of `language`: whitespace and comments."""
    return re.compile(rb"(?:\s|" + SPACES + rb"|" + LANGUAGES[language].comment + rb")*")


@functools.lru_cache(maxsize=4096)
def _written(anchor: Anchor, language: str) -> bool:
    """Whether the anchor's own lines read as its tokens one after another, with only
    whitespace and comments between (`_written_in`). Not so when text that no token
    covers lies between them (as some grammars leave inside strings): then a search for
    them so written would miss matches, and tells nothing."""
    text = anchor.text.encode()
    ordered = [t.encode() for t in anchor.tokens]
    return _written_in(text, ordered, _gap(language), 0, len(text))


def _written_in(
    source: bytes, tokens: Sequence[bytes], gap: re.Pattern[bytes], low: int, high: int
) -> bool:
    """Whether source[low:high] holds the tokens one after another with only `gap`
    between, as a tokenizer reads them: each gap taken whole, then the next token. Tried
    from each place of the first token; a try ends at the first token not there."""
    if not tokens:
        return False
    first, rest = tokens[0], tokens[1:]
    at = source.find(first, low, high)
    while at >= 0:
        end = at + len(first)
        for token in rest:
            skipped = gap.match(source, end, high)  # `*`: it always matches
            start = skipped.end() if skipped else end
            if not source.startswith(token, start, high):
                break
            end = start + len(token)
        else:
            return True
        at = source.find(first, at + 1, high)
    return False


def _plain(window: bytes, language: str) -> bool:
    """Whether `_written` reads these bytes as a tokenizer would: no Rust block comment
    holding another (they nest; the pattern's comments do not)."""
    if language != "rust" or b"/*" not in window:
        return True
    return not any(b"/*" in c[2:] for c in _BLOCK_COMMENT.findall(window))


@functools.lru_cache(maxsize=4)  # a walk compares each version with the one after it
def _probe_windows(anchor: Anchor, parsed: Parsed) -> frozenset[bytes]:
    """The bytes of the windows `place` reads for a verbatim match in a version."""
    source = parsed.source
    return frozenset(source[low:high] for low, high in _probe_ranges(anchor, parsed))


@functools.lru_cache(maxsize=4)  # a walk compares each version with the one after it
def _windows(anchor: Anchor, parsed: Parsed) -> tuple[frozenset[bytes], frozenset[bytes]]:
    """The bytes of the windows `place` reads in a version: around the rarest token's
    occurrences, and around the lines the words vote for."""
    source, starts = parsed.source, parsed.line_starts
    probes = _probe_windows(anchor, parsed)
    votes = frozenset(
        source[slice(*_window_bytes(source, starts, line, anchor))]
        for line in _line_votes(anchor, parsed)
    )
    return probes, votes


def _in_index(anchor: Anchor, path: str, parsed: Parsed) -> Found | None:
    """`_in_file` over the whole file's token index: a file no grammar reads."""
    texts, n = parsed.tokens.texts, len(anchor.tokens)
    best: tuple[float, int, int] | None = None
    for offset in _alignments(anchor.tokens, parsed):
        for start in _starts(anchor.tokens, texts, offset):
            end = min(len(texts), start + n)
            ratio = _ratio(anchor.tokens, texts[start:end])
            if ratio >= SIMILAR_IN_FILE and (best is None or ratio > best[0]):
                best = (ratio, start, end)
    return None if best is None else _found(anchor, path, parsed, best[1], best[2], False)


def _alignments(needle: tuple[str, ...], parsed: Parsed, tries: int = 3) -> list[int]:
    """Where the needle most likely starts in the file: each occurrence of one of its
    rarest tokens votes for the start it implies. The votes cast are bounded by the
    needle's length, not the file's."""
    budget = 4 * len(needle) + 64
    at: dict[str, list[int]] = {}
    for index, text in enumerate(needle):
        at.setdefault(text, []).append(index)
    votes: Counter[int] = Counter()
    for text in sorted(at, key=parsed.count):
        places = parsed.positions.get(text, ())
        cost = len(places) * len(at[text])
        if votes and cost > budget:
            break
        budget -= cost
        votes.update(p - i for p in places for i in at[text])
    return [offset for offset, _ in votes.most_common(tries)]


def _aligned(needle: tuple[str, ...], body: tuple[str, ...]) -> tuple[int, int]:
    """The span of `body` that the matching blocks of `needle` land on."""
    blocks = [
        m
        for m in difflib.SequenceMatcher(None, needle, body, autojunk=False).get_matching_blocks()
        if m.size
    ]
    if not blocks:
        return 0, 0
    first, last = blocks[0], blocks[-1]
    return max(0, first.b - first.a), min(
        len(body), last.b + last.size + (len(needle) - last.a - last.size)
    )


def _in_body(needle: tuple[str, ...], body: tuple[str, ...]) -> tuple[int, int] | None:
    """The span of a definition's tokens that a cited region maps to, if it is still
    there: like it (`SIMILAR_IN_DEFINITION`), or holding most of its tokens in order
    (`KEPT_IN_DEFINITION`), as when a block was inserted between its lines."""
    start, end = _aligned(needle, body)
    if end <= start:
        return None
    matcher = difflib.SequenceMatcher(None, needle, body[start:end], autojunk=False)
    if matcher.ratio() >= SIMILAR_IN_DEFINITION:
        return start, end
    kept = sum(m.size for m in matcher.get_matching_blocks())
    return (start, end) if kept >= KEPT_IN_DEFINITION * len(needle) else None


def _ratio(a: Sequence[str], b: Sequence[str]) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def _found(
    anchor: Anchor, path: str, parsed: Parsed, first: int, end: int, identical: bool
) -> Found:
    start_line, end_line = parsed.lines_of(first, end)
    return Found(
        path,
        start_line,
        end_line,
        identical,
        _lines(parsed, start_line, end_line),
        parsed.token_texts(first, end),
    )


def _lines(parsed: Parsed, start: int, end: int) -> str:
    return parsed.lines(start, end)


def _text(parsed: Parsed) -> str:
    return parsed.source.decode("utf-8", errors="replace")


# --- rules ----------------------------------------------------------------------------


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
        _lines(parsed, start_line, end_line),
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
    return max(found, key=lambda f: (_ratio(baseline.tokens, f.tokens), f.path == baseline.path))


def literals(query: str) -> list[str]:
    """Strings a query insists on (`#eq?` arguments): a file without them cannot match."""
    return [m.group(1) for m in re.finditer(r'#eq\?\s+@[\w.]+\s+"((?:[^"\\]|\\.)*)"', query)]
