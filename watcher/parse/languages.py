"""The languages watch can read: a plain registry from name to grammar and file endings."""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Language


BLOCK_COMMENT = rb"/\*[^*]*\*+(?:[^/*][^*]*\*+)*/"  # C's /* ... */, not nested


@dataclass(frozen=True)
class Spec:
    """A grammar: the module that ships it, its entry point, and what counts as a definition."""

    module: str
    function: str
    extensions: tuple[str, ...]
    definitions: frozenset[str]  # node types that are named definitions (function, struct, ...)
    # A pattern for one comment (bytes), which may lie between any two tokens: C's line and
    # block comments unless said otherwise. Rust's block comments nest: see `locate.probes`.
    comment: bytes = rb"//[^\n]*|" + BLOCK_COMMENT


_RUST_DEFS = frozenset(
    {
        "function_item",
        "function_signature_item",
        "struct_item",
        "enum_item",
        "union_item",
        "impl_item",
        "trait_item",
        "mod_item",
        "const_item",
        "static_item",
        "type_item",
        "macro_definition",
    }
)
_JS_DEFS = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "class_declaration",
        "method_definition",
        "variable_declarator",
    }
)
_TS_DEFS = _JS_DEFS | {
    "interface_declaration",
    "type_alias_declaration",
    "enum_declaration",
    "abstract_class_declaration",
    "function_signature",
    "method_signature",
    "module",
}

LANGUAGES: dict[str, Spec] = {
    "rust": Spec("tree_sitter_rust", "language", (".rs",), _RUST_DEFS),
    "python": Spec(
        "tree_sitter_python",
        "language",
        (".py", ".pyi"),
        # assignment: a module's or a class's own `NAME = value` (nodes.is_definition)
        frozenset({"function_definition", "class_definition", "assignment"}),
        rb"#[^\n]*",  # (a backslash joining two lines is a token of its own)
    ),
    "go": Spec(
        "tree_sitter_go",
        "language",
        (".go",),
        frozenset({"function_declaration", "method_declaration", "type_spec", "const_spec"}),
    ),
    "javascript": Spec(
        "tree_sitter_javascript", "language", (".js", ".mjs", ".cjs", ".jsx"), _JS_DEFS
    ),
    "typescript": Spec(
        "tree_sitter_typescript", "language_typescript", (".ts", ".mts", ".cts"), _TS_DEFS
    ),
    "tsx": Spec("tree_sitter_typescript", "language_tsx", (".tsx",), _TS_DEFS),
}


def for_path(path: str) -> str | None:
    """The language of a file by its ending, or None when watch cannot parse it."""
    suffix = PurePosixPath(path).suffix.lower()
    return next((name for name, spec in LANGUAGES.items() if suffix in spec.extensions), None)


def kin(path: str) -> str:
    """What a file may be renamed to and still be followed: a file of the same language
    family (`index.js` -> `index.ts`), or for files no grammar reads the same ending."""
    language = for_path(path)
    return family(language) if language else PurePosixPath(path).suffix.lower()


@functools.cache
def grammar(name: str) -> Language:
    """The tree-sitter Language for a registered name (loaded once per process)."""
    from tree_sitter import Language

    spec = LANGUAGES[name]
    module = importlib.import_module(spec.module)
    return Language(getattr(module, spec.function)())


# The info strings of fenced code blocks (```rust) that name a language watch reads.
FENCE_NAMES: dict[str, str] = {
    "rust": "rust",
    "rs": "rust",
    "python": "python",
    "py": "python",
    "python3": "python",
    "go": "go",
    "golang": "go",
    "javascript": "javascript",
    "js": "javascript",
    "jsx": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "typescript": "typescript",
    "ts": "typescript",
    "tsx": "tsx",
}


def for_fence(info: str) -> str | None:
    """The language of a fenced block by its info string (` ```rust title=x `), or None."""
    word = info.strip().split(maxsplit=1)[0].lower() if info.strip() else ""
    return FENCE_NAMES.get(word.lstrip("{.").rstrip("}"))


def family(name: str) -> str:
    """Languages whose code can quote each other's files: TypeScript quotes a .tsx file."""
    return "js" if name in ("javascript", "typescript", "tsx") else name
