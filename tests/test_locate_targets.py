"""A rule's @target at HEAD: searched in the whole repository when its followed file no
longer has it (the file still there or not), the choice explained and the others listed;
several targets at HEAD are reported, never resolved silently."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.rust_client import CLIENT, CURSOR_GATE_RULE, INITIALIZE, LIST_TOOLS
from tests.support import check_results as _check
from watcher.gitbuild import Upstream

LIB = "src/client.rs"
# Functions that stay in the client file: list_tools is a small part of it, so a new file
# holding list_tools is no copy of it by git's measure (similarity below 50%).
STAYS = "".join(
    f"\npub fn helper_{n}(x: u32) -> u32 {{\n    x * {n} + {n}\n}}\n" for n in range(12)
)


def _site(project: Project, upstream: Upstream) -> str:
    base = upstream.commit("client", {LIB: CLIENT + STAYS, "src/other.rs": "pub fn other() {}\n"})
    project.note("one-page", f"{base} {LIB}:1-7")
    project.rules(CURSOR_GATE_RULE)
    return base


def test_a_target_gone_from_a_file_still_there_is_found_elsewhere(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    _site(project, upstream)
    # list_tools moves to its own module; the client file stays (git sees no rename).
    upstream.commit(
        "tools module", {LIB: INITIALIZE + STAYS, "src/tools/list.rs": "use a::b;\n\n" + LIST_TOOLS}
    )

    said = upstream.git("diff", "--name-status", "-M", "-C", "HEAD^", "HEAD").splitlines()
    assert sorted(said) == ["A\tsrc/tools/list.rs", f"M\t{LIB}"]  # no rename, no copy

    rule = _check(project, capsys)["cursor-gate"]

    assert rule["verdict"] == "moved"
    assert rule["current"]["path"] == "src/tools/list.rs"
    assert (rule["current"]["start_line"], rule["current"]["end_line"]) == (4, 7)
    assert rule["message"] == (
        "unchanged, now at src/tools/list.rs:4-7: the rule still finds it; not in "
        "src/client.rs, where git followed the file; found at src/tools/list.rs:4-7 "
        "(elsewhere at HEAD)"
    )
    assert [(c["path"], c["chosen"]) for c in rule["candidates"]] == [("src/tools/list.rs", True)]


def test_the_choice_among_targets_elsewhere_is_explained(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    _site(project, upstream)
    edited = LIST_TOOLS.replace("response.next_cursor", "response.cursor()")
    upstream.commit(
        "split",
        {
            LIB: INITIALIZE + STAYS,
            "src/legacy/list.rs": edited,  # alike, not identical: listed, not chosen
            "src/tools/list.rs": LIST_TOOLS,
        },
    )

    rule = _check(project, capsys)["cursor-gate"]

    assert rule["verdict"] == "moved"
    assert rule["current"]["path"] == "src/tools/list.rs"
    assert (
        "2 candidates (elsewhere at HEAD): chose src/tools/list.rs:2-5, identical; also "
        "src/legacy/list.rs:2-5" in rule["message"]
    )
    assert [(c["path"], c["identical"], c["chosen"]) for c in rule["candidates"]] == [
        ("src/tools/list.rs", True, True),
        ("src/legacy/list.rs", False, False),
    ]


def test_a_target_found_nowhere_says_the_repository_was_searched(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    _site(project, upstream)
    upstream.commit("drop list_tools", {LIB: INITIALIZE + STAYS})

    rule = _check(project, capsys)["cursor-gate"]

    assert rule["verdict"] == "missing"
    assert rule["message"] == (
        "not found at HEAD in src/client.rs, nor anywhere else in the repository"
    )
    assert rule["introduced_by"] is not None


def test_several_targets_at_head_are_reported(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    _site(project, upstream)
    second = "    let again = match mode {\n        Mode::Legacy => None,\n        Mode::Modern => None,\n    };\n"
    upstream.commit(
        "a second gate", {LIB: CLIENT.replace("    next\n}", second + "    next\n}", 1) + STAYS}
    )

    rule = _check(project, capsys)["cursor-gate"]

    assert rule["verdict"] == "fresh"
    assert rule["message"] == (
        "unchanged at HEAD; 2 targets at HEAD, judged the one at lines 2-5 (the one "
        "identical to the baseline target); also at lines 6-9"
    )
    assert [(c["start_line"], c["identical"], c["chosen"]) for c in rule["candidates"]] == [
        (2, True, True),
        (6, False, False),
    ]
