"""The walk's shortcut gives the same state `find` gives, on real tree-sitter parses."""

from __future__ import annotations

import hashlib

import pytest

from watcher import locate, syntax

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


def _parsed(text: str) -> syntax.Parsed:
    raw = text.encode()
    return syntax.parse(hashlib.sha1(raw).hexdigest(), "rust", lambda: raw)


@pytest.mark.parametrize("name", VERSIONS)
def test_category_agrees_with_find(name: str) -> None:
    anchor = locate.anchor(_parsed(BASE), "src/client.rs", 2, 9)
    files = [("src/client.rs", _parsed(VERSIONS[name]))]

    found = locate.find(anchor, files)
    expected = "missing" if found is None else ("same" if found.identical else "changed")

    assert locate.category(anchor, files) == expected


def test_has_definition_follows_the_name_path() -> None:
    parsed = _parsed(BASE)
    assert locate.has_definition(parsed, ("function_item", ("Client", "run_turn")))
    assert not locate.has_definition(parsed, ("function_item", ("run_turn",)))
    assert not locate.has_definition(_parsed(VERSIONS["moved out of the impl"]),
                                     ("function_item", ("Client", "run_turn")))  # fmt: skip


def test_a_changed_definition_is_judged_without_tokenizing_the_file() -> None:
    anchor = locate.anchor(_parsed(BASE), "src/client.rs", 2, 9)
    version = _parsed(VERSIONS["budget changed"] + "\n// a different blob\n")

    assert locate.category(anchor, [("src/client.rs", version)]) == "changed"
    assert "_index" not in vars(version)  # tokens never read off the tree
