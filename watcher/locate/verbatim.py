"""Find an anchor's tokens verbatim in a version of the upstream: every place they occur,
token for token, read from where the rarest of them starts a token, not from a token
index of the whole file (files no grammar reads use the index); and which of them is the
citation (`chosen`), with the blank and comment lines it had around it (`margins`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from watcher.locate.alignment import HEAD_TOKENS, completed
from watcher.locate.anchors import Anchor, Found, enclosing, opens
from watcher.locate.definitions import Key, name_path, named
from watcher.locate.scopes import reparsed
from watcher.locate.windows import in_order, probe_ranges, starts_in
from watcher.parse.languages import LANGUAGES
from watcher.parse.nodes import is_definition, with_attributes
from watcher.parse.syntax import Parsed, tokens_between

if TYPE_CHECKING:
    from tree_sitter import Node, TreeCursor

# Of many verbatim occurrences, those nearest the cited lines that are looked at (the
# nearest is the one chosen): each costs its text, and a generated file repeats a line
# hundreds of thousands of times.
NEAREST = 64


def verbatim(anchor: Anchor, path: str, parsed: Parsed) -> list[Found]:
    """Every verbatim occurrence of the anchor's tokens in one file, in order.

    In a parsed file, with no token index of it: each place where the bytes of the
    anchor's rarest token start a token is compared token by token, outward from there,
    so the cost is the anchor's length times that token's count, whatever the file's
    size. Files no grammar reads (and probes that are not valid UTF-8) use the index."""
    probe = anchor.probes[0] if anchor.probes else ""
    if parsed.tree is None or not probe or "\ufffd" in probe:
        places = occurrences(parsed, anchor.tokens)
        if len(places) > NEAREST:  # a line repeated all through a generated file
            at, lines = anchor.span[0] if anchor.span else 0, parsed.tokens.start_lines
            places = sorted(sorted(places, key=lambda i: abs(lines[i] - at))[:NEAREST])
        return [found_at(anchor, path, parsed, i, i + len(anchor.tokens), True) for i in places]
    parsed.stats.tokens_scanned += len(anchor.tokens)
    return _matches(anchor, path, parsed, 0, parsed.size)


# Lines around the cited line where `nearest` looks for a verbatim match, each in turn,
# before the whole file is searched.
RINGS = (3, 24)


def nearest(anchor: Anchor, path: str, parsed: Parsed) -> Found | None:
    """The verbatim match of the anchor that `matching.find` chooses in the cited file,
    found among the lines around the cited line, or None when there is none so near (the
    whole file then decides). `find` chooses the match whose first line is nearest the
    cited one (the first of two as near): when one starts within `r` lines of it, every
    match as near starts with the anchor's first token within those lines, and those are
    all compared. A citation moved a few lines costs its own lines, not a search of the
    file for its rarest token."""
    if parsed.tree is None or anchor.span is None or not anchor.tokens:
        return None
    first = anchor.tokens[0]
    if "\ufffd" in first:
        return None  # its bytes are not its text
    needle, line, size = first.encode(), anchor.span[0], len(parsed.source)
    for radius in RINGS:
        low, high = parsed.line_bytes(max(1, line - radius), line + radius)
        found = []
        # A token starting on the last line may end past it.
        for at in starts_in(parsed.source, needle, low, min(size, high + len(needle) - 1)):
            lines = _match_at(parsed, anchor.tokens, 0, at, len(needle))
            if lines is not None:
                found.append(Found(path, *lines, True, parsed.lines(*lines), anchor.tokens))
        best = min(found, key=lambda f: abs((f.start_line or 0) - line), default=None)
        if best is not None and abs((best.start_line or 0) - line) <= radius:
            return best
        if low == 0 and high >= size:
            return None
    return None


def _matches(anchor: Anchor, path: str, parsed: Parsed, low: int, high: int) -> list[Found]:
    """The verbatim matches of the anchor whose rarest token (its first probe) starts
    within bytes [low, high): each place those bytes start a token is compared token by
    token, outward from there (`_match_at`)."""
    probe = anchor.probes[0]
    needle, k = probe.encode(), anchor.tokens.index(probe)
    found = []
    for at in starts_in(parsed.source, needle, low, high):
        lines = _match_at(parsed, anchor.tokens, k, at, len(needle))
        if lines is not None:
            found.append(Found(path, *lines, True, parsed.lines(*lines), anchor.tokens))
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
        parsed.stats.tokens_scanned += 1
        if not _step(back, forward=False) or _text_of(back, source) != text:
            return None
        start = back.node.start_point[0] + 1  # type: ignore[union-attr]
    ahead = _token_at(parsed, at, size) if k + 1 < len(needle) else None
    for text in needle[k + 1 :]:
        parsed.stats.tokens_scanned += 1
        if ahead is None or not _step(ahead, forward=True) or _text_of(ahead, source) != text:
            return None
        end = ahead.node.end_point[0] + 1  # type: ignore[union-attr]
    return start, end


def _token_at(parsed: Parsed, at: int, size: int) -> TreeCursor | None:
    """A cursor on the token at bytes [at, at + size), or None when no token is there (a
    part of a longer token, a comment). Its own cursor each time: a copied cursor is not
    safe to walk backwards with."""
    assert parsed.tree is not None
    # Most places of a probe's bytes are inside longer tokens (`49` in `1049`), more of
    # them the bigger the file: one call in C tells them, before a cursor walks down in
    # Python. The smallest node spanning the bytes is the leaf the cursor would reach.
    leaf = parsed.tree.root_node.descendant_for_byte_range(at, at + size)
    if leaf is None or leaf.child_count or (leaf.start_byte, leaf.end_byte) != (at, at + size):
        return None
    return _cursor_at(parsed, at, size)


def _cursor_at(parsed: Parsed, at: int, size: int) -> TreeCursor | None:
    """`_token_at` by a cursor walked down from the root (None in a comment)."""
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


def in_windows(anchor: Anchor, path: str, parsed: Parsed) -> list[Found]:
    """Verbatim matches of the anchor, looking only around the byte offsets of its rarest
    token: every match holds that token, and lies within a window sized by the anchor.
    Only the windows whose bytes may hold a match are compared, token by token outward
    from each place of that token (`_matches`), not tokenized whole."""
    if parsed.tree is None or not anchor.tokens or not anchor.probes:
        return [
            found_at(anchor, path, parsed, i, i + len(anchor.tokens), True)
            for i in occurrences(parsed, anchor.tokens)
        ]
    windows = probe_ranges(anchor, parsed)
    found = []
    # A match's tokens lie within its window, so the window's bytes hold every one of
    # them: a window lacking one of the other probes is not compared (a changed item's
    # windows often lack the very token that changed).
    needles = [p.encode() for p in anchor.probes[1:]]
    source = parsed.source
    # Nor is one whose bytes do not hold the anchor's tokens in order, each after the
    # last: a verbatim match's tokens are there so (`in_order`, memchr-speed finds).
    # A token decoded with replacements does not encode back to its bytes: no test.
    ordered = anchor.encoded or ()
    for low, high in windows:
        if not all(source.find(needle, low, high) >= 0 for needle in needles):
            continue
        if not in_order(source, ordered, low, high):
            continue
        parsed.stats.tokens_scanned += len(anchor.tokens)
        found += _matches(anchor, path, parsed, low, high)
    return found


def occurrences(parsed: Parsed, needle: tuple[str, ...]) -> list[int]:
    """Where `needle` occurs verbatim: only the places of its rarest token are compared, so
    the cost is the needle's length times that token's count, whatever the file's size."""
    if not needle:
        return []
    at, rarest = min(enumerate(needle), key=lambda pair: parsed.count(pair[1]))
    places = parsed.positions.get(rarest, ())
    texts, wanted, n = parsed.tokens.texts, list(needle), len(needle)
    parsed.stats.tokens_scanned += n + n * len(places)
    return [i for p in places if (i := p - at) >= 0 and texts[i : i + n] == wanted]


def found_at(
    anchor: Anchor, path: str, parsed: Parsed, first: int, end: int, identical: bool
) -> Found:
    start_line, end_line = parsed.lines_of(first, end)
    return Found(
        path,
        start_line,
        end_line,
        identical,
        parsed.lines(start_line, end_line),
        parsed.token_texts(first, end),
    )


def chosen(
    anchor: Anchor,
    files: Sequence[tuple[str, Parsed]],
    exact: Sequence[Found],
    carried: Callable[[Anchor, str, Parsed], Found | None] | None = None,
) -> Found | None:
    """Of verbatim matches, the one in the cited file nearest the cited lines, ended where
    its statement ends (`alignment.completed`); the nearest in the citation's own definition
    (its kind and name path) comes first, wherever the others are: a cited `s.lock.Lock()`
    of a Go method is still that method's when a method written since locks nearer the cited
    line (nanobot's `Session.Delete`), a cited `return self` is not a `return self._buffer`
    written nearer it in another method (pydantic-ai's `PeekableAsyncStream.__aiter__`), and
    a cited `self.map.contains_key(name)` grown with `&& ...` in its own function is not the
    same call begun in another (rust-sdk's `ToolRouter::has_route`). Of several in it, the
    one the alignment of the definition carries the citation to (`carried`, from `matching`)
    comes first: a cited `return err` that ended a Go method still ends it when the method
    has grown `if err := <-errChan; err != nil {...}` nearer the cited line (nanobot's
    `HTTPClient.send`), as `git log -L` follows it; where the definition is gone by its
    name, the one `carried` finds through the scope around it (gemini-cli's
    `shouldConfirmExecute`, renamed, keeps its `return false;` there, not in a function
    written nearer the cited line). And where the definition holds none but the alignment
    finds every cited token in it, apart, a verbatim match elsewhere is a copy (mcp-go's
    `Validate`, copied into a new manager type while the cited one put a check between the
    cited lines): no verbatim answer. `matching.find` and `matching.place` both choose so,
    among the same matches."""
    defined = anchor.definition is not None and any(named(p, *anchor.definition) for _, p in files)
    if defined:
        exact = [f for f in exact if not _others(anchor, dict(files)[f.path], f)]
    elif anchor.definition is not None:
        exact = [f for f in exact if not _grown(anchor, dict(files)[f.path], f)]
    ordered = sorted(exact, key=lambda f: (f.path != anchor.path, abs(_shift(anchor, f))))
    if not ordered:
        return None
    if anchor.definition is None:
        return _completed(anchor, files, ordered[0])
    path, parsed = ordered[0].path, dict(files)[ordered[0].path]
    own = [f for f in ordered if f.path == path and _in_definition(anchor, parsed, f)]
    if carried is not None and len(own) != 1:  # where the alignment of the definition puts it
        aligned = carried(anchor, path, parsed)
        if defined and not own and _kept_apart(anchor, ordered, aligned):
            return None  # a copy: its own definition holds every cited token, code between them
        own = [f for f in own or ordered if _overlaps(f, aligned)] + own
    return _completed(anchor, files, own[0] if own else ordered[0])


def _kept_apart(anchor: Anchor, exact: Sequence[Found], aligned: Found | None) -> bool:
    """Whether the alignment of the citation's own definition found every cited token
    there, in order, away from the verbatim matches (with code written between them)."""
    if aligned is None or aligned.start_line is None:
        return False
    if any(f.path == aligned.path and _overlaps(f, aligned) for f in exact):
        return False  # the definition, renamed: the match is in it
    rest = iter(aligned.tokens)
    return all(token in rest for token in anchor.tokens)


def _overlaps(found: Found, other: Found | None) -> bool:
    """Whether two places share a line."""
    if other is None or other.start_line is None or other.end_line is None:
        return False
    return (found.start_line or 0) <= other.end_line and other.start_line <= (found.end_line or 0)


def _others(anchor: Anchor, parsed: Parsed, found: Found) -> bool:
    """Whether a verbatim match lies outside the citation's own definition, where the
    baseline file held a copy of the cited tokens already (in a definition of the same
    kind and name, or outside any): that copy's own code, not the citation, when the
    citation's own definition is there (`chosen`). A cited `if err != nil { return nil,
    err }` rewritten in its own Go method is not the same three lines another method held
    all along, nor a cited local import the module's own import of the same name. Code
    moved where no copy stood is still the citation moved."""
    assert anchor.definition is not None
    if parsed.tree is None or found.start_line is None or _in_definition(anchor, parsed, found):
        return False
    found_copies = copies(anchor)
    return bool(found_copies) and _around(parsed, found) in found_copies


def _grown(anchor: Anchor, parsed: Parsed, found: Found) -> bool:
    """Whether a verbatim match of a citation whose own definition is gone lies in the
    cited file in another definition the baseline file had, which did not hold the
    citation, of tokens the baseline held elsewhere too: code that definition grew, not
    the citation moved there (container-use's `return err` of a `DeleteEnvironmentFile`
    its commit removed is not the one `RunStdioServer` wrote since)."""
    assert anchor.definition is not None
    if found.path != anchor.path or parsed.tree is None or found.start_line is None:
        return False
    key = _around(parsed, found)
    if key is None or key not in anchor.known or not copies(anchor):
        return False
    names = anchor.definition[1]
    return key[1] != names[: len(key[1])]  # not a definition around the cited one


def copies(anchor: Anchor) -> frozenset[Key | None]:
    """Where the baseline file held the cited tokens verbatim besides the cited lines:
    the definition around each copy (None: none), read once per anchor."""
    memo = ("verbatim copies",)
    if memo not in anchor.derived:
        found: set[Key | None] = set()
        if anchor.scope is not None and anchor.span is not None:
            baseline = reparsed(anchor.scope)
            for match in verbatim(anchor, anchor.path, baseline):
                if match.start_line != anchor.span[0]:
                    found.add(_around(baseline, match))
        anchor.derived[memo] = frozenset(found)
    return cast("frozenset[Key | None]", anchor.derived[memo])


def _around(parsed: Parsed, found: Found) -> Key | None:
    """The kind and name of the smallest definition holding a match (None: none)."""
    assert parsed.tree is not None and found.start_line is not None
    low, high = parsed.line_bytes(found.start_line, found.end_line or found.start_line)
    text = parsed.source[low:high]
    first = low + len(text) - len(text.lstrip())
    node = enclosing(parsed, first, max(first, low + len(text.rstrip()) - 1))
    return None if node is None else (node.type, name_path(node, parsed.language))


def _completed(anchor: Anchor, files: Sequence[tuple[str, Parsed]], match: Found) -> Found:
    parsed = dict(files)[match.path]
    return _wrapped(anchor, parsed, completed(anchor, parsed, _with_margins(anchor, parsed, match)))


def _wrapped(anchor: Anchor, parsed: Parsed, found: Found) -> Found:
    """A verbatim match that a construct begun before it on its first line now holds, up
    to its end: cited whole, `this.cleanupResources()` become `await
    this.cleanupResources()` (deepchat's `disconnect`), `f(x)` become `return f(x)` or `y =
    f(x)`. The cited statement is part of another now: the item is that one, changed, as
    when code is added after its last token (`alignment.completed`). Found as it is where
    the citation's edges are punctuation of a construct reaching past its lines
    (`Anchor.ragged`: it was part of one already), where the match begins a construct of
    the kind the citation began (`Anchor.opens`: a cited `self` is one in `mut self`
    too), and where what precedes it on the line is code of its own (`a(); b()`) or a
    definition (an `export` added)."""
    if not found.identical or any(anchor.ragged) or anchor.opens is None or not found.tokens:
        return found
    if parsed.tree is None:
        return found
    start, end = found.start_line or 0, found.end_line or found.start_line or 0
    placed = tokens_between(parsed, *parsed.line_bytes(start, end), starting=True)
    n, texts = len(found.tokens), placed.texts
    at = next((k for k in range(len(texts) - n + 1) if tuple(texts[k : k + n]) == found.tokens),
              None)  # fmt: skip
    if at is None:
        return found
    first, last = placed.start_bytes[at], placed.start_bytes[at + n - 1]
    if opens(parsed, first, last) == anchor.opens:
        return found
    line_start = parsed.line_bytes(placed.start_lines[at], placed.start_lines[at])[0]
    last_leaf = parsed.tree.root_node.descendant_for_byte_range(last, last)
    stop = last_leaf.end_byte if last_leaf is not None else last
    kinds = LANGUAGES[parsed.language].definitions
    leaf = parsed.tree.root_node.descendant_for_byte_range(first, first)
    node = leaf.parent if leaf is not None else None
    while node is not None and node.end_byte <= stop and not is_definition(node, kinds):
        if node.start_byte < first:
            if node.start_byte < line_start or not node.is_named:
                return found
            head = tokens_between(parsed, node.start_byte, first, starting=True).texts
            return replace(found, identical=False, tokens=(*head, *found.tokens))
        node = node.parent
    return found


def settled(anchor: Anchor, parsed: Parsed, found: Found) -> bool:
    """Whether a match near the cited lines is the one `chosen` takes among all: no
    definition held the citation, or the match lies in one of its kind and name path
    that holds no other match of it (none there to choose among)."""
    if anchor.definition is None:
        return True
    node = _own_node(anchor, parsed, found)
    if node is None or not anchor.probes:
        return False
    low, high = with_attributes(node).start_byte, node.end_byte
    return len(_matches(anchor, found.path, parsed, low, high)) < 2


def _in_definition(anchor: Anchor, parsed: Parsed, found: Found) -> bool:
    """Whether `found` lies in a definition of the citation's kind and name path."""
    return _own_node(anchor, parsed, found) is not None


def _own_node(anchor: Anchor, parsed: Parsed, found: Found) -> Node | None:
    """The definition of the citation's kind and name path that holds `found`, if any."""
    assert anchor.definition is not None and found.start_line is not None
    end = found.end_line or found.start_line
    for node in named(parsed, *anchor.definition):
        first = with_attributes(node)
        if first.start_point[0] + 1 <= found.start_line and end <= node.end_point[0] + 1:
            return node
    return None


def margins(anchor: Anchor, parsed: Parsed, start: int, end: int) -> tuple[int, int]:
    """Lines start..end found at HEAD, widened by the blank or comment lines the citation
    has around its tokens (a doc comment above it), as far as they are blank or comment
    lines at HEAD too: a line of code that took a cited comment's place is not cited."""
    if anchor.span is None or anchor.start_line is None or anchor.end_line is None:
        return start, end
    above, below = anchor.span[0] - anchor.start_line, anchor.end_line - anchor.span[1]
    while above and _quiet(parsed, start - 1):
        start, above = start - 1, above - 1
    while below and _quiet(parsed, end + 1):
        end, below = end + 1, below - 1
    return start, end


def _quiet(parsed: Parsed, line: int) -> bool:
    """Whether a line of the file holds no code: blank, or only comments."""
    if not 1 <= line <= parsed.line_count():
        return False
    low, high = parsed.line_bytes(line, line)
    if low >= len(parsed.source):
        return False  # past the file's last line
    if parsed.tree is None:
        return not parsed.source[low:high].strip()
    return not tokens_between(parsed, low, high, starting=True, placed=False).texts


def _shift(anchor: Anchor, found: Found) -> int:
    return (found.start_line or 0) - (anchor.span[0] if anchor.span else 0)


def _with_margins(anchor: Anchor, parsed: Parsed, found: Found) -> Found:
    """An identical match, widened by the blank or comment lines the citation has around
    its tokens (`margins`): lines 23-32 whose line 23 is a doc comment are still 23-32
    when nothing moved."""
    start, end = margins(anchor, parsed, found.start_line or 0, found.end_line or 0)
    return replace(found, start_line=start, end_line=end)


def moved_within(anchor: Anchor, parsed: Parsed, found: Found) -> Found | None:
    """A region found by likeness in the citation's own definition, when it holds a cited
    token that the definition held nowhere else at the baseline (None otherwise: a look-
    alike that was there beside it, an `if err != nil` block of another call); started
    where the largest statement starts that holds its first token, ends within its lines
    and begins as the citation did (its first HEAD_TOKENS tokens): a cited `if
    self.client_session:` block given a guard inside is that block from its `if`, not from
    the guard the window of the citation's length began at (mcp-use's
    `_cleanup_resources`)."""
    body, at, n = anchor.body, anchor.offset, len(anchor.tokens)
    if set(anchor.tokens).difference(body[:at], body[at + n :]).isdisjoint(found.tokens):
        return None
    if parsed.tree is None or found.start_line is None or not anchor.tokens:
        return found
    low, high = parsed.line_bytes(found.start_line, found.end_line or found.start_line)
    placed = tokens_between(parsed, low, high, starting=True)
    if not placed.start_bytes:
        return found
    kinds, first = LANGUAGES[parsed.language].definitions, placed.start_bytes[0]
    node = parsed.tree.root_node.descendant_for_byte_range(first, first)
    best, k = None, min(HEAD_TOKENS, len(anchor.tokens))
    while node is not None and node.end_byte <= high and not is_definition(node, kinds):
        # Its first tokens: those before the found lines, then theirs (it ends within them).
        before = tokens_between(parsed, node.start_byte, first, starting=True).texts
        if node.is_named and (*before[:k], *placed.texts)[:k] == anchor.tokens[:k]:
            best = node
        node = node.parent
    if best is None or best.start_point[0] + 1 >= found.start_line:
        return found
    start = best.start_point[0] + 1
    texts = tuple(tokens_between(parsed, best.start_byte, high, starting=True).texts)
    return Found(
        found.path,
        start,
        found.end_line,
        False,
        parsed.lines(start, found.end_line or start),
        texts,
    )
