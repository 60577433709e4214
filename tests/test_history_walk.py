"""The attribution walk (`watcher.history.walk`) judges only the versions whose commit
touched the item, and its answers stay exact: pinned by the run's counts of walks and
parses (`watcher.judge.session.Counts`)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from bench import oracle
from tests.conftest import Project
from tests.support import check_results
from watcher.gitbuild import Upstream
from watcher.history import walk
from watcher.locate import anchors, extent, matching, probes
from watcher.mirror import objects
from watcher.parse import syntax

LIB = "src/session.rs"
NAMES = [f"step_{i:02d}" for i in range(30)]
TARGET = "step_20"
RULE = """\
[[rule]]
id = "target-scale"
note = "n"
path = "src/session.rs"
inside = '''(function_item name: (identifier) @n (#eq? @n "step_20")) @scope'''
query = '''(let_declaration pattern: (identifier) @v (#eq? @v "scale") value: (_) @value) @target'''
[[rule.claims]]
capture = "value"
equals = "3"
"""


def function(name: str, scale: int, extra: str = "") -> str:
    word = "scale" if name == TARGET else "factor"  # the rule's target line is unique
    return (
        f"pub fn {name}(input: u32) -> u32 {{\n"
        f"    let {word} = {scale};\n"
        f"    input * {word}{extra}\n"
        "}\n"
    )


def module(header: str = "", **edits: tuple[int, str]) -> str:
    """NAMES functions (scale 3 unless edited), after `header` lines."""
    parts = [function(n, *edits.get(n, (3, ""))) for n in NAMES]
    return header + "\n".join(parts)


def target_lines() -> str:
    start = 1 + 5 * NAMES.index(TARGET)
    return f"{start}-{start + 3}"


def check(project: Project, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    project.counts.parse.reset()
    project.counts.walk.reset()
    return check_results(project, capsys)


def noise(upstream: Upstream, count: int, **state: tuple[int, str]) -> None:
    """`count` commits that edit other functions, and add lines above the target."""
    for index in range(count):
        name = NAMES[index % 10]
        edits = {**state, name: (100 + index, "")}
        header = "// header\n" * (index % 3)
        upstream.commit(f"tune {name} (#{200 + index})", {LIB: module(header, **edits)})


def test_commits_that_do_not_touch_the_item_are_not_parsed(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {LIB: module()})
    project.note("n", f"{base} {LIB}:{target_lines()}")
    project.rules(RULE)
    noise(upstream, 12)
    change = upstream.commit("change the target (#2)", {LIB: module(step_20=(4, ""))})
    noise(upstream, 30, step_20=(4, ""))

    results = check(project, capsys)

    citation = results[f"n:{LIB}:{target_lines()}"]
    assert citation["verdict"] == "changed"
    assert citation["introduced_by"]["commit"] == change
    assert results["target-scale"]["verdict"] == "broken"
    assert results["target-scale"]["introduced_by"]["commit"] == change
    # 43 commits after the baseline; only the one that touched the item is judged (once
    # per item), the others are followed without parsing. The walk behind `introduced_by`
    # and `history` reads each of the 44 versions once, for both items.
    assert project.counts.walk.judged_commits == [change, change]
    assert project.counts.walk.skipped == 2 * 42
    assert project.counts.walk.read == 44
    assert project.counts.walk.handed == 1  # the version judged is parsed from the walk's own read
    assert project.counts.parse.parses <= 3  # the baseline, HEAD, and the version before the change
    assert [c["commit"] for c in citation["history"]] == [change]


def test_a_change_made_reverted_and_made_again_is_blamed_on_the_second_time(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {LIB: module()})
    project.note("n", f"{base} {LIB}:{target_lines()}")
    first = upstream.commit("first change (#2)", {LIB: module(step_20=(3, " + 1"))})
    noise(upstream, 5, step_20=(3, " + 1"))
    revert = upstream.commit("revert it (#3)", {LIB: module()})
    noise(upstream, 5)
    again = upstream.commit("change it again (#4)", {LIB: module(step_20=(3, " + 1"))})
    noise(upstream, 5, step_20=(3, " + 1"))

    result = check(project, capsys)[f"n:{LIB}:{target_lines()}"]

    assert result["verdict"] == "changed"
    assert result["introduced_by"]["commit"] == again
    # The walk goes on to the baseline for the history, judging each commit that touched
    # the item, and nothing else.
    assert project.counts.walk.judged_commits == [again, revert, first]
    assert [c["commit"] for c in result["history"]] == [first, revert, again]


def test_a_move_within_the_file_is_followed_to_the_earlier_change(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {LIB: module()})
    project.note("n", f"{base} {LIB}:{target_lines()}")
    change = upstream.commit("change (#2)", {LIB: module(step_20=(7, ""))})
    noise(upstream, 4, step_20=(7, ""))
    moved = module(step_20=(7, "")).replace(function(TARGET, 7), "")  # cut, pasted below
    upstream.commit("move it to the end (#3)", {LIB: moved + "\n" + function(TARGET, 7)})
    upstream.commit("rename the file (#4)", {LIB: None, "src/turn.rs": upstream.read(LIB)})

    result = check(project, capsys)[f"n:{LIB}:{target_lines()}"]

    assert result["verdict"] == "changed"
    assert result["current"]["path"] == "src/turn.rs"
    assert result["introduced_by"]["commit"] == change
    assert project.counts.walk.judged_commits == [change]  # the move and the rename are followed


def test_an_attribute_dropped_above_a_changed_definition_is_a_change(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Dropping an attribute leaves the definition's other lines as they were, byte for
    byte, in the version before: the code around them tells the walk to judge it."""

    def source(value: str, ignored: bool) -> str:
        attribute = "#[cfg_attr(windows, ignore)]\n" if ignored else ""
        return (
            "pub fn before() -> u32 {\n    1\n}\n\n"
            f"{attribute}#[test]\nfn target() {{\n    assert_eq!({value}, 2);\n}}\n\n"
            "pub fn after() -> u32 {\n    2\n}\n"
        )

    base = upstream.commit("base (#1)", {LIB: source("1 + 1", True)})
    project.note("n", f"{base} {LIB}:5-9")
    change = upstream.commit("change the body (#2)", {LIB: source("2", True)})
    drop = upstream.commit("run it on windows too (#3)", {LIB: source("2", False)})

    result = check(project, capsys)[f"n:{LIB}:5-9"]

    assert result["verdict"] == "changed"
    assert result["current"]["start_line"] == 5
    assert result["introduced_by"]["commit"] == change
    assert [c["commit"] for c in result["history"]] == [change, drop]


def test_a_statement_dropped_below_a_python_function_is_a_change(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Python function ends where its indented lines do: with its last statement
    dropped, its other lines are all in the version before, and it was longer there."""
    path = "src/session.py"

    def source(value: int, logged: bool) -> str:
        log = "    log(value)\n" if logged else ""
        return (
            "def before():\n    return 1\n\n\n"
            f"def target(value):\n    value = value + {value}\n{log}\n\n"
            "def after():\n    return 2\n"
        )

    base = upstream.commit("base (#1)", {path: source(1, True)})
    project.note("n", f"{base} {path}:5-7")
    change = upstream.commit("change the step (#2)", {path: source(2, True)})
    drop = upstream.commit("stop logging (#3)", {path: source(2, False)})

    result = check(project, capsys)[f"n:{path}:5-7"]

    assert result["verdict"] == "changed"
    assert result["introduced_by"]["commit"] == change
    assert [c["commit"] for c in result["history"]] == [change, drop]


def test_a_comment_edited_in_the_cited_margin_is_not_a_change(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cited lines open with a blank line and a doc comment: no tokens, a margin kept
    around the match so that its lines stay the cited ones. With the comment gone, that
    margin reaches the code above; the item's own tokens are as they were, so the commit
    that dropped the comment is no change of it (seen on rust-sdk, a docs-only commit)."""

    def source(value: int, documented: bool) -> str:
        docs = "/// Adds one.\n/// Always.\n" if documented else ""
        return (
            f"pub fn before() -> u32 {{\n    1\n}}\n\n{docs}"
            f"pub fn target(x: u32) -> u32 {{\n    let y = x;\n    y + {value}\n}}\n\n"
            "pub fn after() -> u32 {\n    2\n}\n"
        )

    base = upstream.commit("base (#1)", {LIB: source(1, True)})
    project.note("n", f"{base} {LIB}:4-10")
    upstream.commit("docs: say less (#2)", {LIB: source(1, False)})
    change = upstream.commit("add two (#3)", {LIB: source(2, False)})

    result = check(project, capsys)[f"n:{LIB}:4-10"]

    assert result["verdict"] == "changed"
    assert result["introduced_by"]["commit"] == change
    assert [c["commit"] for c in result["history"]] == [change]


def test_a_long_doc_comment_above_a_changed_function_is_not_a_change(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The trait was renamed, so the changed function is placed by likeness. Of regions as
    like it, one took in the `}` of the function above and another the `fn` below; which
    one won hung on where the lines read around it began, and a doc comment longer than
    the citation moved that (seen on rust-sdk, a docs-only commit in the history)."""

    def source(trait: str, receiver: str, docs: int) -> str:
        comment = "    /// Calls a tool.\n" * docs
        return (
            f"pub trait {trait} {{\n    fn before(&self) -> u32 {{\n        1\n    }}\n"
            f"{comment}    fn call_tool(\n        {receiver},\n        request: CallRequest,\n"
            "    ) -> Result<u32, Error> {\n"
            "        ready(Err(Error::not_found::<CallMethod>()))\n    }\n"
            "    fn list_tools(\n        &self,\n    ) -> u32 {\n        2\n    }\n}\n"
        )

    base = upstream.commit("base (#1)", {LIB: source("Handler", "&mut self", 0)})
    project.note("n", f"{base} {LIB}:5-10")
    change = upstream.commit("rename, shared (#2)", {LIB: source("Server", "&self", 0)})
    upstream.commit("docs: call_tool (#3)", {LIB: source("Server", "&self", 9)})

    result = check(project, capsys)[f"n:{LIB}:5-10"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (14, 19)
    assert result["introduced_by"]["commit"] == change
    assert [c["commit"] for c in result["history"]] == [change]


def look_alike(cited: bool) -> str:
    """Cited lines in one function (when `cited`), a look-alike of them in another."""
    block = (
        "    let key = Key {\n        server: NAME.to_string(),\n"
        '        tool: "run_action".to_string(),\n    };\n'
    )
    checks = "".join(f"    assert_eq!(options({n}), vec![{n}, {n + 1}]);\n" for n in range(6))
    return (
        f'fn approve() {{\n{block if cited else ""}    ask("run_action", None);\n{checks}}}\n\n'
        "fn expected() {\n    let expected = Key {\n        server: NAME.to_string(),\n"
        '        tool: "list_events".to_string(),\n    };\n    check(expected, key);\n}\n'
    )


def test_cited_lines_removed_beside_a_look_alike_are_missing(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """At HEAD the cited lines are gone and a look-alike stands in another function that
    was there all along. Issue 35 (class 3): that is the other function's own code, not
    the citation (it used to be called `changed` there): missing, since the commit that
    removed them."""
    base = upstream.commit("base (#1)", {LIB: look_alike(True)})
    project.note("n", f"{base} {LIB}:2-5")
    drop = upstream.commit("ask without a key (#2)", {LIB: look_alike(False)})
    upstream.commit("unrelated (#3)", {"README.md": "docs\n"})

    result = check(project, capsys)[f"n:{LIB}:2-5"]

    assert result["verdict"] == "missing"
    assert result["current"] is None
    assert result["introduced_by"]["commit"] == drop
    assert [(c["commit"], c["state"]) for c in result["history"]] == [(drop, "missing")]


def test_cited_lines_removed_beside_a_look_alike_in_their_definition_are_missing(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """A changed item is carried through its definition by aligning its tokens. When a
    commit removes the cited lines, a look-alike left in the same definition does not
    stand for them (issue 35, class 3; it used to): the item is missing from then on."""

    def source(cited: str | None) -> str:
        block = (
            f"    let request = Request {{\n        message: {cited}.to_string(),\n"
            "        schema: schema,\n    };\n"
        )
        waits = "    wait();\n" * 4
        return (
            f"fn direction() {{\n{block if cited else ''}    send(request);\n{waits}"
            '    let other = Request {\n        message: "continue?".to_string(),\n'
            "        schema: other_schema,\n    };\n    send(other);\n}\n"
        )

    base = upstream.commit("base (#1)", {LIB: source('"continue?"')})
    project.note("n", f"{base} {LIB}:2-5")
    change = upstream.commit("ask otherwise (#2)", {LIB: source('"go on?"')})
    drop = upstream.commit("ask once (#3)", {LIB: source(None)})

    result = check(project, capsys)[f"n:{LIB}:2-5"]

    assert result["verdict"] == "missing"
    assert result["introduced_by"]["commit"] == drop
    assert [(c["commit"], c["state"]) for c in result["history"]] == [
        (change, "changed"),
        (drop, "missing"),
    ]


def copied(tweaked: bool, copy: bool) -> str:
    """Cited lines in `approve` (one word changed when `tweaked`), and a verbatim copy of
    the original ones in `expected` (when `copy`), far below them."""
    block = (
        "    let key = Key {\n        server: NAME.to_string(),\n"
        '        tool: "run_action".to_string(),\n    };\n'
    )
    checks = "".join(f"    assert_eq!(options({n}), vec![{n}, {n + 1}]);\n" for n in range(6))
    mine = block.replace("run_action", "run_tool") if tweaked else block
    return (
        f'fn approve() {{\n{mine}    ask("run_action", None);\n{checks}}}\n\n'
        f"fn expected() {{\n{block if copy else ''}    check(expected, key);\n}}\n"
    )


def test_the_oracle_judges_every_version_and_tells_where_the_walk_differs(
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The cited lines changed while a verbatim copy of them stood elsewhere (the item was
    # there, moved); the change shows only once the copy is removed, far from its lines.
    base = upstream.commit("base (#1)", {LIB: copied(False, False)})
    project.note("n", f"{base} {LIB}:2-5")
    tweak = upstream.commit("tweak, and copy (#2)", {LIB: copied(True, True)})
    drop = upstream.commit("drop the copy (#3)", {LIB: copied(True, False)})
    check(project, capsys)  # the mirror, which the oracle reads offline
    config = ["--config", str(project.config_file)]

    assert oracle.main(config) == 0
    assert "1 stale citations: 1 agree, 0 differ" in capsys.readouterr().out

    # A walk blind to it: the cited lines' definition and verbatim matches left unread.
    monkeypatch.setattr(extent, "_with_definition", lambda _parsed, _anchor, *span: span)
    monkeypatch.setattr(walk, "_unmatched", lambda *_: True)
    assert oracle.main(config) == 1
    out = capsys.readouterr().out
    assert f"n:{LIB}:2-5 (changed)" in out
    assert f"walk: introduced_by {tweak[:10]}; history {tweak[:10]} changed\n" in out
    assert f"every version: introduced_by {drop[:10]}; history {drop[:10]} changed" in out


def test_backtest_shares_the_walk_and_judges_only_touching_commits(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {LIB: module()})
    project.note("n", f"{base} {LIB}:{target_lines()}")
    project.rules(RULE)
    noise(upstream, 6)
    flip = upstream.commit("scale 4 (#2)", {LIB: module(step_20=(4, ""))})
    noise(upstream, 6, step_20=(4, ""))
    back = upstream.commit("scale 3 again (#3)", {LIB: module()})
    noise(upstream, 6)
    project.counts.walk.reset()

    code, out, _ = project.run("backtest", "target-scale", capsys=capsys)

    assert code == 0
    assert f"{flip[:10]} fresh -> broken" in out
    assert f"{back[:10]} broken -> fresh" in out
    assert project.counts.walk.judged_commits == [back, flip]  # walked back from HEAD
    assert project.counts.walk.skipped == 18


def test_renaming_the_scope_outside_the_target_lines_is_judged(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {LIB: module()})
    project.note("n", f"{base} {LIB}:{target_lines()}")
    project.rules(RULE)
    broken = module(step_20=(4, ""))
    upstream.commit("scale 4 (#2)", {LIB: broken})
    upstream.commit("rename it (#3)", {LIB: broken.replace("fn step_20(", "fn step_twenty(")})
    back = upstream.commit("name it back (#4)", {LIB: broken})
    noise(upstream, 4, step_20=(4, ""))

    result = check(project, capsys)["target-scale"]

    assert result["verdict"] == "broken"
    # The rename back touched no line of the target, but it changed how often the name
    # the rule's scope insists on occurs: the walk judges it, and blames it.
    assert result["introduced_by"]["commit"] == back


def test_a_longer_name_containing_a_guard_word_is_not_a_rename(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {LIB: module()})
    project.note("n", f"{base} {LIB}:{target_lines()}")
    project.rules(RULE)
    change = upstream.commit("change the target (#2)", {LIB: module(step_20=(4, ""))})
    helpers = ""
    for index in range(4):  # `step_20_helper_0` holds the guard `step_20`, as a longer name
        helpers += function(f"step_20_helper_{index}", 3)
        upstream.commit(f"add a helper (#{3 + index})", {LIB: module(step_20=(4, "")) + helpers})

    results = check(project, capsys)

    assert results[f"n:{LIB}:{target_lines()}"]["introduced_by"]["commit"] == change
    assert results["target-scale"]["introduced_by"]["commit"] == change
    # Guards count whole words: the four helpers are followed, not judged, for either item.
    assert project.counts.walk.judged_commits == [change, change]
    assert project.counts.walk.skipped == 2 * 4


def test_following_searches_only_the_bytes_each_commit_changed(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {LIB: module()})
    project.note("n", f"{base} {LIB}:{target_lines()}")
    edits = {TARGET: (4, "")}
    change = upstream.commit("change the target (#2)", {LIB: module("", **edits)})
    for index in range(20):  # one function each, above or below the target
        edits[NAMES[index * 7 % 30]] = (100 + index, "")
        upstream.commit(f"tune (#{3 + index})", {LIB: module("", **edits)})
    edits |= {NAMES[2]: (7, ""), NAMES[25]: (7, "")}  # above and below it at once
    upstream.commit("tune two (#30)", {LIB: module("", **edits)})

    result = check(project, capsys)[f"n:{LIB}:{target_lines()}"]

    assert result["introduced_by"]["commit"] == change
    assert project.counts.walk.judged_commits == [change]
    assert project.counts.walk.skipped == 21
    # Each version is compared with the one after it, and only the bytes that differ (and
    # the length of the item's lines and the code around them, around them) are searched
    # for its lines and names: a few hundred bytes a version, where searching each
    # version whole takes its size at least.
    assert project.counts.walk.searched < 21 * len(module()) // 3


def test_a_file_edited_all_over_in_every_commit_is_searched_once_a_version(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The scattered-edit shape (`bench.scattered`): every commit edits functions all
    over the file, above and below the cited one, which changed once, early. Each version
    is read once, none but the change is judged, and following the item's lines through
    a version searches about its size once (its lines, then its names counted in all of
    it), not once for each window around them and each version."""
    base = upstream.commit("base (#1)", {LIB: module()})
    project.note("n", f"{base} {LIB}:{target_lines()}")
    edits = {TARGET: (4, "")}
    change = upstream.commit("change the target (#2)", {LIB: module("", **edits)})
    for index in range(24):  # eight functions each, spread over the file
        for step in range(8):
            name = NAMES[(index * 5 + step * 4) % 30]
            if name != TARGET:
                edits[name] = (100 + index, "")
        upstream.commit(f"tune all over (#{3 + index})", {LIB: module("", **edits)})

    result = check(project, capsys)[f"n:{LIB}:{target_lines()}"]

    assert result["verdict"] == "changed"
    assert result["introduced_by"]["commit"] == change
    assert [c["commit"] for c in result["history"]] == [change]
    assert project.counts.walk.judged_commits == [change]
    assert project.counts.walk.skipped == 24
    assert project.counts.walk.read == 26  # HEAD, the 24 versions before it, and the baseline
    assert project.counts.walk.searched <= 24 * len(module()) * 2.2


def task(index: int, value: int = 3) -> str:
    """A function with words of its own (`part_07`, `offset_07`), as real code has."""
    return (
        f"pub fn task_{index:02d}(input: u32) -> u32 {{\n"
        f"    let part_{index:02d} = input * {value};\n"
        f"    part_{index:02d} + offset_{index:02d}(input)\n"
        "}\n"
    )


def tasks(without: int | None = None, **values: int) -> str:
    return "\n".join(task(i, values.get(f"t{i}", 3)) for i in range(30) if i != without)


def test_a_missing_item_is_judged_only_where_a_commit_could_bring_it_back(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {LIB: tasks()})
    project.note("n", f"{base} {LIB}:101-104")  # task_20
    values: dict[str, int] = {}
    tuned = itertools.count(100)

    def tune(count: int, without: int | None) -> None:
        for _ in range(count):  # other functions, above the target's place
            value = next(tuned)
            values[f"t{value % 10}"] = value
            upstream.commit(f"tune (#{value})", {LIB: tasks(without, **values)})

    first = upstream.commit("drop task_20 (#2)", {LIB: tasks(20, **values)})
    tune(8, 20)
    back = upstream.commit("bring task_20 back (#3)", {LIB: tasks(**values)})
    tune(4, None)
    again = upstream.commit("drop task_20 again (#4)", {LIB: tasks(20, **values)})
    tune(8, 20)

    result = check(project, capsys)[f"n:{LIB}:101-104"]

    assert result["verdict"] == "missing"
    assert result["introduced_by"]["commit"] == again
    assert [c["commit"] for c in result["history"]] == [first, back, again]
    # While it is missing, a commit that wrote nowhere near its words nor where its
    # words point cannot bring it back: those versions are told from their bytes, not
    # parsed. Judged: the versions before the two drops and before it came back.
    assert project.counts.walk.judged_commits == [again, back, first]
    assert project.counts.walk.quiet == 16
    # Of the 16 versions told from their bytes, those that hold none of its rarest words
    # are told by a `find` of each, with no word counted: ~3 files' worth of words are
    # counted in all (~7 when each version's counts are edited from the next one's, 20
    # when counted afresh).
    assert project.counts.parse.counted < 4 * len(tasks())
    # Where its rarest words occur is shifted from the next version's the same way, and
    # only the stretches that differ are searched: ~29 files' worth (~45 with every
    # version's words placed, ~97 afresh).
    assert project.counts.parse.placed < 35 * len(tasks())


def test_a_missing_function_still_called_is_not_judged_where_nothing_can_define_it(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    caller = "\npub fn run(input: u32) -> u32 {\n    1 + task_20(input)\n}\n"
    base = upstream.commit("base (#1)", {LIB: tasks() + caller})
    project.note("n", f"{base} {LIB}:101-104")  # task_20
    drop = upstream.commit("drop task_20 (#2)", {LIB: tasks(20) + caller})
    values: dict[str, int] = {}
    for value in range(100, 108):  # other functions, far from the call
        values[f"t{value % 10}"] = value
        upstream.commit(f"tune (#{value})", {LIB: tasks(20, **values) + caller})

    result = check(project, capsys)[f"n:{LIB}:101-104"]

    assert result["verdict"] == "missing"
    assert result["introduced_by"]["commit"] == drop
    # Its name is still written in each version, but only where it is called: no `fn`
    # before it, so no version can define it, and none is parsed to look for it.
    assert project.counts.walk.judged_commits == [drop]
    assert project.counts.walk.quiet == 8


@pytest.mark.parametrize("text", ["a\nb\nc", "a\nb\nc\n", "a\r\nb\r\n\r\n", "\n\n", "one"])
def test_a_place_reads_its_lines_bytes_off_the_parse(text: str) -> None:
    source = text.encode()
    parsed = syntax.Parsed("0" * 40, syntax.TEXT, None, source)
    lines = source.split(b"\n")
    for start in range(1, len(lines) + 1):
        for end in range(start, len(lines) + 2):
            expected = b"\n".join(lines[start - 1 : end])  # what following them compares
            assert source[slice(*extent._span(parsed, start, end))] == expected


RUST_CITED = "fn target(input: u32) -> u32 {\n    let scaled = input * 7;\n    scaled + 7\n}\n"
PYTHON_CITED = "def target(value):\n    scaled = value * 7\n    return scaled + 7\n"
# (language, path, the cited function, a function before it, versions older than HEAD with
# the cited tokens written otherwise (a verbatim match) or with one statement more (none))
VERBATIM_CASES = [
    (
        "rust",
        "src/lib.rs",
        RUST_CITED,
        "fn before() {}\n\n",
        {
            RUST_CITED.replace("input *", "input /* why */ *").replace("{\n", "{ // see\n", 1): 1,
            RUST_CITED.replace("    ", "\t").replace("* 7", "*\n7"): 1,
            RUST_CITED.replace("scaled +", "/* a /* nested */ b */ scaled +"): 1,
            RUST_CITED.replace("    scaled + 7", "    let unused = 1;\n    scaled + 7"): 0,
        },
    ),
    (
        "python",
        "src/lib.py",
        PYTHON_CITED,
        "def before():\n    pass\n\n\n",
        {
            PYTHON_CITED.replace("* 7\n", "* 7  # why\n").replace("= value", "=  value"): 1,
            PYTHON_CITED.replace("    return", "    unused = 1\n    return"): 0,
        },
    ),
]


@pytest.mark.parametrize(("language", "path", "cited", "before", "older"), VERBATIM_CASES)
def test_a_verbatim_match_in_an_older_version_is_told_from_its_bytes(
    language: str, path: str, cited: str, before: str, older: dict[str, int]
) -> None:
    """A changed item followed into an older version is judged there when the commit may
    have removed a verbatim match of the cited tokens (`probes.stays_unmatched`): never
    missed where `matching.place` finds one, and not asked where it cannot."""

    def version(function: str) -> syntax.Parsed:
        raw = f"{before}{function}\nfoo = 1\n".encode()
        return syntax.parse(f"{hash(raw):040x}"[-40:], language, lambda: raw)

    anchor = anchors.anchor(version(cited), path, before.count("\n") + 1, before.count("\n") + 4)
    newer = version(cited.replace("7", "8"))
    assert matching.place(anchor, [(path, newer)])[0] == "changed"
    for text, verbatim in older.items():
        parsed = version(text)
        assert (matching.place(anchor, [(path, parsed)])[0] == "same") is bool(verbatim), text
        bare = [syntax.Parsed(p.blob, syntax.TEXT, None, p.source) for p in (newer, parsed)]
        assert probes.stays_unmatched(anchor, language, *bare) is not verbatim, text
        # Told which bytes both hold (the function's name), the same answer.
        shared = cited.split("(")[0].encode()
        assert shared in newer.source and shared in parsed.source
        assert probes.stays_unmatched(anchor, language, *bare, shared) is not verbatim, text
    # A cited rare word that the changed version lacks, written again far below, out of
    # every window's reach: `locate` looks for the item otherwise there (a verbatim match
    # becomes possible; a similar region's lines are voted for by such words).
    (absent,) = [p for p in anchor.probes if p.encode() not in newer.source]
    names = ["".join(chr(97 + int(d)) for d in str(n)) for n in range(200)]  # no digits
    pad = "".join(f"\nfn pad_{n}() {{}}" if language == "rust" else f"\npad_{n} = a" for n in names)
    far = [f"{newer.source.decode()}{pad}\n{tail}\n".encode() for tail in ("", absent)]
    plain, again = (syntax.Parsed(f"{n:040d}", syntax.TEXT, None, v) for n, v in enumerate(far))
    assert probes.stays_unmatched(anchor, language, plain, plain)
    assert not probes.stays_unmatched(anchor, language, plain, again)


def _asker() -> walk._Sources:
    """A walk's side of a shared `cat-file` (`_Batch`): what it asked for and got, and
    no mirror (the batch is driven directly)."""
    sources = walk._Sources.__new__(walk._Sources)
    sources.pending, sources.arrived, sources.closed = set(), {}, False
    return sources


def test_one_cat_file_serves_more_asked_than_its_pipes_hold(upstream: Upstream) -> None:
    """A process's walks share one `git cat-file --batch`, read in the walking thread
    itself: asked at once for far more blobs than git's stdin holds (64 KB of ids), whose
    answers are far more than its stdout holds, it neither waits on git while git waits on
    it, nor gives a walk another walk's blob."""
    import contextlib
    import threading

    texts = {f"src/f{i}.rs": f"// {i}\n" + "x" * 40_000 + "\n" for i in range(40)}
    upstream.commit("base (#1)", texts)
    ids = {upstream.git("rev-parse", f"HEAD:{p}"): t.encode() for p, t in texts.items()}
    order = list(ids) * 50  # 2,000 requests: 82 KB of ids, 80 MB of answers
    batch = objects.Batch(upstream.path)
    mine, theirs = _asker(), _asker()
    got: dict[str, bytes | None] = {}

    def run() -> None:
        batch.ask(mine, order[: len(order) // 2])
        batch.ask(theirs, order[len(order) // 2 :][::-1])
        got.update((blob, batch.wait(theirs, blob)) for blob in list(ids)[:5])
        got.update((blob, batch.wait(mine, blob)) for blob in list(ids)[-5:])

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=20)
    stuck = worker.is_alive()
    batch.process.kill()  # a stuck walk's write or read fails once git is gone
    worker.join(timeout=10)
    with contextlib.suppress(OSError):
        batch.close()
    assert not stuck, "the walk and git waited on each other"
    assert got == {blob: ids[blob] for blob in got} and len(got) == 10
    assert not mine.closed and len(batch.asked) <= objects.UNANSWERED


def test_asking_a_cat_file_that_died_fails_rather_than_waits(upstream: Upstream) -> None:
    """A `git cat-file` that stops with requests still out (killed, out of memory) makes
    the next request fail at once: a walk never waits for answers that cannot come."""
    import contextlib
    import threading

    upstream.commit("base (#1)", {"src/a.rs": "fn a() {}\n"})
    blob = upstream.git("rev-parse", "HEAD:src/a.rs")
    batch = objects.Batch(upstream.path)
    sources = _asker()
    batch.ask(sources, [blob] * objects.UNANSWERED)
    batch.process.kill()
    batch.process.wait()
    failed: list[BaseException] = []

    def ask_more() -> None:
        try:
            batch.ask(sources, [blob])
        except OSError as exc:
            failed.append(exc)

    worker = threading.Thread(target=ask_more, daemon=True)
    worker.start()
    worker.join(timeout=20)
    stuck = worker.is_alive()
    with contextlib.suppress(OSError):
        batch.close()
    assert not stuck, "the walk waited for a git that was gone"
    assert failed and not batch.alive


def settings(scale: int = 3, users: int = 0, header: str = "impl Config {") -> str:
    """A Rust file whose `Config::scaled` is cited: `users` functions that take a
    `Config` (each use of the name is a commit that does not touch the method), and
    `Other::scaled`, a method of the same name in another `impl`."""
    uses = "".join(
        f"pub fn use_{n:02d}(config: &Config) -> u32 {{\n    config.level + {n}\n}}\n\n"
        for n in range(users)
    )
    return (
        "pub struct Config {\n    pub level: u32,\n}\n\n"
        f"{uses}"
        f"{header}\n"
        "    pub fn scaled(&self) -> u32 {\n"
        f"        self.level * {scale}\n"
        "    }\n"
        "}\n\n"
        "impl Other {\n"
        "    pub fn scaled(&self) -> u32 {\n"
        "        self.level * 4\n"
        "    }\n"
        "}\n"
    )


def test_uses_of_the_enclosing_name_are_followed_and_renaming_its_impl_is_judged(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {LIB: settings()})
    project.note("n", f"{base} {LIB}:6-8")
    change = upstream.commit("scale 5 (#2)", {LIB: settings(5)})
    for users in range(1, 5):  # `Config` occurs once more in each: the method is untouched
        upstream.commit(f"use it (#{2 + users})", {LIB: settings(5, users)})
    upstream.commit("rename it (#7)", {LIB: settings(5, 4, "impl Setup {")})
    back = upstream.commit("name it back (#8)", {LIB: settings(5, 4)})
    upstream.commit("use it again (#9)", {LIB: settings(5, 5)})

    result = check(project, capsys)[f"n:{LIB}:6-8"]

    assert result["verdict"] == "changed"
    assert result["introduced_by"]["commit"] == change
    # The impl's line names the method's path (`Config`, `scaled`): renaming it changed
    # that line, and the walk judges the versions on either side of both commits (the
    # method is then carried to where it is most alike: the same tokens, no change).
    rename, back = _parent(upstream, back), back
    assert project.counts.walk.judged_commits == [back, rename, change]
    # The five commits that only used the name are followed, not judged.
    assert project.counts.walk.skipped == 5


def _parent(upstream: Upstream, commit: str) -> str:
    return upstream.git("rev-parse", f"{commit}^").strip()


def test_items_of_a_file_edited_at_both_ends_search_only_the_edits(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Six cited functions of a 90 KB file, and commits that each edit its first and its
    last function: between the two edits lies the whole file, which each item would
    search for its lines and names. The step cuts what differs into the two edits, once
    for all six items, and they search only those."""
    cited = [5, 9, 13, 17, 21, 24]
    pad = {
        n: "".join(f"\n        // {n}: why this line, number {k}" for k in range(80)) for n in NAMES
    }
    edits = {name: (3, pad[name]) for name in NAMES}  # 3 KB a function
    base = upstream.commit("base (#1)", {LIB: module("", **edits)})
    lines = [1 + 5 * i + 80 * i for i in cited]
    project.note("n", *(f"{base} {LIB}:{n}-{n + 83}" for n in lines))
    edits |= {NAMES[i]: (4, pad[NAMES[i]]) for i in cited}
    upstream.commit("change them (#2)", {LIB: module("", **edits)})
    for index in range(20):
        edits |= {NAMES[0]: (100 + index, pad[NAMES[0]]), NAMES[29]: (200 + index, pad[NAMES[29]])}
        upstream.commit(f"tune both ends (#{3 + index})", {LIB: module("", **edits)})
    size = len(module("", **edits))

    results = check(project, capsys)

    assert {r["verdict"] for r in results.values()} == {"changed"}
    assert project.counts.walk.skipped == 6 * 20
    assert len(project.counts.walk.judged_commits) == 6
    # Searching the one stretch from the first edit to the last read the file about
    # seven times a version (for six items); searching the two edits, each widened by an
    # item's lines on either side (a copy of them could start there), about once.
    assert project.counts.walk.searched < 20 * size * 2


def test_calls_of_the_cited_function_are_followed_and_a_second_definition_is_judged(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {LIB: module()})
    project.note("n", f"{base} {LIB}:{target_lines()}")
    change = upstream.commit("change the target (#2)", {LIB: module(step_20=(4, ""))})
    for index in range(3):  # `step_20` called once more in each: the function is untouched
        calls = {NAMES[i]: (3, " + step_20(input)") for i in range(index + 1)}
        upstream.commit(f"call it (#{3 + index})", {LIB: module(step_20=(4, ""), **calls)})
    other = "\npub mod other {\n    pub fn step_20() {}\n}\n"
    second = upstream.commit("define it again (#6)", {LIB: upstream.read(LIB) + other})

    result = check(project, capsys)[f"n:{LIB}:{target_lines()}"]

    assert result["verdict"] == "changed"
    assert result["introduced_by"]["commit"] == change
    # The name is counted where it may name a definition (after `fn`): the calls leave
    # that count as it was, the second definition does not.
    assert project.counts.walk.judged_commits == [second, change]
    assert project.counts.walk.skipped == 3
