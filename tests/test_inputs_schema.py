"""The JSON Schemas `watch schema` prints accept every shipped and example file and reject
the typos the loaders reject; docs/config.md's table is generated from the model."""

from __future__ import annotations

import datetime
import json
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from watcher.cli import main
from watcher.commands.init import Remote, site_files
from watcher.inputs.schema import config_table, render

ROOT = Path(__file__).resolve().parents[1]


def schema(kind: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(render(kind))
    jsonschema.Draft202012Validator.check_schema(loaded)
    return loaded


def front_matter(text: str) -> Any:
    """A note's front matter as JSON data (YAML dates become strings, as in an editor)."""
    block = text.split("---\n", 2)[1]
    return json.loads(json.dumps(yaml.safe_load(block), default=str))


def errors(kind: str, data: Any) -> list[str]:
    """Every error message, with those inside `anyOf` branches (an editor shows the best)."""
    validator = jsonschema.Draft202012Validator(schema(kind))
    found: list[str] = []
    pending = list(validator.iter_errors(data))
    while pending:
        error = pending.pop()
        found.append(error.message)
        pending += error.context or []
    return found


def init_files() -> dict[str, str]:
    return site_files("acme/lib", None, Remote(head="a" * 40), datetime.date(2026, 12, 2))


def shipped() -> list[tuple[str, str, str]]:
    """(kind, name, text) of every config, note and rule file the project ships or writes."""
    files = [("config", "config.toml", (ROOT / "config.toml").read_text())]
    files += [("note", p.name, p.read_text()) for p in sorted((ROOT / "notes").glob("*.md"))]
    files += [("rule", p.name, p.read_text()) for p in sorted((ROOT / "rules").glob("*.toml"))]
    kinds = {"config.toml": "config", "notes/example.md": "note", "rules/example.toml": "rule"}
    files += [(kinds[n], f"init:{n}", t) for n, t in init_files().items() if n in kinds]
    return files


def data_of(kind: str, text: str) -> Any:
    return front_matter(text) if kind == "note" else tomllib.loads(text)


@pytest.mark.parametrize(("kind", "name", "text"), shipped(), ids=[n for _, n, _ in shipped()])
def test_every_shipped_file_validates(kind: str, name: str, text: str) -> None:
    assert errors(kind, data_of(kind, text)) == []


NOTE = "---\nid: a-note\nsources:\n  - url: https://github.com/acme/lib\n    commit: abc1234\n    path: src/lib.rs:1-3\n---\n"
RULE = "[[rule]]\nid = 'a-rule'\nnote = 'a-note'\npath = 'src/lib.rs'\nquery = '(function_item) @target'\n[[rule.claims]]\ncapture = 'target'\nequals = 'x'\n"
CONFIG = "notes = 'notes'\n[[upstream]]\nrepo = 'acme/lib'\n[issues]\nsink = 'files'\n"

TYPOS = [
    ("note", NOTE.replace("sources:", "souces:"), "'souces' was unexpected"),
    ("note", NOTE.replace("    commit:", "    comit:"), "'comit' was unexpected"),
    ("note", NOTE.replace("id: a-note", "id: -bad id"), "does not match"),
    ("note", NOTE.replace("id: a-note\n", "id: a-note\nclients: one\n"), "is not of type 'array'"),
    ("rule", RULE.replace("query =", "querry ="), "'querry' was unexpected"),
    ("rule", RULE.replace("equals = 'x'", "equals = 'x'\nmatches = 'y'"), "is valid under each of"),
    ("rule", RULE.replace("equals = 'x'", "equal = 'x'"), "'equal' was unexpected"),
    (
        "rule",
        RULE + "[[rule.tests]]\nname = 't'\nexpect = 'fine'\ncode = 'x'\n",
        "'fine' is not one of",
    ),
    ("config", CONFIG.replace("[issues]", "[isues]"), "'isues' was unexpected"),
    ("config", CONFIG.replace("sink = 'files'", "sink = 'slack'"), "'slack' is not one of"),
    (
        "config",
        CONFIG.replace("repo = 'acme/lib'", "repo = 'acme/lib'\nbranchh = 'x'"),
        "'branchh' was unexpected",
    ),
]


def test_the_typo_cases_start_valid() -> None:
    for kind, text in (("note", NOTE), ("rule", RULE), ("config", CONFIG)):
        assert errors(kind, data_of(kind, text)) == [], kind


@pytest.mark.parametrize(("kind", "text", "message"), TYPOS)
def test_typos_are_rejected(kind: str, text: str, message: str) -> None:
    found = errors(kind, data_of(kind, text))
    assert any(message in e for e in found), found


def test_watch_schema_prints_each_schema(capsys: pytest.CaptureFixture[str]) -> None:
    for kind in ("config", "note", "rule"):
        assert main(["schema", kind]) == 0
        assert json.loads(capsys.readouterr().out)["title"].startswith("watch ")


def test_docs_config_table_is_generated_from_the_model() -> None:
    """Every config key with its type and default: regenerate with
    `python -c 'from watcher.inputs.schema import config_table; print(config_table())'`."""
    docs = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    assert config_table() in docs


def test_docs_list_every_front_matter_and_source_key() -> None:
    from watcher.inputs.frontmatter import known_keys, source_keys

    docs = (ROOT / "docs" / "notes.md").read_text(encoding="utf-8")
    for key in [*known_keys(), *source_keys()]:
        assert f"| `{key}` |" in docs, key


def test_shipped_files_point_at_the_docs_not_at_a_spec() -> None:
    shipped_text = [(ROOT / "config.toml").read_text(), (ROOT / "rules/codex.toml").read_text()]
    shipped_text += init_files().values()
    for text in shipped_text:
        assert "SPEC" not in text
    assert "docs/config.md" in shipped_text[0] and "docs/rules.md" in shipped_text[1]


def test_docs_list_every_fence_name_of_a_quote() -> None:
    from watcher.parse.languages import FENCE_NAMES

    docs = (ROOT / "docs" / "notes.md").read_text(encoding="utf-8")
    for name in FENCE_NAMES:
        assert f"`{name}`" in docs, name


def doc_examples() -> list[tuple[str, str, str]]:
    """(kind, where, text) of every config, rule and front-matter example in the docs."""
    import re

    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        for number, (lang, block) in enumerate(
            re.findall(r"^```(\w+)\n(.*?)^```", text, re.M | re.S)
        ):
            where = f"{page.name}#{number}"
            if lang == "toml" and "schema.path" not in block:  # .taplo.toml is not ours
                found.append(("rule" if "[[rule]]" in block else "config", where, block))
            elif lang == "markdown" and block.startswith("---\n"):
                found.append(("note", where, block))
    return found


@pytest.mark.parametrize(
    ("kind", "where", "text"), doc_examples(), ids=[w for _, w, _ in doc_examples()]
)
def test_every_example_in_the_docs_validates(kind: str, where: str, text: str) -> None:
    assert errors(kind, data_of(kind, text)) == []
