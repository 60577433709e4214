"""The draw of `bench.differential --shapes`: citations of what is not a function.

Notes cite more than functions: a type, a constant or a static cited whole (`type`,
`const`), one to three fields, variants, class-level attributes or interface members in a
row (`member`), one to three imports in a row (`import`). Each is read off the tree at the
base commit with plain tree-sitter (no help from watch), a whole one from its first
attribute or decorator (or the statement wrapping it: `export`, Go's `type`), never its
doc comment. Each cited line holds the construct alone (`_alone`): a citation cuts lines.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tree_sitter import Parser

from watcher.parse.languages import for_path, grammar

# Node types cited whole, by language: the named type definitions (a Rust `impl` too),
# and the constants and statics of a module (a Python assignment, a TS `const`, Go's
# `const`/`var` blocks).
TYPES = {
    "rust": ("struct_item", "enum_item", "type_item", "trait_item", "union_item", "impl_item"),
    "python": ("class_definition",),
    "typescript": ("interface_declaration", "type_alias_declaration", "enum_declaration"),
    "go": ("type_declaration",),
}
CONSTS = {
    "rust": ("const_item", "static_item"),
    "python": ("expression_statement",),  # an assignment to a plain name (`_module_value`)
    "typescript": ("lexical_declaration",),
    "go": ("const_declaration", "var_declaration"),
}
IMPORTS = {
    "rust": ("use_declaration",),
    "python": ("import_statement", "import_from_statement"),
    "typescript": ("import_statement",),
    "go": ("import_spec",),
}
# A list's members, by the list's node type: Rust's fields and variants, Go's fields and
# grouped constants, TS members of an interface, an object type or an enum, the
# statements of a Python class's body that assign (`_is_member` keeps those).
MEMBERS = {
    "rust": {"field_declaration_list": ("field_declaration",),
             "enum_variant_list": ("enum_variant",)},
    "python": {"block": ("expression_statement",)},
    "typescript": {"interface_body": ("property_signature", "method_signature"),
                   "object_type": ("property_signature", "method_signature"),
                   "enum_body": ("property_identifier", "enum_assignment")},
    "go": {"field_declaration_list": ("field_declaration",),
           "const_declaration": ("const_spec",),
           "interface_type": ("method_elem",)},
}  # fmt: skip
LANGUAGES = {"rust": "rust", "python": "python", "typescript": "typescript", "tsx": "typescript",
             "go": "go"}  # fmt: skip
ATTRIBUTES = ("attribute_item", "decorator")
WRAPPERS = ("export_statement", "decorated_definition")
SHAPES = ("type", "const", "member", "import")


WHOLE = ("whole", "type", "const")  # the kinds of citation that cite a construct whole


@dataclass(frozen=True)
class Cite:
    kind: str  # "whole" | "range" (functions) or one of SHAPES
    path: str
    start: int
    end: int
    name: str  # the construct's name, or the type's that holds the members ("?": none)


def draw(
    repo_files: list[str], read: Callable[[str], bytes], n: int, rng: random.Random
) -> list[Cite]:
    """N citations of each shape in SHAPES, from the files `repo_files` (read by `read`),
    in a seeded order; at most two of a shape per file, so that many files are drawn."""
    paths = [p for p in repo_files if _language(p) is not None]
    rng.shuffle(paths)
    drawn: dict[str, list[Cite]] = {shape: [] for shape in SHAPES}
    for path in paths:
        if all(len(cites) >= n for cites in drawn.values()):
            break
        source = read(path)
        found = candidates(source, path)
        for shape in SHAPES:
            options = found[shape]
            rng.shuffle(options)
            for cite in options[: min(2, n - len(drawn[shape]))]:
                drawn[shape].append(cite)
    return [cite for shape in SHAPES for cite in drawn[shape]]


def named_kinds(path: str) -> tuple[str, ...]:
    """The node types of named constructs cited whole in the file's language (a Go type
    by its spec, which has the name), for finding one by name."""
    language = _language(path)
    if language is None:
        return ()
    kinds = TYPES[language] + CONSTS[language]
    return ("type_spec", "const_spec", "var_spec") if language == "go" else kinds


def _language(path: str) -> str | None:
    return LANGUAGES.get(for_path(path) or "")


def candidates(source: bytes, path: str, rng: random.Random | None = None) -> dict[str, list[Cite]]:
    """Every citation of each shape the file offers; a run of members or imports is one
    to three in a row, chosen by `rng` (seeded 0 by default)."""
    rng = rng or random.Random(0)
    language = _language(path) or ""
    tree = Parser(grammar(for_path(path) or "")).parse(source)
    lines = source.split(b"\n")
    found: dict[str, list[Cite]] = {shape: [] for shape in SHAPES}
    root = tree.root_node
    for node in _walk(root):
        if node.type in TYPES[language]:
            found["type"].append(_whole("type", path, node, lines))
        elif node.type in CONSTS[language] and _top(node) and _is_const(node, language):
            found["const"].append(_whole("const", path, node, lines))
        if node.type in MEMBERS[language]:
            members = [c for c in node.named_children
                       if c.type in MEMBERS[language][node.type] and _is_member(c, language)
                       and _alone(c, lines)]  # fmt: skip
            if language == "go" and node.type == "const_declaration" and len(members) < 2:
                members = []  # a lone `const X = 1` is cited whole
            if members:
                found["member"].append(_run("member", path, members, _owner(node), rng))
    imports = [c for c in _walk(root) if c.type in IMPORTS[language] and _alone(c, lines)]
    runs = _consecutive(imports)
    for run in runs:
        found["import"].append(_run("import", path, run, "?", rng))
    return {shape: [c for c in cites if c is not None] for shape, cites in found.items()}


def _walk(root: Any) -> list[Any]:
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(reversed(node.named_children))
    return found


def _top(node: Any) -> bool:
    """At a module's top level (under `export` at most)."""
    parent = node.parent
    if parent is not None and parent.type == "export_statement":
        parent = parent.parent
    return parent is not None and parent.type in ("source_file", "module", "program")


def _is_const(node: Any, language: str) -> bool:
    if language == "python":
        inner = node.named_children
        return (len(inner) == 1 and inner[0].type == "assignment"
                and (left := inner[0].child_by_field_name("left")) is not None
                and left.type == "identifier")  # fmt: skip
    if language == "typescript":
        text = node.text or b""
        return text.startswith(b"const ") and len(node.named_children) == 1
    return True


def _is_member(node: Any, language: str) -> bool:
    """A Python class body's statement that assigns a name (`x: int = 0`, `model_config =
    ...`), the others not: a class's body holds methods too."""
    if language != "python":
        return True
    block = node.parent
    if block is None or block.parent is None or block.parent.type != "class_definition":
        return False
    inner = node.named_children
    return len(inner) == 1 and inner[0].type == "assignment"


def _owner(node: Any) -> str:
    """The name of the definition holding a list of members."""
    current = node
    while current is not None:
        name = current.child_by_field_name("name")
        if name is not None and current.type not in ("field_declaration",):
            return (name.text or b"").decode(errors="replace")
        current = current.parent
    return "?"


def _first(node: Any) -> Any:
    """Where a construct's text starts: the wrapper holding it (`export`, a decorated
    definition, Go's `type` of one spec), then the attributes right above."""
    first = node
    while first.parent is not None and first.parent.type in WRAPPERS:
        first = first.parent
    previous = first.prev_named_sibling
    while previous is not None and previous.type in ATTRIBUTES:
        first = previous
        previous = previous.prev_named_sibling
    return first


def _name(node: Any) -> str:
    for inner in (node, *node.named_children):
        for field in ("name", "left"):
            child = inner.child_by_field_name(field)
            if child is not None:
                return (child.text or b"").decode(errors="replace")
        if inner.type in SPECS:
            return _name(inner)
    kind = node.child_by_field_name("type") if node.type == "impl_item" else None
    return (kind.text or b"").decode(errors="replace") if kind is not None else "?"


# What holds a construct's name inside the node cited (Go's `type` around its spec).
SPECS = ("type_spec", "variable_declarator", "const_spec", "var_spec", "assignment")


def _whole(shape: str, path: str, node: Any, lines: list[bytes]) -> Cite | None:
    first = _first(node)
    if not _alone(first, lines, node):
        return None
    return Cite(shape, path, first.start_point[0] + 1, node.end_point[0] + 1, _name(node))


def _run(shape: str, path: str, members: list[Any], name: str, rng: random.Random) -> Cite | None:
    size = rng.randint(1, min(3, len(members)))
    at = rng.randrange(0, len(members) - size + 1)
    chosen = members[at : at + size]
    first = _first(chosen[0])
    return Cite(shape, path, first.start_point[0] + 1, chosen[-1].end_point[0] + 1, name)


def _consecutive(nodes: list[Any]) -> list[list[Any]]:
    """Nodes in runs of siblings next to each other."""
    runs: list[list[Any]] = []
    for node in sorted(nodes, key=lambda n: n.start_byte):
        if runs and runs[-1][-1].next_named_sibling == node:
            runs[-1].append(node)
        else:
            runs.append([node])
    return runs


def _alone(node: Any, lines: list[bytes], last: Any = None) -> bool:
    """Nothing but space before the construct on its first line, and nothing but `;`
    or `,` (or a comment) after it on its last."""
    last = last or node
    row, column = node.start_point
    end_row, end_column = last.end_point
    before = lines[row][:column].strip()
    after = lines[end_row][end_column:].strip()
    return not before and (after in (b"", b";", b",") or after.startswith((b"//", b"#")))
