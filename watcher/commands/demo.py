"""`watch demo`: an offline tour. Builds a small codex-shaped upstream with a history,
notes and rules that cite it, runs a full check with the `files` sink, and shows the
report and one generated issue.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TextIO

from watcher.gitbuild import Upstream

CLIENT = "codex-rs/codex-mcp/src/rmcp_client.rs"
FEATURES = "codex-rs/features/src/lib.rs"
MODE = "codex-rs/rmcp-client/src/protocol_mode.rs"
HANDLER = "codex-rs/rmcp-client/src/logging_client_handler.rs"

CLIENT_V1 = """\
use crate::pagination::collect_paginated_with_limit;

pub(crate) async fn list_tools_for_client_uncached(
    client: &RmcpClient,
    protocol_mode: McpProtocolMode,
) -> Result<Vec<ToolInfo>> {
    collect_paginated_with_limit(|cursor| async move {
        let response = client.list_tools(cursor).await?;
        let next_cursor = match protocol_mode {
            McpProtocolMode::Legacy => None,
            McpProtocolMode::V20260728 => response.next_cursor,
        };
        Ok((response.tools, next_cursor))
    })
    .await
}

fn initialize_params(capabilities: ClientCapabilities) -> InitializeRequestParams {
    InitializeRequestParams::new(capabilities, Implementation::new("demo-mcp-client", "0.1.0"))
        .with_protocol_version(ProtocolVersion::V_2025_06_18)
}
"""

FEATURES_V1 = """\
pub const FEATURES: &[FeatureSpec] = &[
    FeatureSpec {
        id: Feature::ShellTool,
        key: "shell_tool",
        stage: Stage::Stable,
        default_enabled: true,
    },
    FeatureSpec {
        id: Feature::Mcp20260728,
        key: "mcp_2026_07_28",
        stage: Stage::UnderDevelopment,
        default_enabled: false,
    },
];
"""

MODE_V1 = """\
/// How a session speaks MCP; chosen once, when the session starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum McpProtocolMode {
    /// The initialize handshake pinned to 2025-06-18.
    #[default]
    Legacy,
    /// The 2026-07-28 lifecycle, behind the mcp_2026_07_28 feature.
    V20260728,
}
"""

HANDLER_V1 = """\
impl ClientHandler for LoggingClientHandler {
    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        tracing::info!("notifications/tools/list_changed -> params: {:?}", context.meta);
    }

    async fn on_progress(&self, params: ProgressNotificationParam) {
        tracing::debug!("progress: {params:?}");
    }
}
"""

NOTES = {
    "demo-reads-one-page-of-tools.md": """\
---
id: demo-reads-one-page-of-tools
title: The demo client reads one page of tools in its default mode
clients: [demo-client]
status: current
lastVerified: 2026-01-01
sources:
  - url: https://github.com/demo/codex
    title: list_tools_for_client_uncached
    commit: {base}
    path: {client}:3-16
  - url: https://github.com/demo/codex
    title: initialize params
    commit: {base}
    path: {client}:18-21
---

In Legacy mode the paginator is handed `None` as the next cursor, so only the first
page of `tools/list` is read.
""",
    "demo-defaults-to-2025-06-18.md": """\
---
id: demo-defaults-to-2025-06-18
title: The demo client pins 2025-06-18 and keeps 2026-07-28 behind a flag
clients: [demo-client]
status: current
lastVerified: 2026-01-01
sources:
  - url: https://github.com/demo/codex
    title: McpProtocolMode
    commit: {base}
    path: {mode}:2-9
  - url: https://github.com/demo/codex
    title: the mcp_2026_07_28 feature record
    commit: {base}
    path: {features}:8-13
---

The default mode is Legacy; the newer mode needs a feature that is off by default.
""",
    "demo-ignores-tools-list-changed.md": """\
---
id: demo-ignores-tools-list-changed
title: The demo client only logs notifications/tools/list_changed
clients: [demo-client]
status: current
lastVerified: 2026-01-01
sources:
  - url: https://github.com/demo/codex/blob/{base}/{handler}#L2-L4
    title: on_tool_list_changed
---

The handler writes a log line and does not list the tools again.
""",
}

RULES = """\
[[rule]]
id = "demo-tools-list-cursor-gate"
note = "demo-reads-one-page-of-tools"
path = "codex-rs/codex-mcp/src/rmcp_client.rs"
inside = '''
(function_item name: (identifier) @n (#eq? @n "list_tools_for_client_uncached")) @scope
'''
query = '''
(match_expression
  value: (identifier) @v (#eq? @v "protocol_mode")
  body: (match_block
    (match_arm pattern: (match_pattern) @p (#eq? @p "McpProtocolMode::Legacy")
               value: (_) @legacy))) @target
'''

[[rule.claims]]
capture = "legacy"
equals = "None"
says = "in the default (Legacy) mode the tools/list cursor is replaced by None"

[[rule]]
id = "demo-initialize-protocol-version"
note = "demo-reads-one-page-of-tools"
path = "codex-rs/codex-mcp/src/rmcp_client.rs"
query = '''
(function_item
  name: (identifier) @n (#eq? @n "initialize_params")
  body: (block (call_expression
    function: (field_expression field: (field_identifier) @m (#eq? @m "with_protocol_version"))
    arguments: (arguments (_) @version)))) @target
'''

[[rule.claims]]
capture = "version"
equals = "ProtocolVersion::V_2025_06_18"
says = "initialize is pinned to 2025-06-18"

[[rule]]
id = "demo-mcp-2026-07-28-feature"
note = "demo-defaults-to-2025-06-18"
path = "codex-rs/features/src/lib.rs"
query = '''
(struct_expression
  name: (type_identifier) @t (#eq? @t "FeatureSpec")
  body: (field_initializer_list
    (field_initializer field: (field_identifier) @k (#eq? @k "key")
                       value: (string_literal) @key (#eq? @key "\\"mcp_2026_07_28\\""))
    (field_initializer field: (field_identifier) @s (#eq? @s "stage") value: (_) @stage)
    (field_initializer field: (field_identifier) @d (#eq? @d "default_enabled")
                       value: (_) @default))) @target
'''

[[rule.claims]]
capture = "stage"
equals = "Stage::UnderDevelopment"
says = "the flag is under development"

[[rule.claims]]
capture = "default"
equals = "false"
says = "the flag is off by default"
"""

CONFIG = """\
notes = "notes"
rules = "rules"
state = "state"
cache = "cache"
track_citations = true

[[upstream]]
repo = "demo/codex"
url = "{url}"
branch = "main"
release_tags = "rust-v*"
schedule = "@every 30s"

[issues]
sink = "files"
labels = ["stale-verification"]
dashboard = true
"""


def build_upstream(path: Path) -> tuple[Upstream, str]:
    """The demo upstream: a baseline, then a move, a change, a flip (released) and a delete."""
    up = Upstream(path)
    base = up.commit(
        "Initial MCP client",
        {CLIENT: CLIENT_V1, FEATURES: FEATURES_V1, MODE: MODE_V1, HANDLER: HANDLER_V1},
    )
    up.tag("rust-v0.1.0")
    # Moves the McpProtocolMode enum down without changing a token: `moved`.
    up.commit("Document protocol modes (#101)", {MODE: "use std::fmt;\n\n" + MODE_V1})
    # Changes the initialize call but keeps the pinned version: `changed`.
    up.commit(
        "Name the client in initialize (#102)",
        {
            CLIENT: CLIENT_V1.replace(
                '"demo-mcp-client", "0.1.0"))', '"demo-mcp-client", "0.1.0").with_title("Demo"))'
            )
        },
    )
    # Flips the claimed value on a branch merged by pull request: `broken`, then released.
    up.branch_off("pager")
    up.commit(
        "Honour the tools/list cursor in Legacy mode",
        {
            CLIENT: up.read(CLIENT).replace(
                "McpProtocolMode::Legacy => None,",
                "McpProtocolMode::Legacy => response.next_cursor,",
            )
        },
    )
    up.checkout("main")
    up.merge("pager", "Merge pull request #103 from demo/pager")
    up.tag("rust-v0.2.0")
    # Deletes the list_changed handler: `missing`, not in a release yet.
    up.commit("Drop the logging client handler (#104)", {HANDLER: None})
    return up, base


def prepare(root: Path) -> Path:
    """Write the upstream, notes, rules and config under `root`; return the config file."""
    up, base = build_upstream(root / "upstream")
    fields = {
        "base": base,
        "client": CLIENT,
        "mode": MODE,
        "features": FEATURES,
        "handler": HANDLER,
    }
    for name, text in NOTES.items():
        note = root / "notes" / name
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text(_fill(text, fields), encoding="utf-8")
    (root / "rules").mkdir(exist_ok=True)
    (root / "rules" / "demo.toml").write_text(RULES, encoding="utf-8")
    config = root / "config.toml"
    config.write_text(CONFIG.replace("{url}", up.url), encoding="utf-8")
    return config


def _fill(text: str, fields: dict[str, str]) -> str:
    for key, value in fields.items():
        text = text.replace("{" + key + "}", value)
    return text


def run(out: TextIO, *, keep: bool = False) -> int:
    """Build the demo in a temp folder, check it, print the report and one issue."""
    from watcher.config import load
    from watcher.pipeline import CheckOptions, run_check
    from watcher.report import render

    root = Path(tempfile.mkdtemp(prefix="watch-demo-"))
    try:
        config = load(prepare(root))
        report = run_check(config, CheckOptions())
        render(report, "table", out)
        issue = _first_issue(config.state)
        if issue is not None:
            out.write(f"\n--- {issue.name} (one of the generated issues) ---\n")
            out.write(issue.read_text(encoding="utf-8"))
        if keep:
            out.write(f"\ndemo kept in {root}\n")
        # The demo shows stale notes on purpose; it succeeds when the check itself ran.
        return 0 if report.exit_code in (0, 1) else 2
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def _first_issue(state: Path) -> Path | None:
    """The issue of the note whose claim broke: the one most worth showing."""
    issue = state / "issues" / "demo-reads-one-page-of-tools.md"
    return issue if issue.is_file() else None
