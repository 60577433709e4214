"""`watch fix --accept NOTE_ID`: re-base a re-verified note on HEAD, keeping its layout."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.conftest import Project
from watcher.commands.fix import fix
from watcher.gitbuild import Upstream

LIB = "src/client.rs"
NEW = "src/session.rs"
EXTRA = "src/extra.rs"
SOURCE = """\
pub fn list_tools(mode: Mode, response: Response) -> Option<Cursor> {
    let next = match mode {
        Mode::Legacy => None,
        Mode::Modern => response.next_cursor,
    };
    next
}

pub fn initialize() -> Params {
    Params::new("client").with_protocol_version("2025-06-18")
}
"""
RULE = """\
# The version the client asks for.
[[rule]]
id = "init-version"
note = "n"
path = "src/client.rs"   # where it was
query = '''
(function_item name: (identifier) @n (#eq? @n "initialize")
  body: (block (call_expression arguments: (arguments (string_literal) @v)))) @target
'''

[[rule.claims]]
capture = "v"
equals = '"2025-06-18"'
"""


def build(project: Project, upstream: Upstream) -> tuple[str, str]:
    base = upstream.commit("client", {LIB: SOURCE, EXTRA: "pub fn helper() -> u8 {\n    7\n}\n"})
    link = f"https://github.com/{project.repo}/blob/{base}/{LIB}#L9-L11"
    project.note(
        "n",
        raw=(
            "---\nid: n\ntitle: N\nsources:\n"
            f"  - url: https://github.com/{project.repo}\n    title: list_tools\n"
            f"    commit: '{base[:10]}'\n    path: {LIB}:1-7\n    date: 2026-01-01\n"
            f"  - url: https://github.com/{project.repo}\n    commit: {base}\n"
            f"    path: {EXTRA}:1-3\n    date: 2026-01-01\n"
            f'  - url: {link}\n    date: "2026-01-01"\n'
            f"  - url: https://github.com/{project.repo}/issues/5\n    date: 2026-01-01\n"
            "status: current\nlastVerified: 2026-01-01  # by hand\n---\n\n"
            "# N\n\nThe arm:\n\n```rust\nMode::Legacy => None,\n```\n\nMore prose.\n"
        ),
    )
    project.rules(RULE)
    upstream.move(LIB, NEW, "Rename the client module (#3)")
    text = SOURCE.replace("Mode::Legacy => None", "Mode::Legacy => response.next_cursor")
    head = upstream.commit("Follow cursors (#4)", {NEW: "use std::fmt;\n\n" + text, EXTRA: None})
    return base, head


def run_fix(project: Project, *args: str, write: bool) -> tuple[int, str]:
    out = io.StringIO()
    code = fix(
        project.config_file,
        write=write,
        offline=False,
        out=out,
        accept="n" if "accept" in args else None,
        today="2026-12-02",
    )
    return code, out.getvalue()


def test_accept_previews_then_rebases_everything_on_head(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base, head = build(project, upstream)
    note = project.root / "notes" / "n.md"
    before = note.read_text()

    code, shown = run_fix(project, "accept", write=False)

    assert code == 0, shown
    assert note.read_text() == before  # a preview writes nothing
    assert f"-    commit: '{base[:10]}'\n" in shown and f"+    commit: '{head}'\n" in shown
    assert "-Mode::Legacy => None,\n+Mode::Legacy => response.next_cursor,\n" in shown
    assert "-lastVerified: 2026-01-01  # by hand\n+lastVerified: 2026-12-02  # by hand\n" in shown
    assert f"notes/n.md: sources[1] {EXTRA}:1-3: dropped, not found at HEAD" in shown
    assert "rules/rules.toml: rule init-version: path src/client.rs -> src/session.rs" in shown
    assert "run `watch fix --accept n --write` to write these changes" in shown

    code, _ = run_fix(project, "accept", write=True)

    text = note.read_text()
    assert f"    commit: '{head}'\n    path: {NEW}:3-9\n    date: 2026-12-02\n" in text
    assert EXTRA not in text  # the missing citation is dropped, its whole entry
    assert f"  - url: https://github.com/{project.repo}/blob/{head}/{NEW}#L11-L13\n" in text
    assert '    date: "2026-12-02"\n' in text  # quoting style kept
    assert "issues/5\n    date: 2026-12-02\n" in text  # the issue citation was re-read too
    assert "lastVerified: 2026-12-02  # by hand\n" in text
    assert "```rust\nMode::Legacy => response.next_cursor,\n```\n\nMore prose.\n" in text
    rule = (project.root / "rules" / "rules.toml").read_text()
    assert rule == RULE.replace('path = "src/client.rs"', 'path = "src/session.rs"')
    # The ids older issues name still lead to the items (their lines are in the id).
    code, out, err = project.run("log", f"n:{LIB}:1-7", "--offline", capsys=capsys)
    assert code == 0, err
    assert out.startswith(f"n:{LIB}:1-7 was re-based by `watch fix`; it is now n:{NEW}:3-9\n")
    assert f"n:{NEW}:3-9 (note n) since {head[:12]}" in out
    code, out, err = project.run("log", f"n:{EXTRA}:1-3", "--offline", capsys=capsys)
    assert code == 2 and "no tracked item has this id" in err  # dropped: nothing to lead to

    # --offline: the mirror is as fix left it, and no GitHub read for the issue citation
    code, out, _ = project.run("check", "--offline", "--format", "json", capsys=capsys)
    verdicts = {r["id"]: r["verdict"] for r in json.loads(out)["results"]}
    assert code == 0
    assert verdicts == {
        f"n:{NEW}:3-9": "fresh",
        f"n:{NEW}:11-13": "fresh",
        "n:quote:1": "fresh",
        "init-version": "fresh",
    }


def test_accept_lists_what_still_needs_a_human(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    build(project, upstream)
    upstream.commit("Newer version", {NEW: upstream.read(NEW).replace("2025-06-18", "2026-07-28")})

    code, shown = run_fix(project, "accept", write=True)

    assert code == 1
    assert "todo: rules/rules.toml: rule init-version: broken at HEAD" in shown
    assert "update it, then run `watch rules lint`" in shown


def test_accept_names_an_unknown_note(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    build(project, upstream)
    code, _, err = project.run("fix", "--accept", "nope", capsys=capsys)
    assert code == 2
    assert "--accept nope: no note has this id" in err


def test_fix_write_bumps_the_date_of_moved_citations_only(
    project: Project, upstream: Upstream
) -> None:
    base = upstream.commit("client", {LIB: SOURCE})
    project.note(
        "n",
        raw=(
            "---\nid: n\nsources:\n"
            f"  - url: https://github.com/{project.repo}\n    commit: {base}\n"
            f"    path: {LIB}:9-11\n    date: 2026-01-01\n"
            f"  - url: https://github.com/{project.repo}/issues/5\n    date: 2026-01-01\n"
            "lastVerified: 2026-01-01\n---\n"
        ),
    )
    head = upstream.commit("prepend", {LIB: "use std::fmt;\n\n" + SOURCE})

    code, _ = run_fix(project, write=True)

    assert code == 0
    text = (project.root / "notes" / "n.md").read_text()
    assert f"    commit: {head}\n    path: {LIB}:11-13\n    date: 2026-12-02\n" in text
    assert "issues/5\n    date: 2026-01-01\n" in text
    assert "lastVerified: 2026-01-01\n" in text


def test_accept_judges_a_quote_corrected_by_hand_at_the_commit_it_rebases_to(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The maintainer fixes the stale quote to match HEAD, then accepts: the quote is not
    at the old commit any more, but it is where the note is going, so nothing is left."""
    _, head = build(project, upstream)
    note = project.root / "notes" / "n.md"
    note.write_text(
        note.read_text().replace("Mode::Legacy => None,", "Mode::Legacy => response.next_cursor,")
    )
    code, out, _ = project.run("check", "--format", "json", capsys=capsys)
    verdicts = {r["id"]: r for r in json.loads(out)["results"]}
    assert verdicts["n:quote:1"]["error"] == "quote-baseline"  # as the next check sees it

    code, shown = run_fix(project, "accept", write=True)

    assert code == 0, shown
    assert f"notes/n.md:26: quote 1: occurs at {NEW}:5 at {head[:12]}, the new baseline" in shown
    assert "todo" not in shown
    code, out, _ = project.run("check", "--offline", "--format", "json", capsys=capsys)
    verdicts = {r["id"]: r["verdict"] for r in json.loads(out)["results"]}
    assert verdicts["n:quote:1"] == "fresh"


def test_aliases_lead_every_old_id_to_the_newest(tmp_path: Path) -> None:
    from watcher.state import aliases

    state = tmp_path / "state"
    aliases.record(state, "acme/client", {"n:a.rs:1-3": "n:a.rs:5-7", "n:b.rs:1": "n:b.rs:1"})
    aliases.record(state, "acme/client", {"n:a.rs:5-7": "n:c.rs:9-11"})
    aliases.record(state, "acme/other", {"m:x.py:1-2": "m:x.py:3-4"})

    assert aliases.resolve(state, "n:a.rs:1-3") == "n:c.rs:9-11"  # one step, not a chain
    assert aliases.resolve(state, "n:a.rs:5-7") == "n:c.rs:9-11"
    assert aliases.resolve(state, "m:x.py:1-2") == "m:x.py:3-4"
    assert aliases.resolve(state, "n:b.rs:1") is None  # unchanged ids are not kept
    shard = (state / "aliases" / "acme__client.json").read_text()
    aliases.record(state, "acme/client", {"n:a.rs:5-7": "n:c.rs:9-11"})
    assert (state / "aliases" / "acme__client.json").read_text() == shard  # nothing new


def test_accept_warns_that_a_rule_will_match_several_targets_at_its_new_baseline(
    project: Project, upstream: Upstream
) -> None:
    """At HEAD the rule's construct has two twins: a check still judges it, but once the
    note is re-based HEAD is the rule's baseline, where it must match exactly one."""
    _, head = build(project, upstream)
    twins = "".join(
        f'\nmod {m} {{\n    pub fn initialize() -> Params {{\n        Params::new("{m}")'
        '.with_protocol_version("2025-06-18")\n    }\n}\n'
        for m in ("legacy", "compat")
    )
    head = upstream.commit("Two more clients (#5)", {NEW: upstream.read(NEW) + twins})

    code, shown = run_fix(project, "accept", write=False)

    assert code == 1, shown
    assert (
        f"todo: rules/rules.toml: rule init-version: matches 3 @target nodes in {NEW} at "
        f"{head[:12]}, its new baseline once the note is re-based" in shown
    )
