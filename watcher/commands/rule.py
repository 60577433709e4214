"""`watch rule new`: a starting rule for a citation, targeting the smallest named construct
(function, struct, impl, ...) that covers the cited lines at the note's commit."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from watcher.config import load
from watcher.errors import WatchError
from watcher.inputs.notememo import site_notes
from watcher.inputs.rules import compile_rule
from watcher.judge.classify import citation_item, parse_at, plan
from watcher.locate import targets
from watcher.mirror.mirrors import Mirror
from watcher.models import Result, Rule, span
from watcher.parse import languages, nodes, syntax
from watcher.pipeline import CheckOptions, group
from watcher.report import plural

if TYPE_CHECKING:
    from tree_sitter import Node


def rule_new(config_file: Path, note_id: str, source: int, *, offline: bool, out: TextIO) -> int:
    """Write a rule for the note's `source`-th code citation (1-based) and print it."""
    config = load(config_file)
    note = site_notes(config).notes.get(note_id)
    if note is None:
        raise WatchError(f"no note with id {note_id!r}; `watch notes` lists them")
    if not 1 <= source <= len(note.citations):
        count = len(note.citations)
        if count == 0:
            raise WatchError(f"note {note_id} has no code citation; cite the code first")
        pick = "--source 1" if count == 1 else f"--source 1..{count}"
        raise WatchError(f"note {note_id} has {plural(count, 'code citation')}; pick {pick}")
    citation = note.citations[source - 1]
    if citation.start_line is None or citation.end_line is None:
        raise WatchError(f"{citation.cited} cites a whole file; a rule needs cited lines")
    item = citation_item(citation, note.file)
    upstream = next((u for u, _ in group(config, [item], CheckOptions(offline=offline))), None)
    if upstream is None:
        raise WatchError(f"no [[upstream]] for {citation.repo} in config.toml")
    mirror = Mirror(upstream, config.cache, config.limits)
    try:
        if not offline:
            mirror.sync([item.commit])
        planned = plan(mirror, mirror.head(), item, offline=offline)
        if isinstance(planned, Result):
            raise WatchError(f"{citation.id}: {planned.message}")
        parsed = parse_at(mirror, citation.path, planned.base_blob)
    finally:
        mirror.close()
    text = draft(parsed, note_id, citation.path, citation.start_line, citation.end_line)
    target = _write(config.rules / f"{note_id}.toml", text)
    shown = config.display(target)
    out.write(f"{text}\nwritten to {shown}; add claims, then run `watch rules lint`\n")
    return 0


# Module-level (and class-level) assignments are what a "default value" citation points
# at; the languages' definition kinds do not include them all.
ASSIGNMENTS: dict[str, frozenset[str]] = {
    "python": frozenset({"assignment"}),
    "go": frozenset({"var_spec", "const_spec"}),
    "javascript": frozenset({"variable_declarator"}),
    "typescript": frozenset({"variable_declarator"}),
    "tsx": frozenset({"variable_declarator"}),
}
NAME_FIELDS = ("name", "left", "type")  # the child that names a construct, in this order


def draft(parsed: syntax.Parsed, note_id: str, path: str, start: int, end: int) -> str:
    """The TOML of a rule for lines start-end of a parsed file (leading and trailing
    comment lines, doc comments included, do not count)."""
    if parsed.tree is None:
        raise WatchError(f"{path}: watch cannot parse this language; rules need tree-sitter")
    root = parsed.tree.root_node
    extra = ASSIGNMENTS.get(parsed.language, frozenset())
    kinds = languages.LANGUAGES[parsed.language].definitions | extra
    start, end = _trim(root, parsed.source, start, end)
    chain = _covering(root, kinds, start, end)
    if not chain:
        parts = _parts(root, kinds, start, end)
        raise WatchError(f"{path}{span(start, end)}: no named construct covers these lines{parts}")
    node, outer = chain[-1], chain[-2] if len(chain) > 1 else None
    rule_id = _kebab(f"{note_id}-{_name(node)}")
    inside = f"\ninside = '''{_pattern(outer, 'scope')}'''" if outer is not None else ""
    text = (
        f'[[rule]]\nid = "{rule_id}"\nnote = "{note_id}"\npath = "{path}"{inside}\n'
        f"query = '''{_pattern(node, 'target')}'''\n"
        f"# [[rule.claims]]\n# capture = \"target\"\n# matches = 'what must stay true'\n"
        f'# says = "the sentence of the note that depends on it"\n'
    )
    _check(text, parsed, path)
    return text


def _trim(root: Node, source: bytes, start: int, end: int) -> tuple[int, int]:
    """Lines start-end without the blank and comment-only lines at either end."""
    lines = source.decode("utf-8", errors="replace").splitlines()
    blank = {n for n in range(start, end + 1) if n > len(lines) or not lines[n - 1].strip()}
    skip = _comment_lines(root, start, end) | blank
    first = next((n for n in range(start, end + 1) if n not in skip), start)
    last = next((n for n in range(end, first - 1, -1) if n not in skip), end)
    return first, last


def _comment_lines(root: Node, start: int, end: int) -> set[int]:
    """Lines in start-end that hold nothing but comments."""
    code: set[int] = set()
    comments: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        first, last = _lines(node)
        if last < start or first > end:
            continue
        if "comment" in node.type:
            comments.update(range(first, last + 1))
        elif node.child_count == 0:
            code.update(range(first, last + 1))
        else:
            stack.extend(node.children)
    return comments - code


def _covering(root: Node, kinds: frozenset[str], start: int, end: int) -> list[Node]:
    """Constructs that cover lines start-end, outermost first. Where none covers them
    whole (say the lines include an attribute above a struct), the one construct they
    overlap; several overlapping constructs are a question for the user (none is picked).
    Below a construct that covers them, only one that does with its attributes counts:
    a method cited whole is the target, not the one `const` declared in it."""
    chain: list[Node] = []
    node: Node | None = root
    while node is not None:
        inner = _cover(node, start, end)
        if inner is None:
            overlapping = _overlapping(node, kinds, start, end)
            if chain:
                overlapping = [n for n in overlapping if _spans(n, start, end)]
            chain += overlapping if len(overlapping) == 1 else []
            break
        if inner.type in kinds:
            chain.append(inner)
        node = inner
    return chain


def _cover(node: Node, start: int, end: int) -> Node | None:
    """The child of `node` that covers lines start-end whole, if one does."""
    return next(
        (c for c in node.named_children if _lines(c)[0] <= start and end <= _lines(c)[1]), None
    )


def _spans(node: Node, start: int, end: int) -> bool:
    """Whether a construct, with its attributes (`syntax.with_attributes`), covers start-end."""
    return nodes.with_attributes(node).start_point[0] + 1 <= start and end <= _lines(node)[1]


def _overlapping(node: Node, kinds: frozenset[str], start: int, end: int) -> list[Node]:
    """The outermost constructs below `node` that overlap start-end (through wrappers
    such as `export` statements, decorators and declaration lists)."""
    found: list[Node] = []
    for child in node.named_children:
        if _overlap(child, start, end):
            found += [child] if child.type in kinds else _overlapping(child, kinds, start, end)
    return found


def _parts(root: Node, kinds: frozenset[str], start: int, end: int) -> str:
    """`; these cover parts of it: function_item a (lines 1-3), ...`, or a hint."""
    node = root
    while (inner := _cover(node, start, end)) is not None and inner.type not in kinds:
        node = inner
    found = _overlapping(node, kinds, start, end)
    if not found:
        return "; cite the lines of a function, type, constant or assignment"
    listed = ", ".join(f"{n.type} {_name(n)} (lines {_lines(n)[0]}-{_lines(n)[1]})" for n in found)
    return f"; these cover parts of it: {listed}; cite one of them"


def _name(node: Node) -> str:
    """What names a construct: `foo`, `DEFAULT_TIMEOUT`, `Trait for Type`."""
    named = next((c for f in NAME_FIELDS if (c := node.child_by_field_name(f)) is not None), None)
    if node.type == "impl_item" or named is None:
        return nodes.definition_name(node)
    return (named.text or b"").decode("utf-8", errors="replace")


def _lines(node: Node) -> tuple[int, int]:
    return node.start_point[0] + 1, node.end_point[0] + 1


def _overlap(node: Node, start: int, end: int) -> int:
    first, last = _lines(node)
    return max(0, min(end, last) - max(start, first) + 1)


def _pattern(node: Node, capture: str) -> str:
    field = next(f for f in NAME_FIELDS if node.child_by_field_name(f) is not None)
    named = node.child_by_field_name(field)
    text = (named.text if named is not None and named.text else b"").decode(errors="replace")
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'({node.type} {field}: (_) @name (#eq? @name "{escaped}")) @{capture}'


def _check(text: str, parsed: syntax.Parsed, path: str) -> None:
    import tomllib

    raw = tomllib.loads(text)["rule"][0]
    rule = Rule(**{k: v for k, v in raw.items() if k in ("id", "note", "path", "query", "inside")},
                file="(draft)")  # fmt: skip
    found = targets.targets(compile_rule(rule), path, parsed)
    if len(found) != 1:
        count = len(found)
        raise WatchError(f"the drafted rule matches {count} targets in {path}; write it by hand")


def _write(file: Path, text: str) -> Path:
    file.parent.mkdir(parents=True, exist_ok=True)
    existing = file.read_text(encoding="utf-8") if file.is_file() else ""
    rule_id = re.search(r'^id = "([^"]+)"', text, re.M)
    if rule_id and f'id = "{rule_id.group(1)}"' in existing:
        raise WatchError(f"{file}: already has a rule {rule_id.group(1)}; edit that one instead")
    file.write_text(existing + ("\n" if existing else "") + text, encoding="utf-8")
    return file


def _kebab(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
