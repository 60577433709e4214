"""introduced_by and released_in (SPEC 5) on real histories with merges and tags."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.support import check_results
from watcher.gitbuild import Upstream

LIB = "src/lib.rs"
V1 = "pub fn mode() -> u32 {\n    let legacy = 1;\n    legacy\n}\n\npub fn other() -> u32 {\n    7\n}\n"
RULE = """\
[[rule]]
id = "legacy-value"
note = "n"
path = "src/lib.rs"
query = '''(let_declaration pattern: (identifier) @n (#eq? @n "legacy") value: (_) @value) @target'''
[[rule.claims]]
capture = "value"
equals = "1"
"""


def test_changes_back_and_again_blames_the_last_change(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("v1", {LIB: V1})
    project.note("n", f"{base} {LIB}:1-4")
    upstream.commit("first change (#1)", {LIB: V1.replace("legacy\n}", "legacy + 0\n}")})
    upstream.commit("unrelated (#2)", {"README.md": "x\n"})
    upstream.commit("revert the first change (#3)", {LIB: V1})
    upstream.commit("other fn only (#4)", {LIB: V1.replace("    7", "    8")})
    again = upstream.commit("second change (#5)", {LIB: V1.replace("legacy\n}", "legacy * 1\n}")})
    upstream.commit("unrelated again (#6)", {"README.md": "y\n"})

    result = check_results(project, capsys)[f"n:{LIB}:1-4"]

    assert result["verdict"] == "changed"
    assert result["introduced_by"]["commit"] == again
    assert result["introduced_by"]["pr"] == 5
    assert result["introduced_by"]["summary"] == "second change (#5)"


def test_broken_blames_the_flip_not_an_earlier_harmless_change(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("v1", {LIB: V1})
    project.note("n", f"{base} {LIB}:1-4")
    project.rules(RULE)
    upstream.commit("harmless (#10)", {LIB: V1.replace("legacy\n}", "legacy + 0\n}")})
    flip = upstream.commit(
        "flip (#11)", {LIB: upstream.read(LIB).replace("legacy = 1", "legacy = 2")}
    )

    results = check_results(project, capsys)

    assert results["legacy-value"]["verdict"] == "broken"
    assert results["legacy-value"]["introduced_by"]["commit"] == flip
    assert results[f"n:{LIB}:1-4"]["introduced_by"]["pr"] == 10


def test_change_merged_from_a_branch_is_blamed_on_the_merge(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("v1", {LIB: V1})
    project.note("n", f"{base} {LIB}:1-4")
    upstream.branch_off("feature")
    upstream.commit("work in progress", {LIB: V1.replace("= 1", "= 3")})
    upstream.commit("more work", {LIB: V1.replace("= 1", "= 4")})
    upstream.checkout("main")
    upstream.commit("meanwhile on main", {"README.md": "z\n"})
    merge = upstream.merge("feature", "Merge pull request #77 from acme/feature")

    result = check_results(project, capsys)[f"n:{LIB}:1-4"]

    assert result["introduced_by"]["commit"] == merge
    assert result["introduced_by"]["pr"] == 77


def test_released_in_is_the_earliest_containing_release(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("v1", {LIB: V1})
    upstream.tag("v0.9.0")
    project.note("n", f"{base} {LIB}:1-4", f"{base} {LIB}:6-8")
    upstream.commit("change mode (#20)", {LIB: V1.replace("= 1", "= 5")})
    upstream.commit("more", {"README.md": "1\n"})
    upstream.tag("v0.10.0")
    upstream.tag("v0.11.0")
    upstream.tag("nightly-1")  # not a release: release_tags is "v*"
    upstream.tag("v0.9.1", "HEAD")  # a later patch release of the old line, also containing it
    upstream.commit("change other (#21)", {LIB: upstream.read(LIB).replace("    7", "    9")})

    results = check_results(project, capsys)

    # Version order, not name order: v0.9.1 < v0.10.0 although "v0.10.0" sorts first as text.
    assert results[f"n:{LIB}:1-4"]["released_in"] == "v0.9.1"
    assert results[f"n:{LIB}:6-8"]["released_in"] is None


def test_released_in_updates_on_a_new_tag_without_new_commits(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("v1", {LIB: V1})
    project.note("n", f"{base} {LIB}:1-4")
    upstream.commit("change (#30)", {LIB: V1.replace("= 1", "= 5")})
    assert check_results(project, capsys)[f"n:{LIB}:1-4"]["released_in"] is None

    upstream.tag("v1.0.0")

    assert check_results(project, capsys)[f"n:{LIB}:1-4"]["released_in"] == "v1.0.0"


def test_missing_blames_the_deleting_commit(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("v1", {LIB: V1})
    project.note("n", f"{base} {LIB}:6-8")
    upstream.commit("touch (#40)", {LIB: V1.replace("= 1", "= 2")})
    gone = upstream.commit("remove other (#41)", {LIB: V1.split("pub fn other")[0]})

    result = check_results(project, capsys)[f"n:{LIB}:6-8"]

    assert (result["verdict"], result["introduced_by"]["commit"]) == ("missing", gone)


def test_a_pre_release_comes_before_its_release(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("v1", {LIB: V1})
    project.note("n", f"{base} {LIB}:1-4")
    upstream.commit("change (#50)", {LIB: V1.replace("= 1", "= 5")})
    upstream.tag("v2.0.0-beta.1")
    upstream.commit("more", {"README.md": "r\n"})
    upstream.tag("v2.0.0")

    assert check_results(project, capsys)[f"n:{LIB}:1-4"]["released_in"] == "v2.0.0-beta.1"


def test_a_filtered_run_does_not_hide_a_new_release_from_the_next_run(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("v1", {LIB: V1})
    project.note("n", f"{base} {LIB}:1-4")
    project.note("m", f"{base} {LIB}:6-8")
    upstream.commit("change both (#60)", {LIB: V1.replace("= 1", "= 5").replace("    7", "    9")})
    check_results(project, capsys)
    upstream.tag("v3.0.0")

    project.run(
        "check", "--format", "json", "--note", "m", capsys=capsys
    )  # sees the tag for m only

    assert check_results(project, capsys)[f"n:{LIB}:1-4"]["released_in"] == "v3.0.0"


def _edited_seven_times(upstream: Upstream) -> list[str]:
    """Both functions of V1 changed by one commit, then `mode` by six more: the blobs
    those six made."""
    changed = V1.replace("= 1", "= 2").replace("    7", "    9")
    upstream.commit("change both (#70)", {LIB: changed})
    made = []
    for n in range(6):
        upstream.commit(f"edit {n}", {LIB: changed.replace("legacy\n}", f"legacy + {n}\n}}")})
        made.append(upstream.git("rev-parse", f"HEAD:{LIB}"))
    return made


def test_citations_of_one_file_walk_its_history_once(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    from collections import Counter

    from watcher.parse import syntax

    monkeypatch.setattr(syntax._CACHE, "budget", 1)  # keeps one parse: no reuse by luck
    base = upstream.commit("v1", {LIB: V1})
    project.note("n", f"{base} {LIB}:1-4", f"{base} {LIB}:6-8", f"{base} {LIB}:2-2")
    middle = _edited_seven_times(upstream)
    project.counts.parse.reset()

    results = check_results(project, capsys)

    assert {r["introduced_by"]["pr"] for r in results.values()} == {70}
    counts = Counter(project.counts.parse.parsed_blobs)
    assert [counts[blob] for blob in middle[:-1]] == [1] * 5  # every version between, once


def test_a_citation_carried_commit_by_commit_reads_the_versions_the_walk_judged(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """A citation of both functions, changed by every commit, is carried from the
    version before each change to the version before the next (`history.stepwise`):
    versions the walk has just judged, which the parse cache still holds at its usual
    budget, so none is parsed twice."""
    from collections import Counter

    base = upstream.commit("v1", {LIB: V1})
    project.note("n", f"{base} {LIB}:1-8")
    made = _edited_seven_times(upstream)
    project.counts.parse.reset()

    result = check_results(project, capsys)[f"n:{LIB}:1-8"]

    assert len(result["history"]) == 7
    counts = Counter(project.counts.parse.parsed_blobs)
    assert [counts[blob] for blob in made[:-1]] == [1] * 5


SCHEMA = """\
pub fn schema_for_output(strict: bool) -> Result<u32, String> {
    if strict { Err("strict".into()) } else { Ok(1) }
}

pub fn schema_for_input(strict: bool) -> Result<u32, String> {
    if strict { Err("strict".into()) } else { Ok(2) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_schema_for_output_rejects_strict() {
        let result = schema_for_output(true);
        assert!(result.is_err());
    }

    #[test]
    fn test_schema_for_input_accepts_loose() {
        let result = schema_for_input(false);
        assert!(result.is_ok());
    }
}
"""
# The tests folded into one table-driven test: the cited one is gone.
FOLDED = SCHEMA.replace(
    """    #[test]
    fn test_schema_for_output_rejects_strict() {
        let result = schema_for_output(true);
        assert!(result.is_err());
    }
""",
    """    #[test]
    fn test_wrappers_reject_strict() {
        for wrapper in [schema_for_output, schema_for_input] {
            assert!(wrapper(true).is_err());
        }
    }
""",
)
# Later, a new test that looks like the deleted one (another function, another input).
LOOKALIKE = FOLDED.replace(
    "    #[test]\n    fn test_schema_for_input_accepts_loose",
    """    #[test]
    fn test_schema_for_input_rejects_strict() {
        let result = schema_for_input(true);
        assert!(result.is_err());
    }

    #[test]
    fn test_schema_for_input_accepts_loose""",
)


@pytest.mark.parametrize("lines", ["13-17", "15-15"])
def test_a_deleted_definition_is_not_found_in_a_lookalike_added_later(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str], lines: str
) -> None:
    """A definition under another name is the cited one renamed only when it took its
    place: one written after the cited one was gone is another construct (rust-sdk's
    `test_schema_for_output_rejects_primitive`, deleted, and the later
    `test_schema_for_input_rejects_array`)."""
    base = upstream.commit("v1", {LIB: SCHEMA})
    project.note("n", f"{base} {LIB}:{lines}")
    gone = upstream.commit("consolidate tests (#931)", {LIB: FOLDED})
    upstream.commit("more input tests (#895)", {LIB: LOOKALIKE})

    result = check_results(project, capsys)[f"n:{LIB}:{lines}"]

    assert (result["verdict"], result["current"]) == ("missing", None)
    assert result["introduced_by"]["commit"] == gone
    assert [(h["commit"], h["state"]) for h in result["history"]] == [(gone, "missing")]
    code, out, err = project.run("log", f"n:{LIB}:{lines}", "--offline", capsys=capsys)
    assert code == 0, err
    assert gone[:10] in out and "#895" not in out  # `watch log` tells the same history


def test_a_definition_renamed_in_place_is_still_found(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same look-alike, written by the commit that removed the cited test: a rename."""
    base = upstream.commit("v1", {LIB: SCHEMA})
    project.note("n", f"{base} {LIB}:13-17")
    renamed = upstream.commit(
        "rename (#7)",
        {
            LIB: SCHEMA.replace(
                "test_schema_for_output_rejects_strict", "test_output_schema_rejects_strict"
            )
        },
    )

    result = check_results(project, capsys)[f"n:{LIB}:13-17"]

    assert result["verdict"] == "changed"
    assert result["introduced_by"]["commit"] == renamed


OUTPUT = "src/output.rs"
MODELS = """\
pub fn wrap_output_model(func: &Func) -> Option<Model> {
    let schema = derive_schema_from_signature(func)?;
    let fields = schema.fields().iter().map(Field::from).collect::<Vec<_>>();
    let model = Model::new("wrapped_output", fields);
    Some(model)
}

pub fn plain_model(func: &Func) -> Model {
    Model::new("plain", Vec::new())
}
"""


def test_a_definition_renamed_with_its_rarest_tokens_then_deleted_is_blamed_on_the_deletion(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """A definition renamed, its rarest tokens rewritten with it (the name, the helper it
    calls, its one string), is still found (`renamed_definition`); deleted later, it is
    missing from the deletion, not from the rename: the walk back from HEAD may not take
    the versions that lack its rarest tokens for versions that lack it."""
    base = upstream.commit("v1", {OUTPUT: MODELS})
    project.note("n", f"{base} {OUTPUT}:1-6")
    renamed = MODELS.replace("wrap_output_model", "create_result_model")
    renamed = renamed.replace("derive_schema_from_signature", "schema_of")
    renamed = renamed.replace('"wrapped_output"', '"result"')
    upstream.commit("rename the output model (#1)", {OUTPUT: renamed})
    touched = renamed.replace('"plain"', '"bare"')
    upstream.commit("touch plain (#2)", {OUTPUT: touched})
    plain = touched[touched.index("pub fn plain_model") :]
    gone = upstream.commit("drop the output model (#3)", {OUTPUT: plain})

    result = check_results(project, capsys)[f"n:{OUTPUT}:1-6"]

    assert (result["verdict"], result["introduced_by"]["commit"]) == ("missing", gone)


TESTS = "tests/pages.rs"
CITED_TEST = """\
#[test]
fn lists_every_page() {
    let pages = client().list_tools(None);
    assert_eq!(pages.next_cursor, Some("p2".into()));
    let more = client().list_tools(pages.next_cursor.clone());
    assert!(more.next_cursor.is_none());
    let names: Vec<_> = pages.tools.iter().chain(more.tools.iter()).map(|t| t.name.clone()).collect();
    assert_eq!(names, vec!["a", "b"]);
}
"""


def _look_alike(k: int) -> str:
    return f"""\
#[test]
fn page_{k}() {{
    let pages = client().list_tools(Some("c{k}".into()));
    assert_eq!(pages.next_cursor, Some("n{k}".into()));
    let rest = client().list_tools(pages.next_cursor.clone());
    assert_eq!(rest.next_cursor, None);
    assert_eq!(pages.tools.len() + rest.tools.len(), {k});
}}
"""


def test_a_deleted_test_among_new_look_alikes_is_followed_not_judged(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """A test module where every later commit writes a test like the deleted one: the
    bytes around each new test could hold it renamed, so the version before is parsed to
    tell (`probes._renamed_in`), not judged whole (codex's `tui/src/app/tests.rs`), and
    the deletion is still the answer."""
    head = "use crate::client;\n\n" + "".join(
        f'#[test]\nfn ping_{k}() {{\n    assert_eq!(client().ping({k}), "pong");\n}}\n\n'
        for k in range(6)
    )
    base = upstream.commit("v1", {TESTS: head + CITED_TEST})
    project.note("n", f"{base} {TESTS}:33-41")
    gone = upstream.commit("drop the paging test (#1)", {TESTS: head + _look_alike(0)})
    for k in range(1, 9):
        grown = upstream.read(TESTS) + "\n" + _look_alike(k)
        upstream.commit(f"another test (#{k + 1})", {TESTS: grown})

    result = check_results(project, capsys)[f"n:{TESTS}:33-41"]

    assert (result["verdict"], result["introduced_by"]["commit"]) == ("missing", gone)
    assert project.counts.walk.quiet >= 8  # each new test's version, told from its parse
    assert project.counts.walk.judged <= 2
    assert project.counts.parse.parses <= 10  # no more than judging each version parsed
