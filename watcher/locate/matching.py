"""Find an anchor in a version of the upstream: verbatim (`verbatim`), in the definition
that held it, or as the region of the file most like it. `find` reads what it must;
`place` gives the same answer reading less, for the many versions a history walk judges.
"""

from __future__ import annotations

import bisect
import difflib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from watcher.locate import verbatim as verbatims
from watcher.locate.alignment import (
    FOUND_SHARE,
    carried,
    carry,
    completed,
    could_survive,
    holds_one,
    kept,
    likeness,
)
from watcher.locate.anchors import GONE, REFUSED, Anchor, Found, body_statements, enclosing, trimmed
from watcher.locate.blocks import bounded
from watcher.locate.definitions import (
    bare,
    definition_node,
    definition_span,
    name_path,
    named,
    of_kind,
    other_local,
)
from watcher.locate.scopes import through_scope
from watcher.locate.siblings import taken
from watcher.locate.textlines import by_lines
from watcher.locate.verbatim import chosen, copies, found_at, in_windows, margins, nearest, verbatim
from watcher.locate.windows import line_votes, window_bytes
from watcher.parse.nodes import with_attributes
from watcher.parse.plain import line_marks
from watcher.parse.syntax import Parsed, Tokens, tokens_between

if TYPE_CHECKING:
    from tree_sitter import Node

Locator = Callable[[Anchor, str, Parsed], "Found | None"]


# A region found by likeness alone (its definition renamed, or none) must be this alike
# (difflib ratio), and hold one of the citation's this many rarest tokens, and one of its
# names (`Anchor.names`): one that shares only its shape (another method of the same
# class, another import) is another construct.
SIMILAR_IN_FILE = 0.8


IDENTITY = 3


def find(anchor: Anchor, files: Sequence[tuple[str, Parsed]]) -> Found | None:
    """The anchor in `files` (the cited file, or its renames, first is preferred)."""
    if anchor.start_line is None:
        return _whole_file(anchor, files)
    if anchor.whole and (found := _best(anchor, files, _carried)) is not None:
        return found  # a definition cited whole is that definition, wherever it is
    # The cited file's match nearest the cited lines is the one chosen (`chosen`), one in
    # the citation's own definition first: looked for near them (`nearest`), then
    # everywhere where none is so near, or the nearest one's statement goes on past the
    # cited tokens, or it lies outside that definition.
    near = nearest(anchor, *files[0]) if files and files[0][0] == anchor.path else None
    found = chosen(anchor, files, [near], _held) if near else None
    if found is None or not found.identical or not verbatims.settled(anchor, files[0][1], found):
        every = [f for path, parsed in files for f in verbatim(anchor, path, parsed)]
        found = chosen(anchor, files, every, _held) or found
    return found or _best(anchor, files, _carried) or _first(anchor, files, _elsewhere)


def _held(anchor: Anchor, path: str, parsed: Parsed) -> Found | None:
    """Where the citation's definition carries it (`_carried`), or, that definition gone
    by its name, where the scope around it does (`through_scope`)."""
    found = _carried(anchor, path, parsed)
    if found is None and anchor.definition and not named(parsed, *anchor.definition):
        return through_scope(anchor, path, parsed)
    return found


def _best(anchor: Anchor, files: Sequence[tuple[str, Parsed]], how: Locator) -> Found | None:
    """`how` in every file (the file and its copies): the file's own answer (the cited file
    or its rename, first) while it keeps the cited tokens (FOUND_SHARE survive), unless a
    copy holds them token-identical and it does not; else the most like the cited tokens
    (a copy that kept a definition whole, not one that made it an alias), the first on a
    tie. So a history stays in one file, as `git log -L` does, and does not jump to a copy
    and back as the two are edited apart (typescript-sdk's `streamableHttp.ts` and its
    copy `webStandardStreamableHttp.ts`). Before anything merely like it in the first file."""
    found = [f for path, parsed in files if (f := how(anchor, path, parsed)) not in GONE]
    if len(found) < 2:
        return found[0] if found else None
    if same := [f for f in found if f.identical]:
        return same[0]
    own = found[0]
    if own.path == files[0][0] and carry(anchor.tokens, 0, len(anchor.tokens), own.tokens):
        return own
    return max(found, key=lambda f: likeness(anchor.tokens, f.tokens))


def _first(anchor: Anchor, files: Sequence[tuple[str, Parsed]], how: Locator) -> Found | None:
    for path, parsed in files:
        found = how(anchor, path, parsed)
        if found is not None:
            return found
    return None


def _elsewhere(anchor: Anchor, path: str, parsed: Parsed) -> Found | None:
    """The citation, not verbatim in the file: carried into its definition, else found
    by likeness (a text file: line by line)."""
    if anchor.context and parsed.tree is None:
        return by_lines(anchor, path, parsed)
    if anchor.body and definition_node(parsed, anchor.definition, anchor.start_line or 0):
        # Its definition is there: it carries the citation, else the scope around it does,
        # else a definition it was split out into; not when its tokens went to others' code.
        if (found := _carried(anchor, path, parsed)) is REFUSED:
            return None
        return found or through_scope(anchor, path, parsed) or _split_out(anchor, path, parsed)
    if not anchor.body and (found := through_scope(anchor, path, parsed)) is not None:
        return found  # no one definition held it: the scope around it carries it
    return _in_file(anchor, path, parsed) or renamed_definition(anchor, path, parsed)


def _split_out(anchor: Anchor, path: str, parsed: Parsed) -> Found | None:
    """The citation found by likeness (`_in_file`) where its own definition still is but
    holds it no more: in a definition the baseline file did not have, the code split out
    into it (rust-mcp-sdk's `ClientRuntime::start`, its error-reading task moved into a
    new `start_standalone` beyond the neighbours its scope is bounded by; inspector's
    `clientInformation` body, moved into a `getClientInformationFromSessionStorage`
    helper). Not for code the baseline file held more than once (`verbatim.copies`: an
    `if err != nil { return nil, err }`): where one copy went likeness cannot tell."""
    return None if copies(anchor) else _in_file(anchor, path, parsed)


def renamed_definition(anchor: Anchor, path: str, parsed: Parsed) -> Found | None:
    """The citation carried into its definition renamed: of the definitions of its kind in
    the same container the baseline file did not have, the one most like it whole (at least
    SIMILAR_IN_FILE); identical where its tokens are as cited. `_in_file` compares regions
    as long as the citation, missing a definition renamed and made shorter or longer. Only
    a definition whose bytes could make it that alike (`may_be_alike`) is tokenized: not
    one of the rarest tokens, which a rename may rewrite with the docstring and messages
    that held them (python-sdk's `_try_create_model_and_schema`)."""
    if anchor.definition is None or not anchor.body or parsed.tree is None:
        return None
    kind, names = anchor.definition
    best: tuple[float, Node] | None = None
    for key, node in of_kind(parsed, kind):
        if key[:-1] != names[:-1] or (kind, key) in anchor.known:
            continue
        head = with_attributes(node)
        low, high = head.start_byte, max(node.end_byte, head.end_byte)
        least = SIMILAR_IN_FILE if best is None else max(SIMILAR_IN_FILE, best[0])
        ratio = _renamed_likeness(anchor, parsed, low, high, least)
        if ratio is None or ratio < least or (best is not None and ratio <= best[0]):
            continue
        if not taken(anchor, parsed, _definition_texts(anchor, parsed, low, high)):
            best = (ratio, node)
    found = None if best is None else _carried_in(anchor, path, parsed, best[1])
    if found is None or found is REFUSED:
        return None
    return replace(found, identical=found.tokens == anchor.tokens)


def _renamed_likeness(
    anchor: Anchor, parsed: Parsed, low: int, high: int, least: float
) -> float | None:
    """How like the citation's definition (difflib's ratio) the definition at bytes
    [low, high) of `parsed` is; None where it cannot be `least` alike. Kept with the
    anchor by the definition's bytes, with the `least` it was told below: a history
    walk asks at every version it judges, and the file's other definitions are mostly
    unchanged (codex's `tui/src/app/tests.rs`, hundreds of tests written since)."""
    memo = ("renamed likeness", parsed.source[low:high])
    known = cast("tuple[float | None, float] | None", anchor.derived.get(memo))
    if known is not None and (known[0] is not None or known[1] <= least):
        return known[0]
    ratio: float | None = None
    if may_be_alike(anchor, parsed.source, low, high, least):
        texts = tokens_between(parsed, low, high, starting=True, placed=False).texts
        parsed.stats.tokens_scanned += len(texts)
        bag = cast("Counter[str]", anchor.derived.get(("body bag",)))
        if bag is None:
            bag = anchor.derived[("body bag",)] = Counter(anchor.body)
        if 2 * sum((bag & Counter(texts)).values()) / (len(anchor.body) + len(texts)) >= least:
            ratio = likeness(anchor.body, texts)  # else difflib's quick_ratio rules it out
    anchor.derived[memo] = (ratio, least)
    return ratio


def may_be_alike(anchor: Anchor, source: bytes, low: int, high: int, least: float) -> bool:
    """Whether the tokens starting in bytes [low, high) of `source` could be `least` alike
    to the anchor's definition (difflib's ratio), told from the bytes. Tokens are disjoint
    and a token is its text's bytes, so the tokens both hold (S) are at most, for each
    token of the definition, the times its bytes occur there, up to the times it holds
    it (U). The region has at least S tokens, so the ratio 2S/(n+m) is at most 2U/(n+U):
    it needs U >= n*least/(2-least). A token decoded with replacements counts as held."""
    n = len(anchor.body)
    need, left = n * least / (2 - least), n
    held = 0
    for text, count in anchor.body_counts:
        if held + left < need:
            return False
        left -= count
        if text is None:
            held += count
            continue
        end, at, found = high + len(text) - 1, low, 0  # a token starting before `high`
        while found < count and (at := source.find(text, at, end)) >= 0:
            found, at = found + 1, at + len(text)
        held += found
        if held >= need:
            return True
    return held >= need


def category(anchor: Anchor, files: Sequence[tuple[str, Parsed]]) -> str:
    """What `find` would make of the anchor in `files`: same, changed or missing.

    A history walk asks this of every version. When the citation is most of a definition
    that still exists, and some token of it is nowhere in the files' bytes (so it cannot
    occur verbatim), the answer is `changed` without tokenizing the files: the same
    answer `find` gives, at a fraction of the cost."""
    return place(anchor, files)[0]


def place(
    anchor: Anchor, files: Sequence[tuple[str, Parsed]]
) -> tuple[str, str | None, int | None, int | None]:
    """`category`, with the path and lines the item occupies in the files (none when
    missing, or when the citation is a whole file).

    The same answer `find` gives, reading as little of the files as it can: exact matches
    are looked for only in windows around its rarest token, a definition is found with a
    query, and only a citation with no definition left tokenizes the whole file."""
    plain = any(parsed.tree is None for _, parsed in files)  # text files: compared by line
    if plain or anchor.start_line is None or any("\ufffd" in t for t in anchor.probes):
        return _placed(find(anchor, files))
    if anchor.whole:
        alone = len(files) == 1  # with copies, the definition judged is the most alike
        if alone and not _could_occur(anchor, files) and _definition_survives(anchor, files):
            path, parsed = files[0]
            span = definition_span(parsed, anchor.definition, anchor.start_line)
            if span is not None:  # some token of it is gone: changed, no token read
                return "changed", path, *margins(anchor, parsed, *span)
        found = _best(anchor, files, _carried)
        if found is not None:
            return _placed(found)
    exact = [f for path, parsed in files for f in in_windows(anchor, path, parsed)]
    if exact and (found := chosen(anchor, files, exact, _held)) is not None:
        return _placed(found)
    if not anchor.whole:  # a whole definition was looked for by name above, in vain
        found = _best(anchor, files, _carried)
    return _placed(found or _first(anchor, files, _elsewhere))


def _placed(found: Found | None) -> tuple[str, str | None, int | None, int | None]:
    if found is None:
        return "missing", None, None, None
    return ("same" if found.identical else "changed"), found.path, found.start_line, found.end_line


def _carried(anchor: Anchor, path: str, parsed: Parsed) -> Found | None:
    """The citation in the definition that held it (found by kind and name, nearest its
    cited line): the whole definition when it was cited whole, else where the cited
    tokens went in an alignment of its tokens with the baseline's (`carry`)."""
    if anchor.definition is None or parsed.tree is None or not anchor.body:
        return None
    nodes = named(parsed, *anchor.definition) or _moved(anchor, parsed)
    if len(nodes) > 1:  # overloads, one method in two impl blocks: the one most like it
        found = [(f, n) for n in nodes if (f := _carried_in(anchor, path, parsed, n)) not in GONE]
        return max(found, key=lambda fn: _preferred(anchor, parsed, *fn), default=(None,))[0]
    return _carried_in(anchor, path, parsed, nodes[0]) if nodes else None


def _preferred(anchor: Anchor, parsed: Parsed, found: Found, node: Node) -> tuple[float, int]:
    """Which of several definitions that hold the citation is it: the most like it, then,
    among equals, the one whose scopes are most the citation's own (a method split in two
    in each of several classes: the half in the cited class); the first on a tie."""
    own, shared = anchor.definition[1] if anchor.definition else (), 0
    for name, cited in zip(name_path(node, parsed.language), own, strict=False):
        if name != cited:
            break
        shared += 1
    return likeness(anchor.tokens, found.tokens), shared


def _moved(anchor: Anchor, parsed: Parsed) -> list[Node]:
    """Where no definition has the citation's kind and name path: the definitions of its
    kind and name, in another scope the baseline file did not have them in, that keep
    FOUND_SHARE of its definition's tokens (`carry`): one moved out of the definition
    that held it (a constant lifted out of its function), or into another `impl`. A
    namesake the baseline file had is it only when it is now more like the citation's
    definition than like its own old self (it keeps a greater share of the citation's
    definition's tokens than of its own: `kept`): rust-sdk's `into_call_tool_result` of
    `impl<T> IntoCallToolResult for Result<T, ErrorData>`, whose impl took the other
    `Result<T, E>` impl's header when the two were folded into one, keeping its body."""
    assert anchor.definition is not None
    kind, name = anchor.definition[0], anchor.definition[1][-1:]
    namesakes, found = dict(anchor.namesakes), []
    for names, node in of_kind(parsed, kind):
        if names[-1:] != name or ((kind, names) in anchor.known and names not in namesakes):
            continue  # another name, or a definition the baseline had: not the citation
        if other_local(kind, names, anchor.definition, anchor.known):
            continue  # `result` of another method is that method's own
        if bare(names) == bare(anchor.definition[1]):
            found.append(node)  # in its own `impl`, whose type parameters changed
            continue
        head = with_attributes(node)
        low, high = head.start_byte, max(node.end_byte, head.end_byte)
        # Told once per anchor for each namesake's bytes: a history walk asks at every
        # version it judges, and a namesake is mostly unchanged (fastmcp's server.py: the
        # 92 `__init__`s of 604 asks, 6.3 s of difflib).
        key = ("moved", names, parsed.source[low:high])
        if key not in anchor.derived:
            scope = any(n == names[:-1] for _, n in anchor.known)
            own = namesakes.get(names)
            anchor.derived[key] = _moved_here(anchor, own, parsed, (low, high), scope)
        if anchor.derived[key] is True:
            found.append(node)
    return found


def _moved_here(
    anchor: Anchor,
    own: Sequence[str] | None,
    parsed: Parsed,
    span: tuple[int, int],
    known_scope: bool,
) -> bool:
    """Whether the definition at bytes `span` of `parsed` is the citation's, moved there
    (`_moved`); `own`: its tokens in the baseline file, when it had it; `known_scope`:
    the scope it is in is one the baseline file had."""
    low, high = span
    texts = tokens_between(parsed, low, high, starting=True, placed=False).texts
    parsed.stats.tokens_scanned += len(texts)
    # The tokens both hold, order aside, bound how many can survive the alignment.
    if not could_survive(anchor.body, texts):
        return False
    if own is not None and (
        kept(anchor.body, texts) <= kept(own, texts) or not _gained(anchor.body, own, texts)
    ):
        return False  # a namesake the baseline had, still more itself than the citation
    if known_scope and _own_code(anchor.body, texts):
        return False  # a new namesake in a scope the baseline had, mostly code of its own
    if own is None and anchor.namesakes and likeness(anchor.body, texts) < SIMILAR_IN_FILE:
        return False  # a name the file gives many definitions (`__init__`): shape tells little
    return carry(anchor.body, 0, len(anchor.body), texts) is not None


def _gained(body: Sequence[str], own: Sequence[str], texts: Sequence[str]) -> bool:
    """Whether a namesake the baseline had (`own`, its tokens there) now holds a token of
    the cited definition (`body`) that it did not hold: one that only lost code is its own
    self made shorter, however like the citation that leaves it (beeai's
    `FunctionTool.__init__`, down to `super().__init__(options)` when the cited
    `StringToolOutput.__init__` went to another module)."""
    return not (set(texts) & set(body)).issubset(own)


def _own_code(body: Sequence[str], texts: Sequence[str]) -> bool:
    """Whether less than FOUND_SHARE of a definition's tokens could come from the cited
    one (order aside): camel's `MCPToolkit.call_tool`, written into a class the baseline
    file had as `MCPClient` (whose `call_tool` was cited) left for another module, holds
    its signature and docstring among four times as much code."""
    return sum((Counter(texts) & Counter(body)).values()) < FOUND_SHARE * len(texts)


def _carried_in(anchor: Anchor, path: str, parsed: Parsed, node: Node) -> Found | None:
    """`_carried`, in the definition `node`."""
    first = with_attributes(node)  # a wrapping `export const x = 1;` ends it too
    low, high = first.start_byte, max(node.end_byte, first.end_byte)
    if anchor.whole:
        texts = _definition_texts(anchor, parsed, low, high)
        last = max(node.end_point[0], first.end_point[0]) + 1
        start_line, end_line = margins(anchor, parsed, first.start_point[0] + 1, last)
        same = texts == anchor.tokens
        return Found(path, start_line, end_line, same, parsed.lines(start_line, end_line), texts)
    body = tokens_between(parsed, low, high, starting=True)
    texts = tuple(body.texts)
    parsed.stats.tokens_scanned += len(texts)
    cited = anchor.offset, anchor.offset + len(anchor.tokens)
    marks = line_marks(parsed.source, body.start_bytes, body.start_lines)
    minor = {anchor.offset + i for i in anchor.attributes}
    lines, memo = (anchor.body_lines, marks), ("carried", parsed.source[low:high])
    if memo not in anchor.derived:  # a walk, its steps and relocation ask again
        parsed.stats.aligned += 1
        anchor.derived[memo] = carried(anchor.body, *cited, texts, lines, minor=minor)
    went = cast("tuple[tuple[int, int], list[tuple[int, int]]] | None", anchor.derived[memo])
    if went is None:
        return None
    span: tuple[int, int] | None = went[0]
    if anchor.cited_statements is not None:
        around = body.start_bytes[went[0][0]], body.start_bytes[max(went[0][0], went[0][1] - 1)]
        span = bounded(anchor, went, body_statements(node, body.start_bytes, around), texts)
    if span is None:
        return REFUSED
    low, high = trimmed(parsed, body, *span, keep=anchor.ragged)
    first_line, last_line = body.start_lines[low], body.end_lines[high - 1]
    found = Found(path, first_line, last_line, False, parsed.lines(first_line, last_line),
                  texts[low:high])  # fmt: skip
    return completed(anchor, parsed, found)


def _definition_texts(anchor: Anchor, parsed: Parsed, low: int, high: int) -> tuple[str, ...]:
    """The tokens of the definition at bytes [low, high) of `parsed`, kept with the anchor
    by its bytes: a history walk judging a whole definition at many versions mostly meets
    bytes it has read already, and a rename chosen (`renamed_definition`) is read once
    to tell whether it is another's and to place it."""
    memo = ("definition texts", parsed.source[low:high])
    texts = cast("tuple[str, ...] | None", anchor.derived.get(memo))
    if texts is None:
        texts = tuple(tokens_between(parsed, low, high, starting=True, placed=False).texts)
        parsed.stats.tokens_scanned += len(texts)
        anchor.derived[memo] = texts
    return texts


def _definition_survives(anchor: Anchor, files: Sequence[tuple[str, Parsed]]) -> bool:
    if anchor.start_line is None or anchor.definition is None or not files:
        return False
    if not anchor.whole or files[0][1].tree is None:
        return False
    return len(named(files[0][1], *anchor.definition)) == 1  # more: `_carried` chooses


def _could_occur(anchor: Anchor, files: Sequence[tuple[str, Parsed]]) -> bool:
    """False when one of the anchor's rarest tokens is in none of the files' bytes: then no
    verbatim match can exist. True is only "maybe": `find` decides."""
    if anchor.start_line is None or any("\ufffd" in t for t in anchor.probes):
        return True  # whole files, and baselines that were not valid UTF-8: no shortcut
    return any(all(t.encode() in parsed.source for t in anchor.probes) for _, parsed in files)


def _whole_file(anchor: Anchor, files: Sequence[tuple[str, Parsed]]) -> Found | None:
    if not files:
        return None
    path, parsed = files[0]
    identical = parsed.token_texts() == anchor.tokens
    return Found(path, None, None, identical, parsed.text())


def _in_file(anchor: Anchor, path: str, parsed: Parsed) -> Found | None:
    """The region of the file most like the anchor, when it is similar enough. Only the
    windows its rarest words point at are read and compared, never the whole file."""
    if parsed.tree is None or not anchor.token_lines:
        return _in_index(anchor, path, parsed)
    n, best = len(anchor.tokens), None
    identity = set(anchor.probes[:IDENTITY])
    bag = Counter(anchor.tokens)
    for line in line_votes(anchor, parsed):
        window = _window(parsed, line, anchor, identity)
        if window is None:
            continue
        texts = window.texts
        offset = bisect.bisect_left(window.start_lines, line)
        for start in _starts(parsed, anchor.tokens, texts, offset):
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
            ratio = likeness(anchor.tokens, region)
            if ratio < SIMILAR_IN_FILE or (best is not None and ratio <= best[0]):
                continue
            if not identity.isdisjoint(region) and holds_one(anchor.names, region):
                best = (ratio, window, start, end)
    if best is None:
        return None
    _, window, start, end = best
    if anchor.definition is None:  # code no definition held: nothing bounds it
        start, end = _grown(anchor.tokens, window.texts, start, end)
    start, end = _trimmed(anchor.tokens, window.texts, start, end)
    first, last = window.start_lines[start], window.end_lines[end - 1]
    tokens = tuple(window.texts[start:end])
    if anchor.attributes and carry(anchor.tokens, 0, n, tokens, minor=anchor.attributes) is None:
        return None  # like it by the attributes above it: its item's own tokens are gone
    found = Found(path, first, last, False, parsed.lines(first, last), tokens)
    if anchor.definition is None:  # ended where its statement ends, as a carried one is
        return completed(anchor, parsed, found)
    return _renamed(anchor, found, parsed, window.start_bytes[start], window.start_bytes[end - 1])


def _renamed(anchor: Anchor, found: Found, parsed: Parsed, first: int, last: int) -> Found | None:
    """A region like the citation (`found`, its tokens starting at bytes first..last),
    unless it lies in a definition the baseline file had already other than its own: code
    like the citation in `resource_not_found` is that function's own, not the deleted
    `url_elicitation_required`'s; in its own, it moved there (`verbatim.moved_within`). In
    a new definition of its kind (its own, renamed), it is carried as into its own."""
    node = enclosing(parsed, first, last)
    if node is None or anchor.definition is None:
        return found
    key = (node.type, name_path(node, parsed.language))
    if key in anchor.known:  # another's own code, or its own moved within it
        return verbatims.moved_within(anchor, parsed, found) if key == anchor.definition else None
    if other_local(*key, anchor.definition, anchor.known):
        return None  # a local of another function: its own code, not its own renamed
    if node.type != anchor.definition[0] or not anchor.body:
        return found  # its code moved into another kind of construct (a macro's body)
    head = with_attributes(node)
    texts = tokens_between(parsed, head.start_byte, max(node.end_byte, head.end_byte),
                           starting=True, placed=False).texts  # fmt: skip
    parsed.stats.tokens_scanned += len(texts)
    if carry(anchor.body, 0, len(anchor.body), texts) is None or taken(anchor, parsed, texts):
        return None  # not its own renamed: it keeps too little, or another's more
    carried = _carried_in(anchor, found.path, parsed, node)
    return None if carried is REFUSED else carried


def _grown(needle: tuple[str, ...], texts: list[str], start: int, end: int) -> tuple[int, int]:
    """texts[start:end], a region as long as the needle, ended as far as the needle's
    tokens go (`carry`) in the window past its start: lines inserted among the cited ones
    push its last tokens out of a region of its length (python-sdk's imports, three
    written between them: the span stopped short of the last import). Only for code no
    definition held: grown past a definition's end, a region would be taken for one in
    the class around it, which the baseline file's definitions do not rule out (fastmcp's
    `read_resource`, gone, found in a `read` method that stood beside it all along)."""
    after = texts[start : start + 2 * len(needle)]
    span = carry(needle, 0, len(needle), after)
    return (start, end) if span is None else (start, start + max(span[1], end - start))


def _trimmed(needle: tuple[str, ...], texts: list[str], start: int, end: int) -> tuple[int, int]:
    """texts[start:end] without the tokens at its edges that match none of the needle's.
    Regions as like it tie when one takes in a token more on one side and the other on
    the other (the `}` that closes the function above, the `fn` of the one below):
    trimmed, they are the same, wherever the window read around them began."""
    matcher = difflib.SequenceMatcher(None, needle, texts[start:end], autojunk=False)
    blocks = [b for b in matcher.get_matching_blocks() if b.size]
    return start + blocks[0].b, start + blocks[-1].b + blocks[-1].size


def _starts(parsed: Parsed, needle: tuple[str, ...], texts: list[str], offset: int) -> list[int]:
    """Where a region like `needle` may start near `offset` in `texts`. The longest run they
    share places it by its own offset, off by as many tokens as were added above that run;
    the vote's offset is where its first tokens are. Both are tried: the better one wins."""
    n = len(needle)
    low, high = max(0, offset - n), min(len(texts), offset + 2 * n)
    parsed.stats.tokens_scanned += high - low
    matcher = difflib.SequenceMatcher(None, needle, texts[low:high], autojunk=False)
    a, b, size = matcher.find_longest_match(0, n, 0, high - low)
    return [] if size == 0 else list(dict.fromkeys((max(0, low + b - a), max(0, offset))))


def _window(parsed: Parsed, line: int, anchor: Anchor, identity: set[str]) -> Tokens | None:
    """The tokens of the lines around a voted line (`window_bytes`); None, without
    tokenizing, when its bytes hold none of the `identity` tokens a region must hold.
    The tokens are those starting there, so a token may end past the window's end."""
    assert parsed.tree is not None
    source = parsed.source
    low, high = window_bytes(source, parsed.line_starts, line, anchor)
    if not any("\ufffd" in t for t in identity):  # else a token's text is not its bytes
        needles = [t.encode() for t in identity]
        if all(source.find(needle, low, high + len(needle)) < 0 for needle in needles):
            return None
    return tokens_between(parsed, low, high, starting=True)


def _in_index(anchor: Anchor, path: str, parsed: Parsed) -> Found | None:
    """`_in_file` over the whole file's token index: a file no grammar reads."""
    texts, n = parsed.tokens.texts, len(anchor.tokens)
    best: tuple[float, int, int] | None = None
    for offset in _alignments(anchor.tokens, parsed):
        for start in _starts(parsed, anchor.tokens, texts, offset):
            end = min(len(texts), start + n)
            ratio = likeness(anchor.tokens, texts[start:end])
            if ratio >= SIMILAR_IN_FILE and (best is None or ratio > best[0]):
                best = (ratio, start, end)
    return None if best is None else found_at(anchor, path, parsed, best[1], best[2], False)


def _alignments(needle: tuple[str, ...], parsed: Parsed, tries: int = 3) -> list[int]:
    """Where the needle most likely starts in the file: each occurrence of one of its rarest
    tokens votes for the start it implies, the votes bounded by its length, not the file's."""
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
