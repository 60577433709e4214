"""What `bench.differential` reads of git and of the source: git's output, the
functions of a version (tree-sitter), and a line's code with its comments left out."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from bench import draw
from watcher.parse.languages import for_path, grammar

FUNCTIONS = {
    "rust": ("function_item",),
    "python": ("function_definition",),
    "typescript": ("function_declaration", "method_definition"),
    "tsx": ("function_declaration", "method_definition"),
    "javascript": ("function_declaration", "method_definition"),
    "go": ("function_declaration", "method_declaration"),
}
ATTRIBUTES = ("attribute_item", "decorator")
# A comment on a line; Rust's `#[attribute]` and `#![attribute]` are code, not Python's `#`.
COMMENT = re.compile(r"//.*|#(?!!?\[).*|/\*.*?\*/|^\s*\*.*")


TOKEN = re.compile(r"\w+|[^\w\s]")  # about a token: a word, or one sign


def definitions(source: bytes, path: str, *, types: bool = True) -> list[Any]:
    """The functions of the file, and (`types`) the types and constants `--shapes` cites,
    which the classifiers find by name as they find a function."""
    from tree_sitter import Parser

    language = for_path(path) or ""
    tree = Parser(grammar(language)).parse(source)
    named = draw.named_kinds(path) if types else ()
    found, stack = [], [tree.root_node]
    while stack:
        node = stack.pop()
        if (node.type in FUNCTIONS[language] and node.child_by_field_name("body") is not None) or (
            node.type in named and node.child_by_field_name("name") is not None
        ):
            found.append(node)
        stack.extend(node.children)
    return sorted(found, key=lambda n: n.start_byte)


def name_of(node: Any) -> str:
    name = node.child_by_field_name("name")
    return name.text.decode(errors="replace") if name is not None else "?"


def with_attributes(node: Any) -> Any:
    first = node
    while first.prev_named_sibling is not None and first.prev_named_sibling.type in ATTRIBUTES:
        first = first.prev_named_sibling
    if node.parent is not None and node.parent.type == "decorated_definition":
        return node.parent
    return first


def code_of(lines: list[str]) -> str:
    return "".join("".join(COMMENT.sub("", line).split()) for line in lines)


def code_lines(lines: list[str]) -> list[str]:
    return [c for line in lines if (c := "".join(COMMENT.sub("", line).split()))]


def patch_lines(patch: str, sign: str) -> list[str]:
    return [line[1:] for line in patch.splitlines()
            if line.startswith(sign) and not line.startswith(sign * 3)]  # fmt: skip


def function_at(repo: Path, commit: str, path: str, line: int) -> str | None:
    """The name of the innermost function holding `line` of `path` at `commit`."""
    try:
        source = git_bytes(repo, "show", f"{commit}:{path}")
    except subprocess.CalledProcessError:
        return None
    holding = [n for n in definitions(source, path)
               if with_attributes(n).start_point[0] + 1 <= line <= n.end_point[0] + 1]  # fmt: skip
    return name_of(max(holding, key=lambda n: n.start_byte)) if holding else None


def path_exists(repo: Path, rev: str, path: str) -> bool:
    done = subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{rev}:{path}"],
                          capture_output=True, check=False)  # fmt: skip
    return done.returncode == 0


def git_out(repo: Path, *args: str) -> str:
    return git_bytes(repo, *args).decode(errors="replace")


def git_bytes(repo: Path, *args: str) -> bytes:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True)
    return done.stdout
