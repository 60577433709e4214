"""`bench.differential`'s blind spots of git that watch sees past, on histories built in
the shape of the real code where each was hand-checked: a revert relanded, a construct
whose tokens went before its lines, a test deleted and written again, a line inserted
between cited ones and deleted with one of them; and a field inserted into a struct
literal that a later commit split, where watch now carries the span as git does."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.support import check_results
from tests.test_bench_differential import _compare
from watcher.gitbuild import Upstream

BACKTRACK = "tui/src/backtrack.rs"
PREVIEW = """\
impl App {
    fn begin_preview(&mut self) {
        self.primed = true;
        let last_user_position = self
            .cells
            .iter()
            .filter(|cell| cell.is_user())
            .count() as i64
            - 1;
        if last_user_position >= 0 {
            self.select(last_user_position as usize);
        }
    }
}
"""
REVERTED = PREVIEW.replace(
    """        let last_user_position = self
            .cells
            .iter()
            .filter(|cell| cell.is_user())
            .count() as i64
            - 1;
        if last_user_position >= 0 {
            self.select(last_user_position as usize);
        }
""",
    "        self.select_last_user();\n",
)


def test_lines_removed_written_back_and_removed_again_are_explained(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """codex's app_backtrack.rs: a refactor reverted, relanded, then the lines rewritten.
    Blame follows the cited lines forward and ends them at the revert."""
    base = upstream.commit("preview (#1)", {BACKTRACK: PREVIEW})
    project.note("n", f"{base} {BACKTRACK}:4-9")
    reverted = upstream.commit('Revert "refactor transcript" (#2)', {BACKTRACK: REVERTED})
    upstream.commit('Reland "refactor transcript" (#3)', {BACKTRACK: PREVIEW})
    fixed = upstream.commit("fix backtracking (#4)", {BACKTRACK: REVERTED.replace(
        "select_last_user()", "select_newest_user_cell()")})  # fmt: skip

    rows = _compare(project, upstream, capsys, base,
                    {f"n:{BACKTRACK}:4-9": ("range", "begin_preview")})  # fmt: skip

    result = check_results(project, capsys)[f"n:{BACKTRACK}:4-9"]
    first = result["history"][0]
    assert (first["commit"], first["state"]) == (reverted, "missing")
    assert (result["verdict"], result["introduced_by"]["commit"]) == ("missing", fixed)
    row = rows[f"n:{BACKTRACK}:4-9"]
    assert row.explained, row.classes
    assert any("came back" in c for c in row.classes), row


LIB = "tui/src/lib.rs"
PROMPT = """\
fn should_show_rollout_prompt(cli: &Cli, config: &Config, seen: bool) -> bool {
    let debug_high_enabled = std::env::var("DEBUG_HIGH")
        .map(|value| value.eq_ignore_ascii_case("1"))
        .unwrap_or(false);

    cli.profile.is_none()
        && debug_high_enabled
        && cli.model.is_none()
        && !seen
        && config.provider.requires_auth
        && !cli.oss
}
"""


def test_most_tokens_gone_before_most_lines_is_explained(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """codex's tui/lib.rs: the `DEBUG_HIGH` gate (its chain: most of the cited tokens,
    four of nine lines of code) is dropped, then a short line renamed. Blame's median of lines
    ends them at the rename; weighted by tokens, at the drop, as watch says."""
    base = upstream.commit("rollout prompt (#1)", {LIB: PROMPT})
    project.note("n", f"{base} {LIB}:2-11")
    ungated = PROMPT.replace(PROMPT[PROMPT.index("    let debug") : PROMPT.index("    cli.")], "")
    dropped = upstream.commit("drop the DEBUG_HIGH gate (#2)",
                              {LIB: ungated.replace("        && debug_high_enabled\n", "")})  # fmt: skip
    upstream.commit("rename (#3)", {LIB: ungated.replace(
        "        && debug_high_enabled\n", "").replace("!seen", "!prompt_seen").replace(
        "seen: bool", "prompt_seen: bool")})  # fmt: skip

    rows = _compare(project, upstream, capsys, base,
                    {f"n:{LIB}:2-11": ("range", "should_show_rollout_prompt")})  # fmt: skip

    result = check_results(project, capsys)[f"n:{LIB}:2-11"]
    assert (result["verdict"], result["introduced_by"]["commit"]) == ("missing", dropped)
    row = rows[f"n:{LIB}:2-11"]
    assert row.explained, row.classes
    assert any("most cited tokens" in c for c in row.classes)


COMMON = "src/handler/common.rs"
TESTS = """\
pub fn schema_for_output(strict: bool) -> Result<u32, String> {
    if strict { Err("strict".into()) } else { Ok(1) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_schema_for_output_accepts_loose() {
        let result = schema_for_output(false);
        assert!(result.is_ok(),);
    }

    #[test]
    fn test_schema_for_output_caches() {
        assert_eq!(schema_for_output(false), schema_for_output(false));
    }
}
"""


def test_a_test_deleted_and_written_again_is_explained(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """rust-sdk's common.rs: a test folded into a table test, and later a test of its
    name written again: git's trace of the HEAD lines begins where they were written."""
    base = upstream.commit("tests (#1)", {COMMON: TESTS})
    project.note("n", f"{base} {COMMON}:11-12")
    cited = TESTS[TESTS.index("    #[test]\n    fn test_schema_for_output_accepts_loose") :]
    cited = cited[: cited.index("    #[test]\n    fn test_schema_for_output_caches")]
    table = """\
    #[rstest]
    #[case::loose(false, true)]
    #[case::strict(true, false)]
    fn test_schema_for_output_by_strictness(#[case] strict: bool, #[case] ok: bool) {
        assert_eq!(schema_for_output(strict).is_ok(), ok);
    }

"""
    folded = upstream.commit("consolidate tests (#931)", {COMMON: TESTS.replace(cited, table)})
    again = TESTS.replace(cited, table + cited).replace(
        "let result = schema_for_output(false);\n        assert!(result.is_ok(),);",
        "let result = schema_for_output(false);\n        assert_eq!(result, Ok(1));",
    )
    written = upstream.commit("relax the output schema (#895)", {COMMON: again})

    rows = _compare(project, upstream, capsys, base,
                    {f"n:{COMMON}:11-12": ("range", "test_schema_for_output_accepts_loose")})  # fmt: skip

    result = check_results(project, capsys)[f"n:{COMMON}:11-12"]
    states = [(h["commit"], h["state"]) for h in result["history"]]
    assert states == [(folded, "missing"), (written, "changed")]
    row = rows[f"n:{COMMON}:11-12"]
    assert row.explained, row.classes
    assert any("written again" in c for c in row.classes), row.classes


CODEX = "core/src/codex.rs"
SESSION = """\
fn make_session_and_context(config: &Config, client: Client) -> (Session, TurnContext) {
    let turn_context = TurnContext {
        client,
        cwd: config.cwd.clone(),
        approval_policy: config.approval_policy,
        is_review_mode: false,
    };
    let session = Session {
        conversation_id,
        tx_event,
        mcp_connection_manager: McpConnectionManager::default(),
        session_manager: ExecSessionManager::default(),
        rollout: Mutex::new(None),
        user_shell: shell::Shell::Unknown,
        show_raw_agent_reasoning: config.show_raw_agent_reasoning,
    };
    (session, turn_context)
}
"""
SPLIT = """\
fn make_session_and_context(config: &Config, client: Client) -> (Session, TurnContext) {
    let turn_context = TurnContext {
        client,
        cwd: config.cwd.clone(),
        approval_policy: config.approval_policy,
        is_review_mode: false,
    };
    let services = SessionServices {
        mcp_connection_manager: McpConnectionManager::default(),
        session_manager: ExecSessionManager::default(),
        rollout: Mutex::new(None),
        user_shell: shell::Shell::Unknown,
        show_raw_agent_reasoning: config.show_raw_agent_reasoning,
    };
    let session = Session {
        conversation_id,
        tx_event,
        services,
        next_internal_sub_id: AtomicU64::new(0),
    };
    (session, turn_context)
}
"""


def test_a_field_inserted_into_a_literal_a_later_commit_split_stays_in_the_span(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """codex's make_session_and_context: a field added to the cited `Session` literal,
    whose other fields a later commit moves into a `SessionServices` literal. Carried in
    one jump from the baseline, the HEAD span followed the moved fields and ended with
    the `SessionServices` literal, and git's trace of those lines never passed the
    inserted field. Carried commit by commit, the field is inside the citation from the
    commit that added it, and stays in the `Session` literal: the HEAD span reaches it,
    and git, tracing that span, lists what watch lists."""
    base = upstream.commit("session (#1)", {CODEX: SESSION})
    project.note("n", f"{base} {CODEX}:2-16")
    field = "        next_internal_sub_id: AtomicU64::new(0),\n"
    added = upstream.commit("tokio mutex (#3850)", {CODEX: SESSION.replace(
        "reasoning,\n    };", "reasoning,\n" + field + "    };")})  # fmt: skip
    split = upstream.commit("session services (#4100)", {CODEX: SPLIT})

    rows = _compare(project, upstream, capsys, base,
                    {f"n:{CODEX}:2-16": ("range", "make_session_and_context")})  # fmt: skip

    result = check_results(project, capsys)[f"n:{CODEX}:2-16"]
    assert result["introduced_by"]["commit"] == added
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (2, 20)
    assert [h["commit"] for h in result["history"]] == [added, split]
    assert rows[f"n:{CODEX}:2-16"].classes == []


TURN = "core/src/turn.rs"
SETUP = """\
fn start_turn(config: &Config) -> Turn {
    let sandbox = SandboxPolicy::from(config);
    let tools = ToolsConfig::new(config.model_family(), sandbox.clone());
    Turn::new(tools)
}
"""


def test_a_line_inserted_between_cited_lines_and_deleted_with_one_is_explained(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """A line written between the two cited ones is inside the item, until a later
    commit deletes it with the first cited line: the HEAD span is the second alone, and
    git's trace of it never passes the inserted line, so git lists neither commit."""
    base = upstream.commit("turns (#1)", {TURN: SETUP})
    project.note("n", f"{base} {TURN}:2-3")
    shell = "    let shell = default_user_shell();\n"
    inserted = upstream.commit("user shell (#2)", {TURN: SETUP.replace(
        "    let tools", shell + "    let tools")})  # fmt: skip
    upstream.commit("sandbox from tools (#3)", {TURN: SETUP.replace(
        "    let sandbox = SandboxPolicy::from(config);\n", "")})  # fmt: skip

    rows = _compare(project, upstream, capsys, base,
                    {f"n:{TURN}:2-3": ("range", "start_turn")})  # fmt: skip

    result = check_results(project, capsys)[f"n:{TURN}:2-3"]
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (2, 2)
    row = rows[f"n:{TURN}:2-3"]
    assert row.explained, row.classes
    assert any(inserted[:10] in c and "inserts code between two cited lines" in c
               for c in row.classes)  # fmt: skip
