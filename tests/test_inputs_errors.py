"""Bad input: every broken note, rule and config gives one clear message and exit 2,
names the file and position, and never stops the rest of the run (no traceback)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from tests.conftest import Project
from watcher.gitbuild import Upstream

LIB = "src/lib.rs"
SOURCE = "pub fn a() -> u32 {\n    1\n}\n\npub fn b() -> u32 {\n    2\n}\n"


@dataclass(frozen=True)
class Bad:
    name: str
    text: str  # BASE is replaced by the baseline commit
    where: str  # the file and position the message must name
    says: str  # words of the fix


# A "billion laughs": nine names, each nine times the one before (9^9 values).
BOMB = "".join(
    f"{c}: &{c} [" + ",".join([f"*{p}"] * 9) + "]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)

NOTES = [
    Bad(
        "typo in a front-matter key",
        "---\nid: bad\nsouces:\n  - url: https://github.com/acme/client\n---\n",
        "notes/zz-bad.md:3",
        "unknown key `souces` (did you mean `sources`?)",
    ),
    Bad(
        "typo in a source key",
        "---\nid: bad\nsources:\n  - url: https://github.com/acme/client\n"
        "    comit: BASE\n    path: src/lib.rs:1-3\n---\n",
        "notes/zz-bad.md:5",
        "unknown key `sources.0.comit` (did you mean `commit`?)",
    ),
    Bad(
        "wrong type in the front matter",
        "---\nid: bad\nclients: openai-codex\n---\n",
        "notes/zz-bad.md:3",
        "`clients`: Input should be a valid list",
    ),
    Bad("unclosed front matter", "---\nid: bad\n", "notes/zz-bad.md:1", "not closed"),
    Bad(
        "yaml error",
        "---\nid: bad\ntitle: [unclosed\nsources: []\n---\n",
        "notes/zz-bad.md:",
        "not valid YAML",
    ),
    Bad("missing id", "---\ntitle: no id\n---\n", "notes/zz-bad.md:1", "add `id:"),
    Bad(
        "unparseable path",
        "---\nid: bad\nsources:\n  - url: https://github.com/acme/client\n"
        "    commit: BASE\n    path: src/lib.rs:10-2\n---\n",
        "notes/zz-bad.md:6",
        "FILE:START-END",
    ),
    Bad(
        "path with letters",
        "---\nid: bad\nsources:\n  - url: https://github.com/acme/client\n"
        "    commit: BASE\n    path: src/lib.rs:L3\n---\n",
        "notes/zz-bad.md:6",
        "FILE:START-END",
    ),
    Bad(
        "commit not hex",
        "---\nid: bad\nsources:\n  - url: https://github.com/acme/client\n"
        "    commit: main\n    path: src/lib.rs:1-3\n---\n",
        "notes/zz-bad.md:5",
        "not a hex commit",
    ),
    Bad(
        "commit without path",
        "---\nid: bad\nsources:\n  - url: https://github.com/acme/client\n    commit: BASE\n---\n",
        "notes/zz-bad.md:4",
        "needs `path`",
    ),
    Bad("not utf-8", "---\nid: bad\ntitle: \udcff\n---\n", "notes/zz-bad.md", "UTF-8"),
    Bad(
        "alias bomb",
        "---\nid: bad\na: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + BOMB + "---\n",
        "notes/zz-bad.md:",
        "expands to more than 10,000 values",
    ),
    Bad("recursive alias", "---\nid: bad\na: &a [*a]\n---\n", "notes/zz-bad.md:3", "itself"),
    Bad(  # no alias at all: the same bound on the values written out, and no word of aliases
        "too many values",
        "---\nid: bad\nx: [" + "1," * 12_000 + "]\n---\n",
        "notes/zz-bad.md:",
        "holds more than 10,000 YAML values ([limits] yaml_nodes: each key, value, list",
    ),
    Bad(  # 1,000 long-form sources (11 values each): what the limit is, and what to do
        "too many sources",
        "---\nid: bad\nsources:\n"
        + "  - url: https://github.com/acme/client\n    title: t\n    commit: abcdef12\n"
        "    path: src/lib.rs:1-2\n    date: 2026-01-01\n" * 1_000 + "---\n",
        "notes/zz-bad.md:4",
        "about 11 per source, so about 909 sources); split the note, or raise [limits] "
        "yaml_nodes in config.toml",
    ),
    Bad(
        "deep nesting",
        "---\nid: bad\nx: " + "[" * 100_000 + "]" * 100_000 + "\n---\n",
        "notes/zz-bad.md:1",
        "nests 100000 levels deep",
    ),
    Bad(
        "note too large",
        "---\nid: bad\n---\n" + "words " * 200_000,
        "notes/zz-bad.md",
        "above [limits] note_bytes",
    ),
    Bad(
        "permalink to a branch",
        "---\nid: bad\nsources:\n"
        "  - url: https://github.com/acme/client/blob/main/src/lib.rs#L1-L3\n---\n",
        "notes/zz-bad.md:4",
        "names 'main', not a commit; cite a commit",
    ),
    Bad(
        "permalink fragment",
        "---\nid: bad\nsources:\n"
        "  - url: https://github.com/acme/client/blob/BASE/src/lib.rs#L1-3\n---\n",
        "notes/zz-bad.md:4",
        "#L1-3 is not #L10 or #L10-L20",
    ),
]

RULES = [
    Bad("toml error", "[[rule]\nid = 'x'\n", "rules/bad.toml", "TOML error"),
    Bad(  # named at its line, with the fix
        "unknown top-level key",
        "# rules\n\n[[rules]]\nid = 'x'\n",
        "rules/bad.toml:3",
        "unknown top-level key `rules`; a rule file holds only [[rule]] tables",
    ),
    Bad(
        "unknown rule key",
        "[[rule]]\nid = 'x'\nnote = 'good'\npath = 'src/lib.rs'\nquery = '(x) @target'\n"
        "colour = 'red'\n",
        "rules/bad.toml:1",
        "colour: unknown key",
    ),
    Bad(
        "typo in a rule key",
        "[[rule]]\nid = 'x'\nnote = 'good'\npath = 'src/lib.rs'\n"
        "query = '(function_item) @target'\n[[rule.tset]]\nname = 'a'\nexpect = 'holds'\ncode = 'fn a() {}'\n",
        "rules/bad.toml:1",
        "tset: unknown key (did you mean `tests`?); a rule's keys: id, note, path, repo, "
        "language, query, inside, claims, tests",
    ),
    Bad(
        "typo in a claim key",
        "[[rule]]\nid = 'x'\nnote = 'good'\npath = 'src/lib.rs'\n"
        "query = '(function_item) @target'\n[[rule.claims]]\ncapture = 'target'\nequal = 'a'\n",
        "rules/bad.toml:1",
        "claims.0.equal: unknown key (did you mean `equals`?); a claim's keys:",
    ),
    Bad(
        "every problem of a rule at once",
        "[[rule]]\nid = 'Bad_Id'\nnote = 'good'\npath = 'src/lib.rs'\ncolour = 'red'\n"
        "query = '(function_item name: (identifer)) @target'\n",
        "rules/bad.toml:1",
        "id: 'Bad_Id' must be kebab-case (a-z, 0-9, dashes); colour: unknown key; a rule's "
        "keys: id, note, path, repo, language, query, inside, claims, tests; query line 1 "
        "column 23: query error",
    ),
    Bad(
        "no target and a claim on a capture the query lacks",
        "[[rule]]\nid = 'x'\nnote = 'good'\npath = 'src/lib.rs'\nquery = '(function_item) @fn'\n"
        "[[rule.claims]]\ncapture = 'nope'\nequals = 'a'\n",
        "rules/bad.toml:1",
        "query must capture @target (the construct whose text and lines are tracked); claim "
        "names capture @nope, which the query does not capture (it has @fn)",
    ),
    Bad(
        "id not kebab",
        "[[rule]]\nid = 'Bad_Id'\nnote = 'good'\npath = 'src/lib.rs'\n"
        "query = '(function_item) @target'\n",
        "rules/bad.toml:1",
        "kebab-case",
    ),
    Bad(
        "query error",
        "[[rule]]\nid = 'x'\nnote = 'good'\npath = 'src/lib.rs'\nquery = '''\n"
        "(function_item\n  name: (identifer) @n) @target\n'''\n",
        "rules/bad.toml:7",
        "query line 2 column 10",
    ),
    Bad(
        "query cut short",
        "[[rule]]\nid = 'x'\nnote = 'good'\npath = 'src/lib.rs'\nquery = '''\n"
        "(function_item\n  name: (identifier) @n\n'''\n",
        "rules/bad.toml:7",
        "query line 2: query error: Unexpected EOF",
    ),
    Bad(
        "predicate arguments",
        "[[rule]]\nid = 'x'\nnote = 'good'\npath = 'src/lib.rs'\n"
        "query = '((function_item) @target (#eq? @target))'\n",
        "rules/bad.toml:5",
        "query line 1: query error: Invalid predicate",
    ),
    Bad(
        "no target capture",
        "[[rule]]\nid = 'x'\nnote = 'good'\npath = 'src/lib.rs'\nquery = '(function_item) @fn'\n",
        "rules/bad.toml:1",
        "must capture @target",
    ),
    Bad(
        "two tests in a claim",
        "[[rule]]\nid = 'x'\nnote = 'good'\npath = 'src/lib.rs'\n"
        "query = '(function_item) @target'\n[[rule.claims]]\ncapture = 'target'\nequals = 'a'\n"
        "matches = 'b'\n",
        "rules/bad.toml:1",
        "exactly one of equals",
    ),
    Bad(
        "bad regex",
        "[[rule]]\nid = 'x'\nnote = 'good'\npath = 'src/lib.rs'\n"
        "query = '(function_item) @target'\n[[rule.claims]]\ncapture = 'target'\nmatches = '(('\n",
        "rules/bad.toml:1",
        "not a valid regular expression",
    ),
    Bad(
        "unknown capture",
        "[[rule]]\nid = 'x'\nnote = 'good'\npath = 'src/lib.rs'\n"
        "query = '(function_item) @target'\n[[rule.claims]]\ncapture = 'nope'\nequals = 'a'\n",
        "rules/bad.toml:1",
        "@nope",
    ),
    Bad(
        "unknown language",
        "[[rule]]\nid = 'x'\nnote = 'good'\npath = 'src/lib.cobol'\nquery = '(x) @target'\n",
        "rules/bad.toml:1",
        "set language",
    ),
    Bad(
        "unknown note",
        "# header\n[[rule]]\nid = 'x'\nnote = 'nobody'\npath = 'src/lib.rs'\n"
        "query = '(function_item) @target'\n",
        "rules/bad.toml:2: rule x",
        "does not exist; set `note`",
    ),
    Bad(
        "missing query",
        "\n[[rule]]\nid = 'x'\nnote = 'good'\npath = 'src/lib.rs'\n",
        "rules/bad.toml:2",
        "query: missing; add it",
    ),
    Bad(
        "path absent at the baseline",
        "\n[[rule]]\nid = 'x'\nnote = 'good'\npath = 'src/nope.rs'\n"
        "query = '(function_item) @target'\n",
        "rules/bad.toml:2",
        "fix `path` of rule x",
    ),
    Bad(
        "zero targets",
        "\n[[rule]]\nid = 'x'\nnote = 'good'\npath = 'src/lib.rs'\n"
        "query = '(function_item name: (identifier) @n (#eq? @n \"zzz\")) @target'\n",
        "rules/bad.toml:2",
        "matches 0 @target nodes",
    ),
    Bad(
        "two targets",
        "\n[[rule]]\nid = 'x'\nnote = 'good'\npath = 'src/lib.rs'\n"
        "query = '(function_item) @target'\n",
        "rules/bad.toml:2",
        "tighten the query",
    ),
    Bad(
        "claim false at the baseline",
        "\n[[rule]]\nid = 'x'\nnote = 'good'\npath = 'src/lib.rs'\n"
        "query = '(function_item name: (identifier) @n (#eq? @n \"a\")) @target'\n"
        "[[rule.claims]]\ncapture = 'n'\nequals = 'b'\n",
        "rules/bad.toml:2",
        "fix the claim",
    ),
]


def _good(project: Project, upstream: Upstream) -> str:
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("good", f"{base} {LIB}:1-3")
    project.rules(
        "[[rule]]\nid = 'fine'\nnote = 'good'\npath = 'src/lib.rs'\n"
        "query = '(function_item name: (identifier) @n (#eq? @n \"b\")) @target'\n",
        name="good.toml",
    )
    return base


def _assert_one_clear_error(code: int, out: str, err: str, bad: Bad, kind: str) -> None:
    assert code == 2
    assert "Traceback" not in out + err
    assert "Value error" not in out + err  # pydantic's prefix, not ours
    results = json.loads(out)["results"]
    errors = [r for r in results if r["verdict"] == "error"]
    assert len(errors) == 1, errors
    assert errors[0]["kind"] == kind  # a broken rules file is a rule's error, not a citation's
    assert bad.where in errors[0]["message"] and bad.says in errors[0]["message"], errors[0][
        "message"
    ]
    verdicts = {r["id"]: r["verdict"] for r in results}
    assert verdicts["good:src/lib.rs:1-3"] == "fresh"  # every other item still checked
    assert verdicts["fine"] == "fresh"


@pytest.mark.parametrize("bad", NOTES, ids=lambda b: b.name)
def test_bad_note(
    bad: Bad, project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _good(project, upstream)
    text = bad.text.replace("BASE", base)
    note = project.root / "notes" / "zz-bad.md"
    note.write_bytes(text.encode("utf-8", errors="surrogateescape"))

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    _assert_one_clear_error(code, out, err, bad, "citation")


def test_a_duplicate_note_id_is_an_error_in_both_files_and_neither_is_judged(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Which of the two notes its rules mean is unknown: judging either would be a wrong
    answer (the rules "cite no code"), so each file names the other and nothing is judged."""
    base = _good(project, upstream)
    project.note("good", f"{base} {LIB}:5-7", name="zz-copy.md")  # copied, id not changed

    code, out, _ = project.run("check", "--format", "json", capsys=capsys)

    assert code == 2
    results = json.loads(out)["results"]
    messages = sorted(r["message"] for r in results)
    assert [r["verdict"] for r in results] == ["error"] * 3, results
    assert messages[0].startswith("notes/good.md:2: duplicate note id 'good', also in "
                                  "notes/zz-copy.md; neither note is checked")  # fmt: skip
    assert messages[1].startswith("notes/zz-copy.md:2: duplicate note id 'good', also in "
                                  "notes/good.md")  # fmt: skip
    assert messages[2] == (
        "rules/good.toml:1: rule fine: not checked: note 'good' is the id of notes/good.md "
        "and notes/zz-copy.md; give each note its own id"
    )
    code, _, err = project.run("check", "--note", "good", capsys=capsys)
    assert code == 2 and "--note good: this id is in notes/good.md and notes/zz-copy.md" in err


def test_check_of_one_note_lists_only_its_own_errors(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _good(project, upstream)
    project.note("other", raw="---\nid: other\nsouces: []\n---\n")
    project.note("half", f"{base} {LIB}:1-3", f"{base} {LIB}:L3")

    _, out, _ = project.run("check", "--note", "good", "--format", "json", capsys=capsys)
    assert [r["verdict"] for r in json.loads(out)["results"]] == ["fresh", "fresh"]

    _, out, _ = project.run("check", "--note", "half", "--format", "json", capsys=capsys)
    errors = [r["message"] for r in json.loads(out)["results"] if r["verdict"] == "error"]
    assert len(errors) == 1 and errors[0].startswith("notes/half.md:"), errors


def test_markdown_without_front_matter_is_skipped_with_one_notice(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    _good(project, upstream)
    (project.root / "notes" / "README.md").write_text("# Notes\n\nHow to write one.\n")
    (project.root / "notes" / "guide").mkdir()
    (project.root / "notes" / "guide" / "style.md").write_text("Plain prose.\n")

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    assert code == 0, out
    assert err.count("without front matter") == 1
    assert "2 Markdown files" in err and "notes/README.md" in err and "guide/style.md" in err

    project.config(extra='notes_ignore = ["README.md", "guide/*"]')
    code, out, err = project.run("check", "--format", "json", capsys=capsys)
    assert code == 0 and "front matter" not in err


def test_extra_front_matter_keys_can_be_allowed(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    _good(project, upstream)
    project.note("mine", raw="---\nid: mine\nreviewer: ana\n---\n")
    code, out, _ = project.run("check", "--format", "json", capsys=capsys)
    assert code == 2 and "unknown key `reviewer`" in out
    project.config(extra='notes_extra_keys = ["reviewer"]')
    code, out, _ = project.run("check", "--format", "json", capsys=capsys)
    assert code == 0, out


@pytest.mark.parametrize("bad", RULES, ids=lambda b: b.name)
def test_bad_rule(
    bad: Bad, project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    _good(project, upstream)
    project.rules(bad.text, name="bad.toml")

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    _assert_one_clear_error(code, out, err, bad, "rule")


CONFIGS = [
    ("unknown key", 'notes = "notes"\ncolour = "red"\n', ":2: key colour: unknown key"),
    ("wrong type", "track_citations = 3\n", ":1: key track_citations"),
    ("toml error", "notes = \n", "TOML error"),
    ("bad upstream repo", '[[upstream]]\nrepo = "codex"\n', ":2: key upstream.0.repo"),
    (
        "bad key of the second upstream",
        '[[upstream]]\nrepo = "a/b"\n\n[[upstream]]\nrepo = "c/d"\nbrnch = "main"\n',
        ":6: key upstream.1.brnch: unknown key (did you mean `branch`?)",
    ),
    ("bad schedule", '[[upstream]]\nrepo = "a/b"\nschedule = "every day"\n', "5 fields"),
    ("bad sink", '[issues]\nsink = "email"\n', ":2: key issues.sink"),
    (
        "same upstream twice",
        '[[upstream]]\nrepo = "a/b"\n[[upstream]]\nrepo = "A/b"\n',
        "A/b is listed twice",
    ),
    ("notes folder missing", 'notes = "nowhere"\n', ":1: key notes: folder nowhere does not exist"),
    ("rules folder missing", '\nrules = "rulez"\n', ":2: key rules: folder rulez does not exist"),
    ("state is a file", 'state = "config.toml"\n', ":1: key state: config.toml is a file"),
    ("boolean as text", 'track_citations = "yes"\n', "key track_citations: Input should be"),
    ("unknown open_on", '[issues]\nopen_on = ["chagned"]\n', "key issues.open_on.0"),
    ("token_env not a name", '[issues]\ntoken_env = "MY TOKEN"\n', "key issues.token_env"),
    ("api_url not a url", '[issues]\napi_url = "api.github"\n', "key issues.api_url"),
    ("negative time limit", "[limits]\nfetch_seconds = -1\n", "key limits.fetch_seconds"),
]


@pytest.mark.parametrize(("text", "says"), [c[1:] for c in CONFIGS], ids=[c[0] for c in CONFIGS])
def test_bad_config(
    text: str, says: str, project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.config_file.write_text(text, encoding="utf-8")

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    assert (code, out) == (2, "")
    assert err.startswith(f"watch: error: {project.config_file.resolve()}")
    assert says in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_config_that_is_not_utf8(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.config_file.write_bytes(b'notes = "notes"\n# caf\xe9\n')

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    assert (code, out) == (2, "")
    assert "config.toml:2: not UTF-8 at column 6; save it as UTF-8" in err
    assert "Traceback" not in err


def test_missing_config(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    from watcher.cli import main

    code = main(["check", "--config", "/nonexistent/config.toml"])

    assert code == 2
    assert "not found; pass --config FILE" in capsys.readouterr().err


def test_unreachable_upstream_fails_only_its_items(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _good(project, upstream)
    other = project.root / "notes" / "other.md"
    other.write_text(
        f"---\nid: other\nsources:\n  - url: https://github.com/acme/gone\n"
        f"    commit: {base}\n    path: {LIB}:1-3\n---\n"
    )
    project.config(extra="", upstream_extra="")
    with project.config_file.open("a") as handle:
        handle.write('\n[[upstream]]\nrepo = "acme/gone"\nurl = "/nonexistent/gone"\n')

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    report = json.loads(out)
    assert code == 2 and "Traceback" not in err
    by_repo = {u["repo"]: u for u in report["upstreams"]}
    assert by_repo["acme/gone"]["error"] and by_repo["acme/gone"]["head"] is None
    verdicts = {r["id"]: (r["verdict"], r["error"]) for r in report["results"]}
    assert verdicts[f"other:{LIB}:1-3"] == ("error", "upstream-unreachable")
    assert verdicts[f"good:{LIB}:1-3"] == ("fresh", None)
