"""Quoted code (SPEC 4): fenced blocks in a note's body, and where they occur upstream.

A quote is tracked like a citation without lines: it must still occur token for token
in one of the note's cited files. `…` or `...` inside it stands for anything, so a quote
is a sequence of segments that must occur in order. Tokens are tree-sitter's, so the
quote's whitespace, line breaks and comments never count.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from watcher.models import Quote
from watcher.parse import languages
from watcher.parse.syntax import Parsed, Tokens, tokenize

IGNORE = "watch:ignore"  # `<!-- watch:ignore -->` right before a block opts it out
# `...` directly followed by a name or a bracket is code (a JS spread, a Go variadic).
ELISION = re.compile(r"…|\.\.\.(?![\w$(\[{])")
Span = tuple[int, int]  # token indices [first, end) in a file


def extract(note_id: str, body: str, first_line: int) -> tuple[Quote, ...]:
    """The fenced blocks of a note body in a language watch reads, in order.

    `first_line` is the file line `body` starts at. Inline code spans, indented code
    blocks and blocks after `<!-- watch:ignore -->` are not quotes.
    """
    quotes: list[Quote] = []
    for line, info, text, ignored in fences(body):
        language = languages.for_fence(info)
        if language is not None and not ignored:
            quotes.append(
                Quote(
                    note=note_id,
                    index=len(quotes) + 1,
                    language=language,
                    text=text,
                    line=first_line + line,
                )
            )
    return tuple(quotes)


_OPEN = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_ITEM = re.compile(r"^(?P<marker> *(?:[-+*]|\d{1,9}[.)]))(?P<gap> {1,4})(?=\S)")
_QUOTE_MARK = re.compile(r"^ {0,3}> ?")


def fences(body: str) -> Iterator[tuple[int, str, str, bool]]:
    """CommonMark fenced code blocks: (line index, info string, content, opted out).

    Written for notes, not as a full Markdown parser: fences at the top level, in list
    items and in block quotes, as markdown-it (the reference the tests compare with)
    finds them. Loading a Markdown library on every run would cost more than this.
    """
    lines = [_unquote(line) for line in body.splitlines()]
    container = 0  # the content column of the list item we are in
    previous = ""  # the last non-blank line before this one
    number = 0
    while number < len(lines):
        line = lines[number]
        if line.strip():
            indent = len(line) - len(line.lstrip(" "))
            if indent < container:
                container = 0
            if item := _ITEM.match(line):
                container = len(item.group("marker")) + len(item.group("gap"))
                line = " " * container + line[container:]
        opened = _OPEN.match(line[container:]) if line.strip() else None
        if opened is None or len(opened.group("indent")) > 3 or _bad_info(opened):
            previous = line.strip() or previous
            number += 1
            continue
        strip = container + len(opened.group("indent"))
        fence = opened.group("fence")
        start = number
        content, number = _content(lines, number + 1, fence, container, strip)
        ignored = previous.startswith("<!--") and IGNORE in previous
        yield start, opened.group("info").strip(), "".join(content), ignored
        previous = fence


def _content(
    lines: list[str], number: int, fence: str, container: int, strip: int
) -> tuple[list[str], int]:
    """A fence's lines up to its closing fence (or the end), and the line after it."""
    content: list[str] = []
    while number < len(lines):
        line = lines[number]
        rest = line[container:] if line[:container].strip() == "" else line
        stripped = rest.lstrip(" ")
        closing = stripped.rstrip()
        if (
            len(rest) - len(stripped) <= 3
            and closing.startswith(fence)
            and set(closing) == {fence[0]}
        ):
            return content, number + 1
        if line.strip() and len(line) - len(line.lstrip(" ")) < container:
            return content, number  # the list item ended: so did the fence
        cut = min(strip, len(line) - len(line.lstrip(" ")))
        content.append(line[cut:] + "\n")
        number += 1
    return content, number


def _bad_info(opened: re.Match[str]) -> bool:
    return opened.group("fence")[0] == "`" and "`" in opened.group("info")


def _unquote(line: str) -> str:
    while match := _QUOTE_MARK.match(line):
        line = line[match.end() :]
    return line


@dataclass(frozen=True)
class Segment:
    """Tokens between two elisions, compared as one string without whitespace.

    Out of context tree-sitter may cut a quote's tokens finer than the file's (`=>` read
    as `=` `>` in a lone match arm), so tokens are compared by their joined text; a cut
    with whitespace on either side must still be a cut on the other side, so `a b`
    never matches `ab`.
    """

    texts: tuple[str, ...]
    compact: str
    cuts: frozenset[int]  # offsets in `compact` where a token starts (0 excluded)
    hard: frozenset[int]  # those with whitespace or a comment before them


@dataclass(frozen=True)
class Pattern:
    """A quote as token segments that must occur in order, anything between them."""

    segments: tuple[Segment, ...]
    marker: str  # the elision the quote writes: `…` or `...`

    @property
    def size(self) -> int:
        return sum(len(s.texts) for s in self.segments)


def pattern(text: str, language: str) -> Pattern:
    """Tokenize a quote, each segment between elisions on its own (not cached: tiny)."""
    from tree_sitter import Parser

    parser = Parser(languages.grammar(language))
    segments = []
    for part in ELISION.split(text):
        raw = part.encode("utf-8")
        tokens = tokenize(parser.parse(raw).root_node, raw)
        if tokens.texts:
            segments.append(_segment(tokens))
    marker = "..." if "..." in text and "…" not in text else "…"
    return Pattern(tuple(segments), marker)


def _segment(tokens: Tokens) -> Segment:
    offsets, hard = _layout(tokens)
    return Segment(
        tuple(tokens.texts),
        "".join(tokens.texts),
        frozenset(offsets[1:]),
        frozenset(o for o, h in zip(offsets, hard, strict=True) if h and o),
    )


def _layout(tokens: Tokens) -> tuple[list[int], list[bool]]:
    """Each token's offset in the joined text, and whether whitespace comes before it."""
    offsets, hard, at, end = [], [], 0, -1
    for text, start in zip(tokens.texts, tokens.start_bytes, strict=True):
        offsets.append(at)
        hard.append(start > end >= 0)
        at += len(text)
        end = start + len(text.encode("utf-8"))
    return offsets, hard


@dataclass(frozen=True)
class _Compact:
    text: str
    offsets: list[int]
    hard: list[bool]


def _compact(parsed: Parsed) -> _Compact:
    """The file's tokens as one text, made once per parse and kept with it."""
    compact = parsed.derived.get(_Compact)
    if not isinstance(compact, _Compact):
        offsets, hard = _layout(parsed.tokens)
        compact = parsed.derived[_Compact] = _Compact("".join(parsed.tokens.texts), offsets, hard)
    return compact


@dataclass(frozen=True)
class Match:
    """Where a quote occurs (score 1.0) or comes closest (score < 1.0) in one file."""

    spans: tuple[Span, ...]  # one per segment that matched at all
    score: float  # share of the quote's tokens found in place

    @property
    def exact(self) -> bool:
        return self.score == 1.0


def find(quote: Pattern, parsed: Parsed) -> Match | None:
    """The first place the quote occurs in the file, segments in order; None if nowhere."""
    compact = _compact(parsed)
    spans: list[Span] = []
    pos = 0
    for segment in quote.segments:
        span = _occurrence(compact, segment, pos)
        if span is None:
            return None
        spans.append(span)
        pos = span[1]
    return Match(tuple(spans), 1.0) if spans else None


def closest(quote: Pattern, parsed: Parsed) -> Match | None:
    """Where the file comes closest to the quote: each segment exactly where it can be,
    else around its longest run of matching tokens. None when nothing matches at all."""
    exact = find(quote, parsed)
    if exact is not None:
        return exact
    compact, texts = _compact(parsed), parsed.tokens.texts
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(texts)  # indexes the file once for every segment
    spans: list[Span] = []
    matched, pos = 0, 0
    for segment in quote.segments:
        span = _occurrence(compact, segment, pos)
        if span is not None:
            spans.append(span)
            matched, pos = matched + len(segment.texts), span[1]
            continue
        tokens = list(segment.texts)
        matcher.set_seq1(tokens)
        a, b, size = matcher.find_longest_match(0, len(tokens), pos, len(texts))
        if size == 0:
            continue
        start = max(pos, b - a)
        # As many of the file's tokens as make up the segment's text (they may be coarser).
        reach = compact.offsets[start] + len(segment.compact)
        end = max(start + 1, bisect.bisect_left(compact.offsets, reach))
        blocks = difflib.SequenceMatcher(None, tokens, texts[start:end], autojunk=False)
        matched += sum(m.size for m in blocks.get_matching_blocks())
        spans.append((start, end))
        pos = end
    if not spans:
        return None
    return Match(tuple(spans), min(matched / max(1, quote.size), 0.99))


def category(quote: Pattern, files: list[Parsed]) -> str:
    """What a quote is in one version of its files: same, changed or missing (as judged)."""
    if any(find(quote, parsed) for parsed in files):
        return "same"
    return "changed" if any(closest(quote, parsed) for parsed in files) else "missing"


def lines(parsed: Parsed, match: Match) -> tuple[int, int]:
    """The first and last line of a match."""
    return parsed.lines_of(match.spans[0][0], match.spans[-1][1])


def excerpt(parsed: Parsed, match: Match, marker: str = "…") -> str:
    """The file's lines a match covers, gaps between its segments written as `marker`:
    a quote that occurs in the file as it is now (what `fix --accept` writes)."""
    source = parsed.source.decode("utf-8", errors="replace").splitlines()
    chunks: list[list[int]] = []
    for first, end in match.spans:
        start, stop = parsed.lines_of(first, end)
        if chunks and start <= chunks[-1][1] + 1:
            chunks[-1][1] = max(chunks[-1][1], stop)
        else:
            chunks.append([start, stop])
    blocks = [source[a - 1 : b] for a, b in chunks]
    indent = min(
        (len(line) - len(line.lstrip()) for block in blocks for line in block if line.strip()),
        default=0,
    )
    out: list[str] = []
    for number, block in enumerate(blocks):
        if number:  # the elision, indented like the deeper of the lines around it
            around = (blocks[number - 1][-1][indent:], block[0][indent:])
            out.append(" " * max(len(line) - len(line.lstrip()) for line in around) + marker)
        out += [line[indent:] for line in block]
    return "\n".join(out) + "\n"


def _occurrence(compact: _Compact, segment: Segment, pos: int) -> Span | None:
    """The first occurrence of a segment at or after token `pos`, as a token span."""
    offsets, text = compact.offsets, compact.text
    at = offsets[pos] if pos < len(offsets) else len(text)
    while (at := text.find(segment.compact, at)) >= 0:
        first = bisect.bisect_left(offsets, at)
        end_at = at + len(segment.compact)
        end = bisect.bisect_left(offsets, end_at)
        if (
            first < len(offsets)
            and offsets[first] == at
            and ((end == len(offsets) and end_at == len(text)) or offsets[end] == end_at)
            and _same_cuts(compact, segment, first, end)
        ):
            return first, end
        at += 1
    return None


def _same_cuts(compact: _Compact, segment: Segment, first: int, end: int) -> bool:
    """Whitespace on either side between two tokens is a cut on both sides."""
    base = compact.offsets[first]
    for index in range(first + 1, end):
        if compact.hard[index] and compact.offsets[index] - base not in segment.cuts:
            return False
    starts = set(compact.offsets[first:end])
    return all(base + cut in starts for cut in segment.hard)
