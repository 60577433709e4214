"""Definitions in a parse found by kind and name path: with a query, never a token walk.

`may_define` tells from the bytes alone whether a version may hold one at all.
"""

from __future__ import annotations

import bisect
import functools
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from watcher.parse.languages import LANGUAGES, grammar
from watcher.parse.nodes import definition_names, is_definition, with_attributes
from watcher.parse.syntax import Parsed, Region, Stats, is_word_byte, word_places

if TYPE_CHECKING:
    from tree_sitter import Node, Query


# A definition is looked for by a query around each place its name occurs, up to this
# many places; a name that occurs more often is looked for by one query over the file.
NAMED_PLACES = 64


PLAIN_NAME = re.compile(r"\w+")


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
    nearest to line `near`, as `matching.find` chooses."""
    if parsed.tree is None or key is None:
        return None
    kind, names = key
    nodes = named(parsed, kind, names)

    def distance(node: Node) -> int:
        return abs(with_attributes(node).start_point[0] + 1 - near)

    if len(nodes) > 1 and [distance(n) for n in nodes].count(min(map(distance, nodes))) > 1:
        # A tie goes to the first in the order of a query over the whole file, which is
        # not always the order of the file: ask that query.
        nodes = [node for path, node in of_kind(parsed, kind) if path == names]
    return min(nodes, key=distance, default=None)


def named(parsed: Parsed, kind: str, names: tuple[str, ...]) -> list[Node]:
    """The definitions of one kind with this name path, in the file's order (found once
    per parse, and kept with it). A definition named by a plain word holds that word (its
    name node): the query looks only where the word occurs, unless it occurs more than
    NAMED_PLACES times (then the whole file)."""
    key = ("definitions named", kind, names)
    if key not in parsed.derived:
        parsed.derived[key] = _indexed(parsed, kind, names)
    return cast("list[Node]", parsed.derived[key])


# Names looked up in one parse past which every definition of the file is listed once
# (`definition_nodes`) and each further name is read off that list: judging many
# citations of a big file would otherwise search its bytes for each name, a cost that
# grows with the file; a walk's version, asked a name or two, keeps the word search.
INDEX_AFTER = 8


def _indexed(parsed: Parsed, kind: str, names: tuple[str, ...]) -> list[Node]:
    asked = ("names asked",)
    parsed.derived[asked] = count = cast("int", parsed.derived.get(asked, 0)) + 1
    if count <= INDEX_AFTER or kind not in LANGUAGES[parsed.language].definitions:
        return _named(parsed, kind, names)
    index = ("definitions by key",)
    if index not in parsed.derived:
        by_key: dict[Key, list[Node]] = {}
        for node, found in definition_nodes(parsed):
            by_key.setdefault(found, []).append(node)
        parsed.derived[index] = by_key
    nodes = cast("dict[Key, list[Node]]", parsed.derived[index]).get((kind, names), [])
    return sorted(nodes, key=lambda n: (n.start_byte, n.end_byte))


def _named(parsed: Parsed, kind: str, names: tuple[str, ...]) -> list[Node]:
    from tree_sitter import QueryCursor

    assert parsed.tree is not None
    name = names[-1] if names else ""
    places = None
    if PLAIN_NAME.fullmatch(name) and name not in LANGUAGES[parsed.language].definitions:
        places = few_word_places(parsed.source, name.encode(), NAMED_PLACES, parsed.stats)
    if places is None:
        return [node for path, node in of_kind(parsed, kind) if path == names]
    found: dict[tuple[int, int], Node] = {}
    for low, high in places:
        cursor = QueryCursor(_kind_query(parsed.language, kind))
        cursor.set_byte_range(low, high)
        for node in cursor.captures(parsed.tree.root_node).get("d", []):
            parsed.stats.captured += 1
            found.setdefault((node.start_byte, node.end_byte), node)
    kinds = LANGUAGES[parsed.language].definitions
    return [
        node
        for _, node in sorted(found.items())
        if is_definition(node, kinds) and name_path(node, parsed.language) == names
    ]


def few_word_places(
    source: bytes, word: bytes, most: int, stats: Stats | None = None
) -> list[tuple[int, int]] | None:
    """The byte ranges where `word` occurs as a whole word (`syntax.word_places`); None
    past `most` of them."""
    places: list[tuple[int, int]] = []
    for place in word_places(source, word, stats=stats):
        if len(places) == most:
            return None
        places.append(place)
    return places


def lines_named(parsed: Parsed, key: tuple[str, tuple[str, ...]], start: int, end: int) -> bool:
    """Whether lines start..end of a parse touch a definition of the key's kind and name
    (its last name: in any scope), attributes included."""
    kind, names = key
    for path, node in of_kind(parsed, kind):
        if path[-1:] == names[-1:]:
            first = with_attributes(node).start_point[0] + 1
            if first <= end and start <= node.end_point[0] + 1:
                return True
    return False


def of_kind(parsed: Parsed, kind: str) -> list[tuple[tuple[str, ...], Node]]:
    """Every definition of one kind in a parse, with its name path, in document order:
    read off `definition_nodes` (one query per parse for all the language's kinds, which
    costs about what a query for one kind does), however many citations of it a walk
    judges and of whatever kinds (kept with the parse)."""
    key = ("definitions of kind", kind)
    if key not in parsed.derived:
        if kind in LANGUAGES[parsed.language].definitions:  # one query for every kind
            nodes = definition_nodes(parsed)
            parsed.derived[key] = [(path, node) for node, (of, path) in nodes if of == kind]
        else:
            parsed.derived[key] = _query_kind(parsed, kind)
    return cast("list[tuple[tuple[str, ...], Node]]", parsed.derived[key])


def _query_kind(parsed: Parsed, kind: str) -> list[tuple[tuple[str, ...], Node]]:
    from tree_sitter import QueryCursor

    assert parsed.tree is not None
    nodes = QueryCursor(_kind_query(parsed.language, kind)).captures(parsed.tree.root_node)
    kinds = LANGUAGES[parsed.language].definitions
    parsed.stats.captured += len(nodes.get("d", []))
    return [
        (name_path(node, parsed.language), node)
        for node in nodes.get("d", [])
        if is_definition(node, kinds)
    ]


def definition_keys(parsed: Parsed) -> frozenset[tuple[str, tuple[str, ...]]]:
    """Every definition's (kind, name path) in a parse, from one query over all the
    language's kinds, with no walk over the tokens."""
    if parsed.tree is None:
        return frozenset()
    key = ("definition keys",)  # asked by every anchor of the file: found once per parse
    if key not in parsed.derived:
        parsed.derived[key] = _definition_keys(parsed)
    return cast("frozenset[tuple[str, tuple[str, ...]]]", parsed.derived[key])


def _definition_keys(parsed: Parsed) -> frozenset[tuple[str, tuple[str, ...]]]:
    return frozenset(key for _, key in definition_nodes(parsed))


def definition_nodes(parsed: Parsed) -> list[tuple[Node, tuple[str, tuple[str, ...]]]]:
    """Every definition in a parse with its (kind, name path), in the order of the source:
    one query over all the language's kinds, found once per parse; in a version parsed
    from another's tree, only over what changed (`_carried_over`)."""
    key = ("definition nodes",)
    if key not in parsed.derived:
        assert parsed.tree is not None
        nodes = _carried_over(parsed)
        if nodes is None:
            nodes = _in_order(_queried(parsed, [(0, parsed.size)]))
        kinds = LANGUAGES[parsed.language].definitions
        parsed.derived[key] = [
            (node, (node.type, name_path(node, parsed.language)))
            for node in nodes
            if is_definition(node, kinds)
        ]
        parsed.reused = None  # asked once: the other version may go
    return cast("list[tuple[Node, tuple[str, tuple[str, ...]]]]", parsed.derived[key])


def _queried(parsed: Parsed, ranges: Sequence[tuple[int, int]]) -> list[Node]:
    """The nodes of the language's definition kinds that meet any of these byte ranges."""
    from tree_sitter import QueryCursor

    assert parsed.tree is not None
    query = _kinds_query(parsed.language)
    found: list[Node] = []
    for low, high in ranges:
        cursor = QueryCursor(query)
        cursor.set_byte_range(low, high)
        found += cursor.captures(parsed.tree.root_node).get("d", [])
        parsed.stats.listed += high - low
    return found


def _carried_over(parsed: Parsed) -> list[Node] | None:
    """The definition nodes of a version parsed from another's tree, without querying all
    of it (`syntax.Reused`): where neither the bytes nor the tree's shape changed, the
    other's definitions (of any kind, each found again in this tree by its kind and
    shifted bytes), and a query of the rest. None when the other's are not known, or
    where whether a node defines a name reads the code around it (a Python assignment:
    the scope it is in may change, itself untouched)."""
    reused = parsed.reused
    previous = reused.previous() if reused is not None else None
    known = previous.derived.get(("definition nodes",)) if previous is not None else None
    if reused is None or known is None or "assignment" in LANGUAGES[parsed.language].definitions:
        return None
    changed = _merged([*((low, high) for _, _, low, high in reused.regions), *reused.changed])
    assert parsed.tree is not None
    root = parsed.tree.root_node
    nodes: list[Node] = []
    for node, _ in cast("list[tuple[Node, object]]", known):
        shifted = _shifted(reused.regions, node.start_byte, node.end_byte)
        if shifted is None or _meets(changed, *shifted):
            continue
        found = _node_at(root, node.type, *shifted)
        if found is None:
            return None  # not there after all: query it whole
        nodes.append(found)
    nodes += _queried(parsed, [(max(0, low - 1), high + 1) for low, high in changed])
    return _in_order(nodes)


def _in_order(nodes: Iterable[Node]) -> list[Node]:
    """The nodes in the order of the source (one holding another first), each once: a
    query's captures come in an order of its own, which differs between queries."""
    unique = {(n.start_byte, -n.end_byte, n.type): n for n in nodes}
    return [unique[k] for k in sorted(unique)]


def _shifted(regions: Sequence[Region], low: int, high: int) -> tuple[int, int] | None:
    """Bytes [low, high) of the other version in this one's, where no stretch that differs
    meets them (touching counts: a node may grow into what was added beside it); None
    where one does."""
    shift = 0
    for old_low, old_high, _, new_high in regions:
        if old_low <= high and low <= old_high:
            return None
        if old_high <= low:
            shift = new_high - old_high
    return low + shift, high + shift


def _merged(ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The ranges sorted, those that meet or touch taken as one."""
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(high, merged[-1][1]))
        else:
            merged.append((low, high))
    return merged


def _meets(ranges: Sequence[tuple[int, int]], low: int, high: int) -> bool:
    """Whether any of the sorted, disjoint `ranges` meets or touches bytes [low, high)."""
    at = bisect.bisect_right(ranges, (high, sys.maxsize))
    return at > 0 and ranges[at - 1][1] >= low


def _node_at(root: Node, kind: str, low: int, high: int) -> Node | None:
    """The node of this kind spanning exactly bytes [low, high), if any."""
    node: Node | None = root.descendant_for_byte_range(low, high)
    while node is not None and (node.start_byte, node.end_byte) == (low, high):
        if node.type == kind:
            return node
        node = node.parent
    return None


def of_last_name(
    parsed: Parsed, kind: str, last: tuple[str, ...]
) -> list[tuple[Node, tuple[str, ...]]]:
    """The definitions of one kind whose name path ends with `last` (a one-name tuple, or
    empty), in `definition_nodes`' order, with their name paths: the file's definitions
    are grouped once per parse, so each citation reads its own group, not every
    definition of its file."""
    key = ("definitions by last name",)
    if key not in parsed.derived:
        groups: dict[tuple[str, tuple[str, ...]], list[tuple[Node, tuple[str, ...]]]] = {}
        for node, (found, names) in definition_nodes(parsed):
            groups.setdefault((found, names[-1:]), []).append((node, names))
        parsed.derived[key] = groups
    groups = cast("dict[tuple[str, tuple[str, ...]], list[tuple[Node, tuple[str, ...]]]]",
                  parsed.derived[key])  # fmt: skip
    return groups.get((kind, last), [])


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


def may_define(
    source: bytes, language: str, key: tuple[str, tuple[str, ...]], stats: Stats | None = None
) -> bool:
    """Whether `source` may hold a definition with this key, told from its bytes without a
    parse. Of a kind whose name follows a keyword, some whole-word occurrence of the name
    must follow that keyword with only spaces between, or follow what may end a comment:
    a line break (the name first on its line) or a `/` (`*/`). Other kinds: always."""
    keyword = _KEYWORDS.get((language, key[0]))
    if keyword is None or not key[1] or "\ufffd" in key[1][-1]:
        return True
    places = word_places(source, key[1][-1].encode(), stats=stats)
    return any(after_keyword(source, at, keyword) for at, _ in places)


def keyword(language: str, kind: str) -> bytes | None:
    """The keyword a definition of this kind is written after (`fn`, `def`), if any."""
    return _KEYWORDS.get((language, kind))


def defining(keyword: str, name: str) -> str:
    """A guard counting only the places of `name` that may be a definition's: after
    `keyword` (`fn`), or first on its line (`after_keyword`). Calls of a
    function come and go; what `locate` finds it by is its definitions."""
    return f"\0{keyword}\0{name}"


def after_keyword(source: bytes, at: int, keyword: bytes) -> bool:
    """Whether what precedes `at`, spaces aside, is `keyword` (a whole word when it is a
    word; a Go method's name follows its receiver's `)`), a line break or a `/`: anything
    else is a token of the code, and the name there no definition's."""
    before = at - 1
    while before >= 0 and source[before] in _SPACE:
        before -= 1
    if before < 0 or source[before] in b"\n/":
        return True
    start = before + 1 - len(keyword)
    bounded = start > 0 and is_word_byte(keyword[0]) and is_word_byte(source[start - 1])
    return source[start : before + 1] == keyword and not bounded


@functools.cache
def _kinds_query(language: str) -> Query:
    from tree_sitter import Query

    kinds = " ".join(f"({kind})" for kind in sorted(LANGUAGES[language].definitions))
    return Query(grammar(language), f"[{kinds}] @d")


@functools.cache
def _kind_query(language: str, kind: str) -> Query:
    from tree_sitter import Query

    return Query(grammar(language), f"({kind}) @d")


def name_path(node: Node, language: str) -> tuple[str, ...]:
    kinds = LANGUAGES[language].definitions
    names: list[str] = []
    current: Node | None = node
    while current is not None:
        if is_definition(current, kinds):
            names.extend(reversed(definition_names(current)))
        current = current.parent
    return tuple(reversed(names))


Key = tuple[str, tuple[str, ...]]

# Neighbours looked for on each side, nearest first: one renamed or deleted, the next
# one out bounds the scope.
NEIGHBOURS = 3


@dataclass(frozen=True)
class Scope:
    """Where a citation lies among the definitions of its baseline file: the bytes after
    each neighbour above it (nearest first) and before each one below it, with the key
    that finds that neighbour in a version (None: the file's edge)."""

    source: bytes = field(repr=False)
    language: str
    cited: int  # the byte where the first cited token starts
    above: tuple[tuple[Key | None, int], ...]
    below: tuple[tuple[Key | None, int], ...]
    blob: str = ""  # the baseline's blob: its parse is the process's, if it still holds it


def scope_of(parsed: Parsed, first: int, last: int) -> Scope | None:
    """The scope of the citation whose tokens start at bytes `first`..`last`: its
    neighbours are the definitions, one of a kind and name in the file, that end above it
    or start below it (a definition holding a cited token is none), NEIGHBOURS a side,
    none inside another listed (a class's methods below it are gone with the class: the
    next neighbour is the definition after the class), and, where those all lie inside a
    definition holding it, the nearest one outside (`_enclosing`). No token is read, and
    the file's definitions are listed once per parse (`_bounds`), not once per citation."""
    if parsed.tree is None:
        return None
    ends, starts, extents = _bounds(parsed)
    at = bisect.bisect_right(ends, (first, _LAST))
    above = _apart(((k, b) for b, k in reversed(ends[:at])), extents)
    at = bisect.bisect_right(starts, (last, _LAST))
    below = _apart(((k, b) for b, k in starts[at:]), extents)
    if len(above) < NEIGHBOURS:
        above.append((None, 0))
    if len(below) < NEIGHBOURS:
        below.append((None, len(parsed.source)))
    outward = above[-1][0] is not None or below[-1][0] is not None  # no edge yet
    for low, high in _enclosing(parsed, first, last) if outward else ():  # innermost first
        if above[-1][0] and all(low <= extents[k][0] for k, _ in above if k):  # outside it,
            at = bisect.bisect_right(ends, (low, _LAST))
            more = _apart(((k, b) for b, k in reversed(ends[:at])), extents, above)
            above = more if len(more) > len(above) else [*above, (None, 0)]
        if below[-1][0] and all(extents[k][1] <= high for k, _ in below if k):  # or the edge
            at = bisect.bisect_left(starts, (high,))
            more = _apart(((k, b) for b, k in starts[at:]), extents, below)
            below = more if len(more) > len(below) else [*below, (None, len(parsed.source))]
    return Scope(parsed.source, parsed.language, first, tuple(above), tuple(below), parsed.blob)


def _apart(
    nearest: Iterable[tuple[Key, int]],
    extents: dict[Key, tuple[int, int]],
    listed: Sequence[tuple[Key | None, int]] = (),
) -> list[tuple[Key | None, int]]:
    """`listed`, then the first NEIGHBOURS of `nearest` that lie inside none listed before
    them (given `listed`: the first one, which is past them all, or none)."""
    found, most = list(listed), len(listed) + (1 if listed else NEIGHBOURS)
    for key, byte in nearest:
        start, end = extents[key]
        if any(extents[k][0] <= start and end <= extents[k][1] for k, _ in found if k):
            continue
        found.append((key, byte))
        if len(found) == most:
            break
    return found


def _enclosing(parsed: Parsed, first: int, last: int) -> list[tuple[int, int]]:
    """The bytes of each definition that holds the cited tokens, innermost first: past
    the NEIGHBOURS nearest on a side, all inside the definition that held the citation,
    the next neighbour out is the nearest outside it (Vercel AI's `tools` method, whose
    loop went into a new `toolsFromDefinitions` below it, its locals with it: the scope
    is bounded by the method after that), then outside the one holding it, to the
    file's edge."""
    assert parsed.tree is not None
    kinds = LANGUAGES[parsed.language].definitions
    node = parsed.tree.root_node.descendant_for_byte_range(first, max(first, last))
    spans = []
    while node is not None:
        if is_definition(node, kinds):
            spans.append((with_attributes(node).start_byte, node.end_byte))
        node = node.parent
    return spans


# Sorts after every key at the same byte: `bisect_right` on (byte, _LAST) passes them all.
_LAST: Key = ("\U0010ffff", ())


def _bounds(
    parsed: Parsed,
) -> tuple[list[tuple[int, Key]], list[tuple[int, Key]], dict[Key, tuple[int, int]]]:
    """The definitions of a parse that are one of a kind and name in it, by the byte
    where each ends and by the byte where it starts (its attributes included), sorted;
    and the bytes each spans."""
    key = ("scope bounds",)
    if key not in parsed.derived:
        found = [(node, k) for node, k in definition_nodes(parsed)]
        counts = Counter(k for _, k in found)
        unique = [(node, k) for node, k in found if counts[k] == 1]
        parsed.derived[key] = (
            sorted((node.end_byte, k) for node, k in unique),
            sorted((with_attributes(node).start_byte, k) for node, k in unique),
            {k: (with_attributes(node).start_byte, node.end_byte) for node, k in unique},
        )
    return cast(
        "tuple[list[tuple[int, Key]], list[tuple[int, Key]], dict[Key, tuple[int, int]]]",
        parsed.derived[key],
    )


# Kinds of definition a stretch of code is spread over when a commit cuts it up: code
# that calls and declares, not the names (constants, fields, locals) it assigns.
_UNITS = ("function", "method", "class", "impl", "trait", "interface", "struct", "enum", "mod_")


def units_within(parsed: Parsed, low: int, high: int) -> list[Node]:
    """The functions, methods or types that lie whole within the bytes [low, high), not
    those inside another one of them: one for a function cited whole, none for lines
    inside one, many for a stretch that took in the helpers a function was cut into
    (`history.stepwise`)."""
    key = ("unit spans",)
    if key not in parsed.derived:
        parsed.derived[key] = sorted(
            ((with_attributes(node).start_byte, node.end_byte, n), node)
            for n, (node, (kind, _)) in enumerate(definition_nodes(parsed))
            if any(unit in kind for unit in _UNITS)
        )
    spans = cast("list[tuple[tuple[int, int, int], Node]]", parsed.derived[key])
    at = bisect.bisect_left(spans, ((low,),))
    inside = [(span, node) for span, node in spans[at:] if span[0] < high and span[1] <= high]
    return [
        node
        for span, node in inside
        if not any(o != span and o[0] <= span[0] and span[1] <= o[1] for o, _ in inside)
    ]


def bare(names: tuple[str, ...]) -> tuple[str, ...]:
    """A name path without its types' type arguments, a trait's kept (`From<A>` is not
    `From<B>`): rig's `impl<M> Index for Store<M>`, its model type-erased, is `Store`'s."""
    parts = (name.rpartition(" for ") for name in names)
    return tuple(trait + sep + _GENERIC.sub("", _GENERIC.sub("", own)) for trait, sep, own in parts)


_GENERIC = re.compile(r"<[^<>]*>")


# A JavaScript or TypeScript `const`, `let` or `var` binding: a definition of its own (found
# by its name path), and a local where it lies in a function.
DECLARATOR = "variable_declarator"


def other_local(kind: str, names: tuple[str, ...], cited: Key, known: Iterable[Key]) -> bool:
    """Whether a JavaScript or TypeScript declarator named `names` is a local of a function
    the baseline file had (`known`: its definitions) other than the citation's (`cited`:
    its definition; the function a cited declarator lies in), and not in a scope around
    it (where a constant is lifted out of its function): that function's own code.
    typescript-sdk's `const result = await this.request({ method: "tools/list", ... })` in
    `listTools`, renamed `page`, is not `readResource`'s `const result = ...`, however like
    it; in a function written since, the code split out into it, a namesake may be it
    (`connect`'s `const result` of the `initialize` request, in a new `_legacyHandshake`)."""
    if kind != DECLARATOR:
        return False
    scope = cited[1][:-1] if cited[0] == DECLARATOR else cited[1]
    if names[:-1] == scope[: len(names) - 1]:
        return False
    return any(path == names[:-1] for _, path in known)
