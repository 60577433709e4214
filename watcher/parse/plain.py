"""Tokens of a file read without a syntax tree: by word (a file no grammar reads), or
by line (a file too big for a tree: `syntax.TREE_BYTES`), and where a token occurs in a
big file, found by a scan instead of an index of its every line.

Tokens are kept as columns (interned texts, integer arrays): a large file's tokens cost
about a megabyte, not the tens of megabytes one object per token would.
"""

from __future__ import annotations

import io
import sys
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field


@dataclass
class Tokens:
    """The token sequence of a file: comments and whitespace left out."""

    texts: list[str] = field(default_factory=list)
    start_lines: array[int] = field(default_factory=lambda: array("I"))  # 1-based
    end_lines: array[int] = field(default_factory=lambda: array("I"))
    start_bytes: array[int] = field(default_factory=lambda: array("Q"))

    def add(self, text: str, start_line: int, end_line: int, start_byte: int) -> None:
        self.texts.append(sys.intern(text))
        self.start_lines.append(start_line)
        self.end_lines.append(end_line)
        self.start_bytes.append(start_byte)


def by_word(source: bytes) -> Tokens:
    """A file no grammar reads: its whitespace-separated words, line by line."""
    tokens = Tokens()
    offset = 0
    for number, line in enumerate(source.decode("utf-8", errors="replace").splitlines(), 1):
        for index, word in enumerate(line.split()):
            tokens.add(word, number, number, offset + index)
        offset += len(line) + 1
    return tokens


def by_line(source: bytes) -> Tokens:
    """A big file's tokens: its lines that hold more than blanks, whitespace normalized,
    read one at a time (never the whole file decoded, nor all its lines split at once)."""
    tokens = Tokens()
    offset = 0
    for number, line in enumerate(io.BytesIO(source), 1):
        text = b" ".join(line.split())
        if text:
            tokens.add(text.decode("utf-8", errors="replace"), number, number, offset)
        offset += len(line)
    return tokens


class Scanned(Mapping[str, "array[int]"]):
    """Where a text occurs among `texts`, found by a scan when first asked (the texts are
    interned: compared by identity, in C) and remembered."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.found: dict[str, array[int]] = {}

    def __getitem__(self, text: str) -> array[int]:
        found = self.found.get(text)
        if found is None:
            found = self.found[text] = array("I", indices(self.texts, sys.intern(text)))
        if not found:
            raise KeyError(text)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys(self.texts))

    def __len__(self) -> int:
        return len(set(self.texts))


def indices(texts: list[str], text: str) -> Iterator[int]:
    """The indices of `text` in `texts`, by `list.index` (a C scan) from each to the next."""
    at = -1
    while True:
        try:
            at = texts.index(text, at + 1)
        except ValueError:
            return
        yield at


Marks = Sequence[tuple[int, int]]  # each token's line, and how far that line is indented


def line_marks(
    source: bytes, starts: Sequence[int], lines: Sequence[int]
) -> tuple[tuple[int, int], ...]:
    """Each token's line (`lines`) and the column its line's first token starts at
    (`starts`: each token's first byte in `source`)."""
    marks: list[tuple[int, int]] = []
    indent = 0
    for at, (start, line) in enumerate(zip(starts, lines, strict=True)):
        if at == 0 or line != lines[at - 1]:
            indent = start - (source.rfind(b"\n", 0, start) + 1)
        marks.append((line, indent))
    return tuple(marks)
