"""Quoted code (SPEC 4): fenced blocks in a note's body are tracked items of that note."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from tests.conftest import Project
from tests.rust_client import CLIENT
from watcher.gitbuild import Upstream
from watcher.inputs import quotes

LIB = "src/client.rs"
SOURCE = CLIENT
PY = "pkg/session.py"
PY_SOURCE = """\
class Session:
    def initialize(self, version="2025-06-18"):
        self.version = version
        self.ready = True
        return self.version
"""


def note_with(project: Project, commit: str, body: str, *paths: str) -> None:
    sources = "".join(
        f"  - url: https://github.com/{project.repo}\n    commit: {commit}\n    path: {p}\n"
        for p in paths or (f"{LIB}:1-7",)
    )
    project.note("n", raw=f"---\nid: n\ntitle: N\nsources:\n{sources}---\n\n{body}")


def run_json(project: Project, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, dict]]:
    code, out, _ = project.run("check", "--format", "json", capsys=capsys)
    return code, {r["id"]: r for r in json.loads(out)["results"]}


# --- which blocks are quotes ----------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    body: str
    languages: tuple[str, ...]  # of the tracked quotes, in order


CASES = [
    Case("rust fence", "Text.\n\n```rust\nlet a = 1;\n```\n", ("rust",)),
    Case("tilde fence, alias", "~~~rs\nlet a = 1;\n~~~\n", ("rust",)),
    Case("info with attributes", "```python title=x.py\nx = 1\n```\n", ("python",)),
    Case(
        "typescript, tsx, go",
        "```ts\nf()\n```\n\n```tsx\ng()\n```\n\n```go\nh()\n```\n",
        ("typescript", "tsx", "go"),
    ),
    Case("not a language watch parses", "```toml\na = 1\n```\n\n```\nplain\n```\n", ()),
    Case("inline code spans are not quotes", "Call `let a = 1;` and ``x``.\n", ()),
    Case("indented code block is not a fence", "Para.\n\n    let a = 1;\n", ()),
    Case(
        "opt out",
        "<!-- watch:ignore -->\n```rust\nlet a = 1;\n```\n\n```rust\nlet b = 2;\n```\n",
        ("rust",),
    ),
    Case("opt out with a blank line", "<!-- watch:ignore -->\n\n```rust\nlet a = 1;\n```\n", ()),
    Case("in a list item", "- item\n\n  ```rust\n  let a = 1;\n  ```\n", ("rust",)),
    Case("backticks inside a longer fence", '````rust\nlet s = "```";\n````\n', ("rust",)),
    Case("unclosed fence runs to the end", "```rust\nlet a = 1;\n", ("rust",)),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_tracked_blocks(case: Case) -> None:
    found = quotes.extract("n", case.body, 10)
    assert tuple(q.language for q in found) == case.languages
    assert [q.id for q in found] == [f"n:quote:{i}" for i in range(1, len(found) + 1)]
    # The same blocks CommonMark sees as fences, at the same lines.
    fences = [t for t in MarkdownIt("commonmark").parse(case.body) if t.type == "fence"]
    by_line = {10 + t.map[0]: t.content for t in fences if t.map}
    for quote in found:
        assert by_line[quote.line] == quote.text


EXTRA_BODIES = [
    "> quoted:\n>\n> ```rust\n> let a = 1;\n> ```\n",
    "1. first\n2. second\n\n   ```go\n   x := 1\n   ```\n\nAfter.\n",
    "Para right before\n```rust\nlet a = 1;\n`````\n",
    '~~~rust\nlet s = "```";\n~~~\n',
    "- item\n\n      ```rust\n      not a fence: indented code in the item\n      ```\n",
    "   ```rust\n   let indented = 1;\n     let deeper = 2;\n   ```\n",
    "```rust\nlet a = 1;\n  ```\nclosed by an indented fence\n",
    "- a\n  ```rust\n  let a = 1;\n- b\n",
]


SHIPPED = sorted((Path(__file__).resolve().parents[1] / "notes").glob("*.md"))


@pytest.mark.parametrize(
    "body", [c.body for c in CASES] + EXTRA_BODIES + [p.read_text() for p in SHIPPED]
)
def test_fences_are_the_ones_commonmark_finds(body: str) -> None:
    ours = [(line, info, text) for line, info, text, _ in quotes.fences(body)]
    theirs = [
        (t.map[0], t.info.strip(), t.content)
        for t in MarkdownIt("commonmark").parse(body)
        if t.type == "fence" and t.map
    ]
    assert ours == theirs


def test_elisions_split_a_quote_but_spreads_and_strings_do_not() -> None:
    assert [s.texts for s in quotes.pattern("f(a, …, b)", "rust").segments] == [
        ("f", "(", "a", ","),
        (",", "b", ")"),
    ]
    assert len(quotes.pattern("g(...args)", "javascript").segments) == 1
    assert len(quotes.pattern("def f():\n    ...\n", "python").segments) == 1  # trailing elision
    assert quotes.pattern("{ ... }", "rust").marker == "..."


# --- verdicts ------------------------------------------------------------------------


def test_a_quote_is_fresh_while_it_occurs_with_elisions_and_other_whitespace(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client", {LIB: SOURCE})
    quote = (
        "```rust\nlet next = match mode {\n    Mode::Legacy => None, // dropped\n    …\n};\n```\n"
    )
    note_with(project, base, f"The arms:\n\n{quote}\nAnd `inline` is ignored.\n")
    upstream.commit(
        "reformat",
        {
            LIB: SOURCE.replace(
                "        Mode::Legacy => None,", "        Mode::Legacy =>\n            None,"
            )
        },
    )

    code, results = run_json(project, capsys)

    assert code == 0
    quoted = results["n:quote:1"]
    assert (quoted["kind"], quoted["verdict"]) == ("quote", "fresh")
    assert quoted["baseline"] == {"commit": base, "path": LIB, "start_line": 2, "end_line": 5}
    assert (quoted["current"]["start_line"], quoted["current"]["end_line"]) == (2, 6)


def test_a_changed_quote_names_its_closest_match_diff_and_commit(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client", {LIB: SOURCE})
    note_with(
        project,
        base,
        "```rust\nMode::Legacy => None,\nMode::Modern => response.next_cursor,\n```\n",
    )
    flip = upstream.commit(
        "Follow cursors in legacy mode (#7)",
        {LIB: SOURCE.replace("Mode::Legacy => None", "Mode::Legacy => response.next_cursor")},
    )
    upstream.commit("unrelated", {"README.md": "hi\n"})

    code, results = run_json(project, capsys)

    assert code == 1
    quoted = results["n:quote:1"]
    assert quoted["verdict"] == "changed"
    assert quoted["current"]["path"] == LIB and quoted["current"]["start_line"] == 3
    assert "-Mode::Legacy => None," in quoted["diff"]
    assert "+Mode::Legacy => response.next_cursor," in quoted["diff"]
    assert "closest match src/client.rs:3-4" in quoted["message"]
    assert quoted["introduced_by"]["commit"] == flip and quoted["introduced_by"]["pr"] == 7


def test_a_quote_of_a_deleted_file_is_missing(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client", {LIB: SOURCE})
    note_with(project, base, "```rust\npub fn initialize() -> Params\n```\n")
    upstream.commit("drop it", {LIB: None})

    _, results = run_json(project, capsys)

    assert results["n:quote:1"]["verdict"] == "missing"
    assert results["n:quote:1"]["current"] is None


def test_a_quote_follows_its_file_through_a_rename(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client", {LIB: SOURCE})
    note_with(project, base, "```rust\npub fn initialize() -> Params {\n```\n")
    upstream.move(LIB, "src/session.rs", "move")

    _, results = run_json(project, capsys)

    assert results["n:quote:1"]["verdict"] == "fresh"
    assert results["n:quote:1"]["current"]["path"] == "src/session.rs"


def test_a_quote_that_never_matched_is_an_error_of_the_note(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client", {LIB: SOURCE})
    note_with(project, base, "```rust\nMode::Legacy => Some(cursor),\n```\n")

    code, results = run_json(project, capsys)

    assert code == 2
    quoted = results["n:quote:1"]
    assert (quoted["verdict"], quoted["error"]) == ("error", "quote-baseline")
    assert quoted["message"].startswith("notes/n.md:10: the quote does not occur")
    assert "closest: src/client.rs:3-" in quoted["message"]


def test_a_quote_in_a_language_the_note_does_not_cite_is_an_error_unless_opted_out(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client", {LIB: SOURCE, PY: PY_SOURCE})
    body = "```python\nprint('example')\n```\n\n<!-- watch:ignore -->\n```python\nx = 1\n```\n"
    note_with(project, base, body)

    _, results = run_json(project, capsys)

    assert results["n:quote:1"]["error"] == "quote-unsourced"
    assert "put `<!-- watch:ignore -->` before it" in results["n:quote:1"]["message"]
    assert "n:quote:2" not in results


def test_python_quote_with_ellipsis_among_several_cited_files(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("client", {LIB: SOURCE, PY: PY_SOURCE})
    quote = '```py\ndef initialize(self, version="2025-06-18"):\n    ...\n    return self.version\n```\n'
    note_with(project, base, quote, f"{LIB}:1-7", f"{PY}:1-5")

    code, results = run_json(project, capsys)

    assert code == 0
    assert results["n:quote:1"]["verdict"] == "fresh"
    assert results["n:quote:1"]["current"]["path"] == PY


def test_unchanged_quotes_are_not_judged_again(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:

    base = upstream.commit("client", {LIB: SOURCE})
    note_with(project, base, "```rust\nlet next = match mode {\n```\n")
    run_json(project, capsys)
    project.counts.parse.reset()

    _, results = run_json(project, capsys)

    assert results["n:quote:1"]["verdict"] == "fresh"
    assert project.counts.parse.parses == 0
