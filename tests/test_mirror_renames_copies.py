"""Copies followed like renames (`watcher.mirror.renames`): a file git reports as copied
(`C`, from a file the same commit changed) is followed commit by commit, as a renamed one
is, so a schema copied into a new file, renamed and copied back is found, not `missing`."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.support import check_results
from watcher.gitbuild import Upstream
from watcher.mirror.renames import Link, Paths, Where

TYPES = "src/types.ts"
SPEC = "src/spec.types.ts"
WIRE = "src/wire/spec.types.ts"
SCHEMAS = "src/types/schemas.ts"
NAMES = ["Ping", "Cursor", "Request", "Result", "Notification", "Tool", "Resource", "Prompt"]
FIELDS = ["id", "name", "title", "description", "meta", "cursor", "version", "payload"]


def schema(name: str, extra: str = "") -> str:
    """A zod object schema of eight fields, like typescript-sdk's `types.ts`."""
    fields = "".join(f"    {f}{i}: z.string().optional(),\n" for i, f in enumerate(FIELDS))
    return f"export const {name}Schema = z.object({{\n{fields}{extra}}});\n"


def aliases(count: int) -> str:
    """Short wire-only schemas, one a line."""
    return "".join(f"export const Wire{n}Schema = z.array(z.string());\n" for n in range(count))


def module(names: list[str], extra: str = "") -> str:
    head = "import { z } from 'zod';\n\n"
    return head + "\n".join(schema(n) for n in names) + extra


def lines_of(text: str, name: str) -> str:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if f"const {name}Schema" in line) + 1
    return f"{start}-{start + len(FIELDS) + 1}"


def _status(upstream: Upstream, commit: str) -> list[str]:
    """What git says the commit did to the files, copies and renames found (`-M -C`), with
    its similarity score."""
    out = upstream.git("diff", "--name-status", "-M", "-C", f"{commit}^1", commit)
    return sorted(out.splitlines())


def copy_chain(upstream: Upstream) -> dict[str, str]:
    """`types.ts` copied into a new file (C), that file renamed (R100) and copied back
    into a third (C100), the cited `ToolSchema` leaving each file it was copied from."""
    made = {"base": upstream.commit("types", {TYPES: module(NAMES)})}
    kept = [n for n in NAMES if n != "Tool"]
    made["copy"] = upstream.commit(
        "spec types beside types (#1)",
        {
            TYPES: module(kept, "export { ToolSchema } from './spec.types';\n"),
            SPEC: module(NAMES, schema("Extra") + schema("Wider") + aliases(5)),
        },
    )
    made["rename"] = upstream.move(SPEC, WIRE, "wire folder (#2)")
    made["back"] = upstream.commit(
        "schemas module (#3)",
        {
            SCHEMAS: upstream.read(WIRE),
            WIRE: module(kept, "export { ToolSchema } from '../types/schemas';\n"),
        },
    )
    assert _status(upstream, made["copy"]) == [f"C074\t{TYPES}\t{SPEC}", f"M\t{TYPES}"]
    assert _status(upstream, made["rename"]) == [f"R100\t{SPEC}\t{WIRE}"]
    assert _status(upstream, made["back"]) == [f"C100\t{WIRE}\t{SCHEMAS}", f"M\t{WIRE}"]
    return made


CITED = f"{TYPES}:{lines_of(module(NAMES), 'Tool')}"


def test_a_schema_copied_renamed_and_copied_back_is_found(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    made = copy_chain(upstream)
    project.note("tools", f"{made['base']} {CITED}")

    result = check_results(project, capsys)[f"tools:{CITED}"]

    assert result["verdict"] == "moved", result["message"]
    at = result["current"]
    assert (at["path"], f"{at['start_line']}-{at['end_line']}") == (
        SCHEMAS, lines_of(upstream.read(SCHEMAS), "Tool"),
    )  # fmt: skip
    assert result["introduced_by"] is None and result["history"] == []


def test_a_change_made_in_the_copy_is_blamed_there(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    made = copy_chain(upstream)
    before, tool = upstream.read(SCHEMAS).split("export const ToolSchema")
    required = tool.replace("name1: z.string().optional()", "name1: z.string()", 1)
    edited = before + "export const ToolSchema" + required
    change = upstream.commit("tool name required (#4)", {SCHEMAS: edited})
    upstream.commit("unrelated (#5)", {"README.md": "hi\n"})
    project.note("tools", f"{made['base']} {CITED}")

    result = check_results(project, capsys)[f"tools:{CITED}"]

    assert result["verdict"] == "changed", result["message"]
    assert result["current"]["path"] == SCHEMAS
    assert result["introduced_by"]["commit"] == change
    assert [h["commit"] for h in result["history"]] == [change]

    code, out, _ = project.run("log", f"tools:{CITED}", capsys=capsys)
    assert code == 0
    assert change[:10] in out and made["copy"][:10] not in out, out


def test_a_copy_that_left_the_original_as_it_was_keeps_the_original(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file copied with the cited schema left in place: the cited file is preferred, and
    both places where it is token-identical are listed."""
    base = upstream.commit("types", {TYPES: module(NAMES)})
    upstream.commit(
        "copy for the wire (#1)",
        {TYPES: module(NAMES, schema("Later")), SPEC: module(NAMES, schema("Extra"))},
    )
    assert _status(upstream, upstream.head()) == [f"C089\t{TYPES}\t{SPEC}", f"M\t{TYPES}"]
    project.note("tools", f"{base} {CITED}")

    result = check_results(project, capsys)[f"tools:{CITED}"]

    assert result["verdict"] == "fresh", result["message"]
    assert result["current"]["path"] == TYPES
    lines = lines_of(module(NAMES), "Tool")
    assert result["message"] == (
        "unchanged at HEAD; 2 candidates (followed there, renamed or copied): chose "
        f"{TYPES}:{lines}, identical; also {SPEC}:{lines}"
    )
    assert [(c["path"], c["identical"], c["chosen"]) for c in result["candidates"]] == [
        (TYPES, True, True),
        (SPEC, True, False),
    ]


def test_a_copy_of_a_kept_file_is_no_removal_and_older_entries_are_followed_again() -> None:
    """A copy out of a file the commit kept is remembered as such in state/: relocation
    searches only the files added by commits that removed a followed path, not by every
    copy. Entries written before copies were followed are not taken up: followed again."""
    copy = Link("c" * 40, TYPES, SPEC, "copy", 74, kept=True)
    rename = Link("d" * 40, SPEC, WIRE, "rename", 100)
    where = Where("e" * 40, ((WIRE, "f" * 40),), (copy, rename))

    assert Where.load(where.dump()) == where
    assert where.removals == ("d" * 40,)
    older = {**where.dump(), "links": [["d" * 40, SPEC, WIRE, "rename", 100]]}
    del older["follows"]
    paths = Paths(mirror=None)  # type: ignore[arg-type]  # recalling reads no git
    paths.recall({f"b:{TYPES}": where.dump(), f"b:{SPEC}": older})
    assert list(paths.memo) == [f"b:{TYPES}"]


def test_of_two_definitions_the_one_like_the_cited_is_judged_and_walked(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cited file keeps only an alias of the schema; its copy has the schema whole and
    edits it later. Judged and walked alike: the copy's definition, changed by the edit
    (not the alias in the cited file, changed by the copy)."""
    base = upstream.commit("types", {TYPES: module(NAMES)})
    alias = "export const ToolSchema = spec.ToolSchema;\n"
    aliased = module(NAMES).replace(schema("Tool"), alias)
    upstream.commit(
        "spec types (#1)", {TYPES: aliased, SPEC: module(NAMES, schema("Extra") + aliases(2))}
    )
    assert _status(upstream, upstream.head())[0].startswith("C0")
    before, tool = upstream.read(SPEC).split("export const ToolSchema")
    edit = upstream.commit(
        "tool name required (#2)",
        {SPEC: before + "export const ToolSchema" + tool.replace("name1: z.string().optional()",
                                                               "name1: z.string()", 1)},
    )  # fmt: skip
    project.note("tools", f"{base} {CITED}")

    result = check_results(project, capsys)[f"tools:{CITED}"]

    assert result["verdict"] == "changed", result["message"]
    at = result["current"]
    assert (at["path"], f"{at['start_line']}-{at['end_line']}") == (
        SPEC, lines_of(upstream.read(SPEC), "Tool"),
    )  # fmt: skip
    assert result["introduced_by"]["commit"] == edit
    assert [h["commit"] for h in result["history"]] == [edit]


def test_a_history_stays_in_its_file_while_a_copy_is_edited_apart(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """typescript-sdk's `streamableHttp.ts`, copied into `webStandardStreamableHttp.ts`
    and the two edited apart: the cited transport's history took in a commit that edited
    only the copy, whenever the copy's version was the more like the cited one. While the
    file keeps the cited tokens its history is its own, as `git log -L`'s is."""

    def edited(text: str, *fields: int) -> str:
        before, tool = text.split("export const ToolSchema")
        for n in fields:
            tool = tool.replace(
                f"{FIELDS[n]}{n}: z.string().optional()", f"{FIELDS[n]}{n}: z.string()", 1
            )
        return before + "export const ToolSchema" + tool

    base = upstream.commit("types", {TYPES: module(NAMES)})
    copied = module(NAMES, schema("Extra") + aliases(2))
    upstream.commit("web types (#1)", {TYPES: module(NAMES, aliases(1)), SPEC: edited(copied, 7)})
    assert _status(upstream, upstream.head())[0].startswith("C0")
    ours = upstream.commit("required fields (#2)", {TYPES: edited(upstream.read(TYPES), 1, 2)})
    upstream.commit("web: required (#3)", {SPEC: edited(upstream.read(SPEC), 3, 4, 5)})
    project.note("tools", f"{base} {CITED}")

    result = check_results(project, capsys)[f"tools:{CITED}"]

    assert result["verdict"] == "changed", result["message"]
    assert result["current"]["path"] == TYPES
    assert [h["commit"] for h in result["history"]] == [ours]
    assert result["introduced_by"]["commit"] == ours
