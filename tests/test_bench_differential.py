"""`bench.differential` against git on histories where `git log -L` and `git blame
--reverse` cannot see what watch sees: code deleted and restored under another path, a
file rewritten with another file's content, a function moved inside its file, merges."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench import differential, gittrace
from tests.conftest import Project
from tests.support import check_results
from watcher.gitbuild import Upstream

HANDLER = """\
import json


def issue_token(request, store):
    grant = request.form.get("grant_type")
    client = store.lookup_client(request.form["client_id"])
    if client is None:
        raise InvalidClientError("unknown client identifier")
    if grant == "authorization_code":
        code = store.consume_code(request.form["code"], client)
        tokens = store.exchange_authorization_code(client, code)
        return json.dumps(tokens)
    if grant == "refresh_token":
        tokens = store.exchange_refresh_token(client, request.form["refresh_token"])
        return json.dumps(tokens)
    raise UnsupportedGrantTypeError("the grant type is not supported here")


def revoke_token(request, store):
    store.revoke(request.form["token"])
    return json.dumps({})
"""


def _compare(
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    base: str,
    kinds: dict[str, tuple[str, str]],
) -> dict[str, differential.Row]:
    """watch's results, compared with git's by the differential: {id: row}."""
    results = check_results(project, capsys)
    report: dict[str, Any] = {"results": list(results.values())}
    for result in report["results"]:
        result["cite_kind"], result["cite_name"] = kinds[result["id"]]
    rows = differential.compare(Path(upstream.path), "main", base, report)
    return {row.id: row for row in rows}


def test_code_deleted_then_restored_edited_elsewhere_is_explained(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The file is renamed (and a cited line edited), deleted with no copy left, and its
    code restored, edited again, in a new file: git's trace of the HEAD lines begins at
    the restoring commit. The deletion removes every cited line."""
    base = upstream.commit("server package (#1)", {"server/auth/token.py": HANDLER})
    project.note("n", f"{base} server/auth/token.py:5-16")
    renamed = HANDLER.replace("unknown client identifier", "client_id is not registered")
    upstream.commit("move to core (#2)", {"server/auth/token.py": None,
                                          "core/auth/token.py": renamed})  # fmt: skip
    deleted = upstream.commit("drop the framework handlers (#3)", {"core/auth/token.py": None})
    upstream.commit("unrelated (#4)", {"README.md": "docs\n"})
    restored = upstream.commit(
        "legacy package (#5)",
        {"legacy/handlers/token.py": "from legacy.errors import *\n"
         + renamed.replace("is not supported here", "is not supported")},
    )  # fmt: skip

    rows = _compare(project, upstream, capsys, base,
                    {"n:server/auth/token.py:5-16": ("range", "issue_token")})  # fmt: skip

    row = rows["n:server/auth/token.py:5-16"]
    result = check_results(project, capsys)["n:server/auth/token.py:5-16"]
    states = [(h["commit"], h["state"]) for h in result["history"]]
    assert states[1:] == [(deleted, "missing"), (restored, "changed")]
    assert row.explained, row.classes
    assert any(deleted[:10] in c and "edits a cited line" in c for c in row.classes)


WEB = """\
class WebTransport:
    def __init__(self, sessions):
        self.sessions = sessions

    def handle_post(self, request):
        if not request.accepts("application/json", "text/event-stream"):
            return Response(406, "client must accept json and event streams")
        messages = parse_messages(request.body)
        if all(is_notification(m) for m in messages):
            for message in messages:
                self.sessions.deliver(message, request.auth)
            return Response(202)
        stream = self.sessions.open_stream(messages)
        return Response(200, stream, headers={"content-type": "text/event-stream"})

    def handle_delete(self, request):
        self.sessions.close(request.headers["session-id"])
        return Response(200)
"""

WRAPPER = """\
from srv.web import WebTransport


class NodeTransport:
    def __init__(self, sessions):
        self.inner = WebTransport(sessions)

    def start(self):
        return self.inner.start()

    def close(self):
        return self.inner.close()

    def handle(self, incoming, outgoing):
        request = to_request(incoming)
        response = self.inner.handle_post(request)
        write_response(outgoing, response)
"""


def test_file_rewritten_with_another_files_content_is_traced_there(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """`srv/http.py`'s wrapper moves out and the web transport's file takes its path (git
    needs `-B` to see the rename, which `-L` does not use): the edit made in `srv/web.py`
    before is the item's, the rewrite that carried it over verbatim is not."""
    base = upstream.commit("web transport (#1)", {"srv/http.py": WRAPPER, "srv/web.py": WEB})
    project.note("n", f"{base} srv/web.py:8-12")
    edited = upstream.commit(
        "json content type on 202 (#2)",
        {"srv/web.py": WEB.replace("Response(202)", 'Response(202, headers={"content-type": 1})')},
    )
    upstream.commit("unrelated (#3)", {"README.md": "docs\n"})
    upstream.commit(
        "decouple the server (#4)",
        {"srv/http.py": upstream.read("srv/web.py"), "srv/web.py": None,
         "node/http.py": WRAPPER.replace("srv.web", "srv.http")},
    )  # fmt: skip

    rows = _compare(project, upstream, capsys, base,
                    {"n:srv/web.py:8-12": ("range", "handle_post")})  # fmt: skip

    result = check_results(project, capsys)["n:srv/web.py:8-12"]
    assert [h["commit"] for h in result["history"]] == [edited]
    assert result["current"]["path"] == "srv/http.py"
    row = rows["n:srv/web.py:8-12"]
    assert row.history and row.introduced, row.classes


MOVED = """\
def first_helper(values):
    return [value * 2 for value in values]


def second_helper(values):
    return [value + 1 for value in values]


def resource_metadata_url(challenges):
    for challenge in challenges:
        if url := challenge.params.get("resource_metadata_location"):
            return url
    return ""
"""


def test_missing_after_a_move_inside_the_file_is_explained(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The function moves to the top of its file (its signature edited), then is deleted:
    blame without `-M` sees the cited lines end at the move."""
    base = upstream.commit("helpers (#1)", {"oauth/meta.py": MOVED})
    project.note("n", f"{base} oauth/meta.py:10-12")
    top, rest = MOVED.split("\n\n\n")[2], "\n\n\n".join(MOVED.split("\n\n\n")[:2])
    moved = top.replace("(challenges)", "(challenges, default=None)") + "\n\n\n" + rest
    upstream.commit("move it first (#2)", {"oauth/meta.py": moved})
    upstream.commit("unrelated (#3)", {"README.md": "docs\n"})
    deleted = upstream.commit("drop it (#4)", {"oauth/meta.py": rest})

    rows = _compare(project, upstream, capsys, base,
                    {"n:oauth/meta.py:10-12": ("range", "resource_metadata_url")})  # fmt: skip

    result = check_results(project, capsys)["n:oauth/meta.py:10-12"]
    assert result["verdict"] == "missing"
    assert result["introduced_by"]["commit"] == deleted
    row = rows["n:oauth/meta.py:10-12"]
    assert row.explained, row.classes
    assert any("move inside the file" in c for c in row.classes)


TOOLS = """\
def list_tools(client):
    return client.list_tools()


def convert_parameters(tool, params) -> dict[str, object]:
    result: dict[str, object] = {}
    properties = tool.input_schema.properties or {}
    for key, value in params.items():
        schema = properties.get(key)
        result[key] = convert_value(value, schema) if schema else value
    return result
"""


JSON_UTILS = '''\
"""JSON values for the v2 clients: parse, dump, validate."""

import json


def parse_json_value(text: str) -> JsonValue:
    return json.loads(text, parse_float=decimal_or_float, parse_constant=reject_constant)


def dump_json_value(value: JsonValue, *, indent: int | None = 2) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False, sort_keys=True)


'''


def test_merges_get_their_patch_and_edits_before_the_file_was_made_count(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every commit is a merge (`git log -L` prints none of their patches); the last one
    moves the function to a new file, editing it: git's trace begins there, and is
    carried on in the file the edited lines came from, to the edit before it."""
    base = upstream.commit("tools (#1)", {"cli/tools.py": TOOLS})
    project.note("n", f"{base} cli/tools.py:6-7")
    upstream.branch_off("json-values")
    typed = TOOLS.replace("dict[str, object]", "dict[str, JsonValue]")
    upstream.commit("json values", {"cli/tools.py": typed})
    upstream.checkout("main")
    first = upstream.merge("json-values", "Merge pull request #2 from json-values")
    upstream.branch_off("v2")
    moved = typed.replace("tool.input_schema.properties", "tool.input_schema?.properties")
    upstream.commit(
        "v2 tree",
        {"cli/tools.py": None, "core/json_utils.py": JSON_UTILS + moved.split("\n\n\n")[1]},
    )
    upstream.checkout("main")
    second = upstream.merge("v2", "Merge pull request #3 from v2")

    at = (
        upstream.read("core/json_utils.py")
        .split("\n")
        .index("    result: dict[str, JsonValue] = {}")
    )
    span = gittrace.log_l(
        Path(upstream.path), base, "main", "core/json_utils.py", f"{at + 1},{at + 2}"
    )
    assert list(span) == [second]
    assert f"@@ -0,0 +{at + 1},2 @@" in span[second]
    assert "+    properties = tool.input_schema?.properties" in span[second]

    rows = _compare(project, upstream, capsys, base,
                    {"n:cli/tools.py:6-7": ("range", "convert_parameters")})  # fmt: skip
    result = check_results(project, capsys)["n:cli/tools.py:6-7"]
    assert [h["commit"] for h in result["history"]] == [first, second]
    row = rows["n:cli/tools.py:6-7"]
    assert row.explained, row.classes
    # git's trace begins at the second merge, which moved the lines and edited them: they
    # are traced on in the file they came from (`_origin`, edited), to the first merge.
    assert row.history and row.introduced, row.classes


def test_code_a_revert_deleted_and_its_revert_put_back_is_explained(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """fastmcp's converters.py:181: a revert deleted the cited line, the revert of the
    revert put it back, a later commit deleted it for good. `git blame --reverse` ends
    at the first deletion; watch's history has the item found again after it."""
    base = upstream.commit("token handler (#1)", {"srv/token.py": HANDLER})
    project.note("n", f"{base} srv/token.py:9-11")
    block = HANDLER[HANDLER.index("    if grant == \"authorization_code\"") :
                    HANDLER.index("    if grant == \"refresh_token\"")]  # fmt: skip
    revert = upstream.commit('Revert "authorization codes (#2)"',
                             {"srv/token.py": HANDLER.replace(block, "")})  # fmt: skip
    upstream.commit('Revert "Revert "authorization codes (#2)""', {"srv/token.py": HANDLER})
    gone = upstream.commit("codes move to the grant registry (#4)",
                           {"srv/token.py": HANDLER.replace(block, "")})  # fmt: skip

    rows = _compare(project, upstream, capsys, base,
                    {"n:srv/token.py:9-11": ("range", "issue_token")})  # fmt: skip

    row = rows["n:srv/token.py:9-11"]
    result = check_results(project, capsys)["n:srv/token.py:9-11"]
    assert result["introduced_by"]["commit"] == gone
    assert row.explained, row.classes
    assert any(revert[:10] in c and "came back" in c for c in row.classes)


def test_a_cited_line_a_file_split_left_out_is_an_edit_git_cannot_see(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """fastmcp's `OpenAPITool.__repr__` (server/openapi/components.py:59-60) moved to a
    new providers/openapi/components.py, its docstring left out; the old file stayed, a
    stub. git's trace of the HEAD lines begins at that commit and never sees the line,
    though the stub's lines (its `from __future__` import) are in the new file too."""
    tool = (
        "class OpenAPITool(Tool):\n"
        "    def __init__(self, route):\n        self._route = route\n\n"
        "    def __repr__(self) -> str:\n"
        '        """Custom representation to prevent recursion errors when printing."""\n'
        '        return f"OpenAPITool(name={self.name!r}, path={self._route.path})"\n'
    )
    base = upstream.commit("openapi components (#1)", {"srv/openapi/components.py": tool})
    project.note("n", f"{base} srv/openapi/components.py:6-7")
    future = "from __future__ import annotations\n\nimport warnings\n\n"
    stub = future + "warnings.warn('moved to srv.providers.openapi', DeprecationWarning)\n"
    split = upstream.commit(
        "move OpenAPI to providers (#2)",
        {"srv/openapi/components.py": stub,
         "srv/providers/openapi/components.py": future + tool.replace(
             '        """Custom representation to prevent recursion errors when printing."""\n', ""
         )},
    )  # fmt: skip

    rows = _compare(project, upstream, capsys, base,
                    {"n:srv/openapi/components.py:6-7": ("range", "__repr__")})  # fmt: skip

    row = rows["n:srv/openapi/components.py:6-7"]
    assert row.explained, row.classes
    assert any(split[:10] in c and "edits a cited line" in c for c in row.classes)


def test_commits_git_lists_through_a_widened_range_below_the_cited_lines_are_explained(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """python-sdk's `stdio_server` (stdio.py:38-49): a commit joined its docstring's quotes
    to the first line (blame sees a cited line gone), others edited the reader below the
    cited lines, and a last one wrapped the body in a `try`, replacing many lines by few:
    git's range widened there and lists the reader's edits. Carried forward through each
    diff, the cited lines are past them unedited."""
    server = (
        "async def serve(stdin=None, stdout=None):\n"
        '    """\n    Serve over stdio.\n    """\n'
        '    if not stdin:\n        stdin = wrap(sys.stdin.buffer, encoding="utf-8")\n'
        '    if not stdout:\n        stdout = wrap(sys.stdout.buffer, encoding="utf-8")\n\n'
        "    async def reader():\n        async for line in stdin:\n"
        "            message = parse_message(line)\n            await queue.send(message)\n\n"
        "    async def writer():\n        async for message in queue:\n"
        "            await stdout.write(message.dump_json())\n\n"
        "    async with create_task_group() as tg:\n"
        "        tg.start_soon(reader)\n        tg.start_soon(writer)\n        yield\n"
    )
    path = "srv/stdio.py"
    base = upstream.commit("stdio (#1)", {path: server})
    project.note("n", f"{base} {path}:2-8")
    joined = server.replace(
        '    """\n    Serve over stdio.\n    """\n', '    """Serve over stdio."""\n'
    )
    upstream.commit("docstrings start on the first line (#2)", {path: joined})
    reader = joined.replace("parse_message(line)", "parse_message(line, by_name=False)")
    upstream.commit("parse by alias (#3)", {path: reader})
    writer = reader.replace("message.dump_json()", "message.dump_json(exclude_unset=True)")
    upstream.commit("omit unset fields (#4)", {path: writer})
    body = writer[writer.index("    if not stdin:") :]
    kept = body[: body.index("\n\n")]
    wrapped = writer.replace(
        body,
        "    try:\n"
        + "".join(f"    {line}\n" for line in kept.splitlines())
        + "        yield await run(stdin, stdout)\n    finally:\n        release()\n",
    )
    upstream.commit("isolate the std handles (#5)", {path: wrapped})

    rows = _compare(project, upstream, capsys, base, {f"n:{path}:2-8": ("range", "serve")})

    row = rows[f"n:{path}:2-8"]
    assert row.explained, row.classes
    assert any("range widened" in c for c in row.classes), row.classes
