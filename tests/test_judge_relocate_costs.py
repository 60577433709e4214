"""What looking for missing citations in the files a commit added costs: each such file is
read and parsed once per run, however many citations look in it. Inspector's v2 commit
removed its CLI and added 926 files; every citation of the CLI looks in all of them for
its definition renamed (`relocate._renames`), in the same order, and the parse cache
holds a few files, so each citation parsed them all again (135 s for 97 citations)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.conftest import Project
from watcher.gitbuild import Upstream
from watcher.parse import syntax

CLI = "cli/src/cli.ts"
STEPS = ["connect", "listTools", "callTool", "readResource"]


def cli() -> str:
    return "".join(
        f"export async function {name}(client: Client, url: string): Promise<void> {{\n"
        f"  const transport = new SSEClientTransport(new URL(url), {{ step: '{name}' }});\n"
        f"  await client.connect(transport);\n"
        f"  const result = await client.request({{ method: '{name}' }}, ResultSchema);\n"
        f"  console.log(JSON.stringify(result, null, 2));\n"
        f"}}\n\n"
        for name in STEPS
    )


def helpers(n: int) -> str:
    """A module of small functions that together hold every token of the CLI's steps,
    one statement each, so that no one function is like any step."""
    return "".join(
        f"export function part{n}{i}(client: Client, url: string, name: string) {{\n"
        f"  {line}\n}}\n\n"
        for i, line in enumerate(
            [
                "const transport = new SSEClientTransport(new URL(url), { step: name });",
                "await client.connect(transport);",
                "const result = await client.request({ method: name }, ResultSchema);",
                "console.log(JSON.stringify(result, null, 2));",
            ]
        )
    )


def test_files_a_commit_added_are_parsed_once_for_every_citation_looking_in_them(
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Four citations of a CLI a commit removed while adding twelve modules, with a parse
    cache that keeps nothing: each module is parsed once, not once per citation."""
    monkeypatch.setattr(syntax, "_CACHE", syntax.Cache(budget=1))
    base = upstream.commit("cli", {CLI: cli()})
    project.note("n", *(f"{base} {CLI}:{1 + 7 * i}-{6 + 7 * i}" for i in range(len(STEPS))))
    added = {f"client/src/lib/part{n}.ts": helpers(n) for n in range(12)}
    upstream.commit("v2: a web client (#800)", {**added, CLI: None})

    project.counts.parse.reset()
    _, out, _ = project.run("check", "--format", "json", capsys=capsys)

    assert {r["verdict"] for r in json.loads(out)["results"]} == {"missing"}
    blobs = {upstream.git("rev-parse", f"HEAD:{path}") for path in added}
    parses = Counter(b for b in project.counts.parse.parsed_blobs if b in blobs)
    assert set(parses) <= blobs
    assert max(parses.values(), default=1) == 1
