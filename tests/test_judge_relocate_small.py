"""A small construct whose file was removed is found in another file only when it is alike
beyond the shape every construct of its kind shares (`relocate.needed`): a one-line type
alias shares its `type X = Record<string, ` with many others, so a namesake (or a look-alike
the removing commit added) with another body is not it, and the construct is missing."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.support import check_results as _results
from watcher.gitbuild import Upstream

COMPAT = """\
import type { Schema } from './schema.js';

type JsonSchema = Record<string, unknown>;

export type ShapeCompat = Record<string, Schema>;

export function toJsonSchema(schema: Schema): JsonSchema {
    return schema.toJSON();
}
"""

WIRE_TEST = """\
import { describe, it } from 'vitest';

type JsonSchema = { $defs?: Record<string, { required?: string[] }> };

describe('wire', () => {
    it('lists required fields', () => {
        const schema: JsonSchema = {};
        expect(schema.$defs).toBeUndefined();
    });
});
"""

META = """\
export type MetaObject = Record<string, unknown>;

export interface Result {
    _meta?: MetaObject;
}
"""


def test_a_small_type_is_not_its_namesake_with_another_body_elsewhere(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("compat", {"src/compat.ts": COMPAT, "src/schema.ts": "export {};\n"})
    project.note("n", f"{base} src/compat.ts:3-3")
    removed = upstream.commit("drop the compat layer (#12)", {"src/compat.ts": None})
    upstream.commit("wire tests", {"test/wire.test.ts": WIRE_TEST})

    result = _results(project, capsys)["n:src/compat.ts:3-3"]

    assert result["verdict"] == "missing", result["message"]
    assert result["introduced_by"]["commit"] == removed
    assert result["current"] is None
    assert not any(c["chosen"] for c in result["candidates"])


def test_a_small_type_is_not_a_look_alike_the_removing_commit_added(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("compat", {"src/compat.ts": COMPAT, "src/schema.ts": "export {};\n"})
    project.note("n", f"{base} src/compat.ts:5-5")
    removed = upstream.commit(
        "drop the compat layer (#12)", {"src/compat.ts": None, "src/types/meta.ts": META}
    )

    result = _results(project, capsys)["n:src/compat.ts:5-5"]

    assert result["verdict"] == "missing", result["message"]
    assert result["introduced_by"]["commit"] == removed
    assert not any(c["chosen"] for c in result["candidates"])


def test_a_small_type_moved_whole_to_another_file_is_still_found(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("compat", {"src/compat.ts": COMPAT, "src/schema.ts": "export {};\n"})
    project.note("n", f"{base} src/compat.ts:3-3")
    upstream.commit(
        "move the json schema type (#13)",
        {"src/compat.ts": None, "src/json.ts": "type JsonSchema = Record<string, unknown>;\n"},
    )

    result = _results(project, capsys)["n:src/compat.ts:3-3"]

    assert result["verdict"] in {"moved", "fresh"}, result["message"]
    assert result["current"]["path"] == "src/json.ts"


def test_a_list_of_names_is_not_another_modules_list_of_other_names(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    exports = '"""The server."""\n\nfrom .app import App, Context\n\n__all__ = ["App", "Context", "Image"]\n'
    caching = '"""Cache hints."""\n\n__all__ = ["CacheHint", "apply_hint", "HINTS"]\n\nHINTS = {}\n'
    base = upstream.commit("server", {"src/server/__init__.py": exports})
    project.note("n", f"{base} src/server/__init__.py:5-5")
    removed = upstream.commit("drop the server package (#14)", {"src/server/__init__.py": None})
    upstream.commit("cache hints (#15)", {"src/caching.py": caching})

    result = _results(project, capsys)["n:src/server/__init__.py:5-5"]

    assert result["verdict"] == "missing", result["message"]
    assert result["introduced_by"]["commit"] == removed


UPGRADE_0_1_6 = '''\
from pathlib import Path

import aiosqlite


async def add_template_system_to_chat(db_path: Path) -> None:
    async with aiosqlite.connect(db_path) as connection:
        await connection.executescript(
            """
            ALTER TABLE chat ADD COLUMN template TEXT;
            ALTER TABLE chat ADD COLUMN system TEXT;
            """
        )
'''
UPGRADE_0_15_0 = '''\
from pathlib import Path

import aiosqlite


async def drop_template_from_chat(db_path: Path) -> None:
    async with aiosqlite.connect(db_path) as connection:
        await connection.executescript(
            """
            BEGIN TRANSACTION;
            CREATE TABLE chat_new (id INTEGER, name TEXT, model TEXT NOT NULL, system TEXT);
            INSERT INTO chat_new(id, name, model, system) SELECT id, name, model, system FROM chat;
            DROP TABLE chat;
            ALTER TABLE chat_new RENAME TO chat;
            COMMIT;
            """
        )
'''


def test_a_script_is_not_another_script_run_the_same_way(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """oterm's store upgrades: the body of `add_template_system_to_chat` cited, an
    `executescript` of two `ALTER TABLE`s. The commit that deleted its module added
    another upgrade whose body runs another script the same way: 95% alike token by
    token, the script being one token. Counted by its words, as the share rule counts a
    long string, it is another script, and the citation is missing."""
    old, new = "src/oterm/store/upgrades/v0_1_6.py", "src/oterm/store/upgrades/v0_15_0.py"
    base = upstream.commit("upgrades", {old: UPGRADE_0_1_6})
    project.note("n", f"{base} {old}:7-13")
    removed = upstream.commit("pydantic-ai (#290)", {old: None, new: UPGRADE_0_15_0})

    result = _results(project, capsys)[f"n:{old}:7-13"]

    assert result["verdict"] == "missing", (result["current"], result["message"])
    assert result["introduced_by"]["commit"] == removed
