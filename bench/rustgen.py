"""Small, syntactically valid Rust files in a codex-like layout, written for the benchmark.

Nothing here is copied from openai/codex: the files only have its shape (crates under
`codex-rs/<crate>/src/*.rs`, a few hundred lines each, functions, structs, matches) so
that tree-sitter, git deltas and pack sizes behave as they would on the real thing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

CRATES = (
    "core",
    "tui",
    "exec",
    "cli",
    "mcp-server",
    "codex-mcp",
    "protocol",
    "login",
    "apply-patch",
    "file-search",
    "linux-sandbox",
    "execpolicy",
    "ollama",
    "chatgpt",
    "common",
    "arg0",
    "app-server",
    "rmcp-client",
    "responses-api-proxy",
    "backend-client",
    "cloud-tasks",
    "git-tooling",
    "ansi-escape",
    "mcp-types",
    "otel",
    "process-hardening",
    "utils-readiness",
    "protocol-ts",
    "stdio-to-uds",
    "windows-sandbox",
    "feedback",
    "keyring-store",
    "async-utils",
    "git-apply",
    "utils-string",
    "utils-cache",
    "utils-image",
    "utils-json",
    "utils-pty",
    "lmstudio",
)
NOUNS = (
    "turn",
    "session",
    "tool",
    "cursor",
    "page",
    "request",
    "response",
    "token",
    "sandbox",
    "patch",
    "event",
    "stream",
    "config",
    "profile",
    "server",
    "client",
    "prompt",
    "history",
    "rollout",
    "approval",
    "command",
    "output",
    "message",
    "model",
    "auth",
    "policy",
    "task",
)
VERBS = (
    "handle",
    "build",
    "parse",
    "render",
    "collect",
    "apply",
    "resolve",
    "emit",
    "load",
    "store",
    "spawn",
    "check",
    "merge",
    "flush",
    "list",
    "read",
    "write",
    "send",
    "poll",
)
TYPES = ("usize", "u64", "i64", "bool", "String", "Vec<String>", "Option<String>")


@dataclass
class Item:
    """One top-level item of a file: a function or a struct, as source lines."""

    name: str
    lines: list[str]


@dataclass
class RustFile:
    """A file as a header and an ordered list of items; rendered on demand."""

    path: str
    header: list[str]
    items: list[Item] = field(default_factory=list)

    def render(self) -> bytes:
        """The file's bytes: header, then items separated by blank lines."""
        out = list(self.header)
        for item in self.items:
            out.append("")
            out.extend(item.lines)
        return ("\n".join(out) + "\n").encode()

    def span(self, name: str) -> tuple[int, int]:
        """1-based inclusive line range of the named item in `render()`."""
        line = len(self.header) + 1
        for item in self.items:
            line += 1  # the blank separator
            if item.name == name:
                return line, line + len(item.lines) - 1
            line += len(item.lines)
        raise KeyError(name)

    def item(self, name: str) -> Item:
        return next(i for i in self.items if i.name == name)


class Writer:
    """Deterministic source of identifiers and item bodies (one per generator run)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.serial = 0

    def ident(self) -> str:
        self.serial += 1
        return f"{self.rng.choice(VERBS)}_{self.rng.choice(NOUNS)}_{self.serial}"

    def item(self) -> Item:
        """A new function or struct with a unique name."""
        kind = self.rng.choices((_fn_loop, _fn_match, _fn_builder, _struct), (4, 3, 2, 1))[0]
        return kind(self, self.ident())

    def file(self, path: str, count: int) -> RustFile:
        module = path.rsplit("/", 1)[-1].removesuffix(".rs")
        header = [
            f"//! `{module}`: generated for the watch benchmark; not real code.",
            "",
            "use std::collections::HashMap;",
            "use std::time::Duration;",
            "",
            "use crate::error::{Error, Result};",
        ]
        return RustFile(path, header, [self.item() for _ in range(count)])

    def tweak(self, item: Item) -> None:
        """Change one statement of an item in place (a typical small upstream edit)."""
        lines = item.lines
        r = self.rng
        lets = [i for i, text in enumerate(lines) if text.lstrip().startswith("let ")]
        arms = [i for i, text in enumerate(lines) if "=> Duration::from_millis(" in text]
        if arms and (not lets or r.random() < 0.5):
            i = r.choice(arms)
            head = lines[i].split("from_millis(")[0]
            lines[i] = f"{head}from_millis({r.randrange(10, 5000)}),"
        elif lets:
            i = r.choice(lets)
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            lines.insert(i, f"{indent}tracing::trace!(step = {r.randrange(1000)});")
        else:  # a struct: one more field before its closing brace
            lines.insert(len(lines) - 1, f"    pub extra_{self.serial}_{r.randrange(1000)}: u64,")


def _fn_loop(w: Writer, name: str) -> Item:
    r = w.rng
    limit = r.randrange(4, 512)
    noun = r.choice(NOUNS)
    lines = [
        f"/// Collects up to {limit} {noun} entries from the input.",
        f"pub fn {name}(input: &str, limit: usize) -> Result<Vec<String>> {{",
        "    let mut out = Vec::with_capacity(limit);",
        "    for (i, part) in input.split(',').enumerate() {",
        f"        if i >= limit.min({limit}) {{",
        "            break;",
        "        }",
        f'        let value = part.trim().trim_start_matches("{noun}:");',
        "        if value.is_empty() {",
        "            continue;",
        "        }",
        "        out.push(value.to_string());",
        "    }",
    ]
    for k in range(r.randrange(0, 6)):
        lines.append(f"    let checkpoint_{k} = out.len() * {r.randrange(2, 99)};")
        lines.append(f'    tracing::debug!(checkpoint_{k}, "{noun} collected");')
    lines += ["    Ok(out)", "}"]
    return Item(name, lines)


def _fn_match(w: Writer, name: str) -> Item:
    r = w.rng
    variants = r.sample(NOUNS, r.randrange(3, 7))
    lines = [
        f"pub(crate) fn {name}(kind: &str, retries: u32) -> Option<Duration> {{",
        "    let base = match kind {",
    ]
    for v in variants:
        lines.append(f'        "{v}" => Duration::from_millis({r.randrange(10, 5000)}),')
    lines += [
        "        _ => return None,",
        "    };",
        f"    let factor = retries.min({r.randrange(2, 12)}) + 1;",
        "    Some(base * factor)",
        "}",
    ]
    return Item(name, lines)


def _fn_builder(w: Writer, name: str) -> Item:
    r = w.rng
    keys = r.sample(NOUNS, r.randrange(2, 8))
    lines = [
        f"pub async fn {name}(settings: &HashMap<String, String>)"
        " -> Result<HashMap<String, String>> {",
        "    let mut map = HashMap::new();",
    ]
    for key in keys:
        lines += [
            f'    if let Some(value) = settings.get("{key}") {{',
            f'        map.insert("{key}".to_string(), value.clone());',
            "    } else {",
            f'        return Err(Error::Missing("{key}"));',
            "    }",
        ]
    lines += ["    Ok(map)", "}"]
    return Item(name, lines)


def _struct(w: Writer, name: str) -> Item:
    r = w.rng
    type_name = "".join(part.capitalize() for part in name.split("_"))
    lines = ["#[derive(Debug, Clone, Default)]", f"pub struct {type_name} {{"]
    for noun in r.sample(NOUNS, r.randrange(2, 9)):
        lines.append(f"    pub {noun}: {r.choice(TYPES)},")
    lines.append("}")
    return Item(name, lines)


# --- the hot function: edited in every "hot" commit, with a tracked construct inside --

HOT_PATH = "codex-rs/core/src/session/turn.rs"
HOT_FN = "run_turn"
LEGACY_ARM = "        ProtocolMode::Legacy => None,"
FLIPPED_ARM = "        ProtocolMode::Legacy => response.next_cursor,"


def hot_item(budget: int, traces: int, flipped: bool) -> Item:
    """`run_turn`: `budget` and `traces` change in every hot commit; the Legacy arm flips once."""
    lines = [
        "/// Runs one turn: asks the server for tools and decides whether to page on.",
        "pub async fn run_turn(",
        "    protocol_mode: ProtocolMode,",
        "    response: ListToolsResponse,",
        ") -> Result<(Vec<ToolInfo>, Option<String>)> {",
        f"    let budget = Duration::from_millis({budget});",
    ]
    lines += [f'    tracing::trace!(step = {k}, "turn checkpoint");' for k in range(traces)]
    lines += [
        "    let next_cursor = match protocol_mode {",
        FLIPPED_ARM if flipped else LEGACY_ARM,
        "        ProtocolMode::V20260728 => response.next_cursor,",
        "    };",
        '    tracing::debug!(?budget, tools = response.tools.len(), "listed tools");',
        "    Ok((response.tools, next_cursor))",
        "}",
    ]
    return Item(HOT_FN, lines)


# --- the rest of a real upstream: a lockfile and binary assets ------------------------

LOCK_PATH = "codex-rs/Cargo.lock"


def lock_entries(rng: random.Random, count: int) -> list[tuple[str, str, str]]:
    """(name, version, checksum) of `count` locked crates."""
    return [
        (f"{rng.choice(NOUNS)}-{rng.choice(VERBS)}-{i}", _version(rng), rng.randbytes(32).hex())
        for i in range(count)
    ]


def bump(rng: random.Random, entries: list[tuple[str, str, str]]) -> None:
    """A dependency update: a few locked versions and checksums change."""
    for _ in range(rng.randrange(1, 6)):
        i = rng.randrange(len(entries))
        entries[i] = (entries[i][0], _version(rng), rng.randbytes(32).hex())


def render_lock(entries: list[tuple[str, str, str]]) -> bytes:
    out = ["# This file is automatically @generated by Cargo.", "version = 4"]
    for name, version, checksum in entries:
        out += [
            "",
            "[[package]]",
            f'name = "{name}"',
            f'version = "{version}"',
            'source = "registry+https://github.com/rust-lang/crates.io-index"',
            f'checksum = "{checksum}"',
        ]
    return ("\n".join(out) + "\n").encode()


def _version(rng: random.Random) -> str:
    return f"{rng.randrange(3)}.{rng.randrange(40)}.{rng.randrange(30)}"
