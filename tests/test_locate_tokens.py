"""`locate`'s token index: the cost per citation is flat in the size of its file.

Each parsed blob gets one token index (token text -> places), shared by every citation of
that blob; finding a citation compares tokens only where its rarest token occurs. Pinned
by `tokens_scanned` in the searched parse's counters, never by timings.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from watcher.locate import anchors, definitions, matching
from watcher.parse import syntax


def function(name: str, value: int) -> str:
    return (
        f"pub fn {name}(input: u32) -> u32 {{\n"
        f"    let scaled = input * {value};\n"
        f"    scaled + {value}\n"
        "}\n"
    )


def rust_file(count: int, **values: int) -> str:
    """`count` functions of 4 lines and a blank line; `target` is the last but one."""
    names = [f"helper_{i}" for i in range(count - 2)] + ["target", "after"]
    return "\n".join(function(n, values.get(n, 7)) for n in names)


def use_block(count: int, changed: bool = False) -> str:
    """Imports (not a definition), then `count` functions."""
    imports = "use crate::config::Settings;\nuse crate::session::Turn;\n"
    if changed:
        imports = imports.replace("Turn;", "TurnContext;")
    return imports + "\n" + rust_file(count)


def parsed(text: str, stats: syntax.Stats | None = None) -> syntax.Parsed:
    raw = text.encode()
    return syntax.parse(hashlib.sha1(raw).hexdigest(), "rust", lambda: raw, stats=stats)


def target_lines(count: int) -> tuple[int, int]:
    start = 1 + 5 * (count - 2)
    return start, start + 3


def scanned(searched: syntax.Parsed, action: object) -> int:
    """The tokens `action` scanned in the parse it searches (counted on the parse)."""
    searched.stats.reset()
    assert callable(action)
    action()
    return searched.stats.tokens_scanned


@pytest.mark.parametrize("case", ["same", "changed", "moved"])
def test_finding_a_citation_scans_as_many_tokens_in_a_big_file_as_in_a_small_one(
    case: str,
) -> None:
    costs = {}
    for count in (10, 2000):
        base = parsed(rust_file(count))
        start, end = target_lines(count)
        anchor = anchors.anchor(base, "src/lib.rs", start, end)
        if case == "same":
            head = base
        elif case == "changed":
            head = parsed(rust_file(count, target=9))
        else:
            head = parsed("pub fn added() {}\n\n" + rust_file(count))
        found = matching.find(anchor, [("src/lib.rs", head)])
        assert found is not None
        assert found.identical == (case != "changed")
        shift = 2 if case == "moved" else 0
        assert (found.start_line, found.end_line) == (start + shift, end + shift)
        costs[count] = scanned(head, lambda a=anchor, h=head: matching.find(a, [("src/lib.rs", h)]))
    assert costs[2000] == costs[10]
    assert costs[10] < 200  # the construct's tokens a few times over, not the file's


def test_a_region_outside_any_definition_is_found_in_windows_not_the_whole_file() -> None:
    costs = {}
    for count in (10, 2000):
        anchor = anchors.anchor(parsed(use_block(count)), "src/lib.rs", 1, 2)
        head = parsed(use_block(count, changed=True))
        found = matching.find(anchor, [("src/lib.rs", head)])
        assert found is not None and not found.identical
        assert (found.start_line, found.end_line) == (1, 2)
        assert "TurnContext" in found.text
        costs[count] = scanned(head, lambda a=anchor, h=head: matching.find(a, [("src/lib.rs", h)]))
    assert costs[2000] == costs[10]


def test_citations_of_a_parsed_file_never_tokenize_the_whole_file() -> None:
    text = rust_file(50) + "\n// shared index\n"
    stats = syntax.Stats()
    base = parsed(text, stats)
    for index in range(10):
        start = 1 + 5 * index
        anchor = anchors.anchor(base, "src/lib.rs", start, start + 3)
        assert matching.find(anchor, [("src/lib.rs", base)]) is not None
    assert stats.parses == 1
    assert stats.indexed == 0  # anchored and found from the tree, by their own tokens
    assert "_index" not in vars(base)


TARGET = """\
pub fn target(input: u32) -> u32 {
    let budget = input * 7;
    budget + limit_of(input)
}
"""


def test_a_renamed_and_edited_function_is_found_in_windows_not_the_whole_file() -> None:
    """With its definition gone, the citation is looked for by likeness: its rarest words
    vote for the lines it starts at, and only the lines around them are tokenized."""
    costs = {}
    for count in (10, 2000):
        text = rust_file(count).replace(function("target", 7), TARGET)
        base = parsed(text)
        start, end = target_lines(count)
        anchor = anchors.anchor(base, "src/lib.rs", start, end)
        edited = TARGET.replace("fn target", "fn aim").replace("* 7", "* 8")
        head = parsed("// moved down\n" + text.replace(TARGET, edited))
        found = matching.find(anchor, [("src/lib.rs", head)])
        assert found is not None and not found.identical
        assert (found.start_line, found.end_line) == (start + 1, end + 1)
        assert "_index" not in vars(head)  # no token index of the whole file
        costs[count] = scanned(head, lambda a=anchor, h=head: matching.find(a, [("src/lib.rs", h)]))
    assert max(costs.values()) < 300  # a few windows of the construct's size, whatever the file


@pytest.mark.parametrize("case", ["function", "part of a function", "attributes"])
def test_anchoring_a_citation_reads_its_own_tokens_not_the_files(case: str) -> None:
    costs, anchored = {}, {}
    for count in (10, 2000):
        text = rust_file(count) + f"\n// {case}\n"  # a blob of its own: no parse cached
        start, end = target_lines(count)
        if case == "attributes":
            text = text.replace("pub fn target", "#[inline]\n#[must_use]\npub fn target")
            end += 2
        elif case == "part of a function":
            start += 1
        base = parsed(text)
        base.stats.reset()
        anchored[count] = anchors.anchor(base, "src/lib.rs", start, end)
        costs[count] = base.stats.tokens_scanned
        assert "_index" not in vars(base)
        # The same anchor the whole file's token index gives.
        first, last = base.token_range(start, end)
        definition = base.enclosing(first, last)
        assert definition is not None
        assert anchored[count].tokens == base.token_texts(first, last)
        assert anchored[count].definition == definition.key == ("function_item", ("target",))
        assert anchored[count].share == (last - first) / (
            definition.end_token - definition.first_token
        )
    assert costs[2000] == costs[10]
    assert costs[10] < 100  # the function's tokens, twice at most


def test_lines_are_cut_from_the_source_by_newline() -> None:
    text = "fn a() {}\r\nfn b() {}\n\nfn c() {}"
    one = parsed(text)
    assert one.line_count() == 4
    assert one.lines(2, 2) == "fn b() {}"
    assert one.lines(1, 4) == "fn a() {}\nfn b() {}\n\nfn c() {}"
    assert one.lines(4, 9) == "fn c() {}"


def test_a_definition_is_queried_where_its_name_occurs_not_over_the_whole_file() -> None:
    captured = {}
    for count in (10, 2000):
        start, end = target_lines(count)
        anchor = anchors.anchor(parsed(rust_file(count)), "src/lib.rs", start, end)
        head = parsed(rust_file(count, target=13))  # changed: found by its definition
        head.stats.reset()
        assert matching.place(anchor, [("src/lib.rs", head)])[:2] == ("changed", "src/lib.rs")
        captured[count] = head.stats.captured
    assert captured[2000] == captured[10] == 1  # `target` itself, not every function


def test_a_judgment_over_the_cache_budget_keeps_both_of_its_versions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A baseline and a HEAD version each over the parse cache's budget (a 1.5 MB file)
    must not evict each other: every citation of the file would parse both again."""
    monkeypatch.setattr(syntax, "_CACHE", syntax.Cache(budget=1))
    base, head = rust_file(50).encode(), rust_file(50, target=9).encode()
    stats = syntax.Stats()
    for _ in range(20):  # twenty citations, each reading both versions
        syntax.parse("base", "rust", lambda: base, stats=stats)
        syntax.parse("head", "rust", lambda: head, stats=stats)

    assert stats.parses == 2


def test_the_rarest_cited_tokens_are_ranked_from_one_word_count_per_blob() -> None:
    """Anchoring ranks a citation's tokens by how often their words occur in the file,
    counted once per blob (not a scan of the file per token and per citation)."""
    base = parsed(rust_file(200))
    start, end = target_lines(200)

    anchored = [anchors.anchor(base, "src/lib.rs", start, end) for _ in range(3)]

    assert "word_counts" in vars(base)  # built, and kept on the parse for the next citation
    assert anchored[0].probes[0] == "target"  # the one word of the citation the file has once
    assert not any(c.isalnum() for c in anchored[0].probes[-1])  # punctuation comes last
    assert anchored[1].probes == anchored[0].probes


@pytest.mark.parametrize(
    "text", ["", "\n", "\n\n", "fn a() {}", "fn a() {}\n", "a\n\nb", "a\r\nb\n\n", "\n}\n"]
)
def test_line_starts_are_after_every_newline_but_the_last_byte(text: str) -> None:
    source = text.encode()
    expected = [0, *(i + 1 for i, b in enumerate(source) if b == 0x0A and i + 1 < len(source))]
    assert list(parsed(text).line_starts) == expected


def test_tokens_read_without_places_are_the_same_texts_and_nothing_else() -> None:
    # A walk compares only a version's texts: their lines and bytes are not read.
    version = parsed("fn pages() -> u32 {\n    // two\n    let n = 2;\n    n\n}\n")
    low, high = version.line_starts[1], version.size
    placed = syntax.tokens_between(version, low, high)
    texts = syntax.tokens_between(version, low, high, placed=False)
    assert texts.texts == placed.texts == ["let", "n", "=", "2", ";", "n", "}"]
    assert not (texts.start_lines or texts.end_lines or texts.start_bytes)


SOURCES = {
    "rust": (
        "/// Doc `v8` comment\n#[derive(Debug)]\npub struct S<'a> { name: &'a str }\n"
        'fn f(x: u8) -> String {\n    let s = "a\\n8b\\x41BC\\u{1F600}8";\n'
        '    let r = r#"raw 8 "q" 8"#; let b = b\'8\'; /* 8 /* nested 8 */ */\n'
        '    format!("{x}8{}", 1_8u8, 0x8F) + &r[8..] // 8 tail\n}\n'
        "macro_rules! m { ($v8:expr) => { $v8 + 8 }; }\n"
    ),
    "python": (
        "# 8 comment\n@deco(8)\ndef f(v8, *a):\n"
        '    """Doc 8."""\n    s = f"{v8}8\\n8{a!r:>8}" + b"\\x388" + r"8\\8"\n'
        "    return [v8 for _ in range(8)] or \\\n        8  # 8\n"
    ),
    "typescript": (
        "// 8\nexport const f = (v8: number): string =>\n"
        "  `${v8}8\\n8${'8' + \"8\"}` + /8+/.source; /* 8 */\n"
        "class C { #p8 = 8; get v8() { return this.#p8 } }\n"
    ),
    "go": (
        "// 8\npackage p\n\nfunc F(v8 int) string {\n"
        "\treturn fmt.Sprint(v8, \"8\\n8\", `8\n8`, '8', 0x8, 8.8e8) /* 8 */\n}\n"
    ),
}


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_a_token_is_told_at_a_place_as_the_cursor_walk_tells_it(language: str) -> None:
    """`verbatim._token_at` rejects a place where no leaf spans exactly the bytes by one
    call in C before walking a cursor down: at every place and width, of strings with
    escapes and interpolations, comments, lifetimes and raw strings, it answers as the
    walk alone does."""
    from watcher.locate import verbatim

    raw = SOURCES[language].encode()
    source = syntax.parse(hashlib.sha1(raw).hexdigest(), language, lambda: raw)
    for at in range(len(raw)):
        for size in range(1, 8):
            quick = verbatim._token_at(source, at, size)
            walked = verbatim._cursor_at(source, at, size)
            assert (quick is None) == (walked is None), (at, raw[at : at + size])


def test_a_probe_inside_longer_tokens_walks_no_cursor_however_big_the_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The rarest cited token's bytes occur inside longer tokens all over a big file (`8`
    in `v8` and `1048`): those places are told in C, and cursors are walked only where
    the token is whole, as many in a file of 400 functions as in one of 20."""
    from watcher.locate import verbatim

    def file(count: int) -> str:
        others = "".join(
            f"fn step_{i}(v8: u64) -> u64 {{\n    let w = v8 * 10{i % 10}8;\n    w\n}}\n\n"
            for i in range(count)
        )
        return others + "fn cited(total: u64) -> u64 {\n    let total = total + 8;\n    total\n}\n"

    real, calls = verbatim._cursor_at, []

    def counted(*args: Any) -> Any:
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(verbatim, "_cursor_at", counted)
    walks = []
    for count in (20, 400):
        text = file(count)
        start = text.count("\n") - 2
        anchor = anchors.anchor(parsed(text), "src/lib.rs", start, start)
        assert anchor.probes[0] == "8"
        version = parsed("// moved\n" + text)
        calls.clear()
        found = verbatim.verbatim(anchor, "src/lib.rs", version)
        assert [(f.start_line, f.end_line) for f in found] == [(start + 1, start + 1)]
        assert version.source.count(b"8") > 2 * count
        walks.append(len(calls))
    assert walks[0] == walks[1] <= 2


def test_a_citations_namesakes_are_read_off_the_files_definitions_grouped_once() -> None:
    """An anchor lists the other definitions of its kind and last name (`namesakes`):
    from the file's definitions grouped by kind and last name once per parse, the same
    as filtering every definition of the file for each citation, which grew with it."""
    from watcher.locate import definitions

    text = rust_file(30) + "impl S {\n    fn target(&self) -> u32 { 1 }\n}\n"
    text += "mod m {\n    pub fn target() -> u32 { 2 }\n    fn helper_3() {}\n}\n"
    source = parsed(text)
    for start in (1 + 5 * 3, *target_lines(30)[:1]):
        anchor = anchors.anchor(source, "src/lib.rs", start, start + 3)
        assert anchor.definition is not None
        kind, names = anchor.definition
        every = [
            (found, tuple(syntax.node_tokens(node, source.source)))
            for node, (k, found) in definitions.definition_nodes(source)
            if k == kind and found[-1:] == names[-1:] and found != names
        ]
        assert list(anchor.namesakes) == every and every
    assert ("definitions by last name",) in source.derived


def test_definitions_of_each_kind_are_read_off_one_query_for_every_kind() -> None:
    text = rust_file(30) + "\npub struct Holder;\n\nimpl Holder {\n    pub fn target() {}\n}\n"
    fresh = parsed(text)
    assert len(definitions.of_kind(fresh, "function_item")) == 31
    assert fresh.stats.captured == 0  # no query of one kind: the nodes of every kind, filtered
    for kind in ("function_item", "struct_item", "impl_item"):
        found = definitions.of_kind(fresh, kind)
        assert set(found) == set(definitions._query_kind(fresh, kind))
        assert [n.start_byte for _, n in found] == sorted(n.start_byte for _, n in found)


def listing(parsed: syntax.Parsed) -> list[tuple[int, int, str, tuple[str, ...]]]:
    return [
        (node.start_byte, node.end_byte, kind, path)
        for node, (kind, path) in definitions.definition_nodes(parsed)
    ]


def impl_file(count: int, renamed: int = -1, changed: int = -1, added: bool = False) -> str:
    """An `impl` of `count` methods (one holding a nested function), a struct and a free
    function; method `renamed` renamed, `changed` edited, one added at the end."""
    methods = [
        f"    pub fn {'renamed' if i == renamed else f'method_{i}'}(&self) -> u32 {{\n"
        + ("        fn nested() -> u32 { 1 }\n" if i == 3 else "")
        + f"        {i * 7 if i != changed else 999}\n    }}\n"
        for i in range(count)
    ]
    if added:
        methods.append("    pub fn latest(&self) -> u32 {\n        0\n    }\n")
    return (
        "pub struct Engine;\n\nimpl Engine {\n" + "\n".join(methods) + "}\n\n"
        "pub fn free() -> Engine {\n    Engine\n}\n"
    )


@pytest.mark.parametrize("edit", [{"renamed": 40}, {"changed": 7}, {"added": True}])
def test_a_version_parsed_from_another_lists_its_definitions_from_what_changed(
    edit: dict[str, Any],
) -> None:
    older, newer = impl_file(120).encode(), impl_file(120, **edit).encode()
    name = f"src/engine-{sorted(edit)}.rs"
    first = syntax.parse(hashlib.sha1(older).hexdigest(), "rust", lambda: older, name)
    listing(first)
    stats = syntax.Stats()
    second = syntax.parse(hashlib.sha1(newer).hexdigest(), "rust", lambda: newer, name, stats)
    assert stats.reparsed == 1  # from the first one's tree

    listed = listing(second)

    fresh = syntax._parse("fresh", "rust", newer)  # the same bytes, parsed whole
    assert listed == listing(fresh)
    assert listed == sorted(listed, key=lambda d: (d[0], -d[1]))
    assert stats.listed < len(newer) / 10  # what changed, not the whole version
