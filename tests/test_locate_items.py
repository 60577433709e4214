"""An item is what was cited (issue 35): each citation judged from its own tokens, on
histories built here in the shape of the real code where each wrong answer was seen."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.support import check_results as _results
from watcher.gitbuild import Upstream

PY = "src/agents/run.py"
ERRORS = """\
class RunError(Exception):
    def _error_name(self) -> str:
        return "run"


def fail(code: int) -> RunError:
    error = RunError(
        code,
        "the run failed",
    )
    return error
"""


def test_a_line_of_punctuation_alone_is_refused_not_matched_elsewhere(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 35, class 3: a citation of a line holding only `)` was `fresh` at
    `def _error_name(self) -> str:`. It cites no statement: `check` makes it an `error`
    item saying so, `validate` refuses it once the mirror holds the file, and the note's
    other citation is judged as usual."""
    base = upstream.commit("errors", {PY: ERRORS})
    project.note("n", f"{base} {PY}:10-10", f"{base} {PY}:7-10")
    upstream.commit("name the error", {PY: ERRORS.replace('"run"', '"run-error"')})

    results = _results(project, capsys)

    lone = results[f"n:{PY}:10-10"]
    assert lone["verdict"] == "error"
    assert lone["error"] == "lines-out-of-range"
    assert "lines 10-10 hold only `)`" in lone["message"]
    assert "cite the statement" in lone["message"]
    assert lone["current"] is None
    assert results[f"n:{PY}:7-10"]["verdict"] == "fresh"
    code, out, _ = project.run("validate", capsys=capsys)
    assert code == 2
    assert f"notes/n.md: n:{PY}:10-10: {PY}: lines 10-10 hold only `)`" in out
    assert f"{PY}:7-10" not in out
    assert str(project.root) not in out  # no local path in the message


def test_validate_accepts_a_site_whose_mirror_is_not_made_yet(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("errors", {PY: ERRORS})
    project.note("n", f"{base} {PY}:10-10")

    code, out, _ = project.run("validate", capsys=capsys)

    assert code == 0, out  # offline, and nothing to read the lines from: not known yet


RS = "crates/rmcp/src/model.rs"
MODEL = """\
impl ErrorData {
    pub fn resource_not_found(message: impl Into<Cow<'static, str>>, data: Option<Value>) -> Self {
        Self::new(ErrorCode::RESOURCE_NOT_FOUND, message, data)
    }

    pub fn url_elicitation_required(message: impl Into<Cow<'static, str>>, data: Option<Value>) -> Self {
        Self::new(ErrorCode::URL_ELICITATION_REQUIRED, message, data)
    }

    pub fn with_meta(mut self, meta: Meta) -> Self {
        self.meta = Some(meta);
        self
    }
}
"""


def test_a_definition_cited_whole_is_changed_when_it_grows_or_gains_an_attribute(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 35, class 5: cited from its first to its last line, a definition is compared
    whole. A statement appended at its end (the cited tokens still occur verbatim, as its
    first ones) and an attribute written above it (rust-sdk 82b04a31f5's `#[deprecated]`)
    both make it `changed`, at the whole definition's lines."""
    base = upstream.commit("errors", {RS: MODEL})
    project.note("n", f"{base} {RS}:10-13", f"{base} {RS}:2-4")
    grown = MODEL.replace("        self\n", "        self.count += 1;\n        self\n")
    grown = grown.replace(
        "    pub fn resource_not_found",
        '    #[deprecated(note = "use not_found")]\n    pub fn resource_not_found',
    )
    change = upstream.commit("count metas, deprecate (#7)", {RS: grown})

    results = _results(project, capsys)

    meta = results[f"n:{RS}:10-13"]
    assert meta["verdict"] == "changed"
    assert (meta["current"]["start_line"], meta["current"]["end_line"]) == (11, 15)
    assert "+        self.count += 1;" in meta["diff"]
    assert meta["introduced_by"]["commit"] == change
    deprecated = results[f"n:{RS}:2-4"]
    assert deprecated["verdict"] == "changed"
    assert (deprecated["current"]["start_line"], deprecated["current"]["end_line"]) == (2, 5)
    assert "+    #[deprecated" in deprecated["diff"]


def test_a_deleted_expression_is_missing_not_changed_at_a_look_alike(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 35, class 3: rust-sdk's `ErrorData::url_elicitation_required`, deleted by
    f4ff56b81d, was "changed" at the body of `resource_not_found`. Both a citation of the
    whole function and one of its body are missing since the commit that deleted it."""
    base = upstream.commit("errors", {RS: MODEL})
    project.note("n", f"{base} {RS}:6-8", f"{base} {RS}:7-7")
    gone = MODEL.replace(
        MODEL[MODEL.index("    pub fn url_") : MODEL.index("    pub fn with_meta")], ""
    )
    drop = upstream.commit("drop url elicitation (#9)", {RS: gone})

    results = _results(project, capsys)

    for cited in (f"n:{RS}:6-8", f"n:{RS}:7-7"):
        assert results[cited]["verdict"] == "missing", results[cited]["message"]
        assert results[cited]["current"] is None
        assert results[cited]["introduced_by"]["commit"] == drop


TS = "src/client/sse.ts"
SSE = """\
export class SSEClientTransport {
  private _startOrAuth(): Promise<void> {
    return new Promise((resolve, reject) => {
      this._eventSource.onerror = (event) => {
        const error = new SseError(event.code, event.message, event);
        console.error("SSE error", error);
        reject(error);
        this.onerror?.(error);
      };

      this._eventSource.onopen = () => {
        console.error("SSE open");
        resolve();
      };
    });
  }
}
"""


def test_a_one_word_rename_inside_a_cited_block_keeps_its_lines(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 35, class 2: a commit that only turned `console.error` into `Logger.error`
    in a cited block made the item `missing`, and an unrelated block of the function was
    chosen at HEAD. The item is `changed` on the same lines, blamed on that commit only."""
    base = upstream.commit("sse", {TS: SSE})
    project.note("n", f"{base} {TS}:4-9")
    rename = upstream.commit(
        "log through Logger (#12)",
        {TS: SSE.replace('console.error("SSE error"', 'Logger.error("SSE error"')},
    )
    upstream.commit(
        "open quietly (#13)",
        {TS: upstream.read(TS).replace('        console.error("SSE open");\n', "")},
    )

    result = _results(project, capsys)[f"n:{TS}:4-9"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (4, 9)
    assert [h["commit"] for h in result["history"]] == [rename]
    assert result["introduced_by"]["commit"] == rename


PYCLIENT = "src/agents/mcp/server.py"
SESSION = """\
class MCPServerStdio:
    async def connect(self):
        transport = await self.exit_stack.enter_async_context(self.create_streams())
        read, write, *_ = transport
        session = await self.exit_stack.enter_async_context(
            ClientSession(
                read,
                write,
                timedelta(seconds=self.client_session_timeout_seconds),
                message_handler=self.message_handler,
            )
        )
        await session.initialize()
        self.session = session
"""


def test_a_wrapped_call_with_a_renamed_argument_is_changed_not_missing(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 35, class 2: `ClientSession(...)` wrapped in `cast(Any, ClientSession)(...)`
    with one argument renamed was `missing` while a citation of its inner lines was
    `changed`. Both are `changed`, each on its own lines."""
    base = upstream.commit("server", {PYCLIENT: SESSION})
    project.note("n", f"{base} {PYCLIENT}:5-12", f"{base} {PYCLIENT}:7-10")
    wrapped = SESSION.replace("            ClientSession(", "            cast(Any, ClientSession)(")
    wrapped = wrapped.replace("self.client_session_timeout_seconds", "self.session_timeout")
    change = upstream.commit("type the session (#20)", {PYCLIENT: wrapped})

    results = _results(project, capsys)

    whole, inner = results[f"n:{PYCLIENT}:5-12"], results[f"n:{PYCLIENT}:7-10"]
    assert whole["verdict"] == inner["verdict"] == "changed"
    assert (whole["current"]["start_line"], whole["current"]["end_line"]) == (5, 12)
    assert (inner["current"]["start_line"], inner["current"]["end_line"]) == (7, 10)
    assert whole["introduced_by"]["commit"] == inner["introduced_by"]["commit"] == change


HANDLER = """\
def handle(self, request):
    started = time.monotonic()
    try:
        result = self.dispatch(request)
    except ToolError as error:
        logger.error("tool failed: %s", error.detail)
        result = error.to_result()
    self.metrics.observe(time.monotonic() - started)
    return result
"""


def test_a_range_takes_in_neither_its_neighbours_nor_stops_a_branch_short(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 35, class 4: a HEAD range took in uncited, unchanged neighbours, and another
    stopped one branch short (its diff then read "the error detail is no longer logged").
    The cited `try` statement grows a line at the end of its `except` branch, and gets new
    neighbours above and below: its HEAD span is the whole statement, and only it."""
    base = upstream.commit("handler", {"src/handler.py": HANDLER})
    project.note("n", f"{base} src/handler.py:3-7")
    grown = (
        HANDLER.replace(
            "        result = error.to_result()\n",
            "        result = error.to_result()\n        result.is_error = True\n",
        )
        .replace("    started =", "    self.calls += 1\n    started =")
        .replace("    self.metrics", "    self.trace(request)\n    self.metrics")
    )
    change = upstream.commit("flag errors (#30)", {"src/handler.py": grown})

    result = _results(project, capsys)["n:src/handler.py:3-7"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (4, 9)
    added = [line for line in result["diff"].splitlines()[2:] if line.startswith("+")]
    assert added == ["+        result.is_error = True"]
    assert [h["commit"] for h in result["history"]] == [change]


SESSION_PY = "src/mcp/server/session.py"
OVERLOADS = """\
class ServerSession:
    @overload
    async def create_message(self, messages: list[Message], *, tools: None = None) -> Result:
        \"\"\"Overload: without tools, returns single content.\"\"\"
        ...

    @overload
    async def create_message(self, messages: list[Message], *, tools: list[Tool]) -> ResultWithTools:
        \"\"\"Overload: with tools, content may be a list.\"\"\"
        ...

    async def create_message(self, messages, *, tools=None):
        \"\"\"Send a sampling/create_message request.\"\"\"
        return await self.send_request(CreateMessageRequest(messages=messages, tools=tools))
"""


def test_of_several_definitions_of_one_name_the_item_is_the_one_most_like_it(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """python-sdk's `ServerSession.create_message` has overloads: cited whole, the second
    one is followed as itself (a decorator added to it makes it `changed`), not as
    whichever of the three comes nearest its old line once lines shift, and a docstring
    cited alone and extended stays `changed`, not `missing`."""
    base = upstream.commit("session", {SESSION_PY: OVERLOADS})
    project.note("n", f"{base} {SESSION_PY}:7-10", f"{base} {SESSION_PY}:13-13")
    moved = "    def _helper(self):\n        return 1\n\n" * 3
    edited = OVERLOADS.replace("class ServerSession:\n", "class ServerSession:\n" + moved)
    edited = edited.replace(
        "    @overload\n    async def create_message(self, messages: list[Message], *, tools: list",
        '    @overload\n    @deprecated("sampling")\n'
        "    async def create_message(self, messages: list[Message], *, tools: list",
    ).replace(
        'request."""',
        'request.\n\n        Raises:\n            McpError: on a refusal.\n        """',
    )
    change = upstream.commit("deprecate sampling with tools (#3)", {SESSION_PY: edited})

    results = _results(project, capsys)

    second = results[f"n:{SESSION_PY}:7-10"]
    assert second["verdict"] == "changed"
    assert (second["current"]["start_line"], second["current"]["end_line"]) == (16, 20)
    assert '+    @deprecated("sampling")' in second["diff"]
    assert second["introduced_by"]["commit"] == change
    docstring = results[f"n:{SESSION_PY}:13-13"]
    assert docstring["verdict"] == "changed", docstring["message"]
    assert docstring["current"]["start_line"] == 23


PROMPT = """\
impl PromptMessage {
    pub fn new_image(role: Role, data: &[u8], mime_type: &str, meta: Option<Meta>) -> Self {
        let base64 = BASE64_STANDARD.encode(data);
        Self {
            role,
            content: PromptMessageContent::Image {
                image: crate::model::RawImageContent {
                    data: base64,
                    mime_type: mime_type.into(),
                    meta,
                }
                .optional_annotate(annotations),
            },
        }
    }

    pub fn log(&self) {
        trace(
            "prompt",
            self.role,
        );
    }
}
"""


def test_a_span_ends_with_its_own_brace_not_the_functions(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """rust-sdk's `PromptMessage::new_image` (77932141e3): the struct it returns lost a
    level of braces, and the alignment took the function's `}` for the cited one. The
    span ends with the struct; a citation that ends inside a call opened above its lines
    keeps its `)` line."""
    base = upstream.commit("prompt", {RS: PROMPT})
    project.note("n", f"{base} {RS}:3-14", f"{base} {RS}:19-21")
    flat = PROMPT.replace(
        """            content: PromptMessageContent::Image {
                image: crate::model::RawImageContent {
                    data: base64,
                    mime_type: mime_type.into(),
                    meta,
                }
                .optional_annotate(annotations),
            },
""",
        """            content: ContentBlock::Image(ImageContent {
                data: base64,
                mime_type: mime_type.into(),
                meta,
                annotations,
            }),
""",
    ).replace('            "prompt",\n', '            "prompt message",\n')
    upstream.commit("content blocks (#927)", {RS: flat})

    results = _results(project, capsys)

    image = results[f"n:{RS}:3-14"]
    assert image["verdict"] == "changed"
    assert (image["current"]["start_line"], image["current"]["end_line"]) == (3, 12)
    tail = results[f"n:{RS}:19-21"]
    assert (tail["current"]["start_line"], tail["current"]["end_line"]) == (17, 19)


GO = "auth/auth.go"
VERIFY = """\
package auth

func verify(req *http.Request, verifier TokenVerifier, opts *Options) (*TokenInfo, string, int) {
	tokenInfo, err := verifier(req.Context(), token, req)
	if err != nil {
		return nil, err.Error(), http.StatusInternalServerError
	}
	if opts != nil {
		for _, s := range opts.Scopes {
			if !slices.Contains(tokenInfo.Scopes, s) {
				return nil, "insufficient scope", http.StatusForbidden
			}
		}
	}
	if tokenInfo.Expiration.IsZero() {
		return nil, "token missing expiration", http.StatusUnauthorized
	}
	return tokenInfo, "", 0
}
"""


def test_code_inserted_just_before_a_range_is_not_taken_in(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """go-sdk's `verify` (auth/auth.go): an `if tokenInfo == nil { … }` inserted just above
    the cited `if opts != nil` statement ends with the same `}` and starts with the same
    `if` as the code around it; token by token it reads as inserted inside the citation.
    Slid to its edge, as git slides a hunk, it is not in the span."""
    base = upstream.commit("verify", {GO: VERIFY})
    project.note("n", f"{base} {GO}:8-17")
    guarded = VERIFY.replace(
        "\tif opts != nil {\n",
        '\tif tokenInfo == nil {\n\t\treturn nil, "token validation failed", 500\n\t}\n'
        "\tif opts != nil {\n",
    ).replace("http.StatusUnauthorized", "http.StatusForbidden")
    upstream.commit("check the token (#971)", {GO: guarded})

    result = _results(project, capsys)[f"n:{GO}:8-17"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (11, 20)


META = "src/mcp/server/utilities/metadata.py"
SCHEMA = '''\
def _try_model_and_schema(
    annotation: Any,
    type_expr: Any,
    func_name: str,
) -> tuple[type[BaseModel] | None, dict[str, Any] | None, bool]:
    """Try to build a model and its schema for an annotation.

    Returns:
        the model or None, its schema or None, and whether to wrap the result
    """
    model = None
    wrap = False
    if type_expr is None:
        model = _wrapped_model(func_name, annotation)
        wrap = True
    elif isinstance(type_expr, GenericAlias):
        origin = get_origin(type_expr)
        if origin is dict:
            model = _dict_model(func_name, type_expr)
        else:
            model = _wrapped_model(func_name, annotation)
            wrap = True
    elif is_typeddict(type_expr):
        model = _typeddict_model(type_expr)
    else:
        model = _class_model(type_expr)
    if model is None:
        return None, None, False
    try:
        schema = model.model_json_schema(schema_generator=StrictJsonSchema)
    except (PydanticSchemaGenerationError, TypeError, ValueError) as error:
        logger.info(f"Cannot create a schema for {func_name}: {error}")
        return None, None, False
    return model, schema, wrap


def _wrapped_model(func_name: str, annotation: Any) -> type[BaseModel]:
    return create_model(f"{func_name}Output", result=annotation)
'''


def test_a_function_renamed_and_made_shorter_is_carried_into_its_new_name(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 35: python-sdk's `_try_create_model_and_schema`, renamed
    `_create_output_model` by a commit that also dropped its schema half, was `missing`:
    a region as long as the old function, read where the new one starts, runs into the
    next function and is not 0.8 alike. The new definition itself is (its kind, its
    container, not in the baseline file): the citation is carried into it, `changed`."""
    base = upstream.commit("metadata", {META: SCHEMA})
    project.note("n", f"{base} {META}:1-35", f"{base} {META}:23-26")
    edited = SCHEMA.replace("def _try_model_and_schema(", "def _output_model(").replace(
        "dict[str, Any] | None, bool]:", "bool]:"
    )
    edited = edited.replace(
        """    try:
        schema = model.model_json_schema(schema_generator=StrictJsonSchema)
    except (PydanticSchemaGenerationError, TypeError, ValueError) as error:
        logger.info(f"Cannot create a schema for {func_name}: {error}")
        return None, None, False
    return model, schema, wrap
""",
        "    return model, wrap\n",
    )
    edited = edited.replace("_class_model(type_expr)", "_class_model(type_expr, strict=True)")
    rename = upstream.commit("hand schemas to pydantic (#3331)", {META: edited})

    results = _results(project, capsys)

    whole, part = results[f"n:{META}:1-35"], results[f"n:{META}:23-26"]
    assert whole["verdict"] == part["verdict"] == "changed"
    assert (whole["current"]["start_line"], whole["current"]["end_line"]) == (1, 30)
    assert (part["current"]["start_line"], part["current"]["end_line"]) == (23, 26)
    for result in (whole, part):
        assert [h["commit"] for h in result["history"]] == [rename]
        assert result["introduced_by"]["commit"] == rename


PRESETS_RS = "common/src/presets.rs"
PRESETS = """\
pub fn builtin_presets() -> &'static [Preset] {
    const PRESETS: &[Preset] = &[
        Preset {
            id: "fast-low",
            description: "quick answers with little reasoning",
            effort: Some(Effort::Low),
        },
        Preset {
            id: "deep-medium",
            description: "a balance of reasoning depth and latency",
            effort: Some(Effort::Medium),
        },
        Preset {
            id: "deep-high",
            description: "the deepest reasoning for hard problems",
            effort: Some(Effort::High),
        },
    ];
    PRESETS
}
"""


def test_a_definition_moved_out_of_its_scope_is_followed_by_its_name_and_tokens(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """codex's `PRESETS`, lifted out of `builtin_model_presets` (its name path is new),
    then given new descriptions (its rarest tokens): the constant of that name the
    baseline did not have, keeping half its tokens, is it, `changed` there, not
    `missing`."""
    base = upstream.commit("presets", {PRESETS_RS: PRESETS})
    project.note("n", f"{base} {PRESETS_RS}:2-18")
    lifted = PRESETS.replace("    ", "", 1).replace("\n    ", "\n")
    lifted = lifted.replace("pub fn builtin_presets() -> &'static [Preset] {\n", "")
    lifted = lifted.replace("PRESETS\n}\n", "\npub fn builtin_presets() -> Vec<Preset> {\n"
                            "    PRESETS.to_vec()\n}\n")  # fmt: skip
    upstream.commit("lift the presets (#1)", {PRESETS_RS: lifted})
    described = lifted.replace("quick answers with little reasoning", "Fastest")
    described = described.replace("the deepest reasoning for hard problems", "Deepest")
    described = described.replace("a balance of reasoning depth and latency", "Balanced")
    retold = upstream.commit("describe presets (#2)", {PRESETS_RS: described})
    results = _results(project, capsys)

    presets = results[f"n:{PRESETS_RS}:2-18"]
    assert presets["verdict"] == "changed"
    assert (presets["current"]["start_line"], presets["current"]["end_line"]) == (1, 17)
    assert [h["commit"] for h in presets["history"]] == [retold]


TOOLKIT = "camel/toolkits/mcp_toolkit.py"
CLIENT_AND_TOOLKIT = """\
class MCPClient:
    def __init__(self, command: str) -> None:
        self.command = command
        self._session = None

    async def call_tool(self, tool_name: str, tool_args: dict) -> object:
        \"\"\"Calls the specified tool with the provided arguments.\"\"\"
        if self._session is None:
            raise RuntimeError("Session is not initialized.")
        return await self._session.call_tool(tool_name, tool_args)


class MCPToolkit:
    def __init__(self, servers: list[MCPClient]) -> None:
        self.servers = servers
"""
TOOLKIT_ONLY = """\
from camel.utils.mcp_client import MCPClient


class MCPToolkit:
    def __init__(self, servers: list[MCPClient]) -> None:
        self.servers = servers

    async def call_tool(self, tool_name: str, tool_args: dict) -> object:
        \"\"\"Calls the specified tool with the provided arguments, on the first
        server that offers it.\"\"\"
        if not self.servers:
            raise RuntimeError("No server is connected.")
        for server in self.servers:
            names = [tool.name for tool in await server.list_tools()]
            if tool_name not in names:
                continue
            try:
                return await server.call_tool(tool_name, tool_args)
            except TimeoutError as error:
                raise RuntimeError(f"Tool {tool_name} timed out") from error
        raise ValueError(f"No server offers {tool_name}")
"""


def test_a_method_whose_class_left_the_file_is_not_a_new_namesake_elsewhere_in_it(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """camel's `MCPClient.call_tool`, cited whole: a commit moved `MCPClient` to another
    module and wrote a `call_tool` of its own into `MCPToolkit`, which holds the cited
    method's signature and docstring among much more code. That namesake is not the
    method moved to another class of the file: `missing` from that commit (before:
    `changed`, the whole toolkit method its span)."""
    base = upstream.commit("mcp toolkit", {TOOLKIT: CLIENT_AND_TOOLKIT})
    project.note("n", f"{base} {TOOLKIT}:6-10")
    moved = upstream.commit("refactor: mcp client module (#2496)", {TOOLKIT: TOOLKIT_ONLY})

    result = _results(project, capsys)[f"n:{TOOLKIT}:6-10"]

    assert result["verdict"] == "missing", (result["message"], result["current"])
    assert result["introduced_by"]["commit"] == moved


VECTORIZE = "crates/rig-vectorize/src/lib.rs"
QUERY = """\
        if let Some(filter) = req.filter() {
            filter.validate()?;
        }
        let embedding = self.model.embed_text(req.query()).await?;
        let request = QueryRequest {
            vector: embedding.vec,
            top_k: req.samples(),
            return_values: Some(false),
            filter: req.filter().as_ref().map(|f| f.clone().into_inner()),
        };
        let result = self.client.query(request).await?;
"""
STORE = """\
impl<M> VectorStoreIndex for VectorizeVectorStore<M>
where
    M: EmbeddingModel,
{
    async fn top_n_ids(&self, req: SearchRequest) -> Result<Vec<(f64, String)>, StoreError> {
QUERY
        Ok(result.matches.into_iter().map(|m| (m.score, m.id)).collect())
    }
}
""".replace("QUERY\n", QUERY)
HELPER = """\
impl<M> VectorizeVectorStore<M>
where
    M: EmbeddingModel,
{
    async fn query_matches(&self, req: &SearchRequest) -> Result<Vec<Match>, StoreError> {
QUERY
        Ok(result.matches)
    }
}

impl<M> VectorStoreIndex for VectorizeVectorStore<M>
where
    M: EmbeddingModel,
{
    async fn top_n_ids(&self, req: SearchRequest) -> Result<Vec<(f64, String)>, StoreError> {
        let matches = self.query_matches(&req).await?;
        Ok(matches.into_iter().map(|m| (m.score, m.id)).collect())
    }
}
""".replace("QUERY\n", QUERY)


def test_a_method_cited_whole_stays_in_its_impl_when_the_impl_loses_a_type_parameter(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """rig's `top_n_ids`: its body went into a new `query_matches` helper, then the
    embedding model was type-erased and `impl<M> VectorStoreIndex for
    VectorizeVectorStore<M>` became `impl VectorStoreIndex for VectorizeVectorStore`. The
    method of that name in that `impl` is the item, however little of it is left: not
    the helper its body went to. `git log -L` of its HEAD lines lists the first commit
    alone."""
    base = upstream.commit("vectorize", {VECTORIZE: STORE})
    project.note("n", f"{base} {VECTORIZE}:5-18")
    helper = upstream.commit("consolidate (#2343)", {VECTORIZE: HELPER})
    erased = HELPER.replace("impl<M> ", "impl ").replace(
        "VectorizeVectorStore<M>", "VectorizeVectorStore"
    )
    erased = erased.replace("\nwhere\n    M: EmbeddingModel,\n{", " {")
    upstream.commit("erase the embedding model (#2385)", {VECTORIZE: erased})

    result = _results(project, capsys)[f"n:{VECTORIZE}:5-18"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (19, 22)
    assert [h["commit"] for h in result["history"]] == [helper]


GO = "server/streamable_http.go"
SESSIONS = """\
package server

func (s *Server) handleDelete(id string) {
\t// drop the session's state
\ts.tools.Delete(id)
\ts.resources.Delete(id)
}
"""


def test_a_cited_comment_replaced_by_code_is_not_taken_in(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """mcp-go's `handleDelete` (6bea1d45): the comment that opened a cited range became
    an uncited `s.activeSessions.Delete(id)`; the range came back with that line in, since
    a verbatim match was widened by the citation's comment lines whatever stood there at
    HEAD. Only lines that are still blank or comments widen it."""
    base = upstream.commit("sessions", {GO: SESSIONS})
    project.note("n", f"{base} {GO}:4-6", f"{base} {GO}:3-7")
    coded = SESSIONS.replace("\t// drop the session's state\n", "\ts.active.Delete(id)\n")
    upstream.commit("forget active sessions (#886)", {GO: coded})
    upstream.commit("docs", {"README.md": "sessions\n"})

    results = _results(project, capsys)

    cited = results[f"n:{GO}:4-6"]
    assert cited["verdict"] == "moved", cited["message"]
    assert (cited["current"]["start_line"], cited["current"]["end_line"]) == (5, 6)
    assert results[f"n:{GO}:3-7"]["verdict"] == "changed"  # the function, cited whole


HANDLERS_PY = "src/server/tasks/handlers.py"


def _handler(kind: str, result: str) -> str:
    return f'''\
async def handle_{kind}_as_task(server: Server, name: str, arguments: dict[str, Any]) -> {result}:
    """Handle {kind} execution as a background task."""
    task_id = str(uuid.uuid4())
    ctx = get_context()
    docket = server.docket
    task_key = build_task_key(ctx.session_id, task_id, "{kind}", name)
    async with docket.redis() as redis:
        await redis.set(f"{kind}:{{ctx.session_id}}:{{task_id}}", task_key, ex=docket.ttl)
    notification = JSONRPCNotification(
        method="notifications/tasks/created",
        params={{}},
        _meta={{"related-task": {{"taskId": task_id}}}},
    )
    with suppress(Exception):
        await ctx.session.send_notification(notification)
    await docket.add(name, key=task_key)(**arguments)
    return {result}(task=Task(taskId=task_id, status="working"))
'''


HANDLERS = "\n\n".join(
    _handler(kind, result)
    for kind, result in (("tool", "CreateTaskResult"), ("prompt", "GetPromptResult"),
                         ("resource", "ReadResourceResult"))
)  # fmt: skip

SUBMIT = (
    _handler("tool", "CreateTaskResult")
    .replace("handle_tool_as_task(server: Server, name: str,",
             "submit_to_docket(server: Server, task_type: str, name: str,")
    .replace('"""Handle tool execution as a background task."""',
             '"""Submit any component for background execution."""')
    .replace('task_id, "tool", name)', "task_id, task_type, name)")
    .replace('f"tool:{', 'f"{task_type}:{')
)  # fmt: skip


def test_alike_functions_folded_into_one_are_the_rename_of_the_most_alike(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """fastmcp's `handle_tool_as_task`, `handle_prompt_as_task` and two more, alike,
    became one `submit_to_docket`: the tool's renamed (git's diff pairs them), the others
    deleted. The prompt's cited `async with` and notification, the same tokens as the
    tool's, were found in `submit_to_docket`, the prompt's `renamed` (it keeps half its
    tokens), and went `missing` at the next commit that inserted a line among them. A
    rename is one to one: `missing` since the fold; the tool's own lines are `changed`
    there."""
    base = upstream.commit("task handlers", {HANDLERS_PY: HANDLERS})
    tool, prompt = 7, 7 + HANDLERS.split("\n\n\n")[0].count("\n") + 3
    lines = HANDLERS.splitlines()
    assert (
        lines[tool - 1].strip()
        == lines[prompt - 1].strip()
        == "async with docket.redis() as redis:"
    )
    project.note(
        "n",
        f"{base} {HANDLERS_PY}:{tool}-{tool + 8}",
        f"{base} {HANDLERS_PY}:{prompt}-{prompt + 8}",
    )
    fold = upstream.commit("components own their execution (#2663)", {HANDLERS_PY: SUBMIT})
    upstream.commit(
        "add poll_interval to TaskConfig (#2666)",
        {HANDLERS_PY: SUBMIT.replace(
            "ex=docket.ttl)\n",
            "ex=docket.ttl)\n        await redis.set(f'poll:{task_id}', '5000', ex=docket.ttl)\n",
        )},
    )  # fmt: skip

    results = _results(project, capsys)
    folded = results[f"n:{HANDLERS_PY}:{prompt}-{prompt + 8}"]
    kept = results[f"n:{HANDLERS_PY}:{tool}-{tool + 8}"]

    assert folded["verdict"] == "missing", folded["message"]
    assert folded["introduced_by"]["commit"] == fold
    assert kept["verdict"] == "changed", kept["message"]
    assert kept["current"]["start_line"] == 7


STREAM_PY = "pydantic_ai_slim/pydantic_ai/_utils.py"
STREAM = """\
class PeekableAsyncStream:
    async def peek(self):
        if self._buffer is None:
            self._buffer = await anext(self._source)
        return self._buffer

    def __aiter__(self):
        return self

    async def __anext__(self):
        return await self.peek()
"""
SYNC = """\
def sync_async_iterator(async_iter):
    loop = get_event_loop()
    while True:
        try:
            yield loop.run_until_complete(anext(async_iter))
        except StopAsyncIteration:
            break


"""


def test_a_cited_statement_is_not_the_start_of_a_longer_one_nearer_its_line(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """pydantic-ai's `PeekableAsyncStream.__aiter__`: its `return self` is cited; a
    function added above the class moves it down, and `peek`'s `return self._buffer`
    ends up nearer the cited line. That statement begins with the cited tokens, but it
    is not them: they still stand whole in `__aiter__`, moved."""
    base = upstream.commit("peekable stream", {STREAM_PY: STREAM})
    project.note("n", f"{base} {STREAM_PY}:8-8")
    upstream.commit("run streams in sync (#3146)", {STREAM_PY: SYNC + STREAM})

    result = _results(project, capsys)[f"n:{STREAM_PY}:8-8"]

    assert result["verdict"] == "moved"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (17, 17)


ROUTER_RS = "crates/rmcp/src/handler/server/router/tool.rs"
ROUTER = """\
impl<S> ToolRouter<S> {
    pub fn remove_route(&mut self, name: &str) {
        self.map.remove(name);
    }
    pub fn has_route(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }
}
"""
NOTIFY = """\
    fn notify_if_visible(&self, name: &str) {
        if self.map.contains_key(name)
            && let Some(notifier) = &self.notifier
        {
            notifier();
        }
    }
}
"""


def test_a_cited_statement_grown_in_its_own_definition_is_not_one_begun_elsewhere(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """rust-sdk's `ToolRouter::has_route`: its `self.map.contains_key(name)` is cited,
    and grows `&& !self.disabled.contains(name)`; a new method below begins an `if` with
    the same call. Both begin with the cited tokens, and the other's statement ends
    with them; the one in `has_route` is the citation all the same, changed."""
    base = upstream.commit("router", {ROUTER_RS: ROUTER})
    project.note("n", f"{base} {ROUTER_RS}:6-6")
    grown = ROUTER.replace(
        "self.map.contains_key(name)\n",
        "self.map.contains_key(name) && !self.disabled.contains(name)\n",
    )
    moved = "\n" * 6 + grown[: -len("}\n")] + NOTIFY
    change = upstream.commit("disable tools (#500)", {ROUTER_RS: moved})

    result = _results(project, capsys)[f"n:{ROUTER_RS}:6-6"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (12, 12)
    assert [h["commit"] for h in result["history"]] == [change]


NANOBOT_GO = "pkg/mcp/session.go"
NANOBOT = """\
package mcp

func (s *Session) State() map[string]any {
	if s == nil {
		return nil
	}
	return s.attributes
}

func (s *Session) Delete(key string) {
	if s == nil {
		return
	}
	s.lock.Lock()
	defer s.lock.Unlock()
	delete(s.attributes, key)
}
"""
ADD_ENV = """\
func (s *Session) AddEnv(kvs map[string]string) {
	if s == nil {
		return
	}
	for k, v := range kvs {
		s.env[k] = v
	}
}

"""


def test_a_cited_statement_stays_in_its_own_method_when_another_grows_one_nearer(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """nanobot's `Session.Delete`: its `if s == nil { return }` and its `s.lock.Lock()`
    are cited. A method written above it since opens with the same check, and `State`
    now locks too: both are nearer the cited lines than `Delete`, which still holds
    them, moved down. They are `Delete`'s, as `git log -L` follows them."""
    base = upstream.commit("sessions", {NANOBOT_GO: NANOBOT})
    project.note("n", f"{base} {NANOBOT_GO}:11-13", f"{base} {NANOBOT_GO}:14-14")
    locked = NANOBOT.replace(
        "\t}\n\treturn s.attributes",
        "\t}\n\ts.lock.Lock()\n\tdefer s.lock.Unlock()\n\treturn s.attributes",
    )
    upstream.commit(
        "session env (#61)",
        {
            NANOBOT_GO: locked.replace(
                "func (s *Session) Delete", ADD_ENV + "func (s *Session) Delete"
            )
        },
    )

    results = _results(project, capsys)
    check, lock = results[f"n:{NANOBOT_GO}:11-13"], results[f"n:{NANOBOT_GO}:14-14"]

    assert (check["verdict"], lock["verdict"]) == ("moved", "moved")
    assert (check["current"]["start_line"], check["current"]["end_line"]) == (22, 24)
    assert (lock["current"]["start_line"], lock["current"]["end_line"]) == (25, 25)


CLIENT_GO = "pkg/mcp/httpclient.go"
SEND = """\
package mcp

func (c *Client) send(ctx context.Context, msg Message) error {
	resp, err := c.http.Do(c.newRequest(msg))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = c.readResponse(resp)
	return err
}
"""
ENSURED = """\
	err := c.ensureSSE(ctx)
	if err != nil {
		return err
	}
"""


def test_of_several_places_in_its_own_method_a_statement_is_where_its_method_carries_it(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """nanobot's `HTTPClient.send`: the `if err != nil { return err }` after its request
    and the `return err` that ends it are cited. The method moves down and opens with
    a check of its own, so the method holds each cited statement twice, and the new
    copy is the nearer to the cited line (the cited `return err`'s own line, even). The
    citations are where the method's code carries them, as `git log -L` follows them."""
    base = upstream.commit("client", {CLIENT_GO: SEND})
    project.note("n", f"{base} {CLIENT_GO}:5-7", f"{base} {CLIENT_GO}:10-10")
    opened = SEND.replace("error {\n", "error {\n" + ENSURED, 1)
    dial = "func (c *Client) start() error {\n\treturn c.dial()\n}\n\n"
    upstream.commit(
        "reconnect (#40)",
        {CLIENT_GO: opened.replace("func (c *Client) send", dial + "func (c *Client) send")},
    )

    results = _results(project, capsys)
    check, end = results[f"n:{CLIENT_GO}:5-7"], results[f"n:{CLIENT_GO}:10-10"]

    assert (check["verdict"], end["verdict"]) == ("moved", "moved")
    assert (check["current"]["start_line"], check["current"]["end_line"]) == (13, 15)
    assert (end["current"]["start_line"], end["current"]["end_line"]) == (18, 18)


MANAGER_GO = "server/streamable_http.go"
VALIDATE = """\
func (s *{kind}) Validate(id string) (bool, error) {{
	if _, err := uuid.Parse(id); err != nil {{
		return false, fmt.Errorf("invalid session id: %s", id)
	}}
{extra}	return false, nil
}}
"""


def test_a_citation_its_method_still_holds_apart_is_not_a_copy_in_a_new_method(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """mcp-go's `InsecureStatefulSessionIdManager.Validate`: its uuid check and `return
    false, nil` are cited. A new manager type's `Validate` copies those lines whole,
    while the cited method puts a check of its own between them. The citation is
    `changed` in its own method, which holds every cited token still, as `git log -L`
    follows it; not `moved` into the copy."""
    insecure = VALIDATE.format(kind="InsecureManager", extra="")
    base = upstream.commit("managers", {MANAGER_GO: "package server\n\n" + insecure})
    project.note("n", f"{base} {MANAGER_GO}:4-7")
    check = "\tif _, ok := s.terminated.Load(id); ok {\n\t\treturn true, nil\n\t}\n"
    copied = VALIDATE.format(kind="StatelessManager", extra="")
    grown = VALIDATE.format(kind="InsecureManager", extra=check)
    upstream.commit(
        "stateless sessions (#700)", {MANAGER_GO: f"package server\n\n{copied}\n{grown}"}
    )

    result = _results(project, capsys)[f"n:{MANAGER_GO}:4-7"]

    assert result["verdict"] == "changed"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (11, 17)


TOOL_TS = "packages/core/src/tools/mcp-tool.ts"
INVOCATION = """\
export class McpToolInvocation {
  async shouldConfirmExecute(signal: AbortSignal): Promise<boolean> {
    const key = this.serverName;
    if (this.trust) {
      return false; // trusted
    }
    return this.ask(key);
  }
}
"""
GUARD = """\
export function isAnnotation(value: unknown): boolean {
  if (typeof value !== 'object') {
    return false;
  }
  return true;
}

"""


def test_a_statement_of_a_renamed_method_is_where_its_class_carries_it_not_the_nearest(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """gemini-cli's `shouldConfirmExecute`, renamed `getConfirmationDetails`: its `return
    false;` is cited, and a function written above the class returns `false` nearer the
    cited line. The method's name is gone, so no definition of it holds a match; the
    alignment of the class carries the citation into the renamed method, and the match
    there is it, as `git log -L` follows it."""
    base = upstream.commit("mcp tool", {TOOL_TS: INVOCATION})
    project.note("n", f"{base} {TOOL_TS}:5-5")
    renamed = INVOCATION.replace("shouldConfirmExecute", "getConfirmationDetails")
    upstream.commit("tool confirmation (#9000)", {TOOL_TS: GUARD + renamed})

    result = _results(project, capsys)[f"n:{TOOL_TS}:5-5"]

    assert result["verdict"] == "moved"
    assert (result["current"]["start_line"], result["current"]["end_line"]) == (12, 12)


SERVER_GO = "mcpserver/tools.go"
TOOLS = """\
package mcpserver

func RunStdioServer(ctx context.Context) error {
	srv := NewStdioServer()
	return srv.Listen(ctx)
}

func DeleteEnvironmentFile(ctx context.Context, target string) error {
	repo, err := Open(ctx)
	if err != nil {
		return err
	}
	if err := repo.Delete(target); err != nil {
		return err
	}
	return nil
}
"""


def test_a_common_statement_of_a_removed_function_is_not_one_another_function_grew(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    """container-use's revert removed `DeleteEnvironmentFile` with its `return err`s, and
    `RunStdioServer`, there all along, has since written the file's only `return err`:
    that is its own code, not the citation moved there. Missing from the revert, as `git
    log -L` has the line deleted."""
    base = upstream.commit("dedup (#157)", {SERVER_GO: TOOLS})
    project.note("n", f"{base} {SERVER_GO}:14-14")
    removed = upstream.commit(
        "Revert dedup (#209)", {SERVER_GO: TOOLS.split("\nfunc DeleteEnvironmentFile")[0]}
    )
    grown = TOOLS.split("\nfunc DeleteEnvironmentFile")[0].replace(
        "\treturn srv.Listen(ctx)\n",
        "\terr := srv.Listen(ctx)\n\tif err != nil {\n\t\treturn err\n\t}\n\treturn nil\n",
    )
    upstream.commit("stdio: report listen errors (#300)", {SERVER_GO: grown})

    result = _results(project, capsys)[f"n:{SERVER_GO}:14-14"]

    assert result["verdict"] == "missing"
    assert result["introduced_by"]["commit"] == removed
