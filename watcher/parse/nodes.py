"""What a tree's nodes mean: which are definitions, their names, and the attributes and
wrapping statements written around them that belong to them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

# Node types written above a definition that belong to it: Rust's `#[derive(..)]`,
# Python's and TypeScript's decorators.
ATTRIBUTES = frozenset({"attribute_item", "decorator"})


# Statements whose grammar puts a definition's first words outside it: `export` (JS, TS),
# `const`/`let`/`var` around one declarator, `declare`, Go's `type` and `const` around
# one spec. Wrapping one definition alone, they belong to it as its attributes do: a
# citation of `export function f` or `type T struct` cites f or T.
WRAPPERS = frozenset({"export_statement", "lexical_declaration", "variable_declaration",
                      "ambient_declaration", "type_declaration", "const_declaration"})  # fmt: skip


def with_attributes(node: Node) -> Node:
    """Where a definition's text starts: the statement wrapping it alone (`WRAPPERS`), or
    the first attribute written directly above it (or above that statement), or itself."""
    first = node
    while (parent := first.parent) is not None and wrapped(parent) == first:
        first = parent
    previous = first.prev_named_sibling
    while previous is not None and (previous.type in ATTRIBUTES or "comment" in previous.type):
        if previous.type in ATTRIBUTES:
            first = previous
        previous = previous.prev_named_sibling
    return first


def wrapped(node: Node) -> Node | None:
    """What a wrapping statement (`WRAPPERS`) holds, when it holds one thing alone beside
    attributes and comments; None for any other node."""
    if node.type not in WRAPPERS:
        return None
    inner = [c for c in node.named_children if c.type not in ATTRIBUTES and "comment" not in c.type]
    return inner[0] if len(inner) == 1 else None


def is_definition(node: Node, kinds: frozenset[str]) -> bool:
    """A node of one of the language's definition kinds. A Python assignment counts only
    where it names a module's or a class's own value (`LATEST_PROTOCOL_VERSION = ...`),
    never a local variable, an attribute or an unpacking."""
    if node.type not in kinds:
        return False
    if node.type != "assignment":
        return True
    left, statement = node.child_by_field_name("left"), node.parent
    scope = statement.parent if statement is not None else None
    if left is None or left.type != "identifier" or scope is None:
        return False
    if statement is None or statement.type != "expression_statement":
        return False
    owner = scope.parent
    return scope.type == "module" or (owner is not None and owner.type == "class_definition")


def definition_names(node: Node) -> tuple[str, ...]:
    """What a definition adds to the name path of what it holds: its name, after its
    receiver's type for a Go method. A Rust method sits in its type's `impl`, which names
    it; a Go method stands alone, and `Close` of `*streamableClientConn` must not be taken
    for `Close` of another type: its path is ("streamableClientConn", "Close")."""
    name = definition_name(node)
    receiver = _receiver_type(node) if node.type == "method_declaration" else None
    return (name,) if receiver is None else (receiver, name)


def _receiver_type(node: Node) -> str | None:
    """A Go method's receiver type's name, pointer and type arguments left out."""
    receiver = node.child_by_field_name("receiver")
    declared = receiver.named_children if receiver is not None else []
    kind = declared[0].child_by_field_name("type") if declared else None
    while kind is not None and kind.type in ("pointer_type", "generic_type"):
        inner = kind.named_children
        kind = kind.child_by_field_name("type") if kind.type == "generic_type" else inner[0]
    if kind is None or kind.type != "type_identifier":
        return None
    return (kind.text or b"").decode("utf-8", errors="replace")


def definition_name(node: Node) -> str:
    """A readable name for a definition node: `fn foo`, `impl Trait for Type`, `NAME = `..."""
    for field_name in ("name", "left", "type"):
        child = node.child_by_field_name(field_name)
        if child is not None:
            text = (child.text or b"").decode("utf-8", errors="replace")
            trait = node.child_by_field_name("trait") if node.type == "impl_item" else None
            if trait is not None:
                text = f"{(trait.text or b'').decode(errors='replace')} for {text}"
            return text
    return node.type
