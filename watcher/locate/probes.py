"""Byte probes for a history walk: whether `matching.place` would find an anchor in an
older version no more than in the newer one, told from the two versions' bytes, so that
the older one need not be judged (nor, mostly, parsed).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import cast

from watcher.locate.anchors import Anchor
from watcher.locate.definitions import few_word_places, keyword, may_define
from watcher.locate.matching import IDENTITY, SIMILAR_IN_FILE, may_be_alike, renamed_definition
from watcher.locate.windows import Stretches, in_order, line_votes, probe_ranges, window_bytes
from watcher.parse.diffs import common_ends
from watcher.parse.languages import BLOCK_COMMENT, LANGUAGES
from watcher.parse.syntax import TEXT, WORD, Parsed, parse


def stays_missing(
    anchor: Anchor,
    language: str,
    newer: Parsed,
    older: Parsed,
    stretches: Stretches | None = None,
    apart: bool = False,
) -> bool:
    """Whether `place` finds the anchor in `older` (a file in `language`) no more than in
    `newer`, where it is missing, told from their bytes. `place` reads
    the windows around its rarest token's occurrences (for a verbatim match) and around
    the lines its words vote for (for a similar region), and the definition it looks for
    by name: each window of `older` must be one of `newer`'s, or lack what a match needs
    there (every probe for a verbatim match, one of the rarest tokens for a similar
    region: `IDENTITY`), and `older` must not hold the definition: some word of its name
    is not there, or no occurrence of the name can be a definition's (`may_define`). Where
    the bytes around what differs could hold it renamed, `older` is parsed to tell.
    `stretches`: where the two differ (`differing(older, newer, ...)`), when found already;
    `apart`: the definitions it could be found in by name or renamed are known to be the
    same in both (`history.candidates`), so neither is looked for."""
    if anchor.start_line is None or anchor.context or not anchor.token_lines:
        return False
    if any("\ufffd" in t for t in anchor.probes):
        return False
    if anchor.definition is not None and not apart:
        own = anchor.definition[1][-1].encode()
        places = [few_word_places(older.source, w, 0, older.stats) for w in WORD.findall(own)]
        named = all(p is None for p in places)
        if named and may_define(older.source, language, anchor.definition, older.stats):
            return False  # the definition may be there
    if not anchor.body and anchor.scope is not None and _scoped_in(anchor, newer, older, stretches):
        return False  # carried through its scope, it may keep enough of its tokens there
    if not _no_match_in(anchor, newer, older):
        return False
    # Its definition renamed, its rarest tokens rewritten with the name, may be there.
    renamed = not apart and _may_be_renamed(anchor, language, newer, older, stretches)
    return not renamed or not _renamed_in(anchor, language, older)


def _scoped_in(
    anchor: Anchor, newer: Parsed, older: Parsed, stretches: Stretches | None = None
) -> bool:
    """Whether `older` may hold, where it differs from `newer`, what carrying a citation
    that no definition held through its scope (`scopes.through_scope`) could find: one of
    its rarest words, or the name of a neighbour that bounds the scope. Such a citation
    is found by neither of the windows `_no_match_in` reads (kubernetes-mcp-server's
    three Go imports, strings with no word to vote for a line: the version before the
    commit that removed the second still holds two of them)."""
    source = older.source
    if stretches is None:
        start, end = common_ends(newer.source, source)
        stretches = [(start, max(start, len(source) - end), 0, 0)]
    words = _scope_words(anchor)
    return any(
        source.find(word, max(0, low - len(word) + 1), high + len(word) - 1) >= 0
        for low, high, _, _ in stretches
        for word in words
    )


def _scope_words(anchor: Anchor) -> frozenset[bytes]:
    """`_scoped_in`'s words: the anchor's rarest ones and its scope's neighbours' names,
    told once per anchor (a walk asks at every step)."""
    memo = ("scope words",)
    if memo not in anchor.derived:
        scope = anchor.scope
        assert scope is not None
        names = [key[1][-1] for key, _ in (*scope.above, *scope.below) if key and key[1]]
        texts = (t.encode() for t in (*anchor.probes, *names))
        anchor.derived[memo] = frozenset(t for t in texts if WORD.search(t))
    return cast("frozenset[bytes]", anchor.derived[memo])


def _no_match_in(anchor: Anchor, newer: Parsed, older: Parsed) -> bool:
    """Whether `older` holds no verbatim match of the anchor and no region like it that
    `newer` did not hold: a window around its rarest tokens, or around the lines its words
    vote for, that is not one of `newer`'s lacks what a match needs there."""
    probes = [t.encode() for t in anchor.probes or anchor.tokens]
    identity = probes[:IDENTITY]
    if identity and not any(p in older.source for p in identity):
        return True  # a window holds a match only with one of these: no window is read
    seen_probes, seen_votes = _windows(anchor, newer)
    probe_windows, vote_windows = _windows(anchor, older)
    if any(w not in seen_probes and all(p in w for p in probes) for w in probe_windows):
        return False
    return all(w in seen_votes or not any(p in w for p in identity) for w in vote_windows)


def _renamed_in(anchor: Anchor, language: str, older: Parsed) -> bool:
    """Whether `older` holds the anchor's definition renamed (`renamed_definition`), told
    from its parse where its bytes could not rule it out: in a file of many look-alike
    definitions (codex's test modules) they seldom can, and judging the whole version
    would search it for a similar region too, which the windows ruled out already
    (`_no_match_in`)."""
    parsed = parse(older.blob, language, lambda: older.source, anchor.path, older.stats)
    if parsed.tree is None:
        return True
    return renamed_definition(anchor, anchor.path, parsed) is not None


def _may_be_renamed(
    anchor: Anchor,
    language: str,
    newer: Parsed,
    older: Parsed,
    stretches: Stretches | None = None,
) -> bool:
    """Whether `older` may hold the anchor's definition renamed where `newer` does not:
    `matching.renamed_definition` needs none of the rarest tokens (a rename rewrites them
    with the name, python-sdk's `_try_create_model_and_schema`), only a definition of its
    kind, of a name the baseline file had no such definition of, as like it as
    SIMILAR_IN_FILE. Such a definition is not the same in `newer`, so it lies within
    reach of one of the stretches that differ (its name, after its keyword, too), which
    must hold enough of its definition's tokens for it (`matching.may_be_alike`). A commit
    that edited a file in several places is searched around each, not from its first edit
    to its last (`stretches`, when told; else one stretch)."""
    if anchor.definition is None or not anchor.body:
        return False
    source = older.source
    if stretches is None:
        start, end = common_ends(newer.source, source)
        stretches = [(start, max(start, len(source) - end), 0, 0)]
    reach = 3 * sum(len(t.encode()) for t in anchor.body) + 1024  # its definition, and more
    windows: list[tuple[int, int]] = []
    for low, high, _, _ in stretches:
        low, high = max(0, low - reach), min(len(source), high + reach)
        if windows and low <= windows[-1][1]:
            low = windows.pop()[0]
        windows.append((low, high))
    return any(_renamed_near(anchor, language, source, low, high) for low, high in windows)


def _renamed_near(anchor: Anchor, language: str, source: bytes, low: int, high: int) -> bool:
    """`_may_be_renamed`, within bytes [low, high) of the older version."""
    assert anchor.definition is not None
    if not may_be_alike(anchor, source, low, high, SIMILAR_IN_FILE):
        return False
    kind = anchor.definition[0]
    word = keyword(language, kind)
    if word is None:
        return True  # not told from the bytes
    known = {n[-1].encode() for k, n in anchor.known if k == kind and n}
    named = re.compile(rb"(?<![\w$])" + re.escape(word) + rb"\s+([A-Za-z_$][\w$]*)")
    for found in named.finditer(source, low):  # to its name's end, past `high`
        if found.start() >= high:
            return False
        if found.group(1) not in known:
            return True
    return False


def stays_unmatched(
    anchor: Anchor,
    language: str,
    newer: Parsed,
    older: Parsed,
    kept: bytes = b"",
    stretches: Stretches | None = None,
) -> bool:
    """Whether `place` finds no verbatim match of the anchor in `older` either, where
    `newer` has none (the item is changed there), and looks for it the same way, told from
    their bytes alone: each file holds every probe in both or in neither (with one
    missing, `place` takes the definition whole: `_could_occur`), and each window around
    the rarest token's occurrences in `older` is one of `newer`'s, or lacks a probe or the
    anchor's tokens in order (what `_exact_in_windows` would compare). `kept`: bytes both
    versions hold (the item's lines, followed unchanged), whose probes need no search;
    `stretches`: where the two differ (`differing(older, newer, ...)`), when found already.
    A file no grammar reads is compared otherwise: not told."""
    if language == TEXT or anchor.start_line is None or anchor.context or not anchor.probes:
        return False
    ordered = anchor.encoded
    if ordered is None:
        return False
    probes = [p.encode() for p in anchor.probes]
    source = older.source
    if stretches is None:  # one stretch, from the two versions' common start to their end
        start, end = common_ends(newer.source, source)
        stretches = [(start, len(source) - end, start, len(newer.source) - end)]
    if not _held_alike(probes, kept, newer, older, stretches):
        return False
    if older.derived.get(("witness", probes[0])) == -1:
        return True  # its rarest probe is nowhere in it: no window to look in
    needles = probes[1:]
    written = _written(anchor, language)
    gap = _gap(language)
    seen = _probe_windows(anchor, newer)
    # A window whose bytes, and those within reach of it, are all shared is the newer
    # version's window there too (the same bytes, around the same places of the probe).
    reach = 2 * (2 * len(anchor.text.encode()) + 1024 + len(probes[0]))
    edited = [(low - reach, high + reach) for low, high, _, _ in stretches]
    for low, high in probe_ranges(anchor, older, (newer, stretches)):
        if not any(a <= high and b >= low for a, b in edited) or source[low:high] in seen:
            continue
        if not all(source.find(n, low, high) >= 0 for n in needles):
            continue
        if not written or not _plain(source[low:high], language):
            if in_order(source, ordered, low, high):
                return False
        elif _written_in(source, ordered, gap, low, high):
            return False
    return True


def _held_alike(
    probes: Sequence[bytes],
    kept: bytes,
    newer: Parsed,
    older: Parsed,
    stretches: Stretches | None = None,
) -> bool:
    """Whether both versions hold every probe, or neither does. A probe found in `kept`
    (bytes both hold) is in both; the rest are looked for in each version (`_witness`),
    in the older one, given where the two differ (`stretches`), only there when the
    newer one's place of it says nothing."""
    key = ("not kept", tuple(probes), kept)  # a walk asks with the same bytes at each step
    rest = cast("list[bytes] | None", newer.derived.get(key))
    if rest is None:
        rest = [p for p in probes if p not in kept]
    older.derived[key] = rest
    return all(_witness(newer, p) >= 0 for p in rest) == all(
        _witness(older, p, newer, stretches) >= 0 for p in rest
    )


def _witness(
    version: Parsed, probe: bytes, newer: Parsed | None = None, stretches: Stretches | None = None
) -> int:
    """Where `probe` starts in the version (some place of it), or -1: found once per
    version and kept with it, as a walk asks of each version as the older of two and then
    as the newer. Given the version after it (`newer`, whose place is known) and where the
    two differ (`stretches`), a place of the newer one in the bytes both share is one here
    too; a probe the newer one lacks is here only within a stretch, widened by its length;
    otherwise it is looked for in the whole version, from the end (`rfind`, not `in`: on
    CPython 3.11 it ran 2-5 times as fast for a short probe that a 116 KB file lacks).
    A commit that edits a 190 KB file in a few places differs from the version before in
    some hundreds of bytes."""
    key = ("witness", probe)
    found = version.derived.get(key)
    if found is None:
        source, size = version.source, len(probe)
        known = newer.derived.get(key) if newer is not None else None
        if stretches is None or not isinstance(known, int):
            found = source.rfind(probe)
        elif known < 0:  # every place here touches what differs
            found = next(
                (
                    at
                    for low, high, _, _ in stretches
                    for at in [source.rfind(probe, max(0, low - size + 1), high + size - 1)]
                    if at >= 0
                ),
                -1,
            )
        elif all(high <= known or low >= known + size for _, _, low, high in stretches):
            shift = next((o - n for _, o, _, n in reversed(stretches) if n <= known), 0)
            found = known + shift
        else:
            found = source.rfind(probe)
        version.derived[key] = found
    return cast("int", found)


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


def _written(anchor: Anchor, language: str) -> bool:
    """Whether the anchor's own lines read as its tokens one after another, with only
    whitespace and comments between (`_written_in`). Not so when text that no token
    covers lies between them (as some grammars leave inside strings): then a search for
    them so written would miss matches, and tells nothing."""
    key = ("written", language)
    if key not in anchor.derived:  # kept with the anchor: a walk asks at every version
        text = anchor.text.encode()
        ordered = [t.encode() for t in anchor.tokens]
        anchor.derived[key] = _written_in(text, ordered, _gap(language), 0, len(text))
    return anchor.derived[key] is True


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


def _probe_windows(anchor: Anchor, parsed: Parsed) -> frozenset[bytes]:
    """The bytes of the windows `place` reads for a verbatim match in a version, found
    once per version and anchor and kept with the version: a walk compares each version
    with the one after it."""
    key = ("probe windows", anchor)
    if key not in parsed.derived:
        source = parsed.source
        found = frozenset(source[low:high] for low, high in probe_ranges(anchor, parsed))
        parsed.derived[key] = found
    return cast("frozenset[bytes]", parsed.derived[key])


def _windows(anchor: Anchor, parsed: Parsed) -> tuple[frozenset[bytes], frozenset[bytes]]:
    """The bytes of the windows `place` reads in a version: around the rarest token's
    occurrences, and around the lines the words vote for (kept with the version)."""
    key = ("windows", anchor)
    if key not in parsed.derived:
        source, starts = parsed.source, parsed.line_starts
        votes = frozenset(
            source[slice(*window_bytes(source, starts, line, anchor))]
            for line in line_votes(anchor, parsed)
        )
        parsed.derived[key] = (_probe_windows(anchor, parsed), votes)
    return cast("tuple[frozenset[bytes], frozenset[bytes]]", parsed.derived[key])
