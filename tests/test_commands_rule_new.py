"""`watch rule new` drafts: leading comments and doc comments do not count, module-level
assignments and constants are constructs, and a range no construct covers is answered
with the constructs that cover parts of it. Cases as data, one test over all of them."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from tests.conftest import Project
from watcher.commands.rule import draft
from watcher.commands.rules import parse_text
from watcher.errors import WatchError
from watcher.gitbuild import Upstream


@dataclass(frozen=True)
class Case:
    name: str
    language: str
    path: str
    code: str
    lines: tuple[int, int]
    says: str  # a line of the drafted rule, or words of the error


CASES = [
    Case("rust doc comment above a fn", "rust", "a.rs",
         "/// Doubles it.\n/// Never fails.\npub fn double(x: u32) -> u32 {\n    x * 2\n}\n\nfn other() {}\n",
         (1, 5), '(function_item name: (_) @name (#eq? @name "double")) @target'),
    Case("rust comment and a blank line above a const", "rust", "a.rs",
         "// how many pages\n\npub const MAX_PAGES: usize = 100;\nfn f() {}\n",
         (1, 3), '(const_item name: (_) @name (#eq? @name "MAX_PAGES")) @target'),
    Case("jsdoc above a function", "javascript", "a.js",
         "/**\n * Connects.\n * @returns {Client}\n */\nfunction connect() {\n  return new Client();\n}\n",
         (1, 7), '(function_declaration name: (_) @name (#eq? @name "connect")) @target'),
    Case("exported typescript constant with a doc comment", "typescript", "a.ts",
         "/** Milliseconds before a request gives up. */\nexport const DEFAULT_REQUEST_TIMEOUT_MSEC: number = 60000;\nexport function f(): void {}\n",
         (1, 2), '(variable_declarator name: (_) @name (#eq? @name "DEFAULT_REQUEST_TIMEOUT_MSEC")) @target'),
    Case("python module-level constant after a comment", "python", "a.py",
         "import os\n\n# The protocol revision sent in initialize.\nLATEST_PROTOCOL_VERSION = \"2025-06-18\"\n\ndef f():\n    pass\n",
         (3, 4), '(assignment left: (_) @name (#eq? @name "LATEST_PROTOCOL_VERSION")) @target'),
    Case("python class attribute, scoped by its class", "python", "a.py",
         "class Session:\n    \"\"\"A session.\"\"\"\n    timeout = 30\n\n    def run(self):\n        pass\n",
         (3, 3), '(class_definition name: (_) @name (#eq? @name "Session")) @scope'),
    Case("go const with its doc comment", "go", "a.go",
         "package client\n\n// DefaultTimeout bounds one request.\nconst DefaultTimeout = 30\n\nfunc f() {}\n",
         (3, 4), '(const_spec name: (_) @name (#eq? @name "DefaultTimeout")) @target'),
    Case("go package-level var", "go", "a.go",
         "package client\n\nvar DefaultClient = New()\n",
         (3, 3), '(var_spec name: (_) @name (#eq? @name "DefaultClient")) @target'),
    Case("rust attribute above a struct (overlap)", "rust", "a.rs",
         "#[derive(Debug)]\npub struct Limits {\n    pages: u32,\n}\n",
         (1, 4), '(struct_item name: (_) @name (#eq? @name "Limits")) @target'),
    Case("typescript method cited whole, one const declared in it", "typescript", "a.ts",
         "class Client {\n  async listTools(\n    params?: Params,\n  ) {\n    const result = await this.request(\n"
         "      { method: 'tools/list', params },\n    );\n    return result;\n  }\n}\n",
         (2, 9), '(method_definition name: (_) @name (#eq? @name "listTools")) @target'),
    Case("python method cited whole, one assignment in it", "python", "a.py",
         "class Session:\n    def list_tools(self,\n                   cursor=None):\n"
         "        result = self.send(cursor)\n        return result\n",
         (2, 5), '(function_definition name: (_) @name (#eq? @name "list_tools")) @target'),
    Case("two functions: no single construct", "rust", "a.rs",
         "fn first() {\n    1;\n}\nfn second() {\n    2;\n}\n",
         (2, 5), "these cover parts of it: function_item first (lines 1-3), function_item second (lines 4-6); cite one of them"),
    Case("only comments", "rust", "a.rs",
         "// nothing here\n// at all\nfn f() {}\n",
         (1, 2), "no named construct covers these lines; cite the lines of a function"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_draft(case: Case) -> None:
    parsed = parse_text(case.code, case.language)
    start, end = case.lines
    try:
        text = draft(parsed, "note", case.path, start, end)
    except WatchError as exc:
        assert case.says in str(exc), str(exc)
        return
    assert case.says in text, text


def test_rule_new_on_a_commented_python_constant_holds_at_its_baseline(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """End to end: the drafted rule lints clean and its target is the assignment."""
    source = 'import os\n\n# Sent in initialize.\nLATEST = "2025-06-18"\n\n\ndef f():\n    return LATEST\n'
    base = upstream.commit("version", {"pkg/types.py": source})
    project.note("n", f"{base} pkg/types.py:3-4")
    code, out, err = project.run("rule", "new", "n", capsys=capsys)
    assert code == 0, err
    assert 'id = "n-latest"' in out
    code, out, _ = project.run("check", "--format", "json", "--no-issues", capsys=capsys)
    rule = next(r for r in json.loads(out)["results"] if r["kind"] == "rule")
    assert (rule["verdict"], rule["baseline"]["start_line"], rule["baseline"]["end_line"]) == (
        "fresh",
        4,
        4,
    )
    code, _, err = project.run("rule", "new", "n", "--source", "2", capsys=capsys)
    assert code == 2 and "note n has 1 code citation; pick --source 1" in err
