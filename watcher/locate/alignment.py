"""How cited tokens are carried from their baseline to a version, the way git carries
lines through the hunks of a diff: an alignment of the tokens of the definition that held
them, one rule of found or gone, and the statement a citation closed.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections import Counter
from collections.abc import Collection, Hashable, Sequence
from dataclasses import replace

from watcher.locate.anchors import Anchor, Found
from watcher.locate.editscript import myers
from watcher.parse.languages import LANGUAGES
from watcher.parse.nodes import is_definition
from watcher.parse.plain import Marks
from watcher.parse.syntax import Parsed, Tokens, tokens_between

# The one rule of found, changed or missing: a citation is found in a version where at
# least this share of its cited tokens, each counted for its words (`weight`), survives
# the alignment of the definition that held them (`carry`). Less, and it is missing there:
# its code was deleted or rewritten.
FOUND_SHARE = 0.5
# Tokens a statement the found tokens start inside must begin with, as the citation does,
# to be taken in whole (`_from_statement_start`): `import {`, `from m import`, `x = f(`.
HEAD_TOKENS = 3


def carry(
    before: Sequence[str],
    low: int,
    high: int,
    after: Sequence[str],
    lines: tuple[Marks, Marks] | None = None,
    *,
    paired: bool = False,
    minor: Collection[int] = (),
) -> tuple[int, int] | None:
    """`carried`'s span alone."""
    found = carried(before, low, high, after, lines, paired=paired, minor=minor)
    return None if found is None else found[0]


def carried(
    before: Sequence[str],
    low: int,
    high: int,
    after: Sequence[str],
    lines: tuple[Marks, Marks] | None = None,
    *,
    paired: bool = False,
    minor: Collection[int] = (),
) -> tuple[tuple[int, int], list[tuple[int, int]]] | None:
    """Where tokens before[low:high] went in `after`, as git carries lines through the
    hunks of a diff: the span [start, end) of `after` the aligned tokens occupy (a
    replaced stretch maps to its replacement; code inserted between two cited tokens is
    inside, at either edge outside, sliding it there as git slides a hunk when it reads
    as well there), or None when fewer than FOUND_SHARE of them survive. With `lines`
    (each token's line and its indentation, `plain.line_marks`, in `before` and in
    `after`) the two are aligned line by line first, and token by token only within the
    lines that changed (`_opcodes`; `paired`: each changed line with its successor
    first); where too few survive that, token by token throughout (not `paired`:
    pairing all lines as one block again carried a rewritten body into the next
    function).

    A token survives when it is in a stretch both hold that is more than a coincidence
    of punctuation (two tokens, one a word, or three), or is replaced by one that keeps
    it (`_kept`: a docstring reflowed, or the words of one edited or extended). Each
    counts for its words (`weight`): a docstring of forty words kept while the three
    statements cited below it were rewritten is most of the citation, as its lines are
    most of the cited lines. With the span, the stretches of `after` that cited tokens
    went to (kept or replaced; code inserted between them aside).

    The `minor` cited tokens (indices in `before`: attributes and decorators above a
    cited item, `Anchor.attributes`) do not count in the share: the item's own tokens
    decide whether it is found, and its attributes, edited or dropped, make it changed.
    Their punctuation would outweigh a short item (rust-sdk's `pub use io::stdio;`
    under a `#[cfg(..)]` and a `#[cfg_attr(docsrs, doc(cfg(..)))]` that was dropped)."""
    own = [i for i in range(low, high) if i not in minor]
    counted = set(own) if own else set(range(low, high))
    kept, spans, held = 0, [], []
    mapped: dict[int, int] = {}  # a cited token in a stretch both hold: where it is
    moves: dict[int, int] = {}  # cited tokens an insert slid past, to where they go
    for tag, i1, i2, j1, j2 in _opcodes(before, after, lines, paired):
        a, b = max(i1, low), min(i2, high)
        if tag == "insert":
            if low < i1 < high:
                spans += _inserted(after, moves, i1, j1, j2, low, high)
        elif a < b and tag == "equal":
            if substantial(before[i1:i2]):
                kept += sum(weight(before[i]) for i in range(a, b) if i in counted)
            mapped.update((i, j1 + i - i1) for i in range(a, b))
        elif a < b and tag == "replace":  # the part of the replacement for the cited part
            size, width = i2 - i1, j2 - j1
            if size == width:  # token for token: an edited string may keep its place
                pairs = ((before[i], after[j1 + i - i1]) for i in range(a, b) if i in counted)
                kept += sum(_kept(old, new) for old, new in pairs)
            else:  # a string keeps its words in the replacement's likest string
                counted_strings = [before[i] for i in range(a, b) if i in counted]
                kept += _strings_kept(counted_strings, after[j1:j2])
            held.append((j1 + (a - i1) * width // size, j1 + -(-(b - i1) * width // size)))
    mapped.update(moves)
    held += [(j, j + 1) for j in mapped.values()]
    spans += held
    start, end = min((s for s, _ in spans), default=0), max((e for _, e in spans), default=0)
    if end <= start or kept < FOUND_SHARE * sum(weight(before[i]) for i in counted):
        # Lines kept by a shortest edit script may tie (a `try:` both versions hold, and
        # a second one added): the one taken can leave a cited line unaligned that the
        # tokens alone align. Gone only where neither alignment keeps enough of it.
        return None if lines is None or paired else carried(before, low, high, after, minor=minor)
    return (start, end), held


Opcode = tuple[str, int, int, int, int]


def _opcodes(
    before: Sequence[str],
    after: Sequence[str],
    lines: tuple[Marks, Marks] | None,
    paired: bool = False,
) -> list[Opcode]:
    """The alignment of `before` with `after`, as difflib's opcodes over their tokens.

    With each token's line, it is made as git makes a diff: the lines are aligned first
    (a line is its tokens, so comments and whitespace never count), then the tokens of
    each block of changed lines with each other. A line diff has few ties to break, and
    those it breaks keep lines whole: a statement moved below a call whose arguments it
    shares as many tokens with stays apart from the call, in every later version (the
    token alignment alone could pair the arguments one version and the statement the
    next, so that an edit of the statement changed what was aligned). It is also cheaper:
    the token alignment runs only over the changed lines. `paired`, the lines of a
    changed block are paired with their successors first (`_replaced`)."""
    if lines is None:
        return list(difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes())
    ids: dict[tuple[str, ...], int] = {}
    old, old_rows = _rows(before, lines[0], ids)
    new, new_rows = _rows(after, lines[1], ids)
    found: list[Opcode] = []
    for tag, i1, i2, j1, j2 in line_opcodes(old, new):
        a1, a2, b1, b2 = old_rows[i1], old_rows[i2], new_rows[j1], new_rows[j2]
        if tag != "replace":
            _append(found, (tag, a1, a2, b1, b2))
            continue
        rows = old_rows[i1 : i2 + 1], new_rows[j1 : j2 + 1]
        for op in _replaced(before, after, *rows) if paired else _tokens(before, after, *rows):
            _append(found, op)
    return found


def _replaced(
    before: Sequence[str], after: Sequence[str], old: Sequence[int], new: Sequence[int]
) -> list[Opcode]:
    """The tokens of a block of replaced lines aligned, as git pairs the lines of a
    hunk: cut where a line meets its successor (`_partners`), each stretch a pair of
    lines and the unpaired lines below them, aligned token by token (a call split over
    lines goes with its first line's successor). A line deleted among edited ones is in
    the stretch of the pair above it, apart from a new line below that pair or above
    it: none of its tokens goes to a neighbour's successor for the words they share
    (`from mcp . server .`, an import deleted next to one rewritten) when every new line
    has a better partner. Where no line has one, the block is aligned whole."""
    stretches, i, j = [], 0, 0
    for p, q in _partners(before, after, old, new):
        stretches.append((i, p, j, q))
        i, j = p, q
    stretches.append((i, len(old) - 1, j, len(new) - 1))
    found: list[Opcode] = []
    for n, (i1, i2, j1, j2) in enumerate(stretches):
        ops = _tokens(before, after, old[i1 : i2 + 1], new[j1 : j2 + 1])
        if n and i2 - i1 == 1 < j2 - j1:  # one line and its successor, new lines below
            ops = _below(ops, new[j1 + 1])
        found += ops
    return found


def _below(ops: list[Opcode], end: int) -> list[Opcode]:
    """A line's tokens aligned with its successor's and the new lines below it (`end`:
    where they start), its last stretch replaced by tokens past the successor's end and
    none of it kept after: the new lines are code inserted below it, not its tail's
    replacement (langchain-mcp-adapters' `... import streamablehttp_client`, made
    `... import create_mcp_http_client, streamable_http_client` by a commit that wrote an
    import, a logger and a function below it: its name stood for all of them)."""
    if not ops or ops[-1][0] != "replace" or not ops[-1][3] < end < ops[-1][4]:
        return ops
    _, a1, a2, b1, b2 = ops[-1]
    return [*ops[:-1], ("replace", a1, a2, b1, end), ("insert", a2, a2, end, b2)]


def _tokens(
    before: Sequence[str], after: Sequence[str], old: Sequence[int], new: Sequence[int]
) -> list[Opcode]:
    """The tokens of lines old[0]..old[-1] of `before` and new[0]..new[-1] of `after` (where
    each line starts, and the end) aligned with each other, as difflib's opcodes of all."""
    a1, b1 = old[0], new[0]
    inner = difflib.SequenceMatcher(None, before[a1 : old[-1]], after[b1 : new[-1]],
                                    autojunk=False)  # fmt: skip
    return [(op, a1 + k1, a1 + k2, b1 + m1, b1 + m2) for op, k1, k2, m1, m2 in inner.get_opcodes()]


def _partners(
    before: Sequence[str], after: Sequence[str], old: Sequence[int], new: Sequence[int]
) -> list[tuple[int, int]]:
    """The lines of a replaced block paired one to one, in order, each with its
    successor: the pairs, each at least LINE_LIKENESS alike (difflib's ratio of their
    tokens, `_likeness`): as many of the most alike pairs as can be, then of the next
    most alike, and so on (`_chain`), so that a line goes to its best partner when no
    pair more alike crosses it, however many less alike ones would. An import kept
    edited pairs with its edited self, not with a deleted neighbour while it takes a new
    import, each pair for the `from mcp . server .` or `import { } from` they share; of
    two `try:` as alike, the one that leaves the line above it its partner. None in a
    block of one line a side, or past MAX_LINE_PAIRS lines before × after."""
    n, m = len(old) - 1, len(new) - 1
    if n * m > MAX_LINE_PAIRS or n * m == 1:
        return []
    lines = [before[a:b] for a, b in itertools.pairwise(old)]
    others = [after[a:b] for a, b in itertools.pairwise(new)]
    bags = [Counter(line) for line in others]
    alike: dict[tuple[int, int], float] = {}
    for i, line in enumerate(lines):
        bag = Counter(line)
        for j, other in enumerate(others):
            size = len(line) + len(other)
            if 2 * sum((bag & bags[j]).values()) < LINE_LIKENESS * size:
                continue  # the tokens both hold, order aside, bound the ratio
            ratio = _likeness(line, other)
            if ratio >= LINE_LIKENESS:
                alike[i, j] = ratio
    # Each likeness outweighs all less alike pairs together: its rank's power of a base
    # past their number (Python's integers do not overflow).
    ranks = {ratio: rank for rank, ratio in enumerate(sorted(set(alike.values())))}
    base = len(alike) + 1
    return sorted(chain({k: base ** ranks[r] for k, r in alike.items()}, n, m).items())


def _likeness(line: Sequence[str], other: Sequence[str]) -> float:
    """difflib's ratio of two lines' tokens; none when no word is among those they keep
    (a `}` or a docstring's closing quotes alike by coincidence)."""
    matcher = difflib.SequenceMatcher(None, line, other, autojunk=False)
    blocks = matcher.get_matching_blocks()
    if not any(_WORDY.search(t) for b in blocks for t in line[b.a : b.a + b.size]):
        return 0.0
    return 2 * sum(b.size for b in blocks) / (len(line) + len(other))


def kept_count(tokens: Sequence[str], other: Sequence[str]) -> int:
    """How many of `tokens` `other` keeps in order (difflib's matching blocks); of two long
    sequences, how many both hold, order aside (aligning mcphost's 10,000 tokens of one
    statement with 150,000 of another took minutes)."""
    if len(tokens) * len(other) > ALIGN_MOST:
        return sum((Counter(tokens) & Counter(other)).values())
    matcher = difflib.SequenceMatcher(None, tokens, other, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks())


ALIGN_MOST = 1_000_000  # tokens × tokens past which two sequences are not aligned


def chain(share: dict[tuple[int, int], float], n: int, m: int) -> dict[int, int]:
    """Of the pairs (i, j) of `share`, i < n and j < m, those in order (none crossing
    another) that hold the most share in all, as {i: j}."""
    if not share:
        return {}
    best: list[list[float]] = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            pair = share.get((i, j))
            best[i][j] = max(best[i + 1][j], best[i][j + 1],
                             best[i + 1][j + 1] + pair if pair is not None else 0)  # fmt: skip
    found, i, j = {}, 0, 0
    while i < n and j < m:
        pair = share.get((i, j))
        if pair is not None and best[i][j] == best[i + 1][j + 1] + pair:
            found[i], i, j = j, i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return found


LINE_LIKENESS = 0.5  # the least ratio of a replaced line's tokens to its successor's
MAX_LINE_PAIRS = 2500  # lines before × after in a replaced block: past it, token by token


def line_opcodes(old: Sequence[Hashable], new: Sequence[Hashable]) -> list[Opcode]:
    """The lines' alignment as git's diff makes it: a shortest edit script (Myers), the
    most lines kept. difflib's takes the longest run of kept lines first, so that two
    lines kept together somewhere (`) raise`) can cost three kept elsewhere. Past
    MYERS_EDITS lines edited, difflib's, whose cost does not grow so."""
    pairs = myers(old, new, MYERS_EDITS)
    if pairs is None:
        return list(difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes())
    opcodes: list[Opcode] = []
    i = j = 0
    for x, y in [*pairs, (len(old), len(new))]:
        if x > i or y > j:
            tag = "replace" if x > i and y > j else "delete" if x > i else "insert"
            opcodes.append((tag, i, x, j, y))
        if x < len(old):
            if opcodes and opcodes[-1][0] == "equal":
                opcodes[-1] = ("equal", opcodes[-1][1], x + 1, opcodes[-1][3], y + 1)
            else:
                opcodes.append(("equal", x, x + 1, y, y + 1))
        i, j = x + 1, y + 1
    return opcodes


MYERS_EDITS = 200  # lines inserted or deleted: a rewrite past it is aligned by difflib


def _rows(
    tokens: Sequence[str], marks: Marks, ids: dict[tuple[str, ...], int]
) -> tuple[list[int], list[int]]:
    """Each line's tokens as one number (the same for the same tokens), and where each
    line's tokens start (with the end of the last after them).

    A line of signs alone (`}`, `);`, `) {`) is also told by its indentation, as git tells
    every line: the `}` closing a block is not the one closing a block nested in it, so that
    a shortest edit script cannot pair a cited block's last line with a new inner one's."""
    keys: list[int] = []
    starts: list[int] = []
    for at in range(len(tokens)):
        if at == 0 or marks[at][0] != marks[at - 1][0]:
            starts.append(at)
    starts.append(len(tokens))
    for first, last in itertools.pairwise(starts):
        line = tuple(tokens[first:last])
        key = line if any(map(_worded, line)) else (*line, f"\0{marks[first][1]}")
        keys.append(ids.setdefault(key, len(ids)))
    return keys, starts


def _worded(text: str) -> bool:
    """Whether a token holds a letter or a digit (a name, a keyword, a literal)."""
    return any(c.isalnum() for c in text)


def _append(opcodes: list[Opcode], opcode: Opcode) -> None:
    """Adds `opcode`, one stretch with the last when both are kept (`equal`): a line
    kept next to a changed line's kept tokens is one stretch, as in difflib's own."""
    if opcodes and opcode[0] == "equal" == opcodes[-1][0]:
        _, i1, _, j1, _ = opcodes[-1]
        opcodes[-1] = ("equal", i1, opcode[2], j1, opcode[4])
    elif opcode[1] < opcode[2] or opcode[3] < opcode[4]:
        opcodes.append(opcode)


def _inserted(
    after: Sequence[str], moves: dict[int, int], at: int, j1: int, j2: int, low: int, high: int
) -> list[tuple[int, int]]:
    """The span of code inserted at `at`, between two cited tokens; none when it reads as
    well inserted at an edge of the citation (`} if` + `x { … } if` + `opts` is `}` +
    `if x { … }` + `if opts`): the cited tokens it then passes are moved past it."""
    shift = 0
    while at - shift > low and j1 - shift > 0 and after[j1 - shift - 1] == after[j2 - shift - 1]:
        shift += 1
    if at - shift <= low:
        moves.update((i, j2 - (at - i)) for i in range(at - shift, at))
        return []
    shift = 0
    while at + shift < high and j2 + shift < len(after) and after[j1 + shift] == after[j2 + shift]:
        shift += 1
    if at + shift >= high:
        moves.update((i, j1 + (i - at)) for i in range(at, at + shift))
        return []
    return [(j1, j2)]


def _kept(old: str, new: str) -> int:
    """How much of a token replaced by another survives in it (`weight`): all of it when
    they are the same but for whitespace (a docstring reflowed); of a long one (a string,
    a docstring), the words still there in order (a line of it edited keeps the rest);
    of a short one (a name, a keyword), nothing."""
    if _SPACE.sub("", old) == _SPACE.sub("", new):
        return weight(old)
    if min(len(old), len(new)) < LONG_TOKEN:
        return 0
    if weight(old) == 1:  # one long word: half of its characters, in order
        return int(difflib.SequenceMatcher(None, old, new).ratio() >= FOUND_SHARE)
    words = difflib.SequenceMatcher(None, old.split(), new.split(), autojunk=False)
    return min(weight(old), sum(block.size for block in words.get_matching_blocks()))


def holds_one(names: Collection[str], region: Sequence[str]) -> bool:
    """Whether `region` holds one of `names` (none: held), or a long token that keeps one
    (`_kept`: a module path extended, `'@scope/core'` become `'@scope/core-internal'`)."""
    held = set(region)
    if not names or not held.isdisjoint(names):
        return True
    edited = [text for text in held if len(text) >= LONG_TOKEN]
    return any(_kept(name, text) for name in names if len(name) >= LONG_TOKEN for text in edited)


def _strings_kept(cited: Sequence[str], replacement: Sequence[str]) -> int:
    """What the strings of words in `cited` keep in a replacement of another shape
    (`logger.debug(f"Cleanup cancelled for {name}")` rewritten as a helper's call taking
    "Cleanup cancelled for"): each the most of its words one string there holds. A token
    of one word (a name) keeps nothing so: only in its place (`_kept`)."""
    strings = [text for text in replacement if len(text) >= LONG_TOKEN]
    if not strings:
        return 0
    return sum(max(_kept(text, other) for other in strings) for text in cited if weight(text) > 1)


def weight(token: str) -> int:
    """What a token counts for in the share that survives: its words. A name, a keyword
    or a punctuation mark is one, as is any token shorter than LONG_TOKEN; a long string
    is as many as it has words, so that a docstring is as much of a citation as the
    lines it takes, not one token of it."""
    return 1 if len(token) < LONG_TOKEN else max(1, len(token.split()))


def could_survive(before: Sequence[str], after: Sequence[str]) -> bool:
    """Whether FOUND_SHARE of `before` could survive an alignment with `after`, told
    from the tokens both hold, order aside (`carry` keeps no more): the quick bound that
    spares the alignment. A long token (a string) either lacks may survive edited."""
    held = Counter(after)
    bound = 0
    for text, count in Counter(before).items():
        shared = min(count, held[text])
        if len(text) >= LONG_TOKEN:
            shared = count
        bound += shared * weight(text)
    return bound >= FOUND_SHARE * sum(map(weight, before))


LONG_TOKEN = 8  # characters: shorter tokens (names, keywords) survive only unchanged


def substantial(stretch: Sequence[str]) -> bool:
    """Whether tokens two versions hold in a row are more than a coincidence of
    punctuation: two, one of them a word, or three."""
    words = sum(1 for t in stretch if _WORDY.search(t))
    return len(stretch) >= 3 or (len(stretch) == 2 and words > 0)


_WORDY = re.compile(r"\w")
_SPACE = re.compile(r"\s+")


def completed(anchor: Anchor, parsed: Parsed, found: Found) -> Found:
    """An item found at HEAD, started where its first statement starts there
    (`_from_statement_start`) and ended where the statement its citation closed ends there
    (`Anchor.closes`): a line added at the end of a cited `try`'s last branch is inside
    the item, and changes it; so do tokens added after the last aligned one on its line,
    inside the statement (`from m import A, B` become `from m import A, B, C`: a Python
    statement has no closing token for them to come before). Found as it is otherwise."""
    if parsed.tree is None or found.start_line is None:
        return found
    return _from_statement_start(anchor, parsed, _to_closed(anchor, parsed, found))


def _to_closed(anchor: Anchor, parsed: Parsed, found: Found) -> Found:
    """`found` ended where the statement its citation closed ends (`completed`)."""
    assert parsed.tree is not None and found.start_line is not None
    if anchor.closes is None:
        return found
    start, end = found.start_line, found.end_line or found.start_line
    low, high = parsed.line_bytes(start, end)
    placed = tokens_between(parsed, low, high, starting=True)
    if not placed.start_bytes:
        return found
    node = parsed.tree.root_node.descendant_for_byte_range(*[placed.start_bytes[-1]] * 2)
    while node is not None and not (node.type == anchor.closes and node.start_byte >= low):
        node = node.parent
    if node is None:
        return found
    if node.end_point[0] + 1 <= end:
        return _to_statement_end(found, placed, node.end_byte)
    last = node.end_point[0] + 1
    tokens = _tokens_of(parsed, start, last)
    if tokens == found.tokens or (found.identical and tokens == anchor.tokens):
        return found
    return Found(found.path, start, last, False, parsed.lines(start, last), tokens)


def _from_statement_start(anchor: Anchor, parsed: Parsed, found: Found) -> Found:
    """`found` started where a statement starts that its first token lies inside and that
    ends on its lines, when the citation started with a statement (not `Anchor.ragged`)
    and that statement starts as the citation did: three cited imports, the first since
    wrapped over several lines, are aligned line by line from its `} from './agent';`,
    and the item is the three statements whole. Found as it is otherwise, and where the
    first token starts a construct of its own (a statement of a Go body, whose list of
    statements begins a line above with one as like it: crush's `name = strings...`)."""
    assert parsed.tree is not None and found.start_line is not None
    if anchor.ragged[0] or found.identical or not found.tokens or not anchor.tokens:
        return found
    end_line = found.end_line or found.start_line
    line = tokens_between(parsed, *parsed.line_bytes(found.start_line, found.start_line),
                          starting=True)  # fmt: skip
    texts, n = line.texts, len(found.tokens)  # its first line's: the found ones start there
    at = next((k for k in range(len(texts))
               if tuple(texts[k : k + n]) == found.tokens[: len(texts) - k]), None)  # fmt: skip
    if at is None:
        return found
    first, end = line.start_bytes[at], parsed.line_bytes(found.start_line, end_line)[1]
    kinds = LANGUAGES[parsed.language].definitions
    leaf = parsed.tree.root_node.descendant_for_byte_range(first, first)
    node, started = (leaf.parent if leaf is not None else None), None
    while node is not None and node.end_byte <= end and not is_definition(node, kinds):
        if node.start_byte == first and node.is_named:
            return found  # the first token starts a construct of its own
        if node.start_byte < first and node.is_named:  # a statement it ends inside
            started = node
        node = node.parent
    if started is None:
        return found
    head = tokens_between(parsed, started.start_byte, first, starting=True).texts
    k = min(HEAD_TOKENS, len(head), len(anchor.tokens))
    if not k or tuple(head[:k]) != anchor.tokens[:k]:  # it starts as the citation did
        return found
    start_line = started.start_point[0] + 1
    return Found(found.path, start_line, end_line, False, parsed.lines(start_line, end_line),
                 (*head, *found.tokens))  # fmt: skip


def _to_statement_end(found: Found, placed: Tokens, end: int) -> Found:
    """`found` with the tokens of its lines (`placed`) that follow its last one and start
    before byte `end` (the statement's end) added: none, and it is as it is."""
    n = len(found.tokens)
    texts = placed.texts
    at = next((k for k in range(len(texts) - n, -1, -1) if tuple(texts[k : k + n]) == found.tokens),
              None)  # fmt: skip
    if not n or at is None:
        return found
    extra = [t for k, t in enumerate(texts[at + n :], at + n) if placed.start_bytes[k] < end]
    if not extra:
        return found
    return replace(found, identical=False, tokens=(*found.tokens, *extra))


def _tokens_of(parsed: Parsed, start: int, end: int) -> tuple[str, ...]:
    low, high = parsed.line_bytes(start, end)
    return tuple(tokens_between(parsed, low, high, starting=True).texts)


def likeness(a: Sequence[str], b: Sequence[str]) -> float:
    """How alike two token sequences are, 0 to 1 (difflib's ratio, no junk heuristic)."""
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def kept(a: Sequence[str], b: Sequence[str]) -> float:
    """The share of `a`'s tokens that `b` keeps, in order (difflib's matching blocks)."""
    if not a:
        return 0.0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / len(a)
