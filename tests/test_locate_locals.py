"""A JavaScript or TypeScript `const` inside a function is a definition of its own (found
by its name path), but a local: a namesake in another function is that function's own
code, however like the citation it reads (`definitions.other_local`). A constant lifted
out of its function to the module is still it."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.support import check_results
from watcher.gitbuild import Upstream
from watcher.locate.definitions import other_local

CLIENT = "src/client/index.ts"
BEFORE = """\
export class Client {
  async readResource(params: ReadParams, options?: RequestOptions) {
    return this.request({ method: "resources/read", params }, ReadResultSchema, options);
  }

  async listTools(params?: ListParams, options?: RequestOptions) {
    const result = await this.request(
      { method: "tools/list", params },
      ListToolsResultSchema,
      options,
    );
    this.cacheTools(result.tools);
    return result;
  }
}
"""
AFTER = """\
export class Client {
  async readResource(params: ReadParams, options?: RequestOptions) {
    const generation = this.cache.generation(params.uri);
    const result = await this.request({ method: "resources/read", params }, options);
    await this.cache.write(result, generation);
    return result;
  }

  async listTools(params?: ListParams, options?: RequestOptions) {
    if (params?.cursor !== undefined) {
      const page = await this.request({ method: "tools/list", params }, options);
      return page;
    }
    return this.listAllPages("tools/list", params, options);
  }
}
"""


def test_a_local_is_not_another_functions_local_of_its_name(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """typescript-sdk's `const result = await this.request({ method: "tools/list", ... })`
    in `listTools`, made `const page = ...` inside a new cursor check, while `readResource`
    got a `const result = await this.request({ method: "resources/read", ... })`: the
    item is the `page` line of `listTools`, not `readResource`'s `result` (the walk took it
    for a local moved there, by its name)."""
    base = upstream.commit("v1", {CLIENT: BEFORE})
    project.note("n", f"{base} {CLIENT}:7-11")
    cached = upstream.commit("cache lists (#1)", {CLIENT: AFTER})

    result = check_results(project, capsys)[f"n:{CLIENT}:7-11"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (11, 11)
    assert result["introduced_by"]["commit"] == cached


def test_a_local_constant_lifted_out_of_its_function_is_still_it(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """`const LIMIT = 50` in `listTools`, moved to the top of the module: it is there."""
    local = BEFORE.replace("    const result", "    const LIMIT = 50;\n    const result")
    base = upstream.commit("v1", {CLIENT: local})
    project.note("n", f"{base} {CLIENT}:7-7")
    lifted = "const LIMIT = 50;\n\n" + BEFORE
    upstream.commit("share the limit (#2)", {CLIENT: lifted})

    result = check_results(project, capsys)[f"n:{CLIENT}:7-7"]

    assert result["verdict"] == "moved", result["message"]
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (1, 1)


def test_a_local_split_out_into_a_new_function_is_followed_there(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """typescript-sdk's `connect`, whose `const result = await this.request({ method:
    "initialize", ... })` went into a new `_legacyHandshake`: a function the baseline
    file did not have, the code split out into it; the namesake there is the item."""
    base = upstream.commit("v1", {CLIENT: BEFORE})
    project.note("n", f"{base} {CLIENT}:7-11")
    split = BEFORE.replace(
        "    const result = await this.request(",
        "    return this.fetchTools(params, options);\n  }\n\n"
        "  private async fetchTools(params?: ListParams, options?: RequestOptions) {\n"
        "    const result = await this.request(",
    )
    upstream.commit("split the fetch out (#3)", {CLIENT: split})

    result = check_results(project, capsys)[f"n:{CLIENT}:7-11"]

    assert result["verdict"] == "moved", result["message"]
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (11, 15)


@pytest.mark.parametrize(
    ("names", "cited", "other"),
    [
        (("Client", "readResource", "result"), ("Client", "listTools", "result"), True),
        (("Client", "readResource", "result"), ("Client", "listTools"), True),
        (("Client", "listTools", "page"), ("Client", "listTools"), False),
        (("Client", "listTools", "page"), ("Client", "listTools", "result"), False),
        (("LIMIT",), ("Client", "listTools", "LIMIT"), False),
        (("Client", "fetchTools", "result"), ("Client", "listTools", "result"), False),
    ],
)
def test_a_local_of_another_function_the_baseline_had_is_its_own(
    names: tuple[str, ...], cited: tuple[str, ...], other: bool
) -> None:
    """Of a cited local (a declarator's path) or of code cited inside a method (the
    method's path): `readResource`, which the baseline had, keeps its locals; the cited
    method's own locals, a scope around it, and a function written since do not."""
    known = [("method_definition", ("Client", m)) for m in ("readResource", "listTools")]
    kind = "variable_declarator" if len(cited) == 3 else "method_definition"
    assert other_local("variable_declarator", names, (kind, cited), known) is other
