"""Front matter as YAML: one safe parse that keeps every plain scalar text, bounded in
nesting and in expansion, and the line of each key and list item in the nodes it leaves.

Apart from `notes` so that YAML is imported only when a note is parsed: a run whose notes
are all remembered (`notememo`) reads none.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import yaml

from watcher.errors import NoteError

_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~10x faster
# YAML 1.1 reads `commit: 010022777` (a real short id) as the octal number 2106879,
# `12345678` as a number and `2026-08-22` as a date: a plain scalar is text here, and the
# front matter's model says what is a date.
_TEXT_ONLY = {
    "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:bool",
}  # fmt: skip


class _Loader(_BASE):  # type: ignore[misc,valid-type]
    """The safe loader, with no plain scalar resolved to a number, a boolean or a date."""

    yaml_implicit_resolvers: ClassVar[dict[Any, list[tuple[str, Any]]]] = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag not in _TEXT_ONLY]
        for first, resolvers in _BASE.yaml_implicit_resolvers.items()
    }


_LOADER = _Loader
MAX_DEPTH = 64  # nesting of front matter; notes need 3, libyaml crashes near 100,000


def load_yaml(text: str, file: str, offset: int, max_nodes: int) -> tuple[Any, Any]:
    """Compose the YAML once, refuse it if it nests or expands past the bounds (an alias
    bomb composes to a few nodes and expands to billions), then build the data from
    the same node graph: one parse, and the nodes still give each key's line."""
    if (depth := _flow_depth(text)) > MAX_DEPTH:
        raise NoteError(
            file,
            f"front matter nests {depth} levels deep (at most {MAX_DEPTH}); flatten it",
            line=offset,
        )
    loader = _LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        if "&" in text or 2 * len(text) + 1 > max_nodes:
            # Without an anchor there is no alias: a tree, whose every node but a null
            # value (which follows a key) takes a character, so a short text is small.
            _check_expansion(node, max_nodes, file, offset)
        return node, loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = offset + mark.line + 1 if mark else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise NoteError(file, f"front matter is not valid YAML: {problem}", line=line) from None
    finally:
        loader.dispose()


_BRACKETS = re.compile(r"[\[\]{}]")


def _flow_depth(text: str) -> int:
    """The deepest nesting of [ and { (quoted text included: an overestimate is safe)."""
    depth = deepest = 0
    for bracket in _BRACKETS.finditer(text):  # only the brackets: most notes have none
        char = bracket.group()
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}" and depth:
            depth -= 1
    return deepest


def _check_expansion(root: Any, max_nodes: int, file: str, offset: int) -> None:
    """Count the nodes the data would have with every alias expanded, without expanding."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        children = _children(node)
        if not children_done:
            if key in open_:
                raise NoteError(
                    file,
                    "front matter refers to itself (a recursive alias); remove the alias",
                    line=offset + node.start_mark.line + 1,
                )
            open_.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
            continue
        open_.discard(key)
        sizes[key] = 1 + sum(sizes[id(child)] for child in children)
        if sizes[key] > max_nodes:
            raise NoteError(file, _too_many(max_nodes, aliased=len(sizes) < sizes[key]),
                            line=offset + node.start_mark.line + 1)  # fmt: skip


def _too_many(max_nodes: int, *, aliased: bool) -> str:
    """Why front matter past [limits] yaml_nodes is refused: what counts, and the fix."""
    if aliased:  # some node is counted more than once: an alias repeats it
        return (
            f"front matter expands to more than {max_nodes:,} values (aliases repeat "
            "what they name); write it out without aliases, or raise [limits] yaml_nodes"
        )
    # Every key, value and list or mapping counts: a source with url, title, commit,
    # path and date is 11, so the default admits about 900 such sources in one note.
    return (
        f"front matter holds more than {max_nodes:,} YAML values ([limits] yaml_nodes: "
        f"each key, value, list and mapping counts, about 11 per source, so about "
        f"{max_nodes // 11:,} sources); split the note, or raise [limits] yaml_nodes "
        "in config.toml"
    )


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def value(node: Any, key: str) -> Any:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if getattr(k, "value", None) == key:
                return v
    return None


def key_line(node: Any, key: str, offset: int) -> int | None:
    found = value(node, key)
    return offset + found.start_mark.line + 1 if found is not None else None


def name_line(node: Any, key: str, offset: int) -> int | None:
    if isinstance(node, yaml.MappingNode):
        for k, _v in node.value:
            if getattr(k, "value", None) == key:
                return offset + int(k.start_mark.line) + 1
    return None


def item_line(seq: Any, index: int, offset: int) -> int | None:
    if isinstance(seq, yaml.SequenceNode) and index < len(seq.value):
        return offset + int(seq.value[index].start_mark.line) + 1
    return None


def item(seq: Any, index: int) -> Any:
    """The `index`th node of a sequence node (None: not a sequence, or too short)."""
    if isinstance(seq, yaml.SequenceNode) and index < len(seq.value):
        return seq.value[index]
    return None
