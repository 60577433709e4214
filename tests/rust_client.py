"""A small Rust client in the shape of the real ones, shared by the tests that cite it:
`list_tools`, whose match drops the cursor in Legacy mode, and the rule that guards it."""

from __future__ import annotations

LIST_TOOLS = """\
pub fn list_tools(mode: Mode, response: Response) -> Option<Cursor> {
    let next = match mode {
        Mode::Legacy => None,
        Mode::Modern => response.next_cursor,
    };
    next
}
"""

INITIALIZE = """\
pub fn initialize() -> Params {
    Params::new("client").with_protocol_version(Version::V_2025_06_18)
}
"""

CLIENT = LIST_TOOLS + "\n" + INITIALIZE  # src/client.rs: list_tools at 1-7

CURSOR_GATE_RULE = """\
[[rule]]
id = "cursor-gate"
note = "one-page"
path = "src/client.rs"
inside = '''(function_item name: (identifier) @n (#eq? @n "list_tools")) @scope'''
query = '''
(match_expression
  value: (identifier) @v (#eq? @v "mode")
  body: (match_block
    (match_arm pattern: (match_pattern) @p (#eq? @p "Mode::Legacy") value: (_) @legacy))) @target
'''
[[rule.claims]]
capture = "legacy"
equals = "None"
says = "Legacy mode drops the cursor"
"""
