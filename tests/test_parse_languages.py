"""Every supported language: a citation is followed through a move, and a rule's claim
breaks when its value flips (real grammars, real git)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from tests.conftest import Project
from watcher.gitbuild import Upstream


@dataclass(frozen=True)
class Lang:
    path: str
    source: str  # defines `pageSize` returning 1, on lines 1-3
    query: str  # captures @value, the returned literal, inside `pageSize`


LANGS = {
    "python": Lang("client/pager.py", "def page_size():\n    # one page\n    return 1\n",
                   "(function_definition name: (identifier) @n (#eq? @n \"page_size\") "
                   "body: (block (return_statement (_) @value))) @target"),
    "go": Lang("client/pager.go", "func pageSize() int {\n\t// one page\n\treturn 1\n}\n",
               "(function_declaration name: (identifier) @n (#eq? @n \"pageSize\") "
               "body: (block (statement_list (return_statement (expression_list (_) @value))))) @target"),
    "javascript": Lang("client/pager.js", "function pageSize() {\n  // one page\n  return 1;\n}\n",
                       "(function_declaration name: (identifier) @n (#eq? @n \"pageSize\") "
                       "body: (statement_block (return_statement (_) @value))) @target"),
    "typescript": Lang("client/pager.ts", "function pageSize(): number {\n  // one page\n  return 1;\n}\n",
                       "(function_declaration name: (identifier) @n (#eq? @n \"pageSize\") "
                       "body: (statement_block (return_statement (_) @value))) @target"),
    "tsx": Lang("client/Pager.tsx", "function pageSize(): number {\n  // one page\n  return 1;\n}\n",
                "(function_declaration name: (identifier) @n (#eq? @n \"pageSize\") "
                "body: (statement_block (return_statement (_) @value))) @target"),
}  # fmt: skip


@pytest.mark.parametrize("name", LANGS)
def test_language(
    name: str, project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    lang = LANGS[name]
    base = upstream.commit("pager", {lang.path: lang.source})
    project.note("n", f"{base} {lang.path}:1-3")
    query = lang.query.replace("'", "\\'")
    project.rules(f"[[rule]]\nid = \"page\"\nnote = \"n\"\npath = \"{lang.path}\"\n"
                  f"query = '''{query}'''\n[[rule.claims]]\ncapture = \"value\"\nequals = \"1\"\n")  # fmt: skip
    # A comment line above and a reworded comment inside: tokens unchanged, lines moved.
    upstream.commit("comment", {lang.path: "// header\n".replace("//", "#" if name == "python" else "//")
                                + lang.source.replace("one page", "a single page")})  # fmt: skip

    _, out, err = project.run("check", "--format", "json", capsys=capsys)
    verdicts = {r["id"]: r["verdict"] for r in json.loads(out)["results"]}
    assert verdicts == {f"n:{lang.path}:1-3": "moved", "page": "moved"}, err

    upstream.commit(
        "two pages", {lang.path: upstream.read(lang.path).replace("return 1", "return 2")}
    )
    _, out, _ = project.run("check", "--format", "json", capsys=capsys)
    verdicts = {r["id"]: r["verdict"] for r in json.loads(out)["results"]}
    assert verdicts == {f"n:{lang.path}:1-3": "changed", "page": "broken"}


def test_comments_are_told_apart_in_every_grammar_read_by_one_process() -> None:
    # Node kind ids are per grammar (typescript's and tsx's differ, though both roots
    # are a "program"): what is a comment is remembered per language, never shared.
    from watcher.parse import syntax

    source = b"function pageSize(): number {\n  // one page\n  return 1;\n}\n"
    for language in ["javascript", "typescript", "tsx", "typescript"]:
        parsed = syntax._parse(f"blob-{language}", language, source)
        texts = syntax.tokens_between(parsed, 0, len(source)).texts
        assert "// one page" not in texts and "return" in texts, language


@dataclass(frozen=True)
class Wrapped:
    path: str
    before: str  # one definition whose first words its grammar puts outside it
    after: str  # the same definition rewritten, two lines lower


# `export` (JS, TS), `const` around one declarator, Go's `type`, Python's decorators: the
# grammar's definition node starts after them, where the citation does not.
WRAPPED = {
    "typescript export": Wrapped(
        "src/auth.ts",
        "export async function register(url: string): Promise<number> {\n  const a = 1;\n"
        "  return a;\n}\n",
        "export async function register(url: string, scope?: string): Promise<number> {\n"
        "  const submitted = { url, scope };\n  const response = await send(submitted);\n"
        "  if (!response.ok) {\n    throw new Rejected(response.status);\n  }\n"
        "  return response.value;\n}\n"),
    "javascript const": Wrapped(
        "src/limit.js",
        "export const limit = (n) => n + 1;\n",
        "export const limit = (count, floor) => Math.max(floor, count * 2 - 1);\n"),
    "go type": Wrapped(
        "client.go",
        "package mcp\n\ntype Client struct {\n\tA int\n}\n",
        "package mcp\n\ntype Client struct {\n\tName string\n\tTimeout time.Duration\n"
        "\tRetries int\n\tTransport http.RoundTripper\n}\n"),
    "python decorator": Wrapped(
        "tools.py",
        "@tool()\ndef lookup(name):\n    return name\n",
        "@tool(title=\"Lookup\")\ndef lookup(name, *, strict=False):\n"
        "    found = registry.get(name)\n    if found is None and strict:\n"
        "        raise KeyError(name)\n    return found\n"),
}  # fmt: skip


@pytest.mark.parametrize("name", WRAPPED)
def test_a_definition_cited_from_words_outside_its_node_is_that_definition(
    name: str, project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    # Cited from its first line, the definition is anchored by kind and name: rewritten
    # past any likeness, it is changed where it now is, not missing.
    case = WRAPPED[name]
    first = 3 if case.path.endswith(".go") else 1
    cited = f"{case.path}:{first}-{case.before.count(chr(10))}"
    project.note("n", f"{upstream.commit('add', {case.path: case.before})} {cited}")
    comment = "#" if case.path.endswith(".py") else "//"
    header = case.after.partition("\n\n")[0] + "\n\n" if case.path.endswith(".go") else ""
    body = case.after.removeprefix(header)
    upstream.commit("rewrite", {case.path: f"{header}{comment} one\n{comment} two\n{body}"})

    _, out, err = project.run("check", "--format", "json", capsys=capsys)
    (result,) = json.loads(out)["results"]
    assert result["verdict"] == "changed", err
    assert result["current"]["start_line"] == first + 2
    assert result["current"]["end_line"] == first + 1 + body.count("\n")


def test_lines_inside_a_string_that_starts_above_them_are_no_citation() -> None:
    # python-sdk's session.py: a type annotation written as a string over six lines;
    # lines of its inside hold no token's start.
    from watcher.locate import anchors
    from watcher.parse import syntax

    source = b'def respond(\n    session: """Session[\n        Request,\n        Result\n    ]""",\n):\n    pass\n'
    parsed = syntax._parse("blob-annotation", "python", source)
    with pytest.raises(anchors.LocateError, match="the inside of a string that starts above"):
        anchors.anchor(parsed, "session.py", 3, 4)
    assert anchors.anchor(parsed, "session.py", 2, 5).tokens[:3] == ("session", ":", '"""')


# Definitions kept apart by blank lines, and grouped declarations: Go's grammar separates
# its top-level declarations with hidden newline tokens, where tree-sitter's cursor finds
# no child for a byte of the whitespace between them (a blank line).
SPACED = {
    "go": "package lib\n\nvar (\n\tlimit = 1\n\n\tfloor = 2\n)\n\nfunc one() int {\n"
          "\treturn limit\n}\n\n\n// two is the floor.\nfunc two() int {\n\treturn floor\n}\n",
    "rust": "use std::fmt;\n\nfn one() -> u32 {\n    1\n}\n\n\nimpl Pager {\n    fn two() {}\n\n"
            "    fn three() {}\n}\n",
    "python": "import os\n\n\ndef one():\n    return 1\n\n\nclass Pager:\n    def two(self):\n"
              "        pass\n\n    def three(self):\n        return '''a\n\n  b'''\n",
    "typescript": "import x from 'x'\n\nfunction one(): number {\n  return 1\n}\n\n\nclass Pager {\n"
                  "  two() {}\n\n  three() {}\n}\nconst four = 4\n\nconst five = 5\n",
}  # fmt: skip


@pytest.mark.parametrize("language", SPACED)
def test_the_tokens_read_from_any_line_are_the_file_index_from_there(language: str) -> None:
    # Windows and citations are read from a line's start, often a blank line.
    from watcher.parse import syntax

    parsed = syntax._parse(f"blob-spaced-{language}", language, SPACED[language].encode())
    index = parsed.tokens
    for low in parsed.line_starts:
        expected = [t for t, at in zip(index.texts, index.start_bytes, strict=True) if at >= low]
        read = syntax.tokens_between(parsed, low, parsed.size, starting=True)
        assert read.texts == expected, f"from byte {low}"


GO_PROTOCOL = (
    "package mcp\n\nfunc (r *CallToolResult) setError(err error) {\n\tr.IsError = true\n"
    "\tr.err = err\n}\n\ntype page struct {\n\tsize int\n\tnext string\n\tprev string\n"
    "\ttotal int\n\tcursor string\n}\n\n// getError returns the error set with setError.\n"
    "// Clients never set one.\nfunc (r *CallToolResult) getError() error {\n\treturn r.err\n}\n\n"
    "func (*CallToolResult) isResult() {}\n"
)  # fmt: skip


def test_a_go_citation_from_a_blank_line_and_a_renamed_method_are_read(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    # go-sdk's mcp/protocol.go: `getError` became `GetError` (#753). Cited from the blank
    # line above its comment, the method was "no code of its own"; cited from its first
    # line, the window its likeness is looked for in started on a blank line, read as no
    # tokens: the renamed method was missing.
    base = upstream.commit("add", {"mcp/protocol.go": GO_PROTOCOL})
    project.note("n", f"{base} mcp/protocol.go:15-20", f"{base} mcp/protocol.go:18-20")
    exported = GO_PROTOCOL.replace("getError", "GetError").replace("setError", "SetError")
    upstream.commit("export", {"mcp/protocol.go": exported})

    _, out, err = project.run("check", "--format", "json", capsys=capsys)
    results = {r["id"]: r for r in json.loads(out)["results"]}
    assert {k: r["verdict"] for k, r in results.items()} == {
        "n:mcp/protocol.go:15-20": "changed",
        "n:mcp/protocol.go:18-20": "changed",
    }, err
    assert results["n:mcp/protocol.go:18-20"]["current"]["start_line"] == 18
