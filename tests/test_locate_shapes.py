"""Citations of what is not a function (`bench.differential --shapes`): an import line,
a module's constant. Built here in the shape of the real code where each wrong answer
was seen."""

from __future__ import annotations

import hashlib

import pytest

from tests.conftest import Project
from tests.support import check_results as _results
from watcher.gitbuild import Upstream
from watcher.locate import anchors
from watcher.parse import syntax

PY = "src/mcp/shared/errors.py"
ERRORS = """\
from __future__ import annotations

from mcp.types import URL_REQUIRED, ElicitParams, ErrorData


class McpError(Exception):
    \"\"\"An error a peer sent back.\"\"\"

    error: ErrorData

    def __init__(self, error: ErrorData):
        super().__init__(error.message)
        self.error = error


class ToolError(McpError):
    \"\"\"A tool failed.\"\"\"


class UrlRequiredError(McpError):
    \"\"\"The server wants the user to open a URL.\"\"\"

    def __init__(self, params: ElicitParams):
        super().__init__(ErrorData(code=URL_REQUIRED, message="open it"))
        self.params = params
"""


def test_an_import_above_a_renamed_class_is_carried_past_the_class(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """python-sdk's `from mcp.types import ...` at the top of `exceptions.py`: the
    definitions its scope is bounded by below were `McpError` and two of its own members,
    all gone when a commit renamed the class `MCPError`; with no neighbour left, the
    import was looked for only by likeness, and was `missing` when a later commit made
    the module `mcp_types`. The neighbours now lie apart (the classes after it), and the
    import is `changed` by both commits."""
    base = upstream.commit("errors", {PY: ERRORS})
    project.note("n", f"{base} {PY}:3-3")
    renamed = upstream.commit(
        "rename McpError to MCPError (#1956)", {PY: ERRORS.replace("McpError", "MCPError")}
    )
    split = upstream.commit(
        "split types into mcp_types (#2973)",
        {PY: upstream.read(PY).replace("from mcp.types import", "from mcp_types import")},
    )

    result = _results(project, capsys)[f"n:{PY}:3-3"]

    assert result["verdict"] == "changed", result["message"]
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (3, 3)
    assert [h["commit"] for h in result["history"]] == [split]
    assert renamed not in [h["commit"] for h in result["history"]]
    assert result["introduced_by"]["commit"] == split


def test_names_added_at_the_end_of_a_cited_import_change_it(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """python-sdk's `from mcp.types import A, B, C` became `... C, JSONRPCError`: the
    new tokens come after the last cited one, and a Python statement has no closing
    token for them to come before, so the alignment left them outside and the import
    stayed `fresh` through that commit. What follows the last cited token inside the
    statement it closed, on its line, is the item's: `changed`. A constant's value
    extended (`X = 1` to `X = 1 + 2`) is the same."""
    constants = "TIMEOUT = 30\nRETRIES = 3\n"
    base = upstream.commit(
        "errors", {PY: ERRORS.replace("\n\nclass Mcp", f"\n{constants}\n\nclass Mcp", 1)}
    )
    project.note("n", f"{base} {PY}:3-3", f"{base} {PY}:5-5")
    grew = upstream.commit(
        "flatten parameters (#1956)",
        {
            PY: upstream.read(PY)
            .replace("ErrorData\n", "ErrorData, JSONRPCError\n", 1)
            .replace("TIMEOUT = 30\n", "TIMEOUT = 30 * SECONDS\n")
        },
    )

    results = _results(project, capsys)
    for item in (f"n:{PY}:3-3", f"n:{PY}:5-5"):
        result = results[item]
        assert result["verdict"] == "changed", (item, result["message"])
        line = int(item.rsplit(":", 1)[1].split("-")[0])
        assert (result["current"]["start_line"], result["current"]["end_line"]) == (line, line)
        assert [h["commit"] for h in result["history"]] == [grew]
        assert result["introduced_by"]["commit"] == grew


MANAGER = "src/mcp/server/app/prompts/prompt_manager.py"
PROMPTS = """\
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp.server.app.prompts.base import Prompt
from mcp.server.app.utilities.logging import get_logger
from mcp.shared.context import LifespanContextT, RequestT

if TYPE_CHECKING:
    from mcp.server.app.server import Context
    from mcp.server.session import ServerSessionT

logger = get_logger(__name__)


class PromptManager:
    \"\"\"Keeps the prompts a server offers.\"\"\"

    def __init__(self) -> None:
        self._prompts: dict[str, Prompt] = {}

    def get(self, name: str, context: Context[ServerSessionT, Any] | None = None) -> Prompt:
        return self._prompts[name]
"""


def test_an_import_deleted_beside_an_edited_one_is_missing(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """python-sdk's `from mcp.server.session import ServerSessionT` under `if
    TYPE_CHECKING:`, deleted while an import was added above its neighbour, which a
    rename had edited (`app` to `appserver`): the tokens of the changed lines aligned
    whole gave the deleted line's `from mcp . server .` and `import` to the new import,
    and the neighbour's to the renamed neighbour, so the deleted import was `changed`.
    The lines are paired with their successors first: the neighbour with its renamed
    self, and the deleted line with nothing: `missing`, by the commit that deleted it."""
    base = upstream.commit("prompt manager", {MANAGER: PROMPTS})
    project.note("n", f"{base} {MANAGER}:11-11")
    renamed = upstream.commit(
        "rename app to appserver (#1951)",
        {MANAGER: PROMPTS.replace("mcp.server.app.", "mcp.server.appserver.")},
    )
    source = upstream.read(MANAGER)
    source = source.replace("from mcp.shared.context import LifespanContextT, RequestT\n", "")
    source = (
        source.replace("    from mcp.server.session import ServerSessionT\n", "")
        .replace(
            "if TYPE_CHECKING:\n",
            "if TYPE_CHECKING:\n    from mcp.server.context import LifespanContextT, RequestT\n",
        )
        .replace("Context[ServerSessionT, Any]", "Context[Any]")
    )
    split = upstream.commit("split RequestContext (#1987)", {MANAGER: source})

    result = _results(project, capsys)[f"n:{MANAGER}:11-11"]

    assert result["verdict"] == "missing", (result["message"], result.get("current"))
    assert result["introduced_by"]["commit"] == split
    assert renamed not in [h["commit"] for h in result["history"]]


TS = "src/client/runner.ts"
RUNNER = """\
import { Client } from '../client/index.js';
import { Transport } from '../common/transport.js';
import { RequestOptions } from '../common/protocol.js';
import { CallToolResultSchema } from '../types.js';

export class Runner {
  constructor(private client: Client, private transport: Transport) {}

  async run(name: string, options?: RequestOptions) {
    return this.client.callTool({ name }, CallToolResultSchema, options);
  }
}
"""


def test_a_typescript_import_deleted_beside_edited_ones_is_missing(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same in TypeScript: `import { RequestOptions } from '../common/protocol.js';`
    deleted while the import above it moved to a package (`'@mcp/core/...'`) and one
    was added above that (`import { Logger } from '../common/logger.js';`): it shares
    `import { } from ;` with both; it pairs with no line, and is `missing`, not
    carried into the new import, nor into a neighbour that has its own predecessor."""
    base = upstream.commit("runner", {TS: RUNNER})
    project.note("n", f"{base} {TS}:3-3", f"{base} {TS}:2-2")
    moved = upstream.commit(
        "move transport to @mcp/core (#1200)",
        {
            TS: RUNNER.replace("import { RequestOptions } from '../common/protocol.js';\n", "")
            .replace(
                "import { Transport } from '../common/transport.js';\n",
                "import { Logger } from '../common/logger.js';\n"
                "import { Transport } from '@mcp/core/transport.js';\n",
            )
            .replace("options?: RequestOptions", "options?: { timeout?: number }")
        },
    )

    results = _results(project, capsys)
    deleted, kept = results[f"n:{TS}:3-3"], results[f"n:{TS}:2-2"]

    assert deleted["verdict"] == "missing", (deleted["message"], deleted.get("current"))
    assert deleted["introduced_by"]["commit"] == moved
    assert kept["verdict"] == "changed", kept["message"]
    assert (kept["current"]["start_line"], kept["current"]["end_line"]) == (3, 3)


LOWLEVEL = "src/mcp/server/lowlevel/app.py"
IMPORTS = """\
from typing import Any

import mcp.types as types
from mcp.server.experimental.request_context import Experimental
from mcp.server.lowlevel.experimental import ExperimentalHandlers
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.models import InitializationOptions


class App:
    def __init__(self, name: str) -> None:
        self.name = name
        self.handlers: dict[str, Any] = {}
"""


@pytest.mark.xfail(
    strict=True,
    reason="a deleted import pairs with a new one it shares only `from mcp . server .` with",
)
def test_an_import_deleted_among_rewritten_imports_is_missing(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """python-sdk's `lowlevel/server.py` (n65): two cited imports deleted when the
    imports around them had all been rewritten or replaced by new ones (`from mcp
    import types`, the auth imports). No line of the block is the cited lines'
    successor, but a new import is as alike as two imports of the package are (half
    their tokens: `from mcp . server .` and `import`), so the lines pair with new
    imports and the item is `changed`. Git has it deleted: `missing`."""
    base = upstream.commit("lowlevel app", {LOWLEVEL: IMPORTS})
    project.note("n", f"{base} {LOWLEVEL}:4-5")
    upstream.commit(
        "auth for the low-level server (#1500)",
        {
            LOWLEVEL: IMPORTS.replace(
                "import mcp.types as types\n",
                "from mcp import types\n"
                "from mcp.server.auth.middleware.auth_context import AuthContextMiddleware\n"
                "from mcp.server.auth.settings import AuthSettings\n"
                "from mcp.server.context import ServerRequestContext\n",
            ).replace("from mcp.server.lowlevel.helper_types import ReadResourceContents\n", "")
        },
    )
    source = upstream.read(LOWLEVEL)
    for line in (
        "from mcp.server.experimental.request_context import Experimental\n",
        "from mcp.server.lowlevel.experimental import ExperimentalHandlers\n",
    ):
        source = source.replace(line, "")
    removed = upstream.commit("remove tasks (#2714)", {LOWLEVEL: source})

    result = _results(project, capsys)[f"n:{LOWLEVEL}:4-5"]

    assert result["verdict"] == "missing", (result["message"], result.get("current"))
    assert result["introduced_by"]["commit"] == removed


RUN = "packages/agents-core/src/run.ts"
RUN_IMPORTS = """\
import { NoopTrace, type Trace } from './tracing/traces';
import { NOOP_TRACE_OR_SPAN_ID } from './tracing/utils';
import type { ReasoningItemIdPolicy } from './runner/items';
import type {
  AgentArtifacts,
  CallModelInputFilter,
  PreparedModelCall,
} from './runner/types';
import { tryHandleRunError } from './runner/errorHandlers';
import type { RunErrorHandlers } from './runner/errorHandlers';
import {
  finalizeSandboxRuntime,
  isSandboxRuntimeAgent,
  prepareSandboxInterruptedTurnResume,
} from './runner/sandbox';

export function run(handlers: RunErrorHandlers): void {
  tryHandleRunError(handlers);
}
"""
ITEMS = (
    "import {\n  assertValidCompactionItems,\n  CompactionItemValidationError,\n"
    "  type ReasoningItemIdPolicy,\n} from './runner/items';\n"
)
HANDLERS = "import {\n  attachRunStateToError,\n<names>} from './runner/errorHandlers';\n"


def test_a_name_added_to_an_import_the_cited_ones_became_is_a_change(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """openai-agents-js's `run.ts`, three imports cited: the first made a multi-line
    import of three names; the third given a second name, then its own replaced; then a
    commit adds a name to it, inside the HEAD span. `git log -L` of the HEAD span lists
    that commit; carried commit by commit it is a change of the item too. Then the
    uncited import below is made multi-line: one jump from the baseline now places the
    item on the first two imports alone, and the walk back from HEAD followed the third's
    lines through the commit that added the name (on main before: missing from the
    history, though the last step carried the item onto the third import)."""
    base = upstream.commit("run", {RUN: RUN_IMPORTS})
    project.note("n", f"{base} {RUN}:3-9")
    single = "import type { ReasoningItemIdPolicy } from './runner/items';\n"
    plain = "import { tryHandleRunError } from './runner/errorHandlers';\n"
    merged = RUN_IMPORTS.replace(single, ITEMS)
    changes = [upstream.commit("compaction items (#1567)", {RUN: merged})]
    for number, names in [
        (1578, "  tryHandleRunError,\n"),
        (1584, "  prepareRunErrorFinalOutput,\n"),
        (1630, "  invalidateAcceptedResponseReplayEvidence,\n  prepareRunErrorFinalOutput,\n"),
    ]:
        imports = merged.replace(plain, HANDLERS.replace("<names>", names))
        changes.append(upstream.commit(f"run errors (#{number})", {RUN: imports}))
    handlers = "import type { RunErrorHandlers } from './runner/errorHandlers';\n"
    wrapped = "import type {\n  PreparedRunErrorFinalOutput,\n  RunErrorHandlers,\n} from './runner/errorHandlers';\n"
    upstream.commit("deferred error items (#1650)", {RUN: imports.replace(handlers, wrapped)})

    result = _results(project, capsys)[f"n:{RUN}:3-9"]

    assert result["verdict"] == "changed", result["message"]
    assert [h["commit"] for h in result["history"]] == changes


@pytest.mark.parametrize(("cited", "found"), [("1-3", (1, 7)), ("1-1", (1, 5)), ("2-3", (6, 7))])
def test_imports_whose_first_was_wrapped_are_found_from_its_start(
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    cited: str,
    found: tuple[int, int],
) -> None:
    """openai-agents-js's `run.ts`: the first of the cited imports is wrapped over five
    lines, a name added. Aligned line by line, the cited line went to the wrapped one's
    `} from './tracing/traces';`, and the HEAD span started there, inside the statement
    (on main before: 5-7 and 5-5). The item is the statements whole, as `git log -L` of
    their lines shows them; imports below the wrapped one keep their own lines."""
    base = upstream.commit("run", {RUN: RUN_IMPORTS})
    project.note("n", f"{base} {RUN}:{cited}")
    single = "import { NoopTrace, type Trace } from './tracing/traces';\n"
    wrapped = "import {\n  NoopTrace,\n  type Span,\n  type Trace,\n} from './tracing/traces';\n"
    wrap = upstream.commit("spans (#1701)", {RUN: RUN_IMPORTS.replace(single, wrapped)})

    result = _results(project, capsys)[f"n:{RUN}:{cited}"]

    current = result["current"]
    assert (current["start_line"], current["end_line"]) == found, current
    if cited == "2-3":
        assert result["verdict"] == "moved", result["message"]
    else:
        assert result["verdict"] == "changed", result["message"]
        assert [h["commit"] for h in result["history"]] == [wrap]


SESSIONS = "langchain_mcp_adapters/sessions.py"
SESSIONS_BASE = """\
from __future__ import annotations

import os
from contextlib import asynccontextmanager
from typing import Any, Literal

from mcp import ClientSession, StdioServerParameters
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

EncodingErrorHandler = Literal["strict", "ignore", "replace"]
DEFAULT_ENCODING = "utf-8"
"""
SESSIONS_BELOW = """\
from typing_extensions import NotRequired, TypedDict

logger = logging.getLogger(__name__)

_BRACED = re.compile(r"\\$\\{([^}]+)\\}")


def _expand_env_vars(value: str) -> str:
    \"\"\"Expand `${VAR}` references in *value* from the environment.\"\"\"
    return _BRACED.sub(lambda m: os.environ.get(m.group(1), m.group(0)), value)

"""


def test_an_import_edited_with_code_written_below_it_ends_at_its_own_line(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """langchain-mcp-adapters' `sessions.py`, its stdio and streamable HTTP imports cited:
    one commit renamed the second import's name and wrote an import, a logger and a
    function below it. Its lines aligned, the edited import pairs with its successor, and
    the new lines below went with the pair: its old name, replaced, stood for all of them,
    and the HEAD span ran to the end of the new function (on main before: 9-20). `git log
    -L` of the two import lines lists that commit alone."""
    base = upstream.commit("sessions", {SESSIONS: SESSIONS_BASE})
    project.note("n", f"{base} {SESSIONS}:9-10")
    renamed = SESSIONS_BASE.replace(
        "import streamablehttp_client\n",
        "import create_mcp_http_client, streamable_http_client\n" + SESSIONS_BELOW,
    )
    edit = upstream.commit(
        "use the non-deprecated streamable HTTP client (#541)", {SESSIONS: renamed}
    )

    result = _results(project, capsys)[f"n:{SESSIONS}:9-10"]

    assert result["verdict"] == "changed", result["message"]
    current = result["current"]
    assert (current["start_line"], current["end_line"]) == (9, 10), current
    assert [h["commit"] for h in result["history"]] == [edit]


HTTP = "src/mcp/server/streamable_http.py"
HTTP_TYPES = """\
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)
"""
HTTP_BASE = f"""\
import logging
from typing import Any

from anyio.streams.memory import MemoryObjectReceiveStream
from pydantic import ValidationError
from starlette.types import Receive, Scope, Send

from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.message import ServerMessageMetadata, SessionMessage
{HTTP_TYPES}
logger = logging.getLogger(__name__)
"""


def test_imports_moved_by_a_reordering_keep_the_lines_written_among_them(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """python-sdk's `streamable_http.py`, three imports cited: one commit wrote two
    imports between the last two; another moved the `mcp.types` block below them to the
    top (as `mcp_types`), so that the diff of the imports keeps that block and not the
    cited lines, and they are found by likeness; a third added a name to the last cited
    import. A region as long as the citation stopped short of that import (on main
    before: 18-21 at HEAD, and the third commit missing from the history)."""
    base = upstream.commit("http", {HTTP: HTTP_BASE})
    project.note("n", f"{base} {HTTP}:6-9")
    message = "from mcp.shared.message import ServerMessageMetadata, SessionMessage\n"
    streams = (
        "from mcp.shared._context_streams import ContextReceiveStream, ContextSendStream\n"
        "from mcp.shared._stream_protocols import ReadStream, WriteStream\n"
    )
    inserted = HTTP_BASE.replace(message, streams + message)
    among = upstream.commit("propagate contextvars (#2298)", {HTTP: inserted})
    split = inserted.replace(HTTP_TYPES, "").replace(
        "from anyio", HTTP_TYPES.replace("mcp.types", "mcp_types") + "from anyio"
    )
    upstream.commit("split types into mcp-types (#2973)", {HTTP: split})
    named = split.replace(
        "import ServerMessageMetadata", "import CloseSSEStreamCallback, ServerMessageMetadata"
    )
    last = upstream.commit("fail fast in JSON-response mode (#3195)", {HTTP: named})

    result = _results(project, capsys)[f"n:{HTTP}:6-9"]

    assert result["verdict"] == "changed", result["message"]
    current = result["current"]
    assert (current["start_line"], current["end_line"]) == (18, 23), current
    assert [h["commit"] for h in result["history"]] == [among, last]


ROOT_GO = "pkg/kubernetes-mcp-server/cmd/root.go"
ROOT_IMPORTS = """\
package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/containers/kubernetes-mcp-server/pkg/config"
)

func NewMCPServer(streams genericiooptions.IOStreams) *cobra.Command {
	klog.V(1).Info("starting", fmt.Sprint(context.Background()))
	return &cobra.Command{Use: "kubernetes-mcp-server"}
}
"""


def test_imports_removed_one_commit_at_a_time_are_judged_where_each_went(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """kubernetes-mcp-server's `root.go`, three Go imports cited (strings: no word of
    them votes for a line): one commit removed the third, a later one the second, with a
    commit between that edited only the function below. Missing at HEAD by one jump
    from the baseline, the walk back told the version before the second removal missing
    too from its bytes alone, as it looked only in the windows a verbatim or a like
    region is read in, where a citation no definition held is carried through its scope
    (on main before: `missing` from the first removal, which left two of the three).
    Carried a commit at a time, each removal kept half of what was left: the import
    left is the item."""
    base = upstream.commit("root", {ROOT_GO: ROOT_IMPORTS})
    project.note("n", f"{base} {ROOT_GO}:9-11")
    third = '\t"k8s.io/klog/v2/textlogger"\n'
    first = upstream.commit("logging to a file (#1083)", {ROOT_GO: ROOT_IMPORTS.replace(third, "")})
    body = upstream.read(ROOT_GO).replace('"starting"', '"serving"')
    upstream.commit("contextual logging (#1202)", {ROOT_GO: body})
    second = '\t"k8s.io/klog/v2"\n'
    later = body.replace(second, "").replace('klog.V(1).Info("serving", ', "_ = (")
    last = upstream.commit("logs exported with otel (#1260)", {ROOT_GO: later})

    result = _results(project, capsys)[f"n:{ROOT_GO}:9-11"]

    assert [h["commit"] for h in result["history"]] == [first, last], result["history"]
    assert result["verdict"] == "changed", result["message"]
    current = result["current"]
    assert (current["start_line"], current["end_line"]) == (9, 9), current


TOOL_GO = "internal/ui/chat/tool_result_content.go"
HUMANIZED = """\
package chat

func humanizedToolName(name string) string {
	name = strings.ReplaceAll(name, "_", " ")
	name = strings.ReplaceAll(name, "-", " ")
	return stringext.Capitalize(name)
}
"""


@pytest.mark.parametrize("edit", [None, "return stringext.Title(name)"])
def test_statements_that_start_as_the_one_above_them_keep_their_own_start(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str], edit: str | None
) -> None:
    """crush's `humanizedToolName`, its last two statements cited: the Go body's list of
    statements starts a line above them, with a statement that begins as the cited one
    does (`name = strings`), and ends with them. The first cited token starts a statement
    of its own: the span is not taken back to that list's start (while it was, for a
    while, the unchanged lines read `changed` at 4-6)."""
    base = upstream.commit("chat", {TOOL_GO: HUMANIZED})
    project.note("n", f"{base} {TOOL_GO}:5-6")
    text = (
        HUMANIZED if edit is None else HUMANIZED.replace("return stringext.Capitalize(name)", edit)
    )
    upstream.commit("titles (#1402)", {TOOL_GO: text + "\n// Widths of a tool's result.\n"})

    result = _results(project, capsys)[f"n:{TOOL_GO}:5-6"]

    assert result["verdict"] == ("fresh" if edit is None else "changed"), result["message"]
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (5, 6)


RENDER_PY = "src/agent/commands/renderers/log_markdown.py"
RENDER = '''\
"""Markdown for a session's log."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.commands.log_summaries import LogOverview


def render_overview(overview: "LogOverview", *, title: str) -> str:
    lines = [f"# {title}", ""]
    for entry in overview.entries:
        lines.append(f"- {entry.role}: {entry.text}")
    return "\\n".join(lines)
'''


def test_an_import_wrapped_with_names_added_ends_where_its_statement_ends(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """fast-agent's `history_markdown.py`: a one-name import under `if TYPE_CHECKING:`
    took a second name and three helpers below it, then was wrapped over six lines with
    two more names, while imports were written above the block and the helpers replaced.
    Carried from the version between, whose neighbours below (the helpers) are gone, it
    was found by likeness (no definition holds it, no verbatim match is left) in a region as
    long as the citation, which stopped at the name it cited (14-17 of the statement's
    14-19); it ends where the statement ends, as a carried citation's does."""
    base = upstream.commit("log renderer", {RENDER_PY: RENDER})
    project.note("n", f"{base} {RENDER_PY}:8-8")
    cited = "    from agent.commands.log_summaries import LogOverview\n"
    helper = "".join(
        f"\n\ndef _{name}(value: str) -> str:\n    return value.{call}\n"
        for name, call in (("cell", 'replace("|", "/")'), ("pad", "ljust(8)"), ("trim", "strip()"))
    )
    second = RENDER.replace(cited, cited.replace("LogOverview", "LogOverview, LogTurns") + helper)
    added = upstream.commit("turn reports (#716)", {RENDER_PY: second})
    imports = "".join(f"from agent.util.{m} import {m}_text\n" for m in ("cells", "time", "rate"))
    wrapped = (
        "    from agent.commands.log_summaries import (\n        LogEntry,\n"
        "        LogOverview,\n        LogTurns,\n        LogTurnRow,\n    )\n"
    )
    row = '\n\ndef _row(cells: list[str]) -> str:\n    return "| " + " | ".join(cells) + " |"\n'
    third = (
        second.replace("if TYPE_CHECKING:\n", imports + "\nif TYPE_CHECKING:\n")
        .replace(cited.replace("LogOverview", "LogOverview, LogTurns"), wrapped)
        .replace(helper, row)
    )
    merged = upstream.commit("Merge branch 'main'", {RENDER_PY: third})

    result = _results(project, capsys)[f"n:{RENDER_PY}:8-8"]

    assert result["verdict"] == "changed", result["message"]
    current = result["current"]
    assert (current["start_line"], current["end_line"]) == (12, 17), current
    assert [h["commit"] for h in result["history"]] == [added, merged]


CLIENT_TS = "packages/agents/src/mcp/client.ts"
CLIENT_IMPORTS = """\
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { type ToolSet, jsonSchema } from "ai";
import { nanoid } from "nanoid";

export class ClientManager {
  private connections: Record<string, Client> = {};

  connect(url: string, options: RequestOptions): string {
    const id = nanoid(8);
    this.connections[id] = makeClient(url, options);
    return id;
  }

  tools(): ToolSet {
    return toToolSet(this.connections, jsonSchema);
  }
}
"""
CLIENT_PY = "src/agents/mcp/client.py"
CLIENT_PY_IMPORTS = """\
from mcp.client.session import ClientSession
from mcp.shared.options import RequestOptions
from ai import ToolSet, json_schema
from secrets import token_hex


class ClientManager:
    def connect(self, url: str, options: RequestOptions) -> str:
        key = token_hex(8)
        self.sessions[key] = ClientSession(url, options)
        return key

    def tools(self) -> ToolSet:
        return to_tool_set(self.sessions, json_schema)
"""


@pytest.mark.parametrize(
    ("path", "text", "retries", "narrowed"),
    [
        (CLIENT_TS, CLIENT_IMPORTS, 'import { type RetryOptions, tryN } from "../retries";\n',
         'import type { ToolSet } from "ai";\n'),
        (CLIENT_PY, CLIENT_PY_IMPORTS, "from agents.retries import RetryOptions, try_n\n",
         "from ai import ToolSet\n"),
    ],
)  # fmt: skip
def test_an_import_removed_is_not_the_import_of_its_shape_written_above_it(
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    path: str,
    text: str,
    retries: str,
    narrowed: str,
) -> None:
    """cloudflare/agents' `client.ts`: `import { type ToolSet, jsonSchema } from "ai"`
    cited; one commit wrote `import { type RetryOptions, tryN } from "../retries"` above
    it, another narrowed it to `import type { ToolSet } from "ai"`, a third removed it.
    Carried through its scope, the removed import was the retries one, which keeps its
    keywords and punctuation (half its tokens, none of its names): `changed` there; and
    from the narrowed one, found by likeness, it was the `import type { Client }` line.
    A region that holds none of the cited names is not the citation: `missing` from the
    removal. Python's imports in the same steps read `missing` already: kept here."""
    cited = text.splitlines(keepends=True)[2]
    base = upstream.commit("client", {path: text})
    project.note("n", f"{base} {path}:3-3")
    upstream.commit("retry utilities (#874)", {path: text.replace(cited, retries + cited)})
    narrowing = upstream.commit(
        "startup time (#544)", {path: upstream.read(path).replace(cited, narrowed)}
    )
    removal = upstream.commit(
        "make the AI SDK optional (#1796)", {path: upstream.read(path).replace(narrowed, "")}
    )

    result = _results(project, capsys)[f"n:{path}:3-3"]

    assert result["verdict"] == "missing", (result["current"], result["message"])
    assert [h["commit"] for h in result["history"]] == [narrowing, removal]
    assert result["introduced_by"]["commit"] == removal


@pytest.mark.parametrize(
    ("path", "language", "source", "names"),
    [
        ("src/client/models.py", "python", 'DEFAULT_MODEL = "gpt-4"\n', {"DEFAULT_MODEL", "gpt-4"}),
        (
            "src/client/models.ts",
            "typescript",
            'export const model = "gpt-4";\n',
            {"model", "gpt-4"},
        ),
        ("client/models.go", "go", 'package client\n\nvar model = "gpt-4"\n', {"model", "gpt-4"}),
    ],
)
def test_a_citations_names_are_its_words_no_keyword_or_quote(
    path: str, language: str, source: str, names: set[str]
) -> None:
    """The names a region found by likeness or through a scope must hold one of: words
    the grammar gives no kind of their own. Python's quotes are read by its scanner and
    have no kind either; they are no name, or any string would hold one."""
    raw = source.encode()
    parsed = syntax.parse(hashlib.sha1(raw).hexdigest(), language, lambda: raw)
    line = source.count("\n")

    assert anchors.anchor(parsed, path, line, line).names == names


CLIENT_TS = "src/main/mcp/mcpClient.ts"
SDK_IMPORTS = """\
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js'
import { type Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import path from 'path'

export class McpClient {
  private client: Client | null = null
  private transport: Transport | null = null

  async connect(): Promise<void> {
    this.client = new Client({ name: 'deepchat', version: '1.0.0' })
    await this.client.connect(this.transport!)
  }
}
"""
V2_IMPORTS = """\
import type { ProviderSettingsPort } from '@/provider/settings'
import logger from '@shared/logger'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import {
  Client,
  SSEClientTransport,
  fromJsonSchema
} from '@modelcontextprotocol/client'
import type { Transport } from '@modelcontextprotocol/client'
import path from 'path'
"""


def test_imports_merged_below_imports_of_other_modules_start_at_their_own(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """deepchat's `mcpClient.ts`: three SDK imports, cited, became one import of the v2
    client and one of its `stdio` module, under two imports of other modules written above
    them. Carried through the file's scope, the cited `import {` and `} from` were aligned
    with those two lines', and the HEAD span began at line 1 (on main before: 1-8). An
    import that holds none of the cited names is not one of them: 3-8."""
    base = upstream.commit("client", {CLIENT_TS: SDK_IMPORTS})
    project.note("n", f"{base} {CLIENT_TS}:1-3")
    head = V2_IMPORTS + SDK_IMPORTS[SDK_IMPORTS.index("\nexport class") :]
    v2 = upstream.commit("support v2 ecosystem (#2069)", {CLIENT_TS: head})

    result = _results(project, capsys)[f"n:{CLIENT_TS}:1-3"]

    assert result["verdict"] == "changed", result["message"]
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (3, 8)
    assert [h["commit"] for h in result["history"]] == [v2]


REASONING_GO = """\
package dialog

import (
	"errors"

	"github.com/charmbracelet/crush/internal/config"
)

const (
	// ReasoningID is the identifier for the reasoning effort dialog.
	ReasoningID              = "reasoning"
	reasoningDialogMaxWidth  = 50
	reasoningDialogMaxHeight = 10
)

// Reasoning represents a dialog for selecting reasoning effort.
type Reasoning struct {
	width int
}
"""


def test_a_const_block_grown_inside_is_its_whole_block(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """crush's reasoning dialog: a `const ( ... )` block cited whole, a constant written
    into it and another changed. Its `const (` and `)` are its own, not a statement at
    the edge of what was carried that holds none of its names: the block is still
    9-15 whole."""
    path = "internal/ui/dialog/reasoning.go"
    base = upstream.commit("dialog", {path: REASONING_GO})
    project.note("n", f"{base} {path}:9-14")
    grown = REASONING_GO.replace(
        "reasoningDialogMaxHeight = 10",
        "reasoningDialogMinHeight = 8\n\treasoningDialogMaxHeight = 16",
    )
    change = upstream.commit("taller (#1190)", {path: grown})

    result = _results(project, capsys)[f"n:{path}:9-14"]

    assert result["verdict"] == "changed", result["message"]
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (9, 15)
    assert [h["commit"] for h in result["history"]] == [change]


HTTPX_PY = """\
\"\"\"Utilities for creating standardized httpx AsyncClient instances.\"\"\"

from typing import Any, Protocol

import httpx

__all__ = ["create_mcp_http_client", "MCP_DEFAULT_TIMEOUT"]

MCP_DEFAULT_TIMEOUT = 30.0


def create_mcp_http_client(headers: dict[str, str] | None = None) -> httpx.AsyncClient:
    return httpx.AsyncClient(headers=headers, timeout=MCP_DEFAULT_TIMEOUT)
"""


def test_an_import_whose_only_name_changed_stays_in_the_span(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """python-sdk's `_httpx_utils.py`: `from typing import Any, Protocol` and `import
    httpx` cited, then httpx replaced by httpx2. `import httpx2` holds none of the cited
    names, but the cited `import httpx` keeps none elsewhere: it is that line, changed,
    and stays in the span (3-5), not an import written at its edge."""
    path = "src/mcp/shared/_httpx_utils.py"
    base = upstream.commit("utils", {path: HTTPX_PY})
    project.note("n", f"{base} {path}:3-5")
    change = upstream.commit("httpx2 (#2713)", {path: HTTPX_PY.replace("httpx", "httpx2")})

    result = _results(project, capsys)[f"n:{path}:3-5"]

    assert result["verdict"] == "changed", result["message"]
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (3, 5)
    assert [h["commit"] for h in result["history"]] == [change]
