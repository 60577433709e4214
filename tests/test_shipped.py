"""The shipped notes, rules and config.toml load, and every rule means what it says.

Each rule is run with real tree-sitter on a small fixture written here in the shape of
the upstream code it guards (not a copy of it): it must find exactly one target with
every claim holding, and a flipped variant (the behaviour the note warns about changes)
must make a claim fail or the construct disappear. The real upstream file versions the
rules were checked on are listed in docs/shipped-rules.md.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from watcher.config import load as load_config
from watcher.inputs import quotes
from watcher.inputs.notes import load_notes
from watcher.inputs.rules import compile_rule, load_rules
from watcher.judge.claims import claims
from watcher.judge.classify import quote_item
from watcher.judge.plan import Item
from watcher.locate.anchors import Found
from watcher.locate.targets import targets
from watcher.models import Note, Rule
from watcher.parse.syntax import parse

ROOT = Path(__file__).resolve().parents[1]
NOTE_IDS = {
    "codex-reads-one-page-of-tools",
    "codex-defaults-to-2025-06-18",
    "codex-ignores-tools-list-changed",
}
RULE_IDS = {
    "codex-tools-list-cursor-gate",
    "codex-mcp-2026-07-28-flag-off",
    "codex-initialize-pins-2025-06-18",
    "codex-tool-list-changed-only-logs",
}
FULL_SHA = re.compile(r"^[0-9a-f]{40}$")


# --- loading -------------------------------------------------------------------------


def shipped_rules() -> dict[str, Rule]:
    loaded = load_rules(ROOT / "rules", display_root=ROOT)
    assert loaded.errors == []
    return loaded.rules


def test_config_watches_openai_codex_and_files_issues_locally() -> None:
    config = load_config(ROOT / "config.toml")
    assert (config.notes, config.rules, config.state) == (
        ROOT / "notes",
        ROOT / "rules",
        ROOT / "state",
    )
    assert config.track_citations is True
    codex = config.upstream_for("openai/codex")
    assert codex is not None
    assert (codex.fetch_url, codex.branch, codex.release_tags) == (
        "https://github.com/openai/codex.git",
        "main",
        "rust-v*",
    )
    assert codex.schedule == "17 */6 * * *"
    # A fresh clone has no token: issues go to state/issues/ until a GitHub sink is set.
    assert config.issues.sink == "files"


def test_every_shipped_note_parses_and_cites_full_upstream_commits() -> None:
    loaded = load_notes(ROOT / "notes", display_root=ROOT)
    assert loaded.errors == []
    assert set(loaded.notes) == NOTE_IDS
    config = load_config(ROOT / "config.toml")
    for note in loaded.notes.values():
        assert note.title and note.status and note.clients == ("openai-codex",)
        assert note.citations, note.id
        assert note.untracked == ()
        for citation in note.citations:
            assert config.upstream_for(citation.repo) is not None, citation.id
            assert FULL_SHA.match(citation.commit), citation.id
            assert citation.start_line is not None and citation.end_line is not None
    issues = loaded.notes["codex-ignores-tools-list-changed"].issue_citations
    assert [(i.repo, i.kind, i.number) for i in issues] == [("openai/codex", "issue", 10105)]


def test_every_shipped_rule_compiles_and_protects_a_cited_file() -> None:
    rules = shipped_rules()
    assert set(rules) == RULE_IDS
    notes = load_notes(ROOT / "notes", display_root=ROOT).notes
    for rule in rules.values():
        assert compile_rule(rule).language == "rust"
        assert rule.claims, rule.id
        # The rule's baseline is the commit of the note's source for the same file.
        cited = {c.path for c in notes[rule.note].citations}
        assert rule.path in cited, f"{rule.id}: {rule.note} does not cite {rule.path}"


def test_docs_list_the_upstream_versions_of_every_rule() -> None:
    text = (ROOT / "docs" / "shipped-rules.md").read_text(encoding="utf-8")
    for rule_id in RULE_IDS:
        assert f"`{rule_id}`" in text


# --- evaluating a rule on a source text, with the watcher's own matcher ---------------


def evaluate(rule: Rule, source: str) -> list[Found]:
    """Distinct @target matches of the rule in `source`, scoped by `inside` (SPEC 3.2)."""
    compiled = compile_rule(rule)
    raw = source.encode()
    parsed = parse(hashlib.sha1(raw).hexdigest(), compiled.language, lambda: raw)
    return targets(compiled, rule.path, parsed)


def failing_claims(rule: Rule, found: Found) -> list[str]:
    return [f"{c.capture} {c.test}" for c in claims(rule, found) if not c.holds]


# --- fixtures in the shape of the upstream code ----------------------------------------

CURSOR_GATE = """
pub(crate) async fn list_tools_for_client_uncached(
    client: &Arc<Client>,
    limit: usize,
) -> Result<Vec<ToolInfo>> {
    let protocol_mode = client.protocol_mode();
    let tools = collect_pages("tools/list", limit, |params| {
        let client = Arc::clone(client);
        async move {
            let page = client.list_tools(params).await?;
            let next_cursor = match protocol_mode {
                McpProtocolMode::Legacy => LEGACY_ARM,
                McpProtocolMode::V20260728 => page.next_cursor,
            };
            Ok((page.tools, next_cursor))
        }
    })
    .await?;
    Ok(tools)
}

// Same match shape outside the scope: must not count.
fn mode_label(protocol_mode: McpProtocolMode) -> Option<&'static str> {
    match protocol_mode {
        McpProtocolMode::Legacy => None,
        McpProtocolMode::V20260728 => Some("auto"),
    }
}
"""

FEATURES = """
pub const FEATURES: &[FeatureSpec] = &[
    FeatureSpec {
        id: Feature::EnableMcpApps,
        key: "enable_mcp_apps",
        stage: Stage::UnderDevelopment,
        default_enabled: false,
    },
    FeatureSpec {
        id: Feature::Mcp20260728,
        key: "mcp_2026_07_28",
        stage: STAGE,
        default_enabled: DEFAULT,
    },
    FeatureSpec { id: Feature::Apps, key: "apps", stage: Stage::Stable, default_enabled: true },
];
"""

INITIALIZE = """
fn mcp_initialize_request_params(
    elicitation: ElicitationCapability,
) -> InitializeRequestParams {
    let mut capabilities = ClientCapabilities::default();
    capabilities.elicitation = Some(elicitation);
    InitializeRequestParams::new(
        capabilities,
        Implementation::new("example-client", "1.0.0").with_title("Example"),
    )
    .with_protocol_version(VERSION)
}

// Not a builder of initialize params: out of scope.
fn discovery_request(mode: McpProtocolMode) -> DiscoverRequest {
    DiscoverRequest::default().with_protocol_version(ProtocolVersion::V_2026_07_28)
}
"""

HANDLER = """
impl ClientHandler for LoggingClientHandler {
    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        info!("MCP server resource list changed");
    }

    async fn on_tool_list_changed(&self, CONTEXT: NotificationContext<RoleClient>) {
        BODY
    }

    fn get_info(&self) -> ClientInfo {
        self.client_info.clone()
    }
}

// Another trait's method of the same name: out of scope.
impl ToolEvents for Recorder {
    async fn on_tool_list_changed(&self) {
        self.refresh_tools().await;
    }
}
"""


@dataclass(frozen=True)
class Case:
    rule: str
    template: str
    holding: dict[str, str]
    flips: tuple[tuple[str, dict[str, str], tuple[str, ...]], ...]  # name, values, failing


CASES = [
    Case(
        "codex-tools-list-cursor-gate",
        CURSOR_GATE,
        {"LEGACY_ARM": "None"},
        (
            ("legacy-follows-cursor", {"LEGACY_ARM": "page.next_cursor"}, ("legacy equals",)),
            ("legacy-wraps-cursor", {"LEGACY_ARM": "page.next_cursor.clone()"}, ("legacy equals",)),
        ),
    ),
    Case(
        "codex-mcp-2026-07-28-flag-off",
        FEATURES,
        {"STAGE": "Stage::UnderDevelopment", "DEFAULT": "false"},
        (
            (
                "on-by-default",
                {"STAGE": "Stage::UnderDevelopment", "DEFAULT": "true"},
                ("default_enabled equals",),
            ),
            (
                "experimental",
                {
                    "STAGE": 'Stage::Experimental { name: "MCP 2026-07-28", '
                    'menu_description: "Try it", announcement: "NEW" }',
                    "DEFAULT": "false",
                },
                ("stage equals",),
            ),
            (
                "stable",
                {"STAGE": "Stage::Stable", "DEFAULT": "true"},
                ("stage equals", "default_enabled equals"),
            ),
        ),
    ),
    Case(
        "codex-initialize-pins-2025-06-18",
        INITIALIZE,
        {"VERSION": "ProtocolVersion::V_2025_06_18"},
        (
            ("newer-pin", {"VERSION": "ProtocolVersion::V_2025_11_25"}, ("version equals",)),
            (
                "per-mode",
                {"VERSION": "protocol_mode.preferred_protocol_version()"},
                ("version equals",),
            ),
        ),
    ),
    Case(
        "codex-tool-list-changed-only-logs",
        HANDLER,
        {"CONTEXT": "_context", "BODY": 'info!("MCP server tool list changed");'},
        (
            (
                "refetches",
                {
                    "CONTEXT": "context",
                    "BODY": 'info!("MCP server tool list changed");\n'
                    "        let tools = context.peer.list_all_tools().await;",
                },
                ("body matches", "body not_matches"),
            ),
            (
                "signals-refresh",
                {
                    "CONTEXT": "_context",
                    "BODY": "let _ = self.tool_list_changed.send(());",
                },
                ("body matches", "body not_matches"),
            ),
            (
                "logs-and-invalidates",
                {
                    "CONTEXT": "_context",
                    "BODY": 'tracing::info!("tools changed");\n        self.cache.invalidate();',
                },
                ("body matches", "body not_matches"),
            ),
        ),
    ),
]


def render(template: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        template = template.replace(key, value)
    return template


@pytest.mark.parametrize("case", CASES, ids=[c.rule for c in CASES])
def test_rule_holds_on_code_shaped_like_upstream(case: Case) -> None:
    rule = shipped_rules()[case.rule]
    matches = evaluate(rule, render(case.template, case.holding))
    assert len(matches) == 1, [(m.start_line, m.end_line) for m in matches]
    assert failing_claims(rule, matches[0]) == []


FLIPS = [(c, name, values, failing) for c in CASES for name, values, failing in c.flips]


@pytest.mark.parametrize(
    ("case", "values", "failing"),
    [(c, v, f) for c, _, v, f in FLIPS],
    ids=[f"{c.rule}:{name}" for c, name, _, _ in FLIPS],
)
def test_rule_breaks_when_the_behaviour_flips(
    case: Case, values: dict[str, str], failing: tuple[str, ...]
) -> None:
    rule = shipped_rules()[case.rule]
    matches = evaluate(rule, render(case.template, values))
    assert len(matches) == 1, [(m.start_line, m.end_line) for m in matches]
    assert failing_claims(rule, matches[0]) == list(failing)


def test_cursor_gate_is_missing_when_the_mode_match_is_gone() -> None:
    rule = shipped_rules()["codex-tools-list-cursor-gate"]
    source = render(CURSOR_GATE, {"LEGACY_ARM": "None"}).replace(
        "match protocol_mode", "match client.mode()"
    )
    assert evaluate(rule, source) == []


def test_cursor_gate_still_found_when_the_mode_is_inlined() -> None:
    rule = shipped_rules()["codex-tools-list-cursor-gate"]
    source = render(CURSOR_GATE, {"LEGACY_ARM": "None"}).replace(
        "match protocol_mode {\n                McpProtocolMode::Legacy",
        "match client.protocol_mode() {\n                McpProtocolMode::Legacy",
    )
    assert "match client.protocol_mode()" in source
    [match] = evaluate(rule, source)
    assert match.captures["legacy"] == "None"


def test_initialize_rule_survives_a_rename_of_the_helper() -> None:
    rule = shipped_rules()["codex-initialize-pins-2025-06-18"]
    source = render(INITIALIZE, {"VERSION": "ProtocolVersion::V_2025_06_18"}).replace(
        "fn mcp_initialize_request_params", "fn initialize_params"
    )
    [match] = evaluate(rule, source)
    assert match.captures["version"] == "ProtocolVersion::V_2025_06_18"


# --- quoted code -------------------------------------------------------------------------


def shipped_quote_items() -> list[tuple[Note, Item]]:
    notes = load_notes(ROOT / "notes", display_root=ROOT).notes
    out = []
    for note in notes.values():
        for quote in note.quotes:
            item = quote_item(quote, note)
            assert isinstance(item, Item), item
            out.append((note, item))
    return out


def test_every_shipped_note_quotes_code_of_a_file_it_cites() -> None:
    items = shipped_quote_items()
    assert {note.id for note, _ in items} == NOTE_IDS
    for note, item in items:
        assert item.quote is not None and item.quote.language == "rust"
        assert item.repo == "openai/codex" and item.sources, item.id
        assert 1 <= item.quote.text.count("\n") <= 8, f"{item.id}: keep quotes to a few lines"
        cited = {(c.commit, c.path) for c in note.citations}
        assert set(item.sources) <= cited


@pytest.mark.skipif(
    not os.environ.get("WATCH_CODEX_MIRROR"),
    reason="set WATCH_CODEX_MIRROR to a clone of openai/codex to check the quotes upstream",
)
def test_shipped_quotes_are_fresh_at_their_baseline() -> None:
    """Each quote occurs token for token in a file its note cites, at the cited commit,
    read from a real clone of openai/codex (the project ships no upstream code)."""
    mirror = os.environ["WATCH_CODEX_MIRROR"]
    for _, item in shipped_quote_items():
        assert item.quote is not None
        quote = quotes.pattern(item.quote.text, item.quote.language)
        found = []
        for commit, path in item.sources:
            raw = subprocess.run(
                ["git", "-C", mirror, "cat-file", "blob", f"{commit}:{path}"],
                capture_output=True,
                check=True,
            ).stdout
            parsed = parse(hashlib.sha1(raw).hexdigest(), "rust", lambda raw=raw: raw)
            if quotes.find(quote, parsed) is not None:
                found.append(path)
        assert found, f"{item.id} (line {item.quote.line}) occurs in none of {item.sources}"
