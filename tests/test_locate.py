"""The walk's shortcut gives the same state `find` gives, on real tree-sitter parses."""

from __future__ import annotations

import hashlib
import itertools
import random

import pytest
from tree_sitter import Node

from watcher.locate import anchors, definitions, matching, probes, verbatim, windows
from watcher.parse import diffs, syntax

BASE = """\
impl Client {
    pub fn run_turn(&self, mode: Mode) -> Option<Cursor> {
        let budget = Duration::from_millis(1500);
        let next = match mode {
            Mode::Legacy => None,
            Mode::Modern => self.cursor(),
        };
        next
    }
}
"""

VERSIONS = {
    "unchanged": BASE,
    "budget changed": BASE.replace("1500", "1750"),
    "budget changed, old value elsewhere": BASE.replace("1500", "1750")
    + "const OLD: u64 = 1500;\n",
    "moved out of the impl": "pub fn run_turn(&self, mode: Mode) -> Option<Cursor> { None }\n",
    "renamed": BASE.replace("run_turn", "run_step").replace("1500", "9"),
    "deleted": "impl Client {}\n",
    "reformatted": BASE.replace("let budget = ", "let budget =\n            "),
}


def _parsed(text: str, language: str = "rust") -> syntax.Parsed:
    raw = text.encode()
    return syntax.parse(hashlib.sha1(raw).hexdigest(), language, lambda: raw)


@pytest.mark.parametrize("name", VERSIONS)
def test_category_agrees_with_find(name: str) -> None:
    anchor = anchors.anchor(_parsed(BASE), "src/client.rs", 2, 9)
    files = [("src/client.rs", _parsed(VERSIONS[name]))]

    found = matching.find(anchor, files)
    expected = "missing" if found is None else ("same" if found.identical else "changed")

    assert matching.category(anchor, files) == expected


def test_definition_keys_follow_the_name_path() -> None:
    keys = definitions.definition_keys(_parsed(BASE))
    assert ("function_item", ("Client", "run_turn")) in keys
    assert ("function_item", ("run_turn",)) not in keys
    moved = definitions.definition_keys(_parsed(VERSIONS["moved out of the impl"]))
    assert ("function_item", ("Client", "run_turn")) not in moved


def test_a_changed_definition_is_judged_without_tokenizing_the_file() -> None:
    anchor = anchors.anchor(_parsed(BASE), "src/client.rs", 2, 9)
    version = _parsed(VERSIONS["budget changed"] + "\n// a different blob\n")

    assert matching.category(anchor, [("src/client.rs", version)]) == "changed"
    assert "_index" not in vars(version)  # tokens never read off the tree


# The shape of rmcp's streamable_http_client.rs:359-417 at a32a9c83 (the end of the
# handshake, the Worker impl, the start of `run`): at HEAD, lines were added near its
# top and the part of `run` it ends in was rewritten.
SPANNING = """\
impl<C: HttpClient> Worker<C> {
    async fn handshake(client: &C, uri: Uri, session: Option<String>) -> Result<Headers> {
        let mut headers = Headers::new();
        headers.insert("mcp-protocol-version", version());
        let ready = Message::notification(Notification::Ready(ReadyNotification {
            method: Default::default(),
            extensions: Default::default(),
        }));
        client
            .post(
                uri,
                ready,
                session.clone(),
                headers.clone(),
            )
            .await?
            .expect_accepted::<C::Error>()?;

        Ok((session, headers))
    }
}

impl<C: HttpClient> Runner for Worker<C> {
    type Role = ClientRole;
    type Error = HttpError<C::Error>;
    fn closed() -> Self::Error {
        HttpError::Closed
    }
    fn joined(e: JoinError) -> Self::Error {
        HttpError::Join(e)
    }
    fn settings(&self) -> Settings {
        Settings {
            name: Some("Worker".into()),
            capacity: self.config.capacity,
        }
    }
    async fn run(self, mut context: Context<Self>) -> Result<(), Quit<Self::Error>> {
        let capacity = self.config.capacity;
        let (tx, mut rx) = channel::<Message>(capacity);
        let config = self.config.clone();
        let token = context.token.clone();
        let _guard = token.clone().drop_guard();
        let Request {
            responder,
            message: init,
        } = context.receive().await?;
        let saved = init.clone();
        let (reply, session) = match self
            .client
            .post(
                config.uri.clone(),
                init,
                None,
                config.auth.clone(),
                config.headers.clone(),
            )
            .await
        {
            Ok(r) => r,
            Err(e) => return Err(e.into()),
        };
        Ok(())
    }
}
"""
SPANNING_ADDED = """\
        }));
        // notifications carry no parameters, so no tool cache is needed.
        let ready_headers = build_headers(
            &headers,
            &ready,
            &HashMap::new(),
            &version,
        );
"""
SPANNING_REWRITTEN = """\
        let legacy = matches!(
            &startup,
            Message::Request(request)
                if matches!(&request.request, ClientRequest::Init(_))
        );
"""


def test_a_region_with_lines_added_near_its_top_is_found_where_it_starts() -> None:
    """The longest run the two versions share starts below the added lines, so the start
    it implies is off by them; the rarest tokens' vote puts the region where it starts."""
    cited = SPANNING.index("        let ready = ")
    end = SPANNING.index("        {\n            Ok(r)") + len("        {\n")
    head = SPANNING.replace("        }));\n", SPANNING_ADDED, 1)
    head = head.replace(".post(\n                uri,", ".post_with_limit(\n                uri,")
    head = head.replace("message: init,", "message: startup,")
    rewritten = head[head.index("        let saved = ") : head.index("            Ok(r) => r,")]
    filler = "".join(f"fn helper_{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n\n" for i in range(30))
    head = filler + head.replace(rewritten, SPANNING_REWRITTEN)
    start = SPANNING.count("\n", 0, cited) + 1
    anchor = anchors.anchor(_parsed(SPANNING), "a.rs", start, SPANNING.count("\n", 0, end))

    found = matching.find(anchor, [("a.rs", _parsed(head))])

    assert found is not None and not found.identical
    assert found.start_line == head.count("\n", 0, head.index("        let ready = ")) + 1


PYTHON_NAMES = """\
LATEST: Final[str] = "2025-11-25"
a, b = 1, 2


class Session:
    timeout = 30
    self_made = None

    def open(self):
        retries = 3
        self.url = "x"
        return retries
"""


def test_python_module_and_class_values_are_definitions_and_locals_are_not() -> None:
    """`NAME = value` of a module or a class is found by name, like a Rust const; an
    assignment inside a function, to an attribute, or an unpacking is not a definition."""
    keys = sorted(_parsed(PYTHON_NAMES, "python").by_key)

    assert keys == [
        ("assignment", ("LATEST",)),
        ("assignment", ("Session", "self_made")),
        ("assignment", ("Session", "timeout")),
        ("class_definition", ("Session",)),
        ("function_definition", ("Session", "open")),
    ]
    parsed = _parsed(PYTHON_NAMES, "python")  # the query path agrees with the index
    assert definitions.definition_span(parsed, ("assignment", ("Session", "timeout")), 1) == (6, 6)
    assert (
        definitions.definition_span(parsed, ("assignment", ("Session", "open", "retries")), 1)
        is None
    )


@pytest.mark.parametrize(("text", "language"), [(BASE, "rust"), (PYTHON_NAMES, "python")])
def test_one_query_lists_the_definitions_the_index_holds(text: str, language: str) -> None:
    """A repo-wide search asks which definitions a file holds with one query (no token
    walk): it must name exactly the index's definitions, locals left out."""
    parsed = _parsed(text, language)

    assert definitions.definition_keys(parsed) == set(parsed.by_key)


def test_windows_lacking_one_of_the_probes_are_not_tokenized() -> None:
    # The rarest cited word (`settle_ledger`) is called all over the new version, but the
    # function itself changed: no window around a call holds its other probes (the file
    # still has `carried_balance`, far from any call), so none is tokenized to look for a
    # verbatim match.
    cited = (
        "pub fn settle_ledger(input: u32) -> u32 {\n"
        "    let carried_balance = input + 1;\n    carried_balance * 2\n}\n"
    )
    caller = "pub fn caller_{n}() -> u32 {{\n    settle_ledger({n})\n}}\n" + "// pad\n" * 200
    changed = cited.replace("carried_balance", "fresh_total").replace("+ 1", "+ 2")
    far = "pub fn elsewhere() -> u32 {\n    let carried_balance = 7;\n    carried_balance\n}\n"
    version = _parsed(changed + "".join(caller.format(n=n) for n in range(30)) + far)
    anchor = anchors.anchor(_parsed(cited), "src/ledger.rs", 1, 4)
    assert anchor.probes[0] == "settle_ledger"
    version.stats.reset()

    assert matching.place(anchor, [("src/ledger.rs", version)])[0] == "changed"
    assert version.stats.tokens_scanned < 100


def test_windows_not_holding_the_tokens_in_order_are_not_tokenized() -> None:
    # Every call of the cited function sits in a window holding every probe (`input`,
    # `carried_balance`, `+`, `1`, ...), but not the cited tokens one after another:
    # no window is tokenized to look for a verbatim match, and the verdict is the same.
    cited = (
        "pub fn settle_ledger(input: u32) -> u32 {\n"
        "    let carried_balance = input + 1;\n    carried_balance * 2\n}\n"
    )
    caller = (
        "pub fn caller_{n}(input: u32) -> u32 {{\n"
        "    let carried_balance = settle_ledger(input) * 2;\n"
        "    carried_balance + 1\n}}\n" + "// pad\n" * 400
    )
    changed = cited.replace("input + 1", "input + 2")
    version = _parsed(changed + "".join(caller.format(n=n) for n in range(30)))
    anchor = anchors.anchor(_parsed(cited), "src/ledger.rs", 1, 4)
    assert set(anchor.probes) <= set(_parsed(caller.format(n=0)).token_texts())
    version.stats.reset()

    assert matching.place(anchor, [("src/ledger.rs", version)]) == (
        "changed",
        "src/ledger.rs",
        1,
        4,
    )
    # Only the definition's own 22 tokens are read (cited whole, it is compared whole):
    # 772 when the windows holding the probes were read.
    assert version.stats.tokens_scanned <= 22


def test_regions_whose_tokens_cannot_be_similar_enough_are_not_aligned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The cited function is gone; its words survive only in a table of strings, where
    # they vote for lines. The regions there share too few tokens with it, order aside,
    # to reach the similarity a match needs: none is aligned token by token (difflib).
    aligned: list[int] = []
    ratio = matching.likeness
    monkeypatch.setattr(matching, "likeness", lambda a, b: aligned.append(1) or ratio(a, b))
    cited = (
        "pub fn settle_ledger(input: u32) -> u32 {\n"
        "    let carried_balance = input + 1;\n    carried_balance * 2\n}\n"
    )
    row = 'static ENTRY_{n}: [&str; 3] = ["settle_ledger", "carried_balance", "{n}"];\n'
    version = _parsed("// the ledger moved out\n" + "".join(row.format(n=n) for n in range(40)))
    anchor = anchors.anchor(_parsed(cited), "src/ledger.rs", 1, 4)

    assert matching.place(anchor, [("src/ledger.rs", version)])[0] == "missing"
    assert aligned == []  # 6 alignments when every voted region was aligned


def test_windows_holding_none_of_the_rarest_tokens_are_not_tokenized() -> None:
    # The cited function is gone; its words survive in a struct's fields and in the
    # functions reading them, which vote for lines. A similar region must hold one of
    # the anchor's rarest tokens (`settle_ledger`, `let`, `pub`): those windows hold
    # none, so none is tokenized, and the verdict is the same.
    cited = (
        "pub fn settle_ledger(input: u32) -> u32 {\n"
        "    let carried_balance = input + 1;\n    carried_balance * 2\n}\n"
    )
    reader = "fn sum_{n}(t: &Totals) -> u32 {{\n    t.carried_balance * 2 + t.input\n}}\n"
    fields = "struct Totals {\n    carried_balance: u32,\n    input: u32,\n}\n"
    version = _parsed(fields + "".join(reader.format(n=n) for n in range(40)))
    anchor = anchors.anchor(_parsed(cited), "src/ledger.rs", 1, 4)
    assert set(anchor.probes[: matching.IDENTITY]) == {"settle_ledger", "let", "pub"}
    version.stats.reset()

    assert matching.place(anchor, [("src/ledger.rs", version)])[0] == "missing"
    assert version.stats.tokens_scanned == 0  # 187 when every voted window was read


@pytest.mark.parametrize(
    ("language", "text", "may"),
    [
        ("rust", "pub fn settle(x: u32) {}", True),
        ("rust", "pub(crate) async unsafe fn settle<T>() {}", True),
        ("rust", "fn /* a comment */ settle() {}", True),  # `/`: a comment may end there
        ("rust", "fn // a comment\n    settle() {}", True),  # first on its line
        ("rust", "let a = settle(1) + b.settle(2) + c::settle(3);", False),
        ("rust", "fn settled() {} fn unsettle() {}", False),  # not the whole word
        ("rust", "fn\tsettle() {}", True),
        ("python", "async def settle(self):\n    pass\n", True),
        ("python", "x = settle(1)\n", False),
        ("go", "func settle() {}\n", True),
        ("go", "x := settle()\n", False),
        ("typescript", "export function settle(): void {}", True),
        ("typescript", "const x = settle();", False),
    ],
)
def test_may_define_rules_out_only_files_whose_bytes_cannot_define_the_name(
    language: str, text: str, may: bool
) -> None:
    kind = {"rust": "function_item", "python": "function_definition"}.get(
        language, "function_declaration"
    )
    assert definitions.may_define(text.encode(), language, (kind, ("settle",))) is may
    if may:  # and the parse agrees: it defines the name there
        keys = definitions.definition_keys(_parsed(text, language))
        assert (kind, ("settle",)) in keys


def test_may_define_reads_kinds_without_a_keyword_as_always_possible() -> None:
    # A Rust `impl` is named by its type, after any generics or a trait: not ruled out.
    assert definitions.may_define(b"let x = 1;", "rust", ("impl_item", ("Settle",)))


GO_CLIENT_CLOSE = """\
func (c *clientConn) Close() error {
\tc.once.Do(func() {
\t\tc.closeErr = c.sendDelete(c.ctx)
\t\tc.cancel()
\t})
\treturn c.closeErr
}
"""
GO_SERVER_CLOSE = """\
func (c *serverConn) Close() error {
\tc.mu.Lock()
\tdefer c.mu.Unlock()
\tif !c.isDone {
\t\tc.isDone = true
\t\tclose(c.done)
\t}
\treturn nil
}
"""


def test_a_go_method_is_told_from_another_types_method_of_the_same_name() -> None:
    # The shape of go-sdk's mcp/streamable.go: the client's Close, cited, is edited and
    # pushed far down by new code, while the server's Close comes to sit nearer the
    # cited lines. The receiver's type is part of the name, so the client's is found.
    filler = "".join(f"func helper{n}() int {{\n\treturn {n}\n}}\n\n" for n in range(60))
    base = f"package mcp\n\n{GO_SERVER_CLOSE}\n{filler}{GO_CLIENT_CLOSE}"
    edited = GO_CLIENT_CLOSE.replace("c.cancel()", "c.cancel()\n\t\tclose(c.done)")
    head = f"package mcp\n\n{filler}{GO_SERVER_CLOSE}\n{filler}{filler}{edited}"
    start = base.splitlines().index("func (c *clientConn) Close() error {") + 1
    anchor = anchors.anchor(_parsed(base, "go"), "mcp/streamable.go", start, start + 6)
    assert anchor.definition == ("method_declaration", ("clientConn", "Close"))

    state, _, found, _ = matching.place(anchor, [("mcp/streamable.go", _parsed(head, "go"))])

    assert (state, found) == ("changed", head.splitlines().index(edited.splitlines()[0]) + 1)


def test_a_verbatim_match_costs_the_anchors_tokens_not_its_windows() -> None:
    # A short function moved below others: the window around its rarest token spans
    # ~2 KB of neighbours, but only the anchor's own tokens are compared, outward from
    # that token.
    cited = "pub fn settle_ledger(input: u32) -> u32 {\n    input + 1\n}\n"
    others = "".join(
        f"pub fn other_{n}(input: u32) -> u32 {{\n    input * {n}\n}}\n" for n in range(60)
    )
    version = _parsed(others + cited + others.replace("other_", "more_"))
    anchor = anchors.anchor(_parsed(cited), "src/ledger.rs", 1, 3)
    version.stats.reset()

    assert matching.place(anchor, [("src/ledger.rs", version)]) == (
        "same",
        "src/ledger.rs",
        181,
        183,
    )
    assert version.stats.tokens_scanned < 3 * len(
        anchor.tokens
    )  # 646 when its window was tokenized


# The shape of go-sdk's Client.Connect (mcp/client.go:132-143 at c058c6a9, the top of the
# method): later, a version negotiation of some seventy lines came between its first
# call and the initialize request it builds. Every cited line is still in the method.
GO_CONNECT = """\
package mcp

func (c *Client) Connect(ctx context.Context, t Transport) (cs *Session, err error) {
\tcs, err = dial(ctx, t, c)
\tif err != nil {
\t\treturn nil, err
\t}

\tparams := &HelloParams{
\t\tVersion: latestVersion,
\t\tInfo:    c.impl,
\t}
\treq := &HelloRequest{Session: cs, Params: params}
\tres, err := handshake(ctx, cs, req)
\tif err != nil {
\t\treturn nil, err
\t}
\tcs.state = res
\tif c.opts.KeepAlive > 0 {
\t\tcs.startKeepalive(c.opts.KeepAlive)
\t}
\tif c.opts.Logger != nil {
\t\tc.opts.Logger.Info("connected", "session", cs.ID(), "version", res.Version)
\t}
\treturn cs, nil
}
"""


def test_a_region_split_by_inserted_code_is_found_in_its_definition() -> None:
    negotiation = "".join(
        f"\tif v, ok := offered[{n}]; ok && v > best {{\n\t\tbest = pick(v, {n})\n\t}}\n"
        for n in range(24)
    )
    head = GO_CONNECT.replace("\n\tparams :=", f"\n\tbest := 0\n{negotiation}\n\tparams :=")
    anchor = anchors.anchor(_parsed(GO_CONNECT, "go"), "mcp/client.go", 3, 13)
    assert not anchor.whole  # the top of the method only
    files = [("mcp/client.go", _parsed(head, "go"))]

    found = matching.find(anchor, files)

    assert found is not None and not found.identical
    assert (found.start_line, found.end_line) == (3, head.splitlines().index(
        "\treq := &HelloRequest{Session: cs, Params: params}") + 1)  # fmt: skip
    assert matching.place(anchor, files) == ("changed", "mcp/client.go", 3, found.end_line)
    assert matching.category(anchor, files) == "changed"


def test_probes_held_alike_is_told_from_where_two_versions_differ() -> None:
    """`stays_unmatched` asks whether two versions both hold every probe (or neither
    does), and looks for a probe only when bytes both hold (the item's followed lines)
    lack it: the same answer as looking through both in full, on versions edited at
    random in every way a commit can (insertions, deletions, replacements, at the edges
    and in the middle)."""

    chance = random.Random(7)
    words = [b"alpha", b"beta", b"gamma", b"delta", b"ab", b"ga", b" ", b"\n"]
    needles = [b"alpha", b"gamma", b"mab", b"a\ng"]
    for n in range(2000):
        older = b"".join(chance.choice(words) for _ in range(chance.randrange(0, 120)))
        newer = _edited_at_random(chance, older, words, chance.randrange(1, 4))
        wanted = needles[: chance.randrange(1, len(needles) + 1)]
        full = all(p in newer for p in wanted) == all(p in older for p in wanted)
        low, high = sorted(chance.randrange(len(newer) + 1) for _ in range(2))
        kept = newer[low:high] if newer[low:high] in older else b""
        versions = (syntax.Parsed(f"{2 * n + k:040d}", syntax.TEXT, None, v)
                    for k, v in enumerate((newer, older)))  # fmt: skip
        told = probes._held_alike(wanted, kept, *versions)
        assert told is full, (older, newer, kept)
    # A walk's chain of versions, each the older of one pair and then the newer of the
    # next: where the two differ (`differing`, in stretches as small as it finds or in
    # one) tells each probe's place in the older.
    split = 0  # pairs told in more than one stretch
    for n in range(600):
        texts = [b"".join(chance.choice(words) for _ in range(chance.randrange(0, 1500)))]
        for _ in range(4):
            texts.append(_edited_at_random(chance, texts[-1], words, chance.randrange(1, 9)))
        chain = [syntax.Parsed(f"{n:034d}{k:06d}", syntax.TEXT, None, v)
                 for k, v in enumerate(texts)]  # fmt: skip
        wanted = needles[: chance.randrange(1, len(needles) + 1)]
        most = chance.choice([1, 64])
        for newer, older in itertools.pairwise(chain):
            new, old = newer.source, older.source
            stretches = diffs.differing(old, new, 0, len(old), 0, len(new), most=most)
            split += len(stretches) > 1
            full = all(p in new for p in wanted) == all(p in old for p in wanted)
            assert probes._held_alike(wanted, b"", newer, older, stretches) is full, texts
    assert split > 300


def _edited_at_random(
    chance: random.Random, source: bytes, words: list[bytes], edits: int
) -> bytes:
    """`source` with `edits` stretches of up to 12 bytes replaced by up to two words each,
    anywhere: an insertion, a deletion or a replacement, at an edge or in the middle."""
    edited = bytearray(source)
    for _ in range(edits):
        at = chance.randrange(0, len(edited) + 1)
        cut = chance.randrange(0, 12)
        edited[at : at + cut] = b"".join(chance.choice(words) for _ in range(chance.randrange(3)))
    return bytes(edited)


def test_a_probes_starts_are_moved_from_the_next_version_as_a_scan_finds_them() -> None:
    """A walk finds the rarest probe in each version from where it was in the version
    after it, searching only where the two differ (`_moved_starts`): the same starts as
    scanning the whole version, for probes that overlap themselves, span word ends or sit
    astride an edit, on versions edited at random (insertions, deletions, replacements,
    at the edges and in the middle, up to many stretches). The search itself, from the
    end of a range, finds what a scan of that range finds."""

    chance = random.Random(11)
    words = [b"alpha", b"beta", b"gamma", b"ab", b"aa", b"a", b" ", b"\n"]
    probes = [b"alpha", b"aa", b"a", b"ab a", b"a\nb", b"gamma beta"]
    for _ in range(3000):
        newer = b"".join(chance.choice(words) for _ in range(chance.randrange(0, 150)))
        old = _edited_at_random(chance, newer, words, chance.randrange(1, 8))
        stretches = diffs.differing(old, newer, 0, len(old), 0, len(newer), chance.choice((2, 64)))
        for probe in probes:
            known = windows.starts_in(newer, probe, 0, len(newer))
            scanned = [i for i in range(len(old)) if old.startswith(probe, i)]
            moved = windows.moved_starts(known, stretches, old, probe)
            assert moved == scanned, (old, newer, probe)
            low, high = sorted(chance.randrange(len(old) + 1) for _ in range(2))
            inside = [i for i in scanned if low <= i and i + len(probe) <= high]
            assert windows.starts_in(old, probe, low, high) == inside, (old, probe, low, high)


def test_tokens_written_in_order_are_found_as_a_pattern_would() -> None:
    """`_written_in` finds tokens one after another with only whitespace and comments
    between: what a regular expression of them joined by such gaps finds, at the cost of
    one gap match per token instead of compiling a pattern per citation."""
    import re

    chance = random.Random(11)
    tokens, gaps = [b"fn", b"run", b"(", b")", b"{", b"}", b"x", b"1"], [b"", b" ", b"\n"]
    gaps += [b"// note\n", b"/* a\n b */", b"/**/ "]
    gap = probes._gap("rust")
    for _ in range(2000):
        wanted = [chance.choice(tokens) for _ in range(chance.randrange(1, 5))]
        source = b"".join(chance.choice(gaps) + chance.choice(tokens) for _ in range(12))
        low = chance.randrange(0, len(source) // 2 + 1)
        high = chance.randrange(low, len(source) + 1)
        pattern = re.compile(gap.pattern.join(re.escape(t) for t in wanted))
        found = pattern.search(source, low, high) is not None
        assert probes._written_in(source, wanted, gap, low, high) is found, (wanted, source)


def test_many_names_asked_of_one_parse_are_read_off_one_list_of_its_definitions() -> None:
    """Judging many citations of a big file asked its bytes for each definition's name, a
    cost that grows with the file; past INDEX_AFTER names the file's definitions are
    listed once and the answers are the same."""
    text = "".join(f"fn f{n}() -> u32 {{ {n} }}\n" for n in range(40))
    text += "impl S {\n    fn f3(&self) {}\n}\nfn f3() -> u32 { 3 }\n"  # same names elsewhere
    keys = [("function_item", (f"f{n}",)) for n in range(40)] + [
        ("function_item", ("S", "f3")),
        ("struct_item", ("S",)),
    ]
    by_search = [definitions._named(_parsed(text), *key) for key in keys]
    parsed = _parsed(text + "\n")  # another blob: a parse of its own
    asked = [definitions.named(parsed, *key) for key in keys]

    def spans(found: list[list[Node]]) -> list[list[tuple[int, int]]]:
        return [[(n.start_byte, n.end_byte) for n in nodes] for nodes in found]

    assert spans(asked) == spans(by_search)
    assert [len(nodes) for nodes in asked[:4]] == [1, 1, 1, 2]
    assert ("definitions by key",) in parsed.derived
    assert parsed.derived[("names asked",)] == len(keys)


def test_a_renamed_definition_that_rewrote_its_rarest_tokens_is_found_from_its_bytes() -> None:
    # A rename that also rewrites the docstring and the message (the function's three
    # rarest tokens) and drops a branch: no candidate holds one of them, yet the new
    # definition is 0.8 alike whole. Its bytes could hold enough of the old tokens, so it
    # is tokenized; the module's other function, whose bytes could not, is not.
    body = "".join(
        f"    if kind == {n}:\n        total = scale(total, {n}) + offset\n" for n in range(6)
    )
    cited = (
        "def settle_totals(kind, total, offset):\n"
        '    """Settle the ledger totals of a kind before the audit."""\n'
        f"{body}"
        "    if total < 0:\n"
        '        raise ValueError("cannot settle a negative ledger")\n'
        "    return total\n"
    )
    other = "def unrelated(x):\n    return [y for y in x if y]\n"
    renamed = (
        cited.replace("settle_totals", "reconcile")
        .replace("Settle the ledger totals of a kind before the audit.", "Reconcile totals.")
        .replace("cannot settle a negative ledger", "negative total")
        .replace("    if kind == 5:\n        total = scale(total, 5) + offset\n", "")
    )
    baseline = _parsed(other + "\n\n" + cited, "python")
    anchor = anchors.anchor(baseline, "ledger.py", 5, 4 + cited.count("\n"))
    assert anchor.whole
    rarest = anchor.probes[: matching.IDENTITY]
    version = _parsed(other + "\n\n" + renamed, "python")
    assert not any(p.encode() in version.source for p in rarest)
    version.stats.reset()

    state, _, start, end = matching.place(anchor, [("ledger.py", version)])

    assert (state, start, end) == ("changed", 5, 4 + renamed.count("\n"))
    # The new definition's tokens, read to compare it and then to place it: never
    # the other function's.
    new = len(syntax.node_tokens(version.tree.root_node.children[1], version.source))
    assert version.stats.tokens_scanned == 2 * new


def test_the_match_near_the_cited_lines_is_the_one_a_search_of_the_whole_file_chooses() -> None:
    """`find` takes the verbatim match whose first line is nearest the cited one (the
    first of two as near). `verbatim.nearest` looks only around the cited lines first:
    over copies of the cited lines at random distances, above and below, with comments
    and blank lines inside a copy, it chooses what a search of the whole file chooses."""
    chance = random.Random(7)
    cited = "    let total = scale(input, 8);\n    total + offset\n"
    spread = "    let total = scale(input, /* a */ 8);\n\n    total // b\n        + offset\n"
    for _ in range(150):
        blocks = []
        for n in range(chance.randrange(2, 9)):
            body = chance.choice([cited, spread, "    other(input)\n"])
            blocks.append(f"fn f{n}(input: u64) -> u64 {{\n{body}}}\n" + "\n" * chance.randrange(6))
        where = chance.randrange(len(blocks))
        blocks[where] = f"fn target(input: u64) -> u64 {{\n{cited}}}\n"
        text = "".join(blocks)
        start = text[: text.index("fn target")].count("\n") + 2
        anchor = anchors.anchor(_parsed(text), "src/lib.rs", start, start + 1)
        chance.shuffle(blocks)
        version = _parsed("".join(blocks).replace("fn target", "fn renamed"))
        every = verbatim.verbatim(anchor, "src/lib.rs", version)
        line = anchor.span[0] if anchor.span else 0
        chosen = min(every, key=lambda f: abs((f.start_line or 0) - line))
        near = verbatim.nearest(anchor, "src/lib.rs", version)
        if near is not None:
            assert (near.start_line, near.end_line) == (chosen.start_line, chosen.end_line)
        else:
            assert min(abs((f.start_line or 0) - line) for f in every) > verbatim.RINGS[-1]


def test_a_moved_part_of_a_function_is_found_around_its_lines_not_searched_for_in_the_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A partial citation moved a few lines is matched where it was: the bytes searched
    for its tokens are those of the lines around it, as many in a file of 2,000
    functions as in one of 10."""
    searched, real = [], verbatim.starts_in

    def counted(source: bytes, probe: bytes, low: int, high: int) -> list[int]:
        searched.append(high - low)
        return real(source, probe, low, high)

    monkeypatch.setattr(verbatim, "starts_in", counted)
    costs = {}
    for count in (10, 2000):
        text = "".join(
            f"fn step_{n}(input: u64) -> u64 {{\n    let v = input * {n};\n    v + 8\n}}\n\n"
            for n in range(count)
        )
        start = 5 * (count // 2) + 2
        anchor = anchors.anchor(_parsed(text), "src/lib.rs", start, start + 1)
        version = _parsed("// moved\n// twice\n" + text)
        searched.clear()
        found = matching.find(anchor, [("src/lib.rs", version)])
        assert found is not None and found.identical
        assert (found.start_line, found.end_line) == (start + 2, start + 3)
        costs[count] = sum(searched)
    assert len(version.source) > 100_000
    assert max(costs.values()) < 200  # the lines around the cited ones, whatever the file
