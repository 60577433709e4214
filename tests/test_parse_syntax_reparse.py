"""A version parsed from another version's tree is the tree a fresh parse gives, and a
walk over a file's history parses its versions that way (`syntax.Stats.reparsed`)."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterator

import pytest

from tests.conftest import Project
from watcher.gitbuild import Upstream
from watcher.parse import diffs, syntax
from watcher.parse.languages import grammar

RUST = """\
// Résumé: naïve café
pub fn mode() -> u32 {
    let legacy = 1;
    legacy
}

pub fn greet() -> &'static str {
    "héllo 日本"
}

impl Thing for Other {
    fn go(&self) {}
}
"""
PYTHON = 'LIMIT = 10\n\n\nclass A:\n    NAME = "é"\n\n    def f(self):\n        return 1\n'


def _series(base: str, edits: list[tuple[str, str]]) -> list[bytes]:
    versions, text = [base.encode()], base
    for old, new in edits:
        text = text.replace(old, new, 1) if old else new
        versions.append(text.encode())
    return versions


SERIES = {
    "rust": _series(
        RUST,
        [
            ("= 1", "= 22"),  # in the middle
            ("héllo", "hèllo"),  # é -> è: the bytes differ inside one character
            ("hèllo", "h😀llo"),  # a character of another length
            ("日本", ""),  # multi-byte characters deleted
            ("// Résumé", "use std::fmt;\n// Résumé"),  # at the very start
            ("fn go(&self) {}\n}\n", "fn go(&self) {}\n}\nfn tail() {}"),  # at the end
            ("pub fn mode() -> u32 {", "pub fn mode() -> u32 {{"),  # now a syntax error
            ("u32 {{", "u32 {"),  # and fixed
            ("", ""),  # everything deleted
            ("", RUST),  # and written again
        ],
    ),
    "python": _series(
        PYTHON,
        [
            ('"é"', '"日本語"'),
            ("LIMIT = 10", "LIMIT = 10\nOTHER = 2"),
            ("return 1\n", "return 1\n\n\ndef g():\n    pass\n"),
            ("", ""),
            ("", "x = 'ü'"),
        ],
    ),
}


def _fresh(language: str, source: bytes) -> syntax.Parsed:
    from tree_sitter import Parser

    return syntax.Parsed("fresh", language, Parser(grammar(language)).parse(source), source)


def _same(parsed: syntax.Parsed, fresh: syntax.Parsed) -> None:
    assert parsed.tree is not None and fresh.tree is not None
    assert str(parsed.tree.root_node) == str(fresh.tree.root_node)
    assert parsed.tokens == fresh.tokens  # texts, lines and bytes of every token
    assert parsed.definitions == fresh.definitions


@pytest.mark.parametrize("language", sorted(SERIES))
def test_each_version_parsed_from_the_last_is_a_fresh_parse(
    language: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(syntax, "_CACHE", syntax.Cache())
    monkeypatch.setattr(syntax, "REPARSE_SHARE", 1.0)  # whatever share differs
    stats = syntax.Stats()
    versions = SERIES[language]
    held = []
    for source in versions:
        blob = hashlib.sha1(source).hexdigest()
        parsed = syntax.parse(blob, language, lambda s=source: s, "src/file", stats=stats)
        _same(parsed, _fresh(language, source))
        held.append(parsed)

    assert stats.parses == len(set(versions))  # a version seen before is held
    assert stats.reparsed == stats.parses - 1
    for parsed in held:  # the trees reparsed from were copied, never edited
        _same(parsed, _fresh(language, parsed.source))


BIG = "".join(f'pub fn g{n}() -> &\'static str {{\n    "v{n} é"\n}}\n\n' for n in range(200))
FAR = (
    BIG.replace('"v5 é"', '"v5 ü 日本"')
    .replace('pub fn g60() -> &\'static str {\n    "v60 é"\n}\n\n', "")
    .replace('"v120 é"', '"v120 é"\n}\n\npub fn new() -> u8 {\n    1')
    .replace('"v199 é"', "0")
)


def test_a_version_far_apart_is_told_each_stretch_that_differs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(syntax, "_CACHE", syntax.Cache())
    stats = syntax.Stats()
    old, new = BIG.encode(), FAR.encode()
    held = syntax.parse("old", "rust", lambda: old, "src/big.rs", stats=stats)
    parsed = syntax.parse("new", "rust", lambda: new, "src/big.rs", stats=stats)

    assert len(diffs.differing(old, new, 0, len(old), 0, len(new))) == 4
    assert stats.reparsed == 1
    _same(parsed, _fresh("rust", new))
    _same(held, _fresh("rust", old))


def test_a_stretch_changed_at_its_middle_and_quarters_is_split_where_it_is_not() -> None:
    lines = [f"    let v{n} = {n * 7919 % 10007:05};{' ' * 70}// {n:02}\n" for n in range(64)]
    kept = range(6, 11)  # about an eighth in: the only lines both versions share
    old = "".join(lines).encode()
    new = "".join(s if n in kept else s.replace("let", "var") for n, s in enumerate(lines)).encode()

    regions = diffs.differing(old, new, 0, len(old), 0, len(new))

    assert len(regions) == 2  # split around the shared lines, not one stretch of all
    assert sum(high - low for _, _, low, high in regions) < len(new) - 4 * len(lines[0])


def test_versions_of_another_path_or_too_different_are_parsed_afresh(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(syntax, "_CACHE", syntax.Cache())
    stats = syntax.Stats()
    first, second = SERIES["rust"][:2]
    syntax.parse("a", "rust", lambda: first, "src/a.rs", stats=stats)
    syntax.parse("b", "rust", lambda: second, "src/b.rs", stats=stats)
    syntax.parse(
        "c", "rust", lambda: b"fn other() {}\n", "src/a.rs", stats=stats
    )  # all of it differs

    assert (stats.parses, stats.reparsed) == (3, 0)


FUNCTIONS = "".join(f"pub fn f{n}() -> u32 {{\n    {n}\n}}\n\n" for n in range(40))
LIB = "src/lib.rs"
V1 = "pub fn mode() -> u32 {\n    let legacy = 1;\n    legacy\n}\n\n" + FUNCTIONS


def test_a_walk_parses_each_version_from_the_one_before(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("v1", {LIB: V1})
    project.note("n", f"{base} {LIB}:1-4")
    for n in range(6):  # each commit edits the cited lines: every version is judged
        upstream.commit(f"edit (#{n + 10})", {LIB: V1.replace("legacy\n}", f"legacy + {n}\n}}")})
    project.counts.parse.reset()

    _, out, _ = project.run("check", "--format", "json", capsys=capsys)

    (result,) = json.loads(out)["results"]
    assert (result["verdict"], result["introduced_by"]["pr"]) == ("changed", 10)
    # The baseline and six versions, each but the first parsed from the one before.
    assert (project.counts.parse.parses, project.counts.parse.reparsed) == (7, 6)


# Words of a soup, some prefixes of others, and what may stand between two of them.
WORDS = [b"alpha", b"alphabet", b"be", b"x1", b"_", b"fn", b"self"]
GAPS = [b" ", b"\n", b"(", b"::", b""]


def _edited_soups(seed: int, count: int = 300) -> Iterator[tuple[bytes, bytes]]:
    """Pairs of a word soup and a version of it randomly edited in a few places: some
    edits inside words, some joining or splitting them, some at the ends."""
    rng = random.Random(seed)

    def soup(n: int) -> bytes:
        return b"".join(rng.choice(WORDS) + rng.choice(GAPS) for _ in range(n))

    for _ in range(count):
        old = soup(rng.randint(300, 3000))
        new = bytearray(old)
        for _ in range(rng.randint(1, 6)):
            at, cut = rng.randint(0, len(new)), rng.randint(0, 8)
            new[at : at + cut] = soup(rng.randint(0, 3))
        yield old, bytes(new)


def test_word_counts_edited_from_another_version_are_the_counts_of_this_one() -> None:
    # The edited counts must be exactly what counting afresh gives.
    edited = 0
    for old, new in _edited_soups(12):
        before = syntax.Parsed("old", syntax.TEXT, None, old)
        assert before.word_counts == Counter(syntax.WORD.findall(old))
        after = syntax.Parsed("new", syntax.TEXT, None, new)
        after.counted_from(before)
        edited += "word_counts" in after.__dict__  # taken from `before`, not counted
        assert after.word_counts == Counter(syntax.WORD.findall(new))
    assert edited > 250  # small edits: edited, not counted afresh


def test_word_places_shifted_from_another_version_are_the_places_in_this_one() -> None:
    # A version counted from another takes that one's places of each word, shifted past
    # the edits, and searches only the edited stretches; the places must be exactly those
    # a search of it finds.
    shifted = 0
    for old, new in _edited_soups(5):
        before = syntax.Parsed("old", syntax.TEXT, None, old)
        assert before.word_counts and all(before.places(w) is not None for w in WORDS)
        after = syntax.Parsed("new", syntax.TEXT, None, new)
        after.counted_from(before)
        shifted += after._edited is not None
        for word in WORDS:
            assert after.places(word) == list(syntax.word_places(new, word))
    assert shifted > 250
