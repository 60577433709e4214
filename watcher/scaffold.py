"""`watch rule new`: a starting rule for a citation, targeting the smallest named construct
(function, struct, impl, ...) that covers the cited lines at the note's commit."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from watcher import config as config_mod
from watcher import languages, locate, syntax
from watcher.check import CheckOptions, group
from watcher.classify import citation_item, parse_at, plan
from watcher.errors import WatchError
from watcher.mirrors import Mirror
from watcher.models import Result, Rule
from watcher.notes import site_notes
from watcher.rules import compile_rule

if TYPE_CHECKING:
    from tree_sitter import Node


def rule_new(config_file: Path, note_id: str, source: int, *, offline: bool, out: TextIO) -> int:
    """Write a rule for the note's `source`-th code citation (1-based) and print it."""
    config = config_mod.load(config_file)
    note = site_notes(config).notes.get(note_id)
    if note is None:
        raise WatchError(f"no note with id {note_id!r}; `watch notes` lists them")
    if not 1 <= source <= len(note.citations):
        count = len(note.citations)
        raise WatchError(f"note {note_id} has {count} code citations; pick --source 1..{count}")
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
            mirror.sync()
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


def draft(parsed: syntax.Parsed, note_id: str, path: str, start: int, end: int) -> str:
    """The TOML of a rule for lines start-end of a parsed file."""
    if parsed.tree is None:
        raise WatchError(f"{path}: watch cannot parse this language; rules need tree-sitter")
    kinds = languages.LANGUAGES[parsed.language].definitions
    chain = _covering(parsed.tree.root_node, kinds, start, end)
    if not chain:
        raise WatchError(f"{path}:{start}-{end}: no named construct covers these lines")
    node, outer = chain[-1], chain[-2] if len(chain) > 1 else None
    name = syntax.definition_name(node)
    rule_id = _kebab(f"{note_id}-{name}")
    inside = f"\ninside = '''{_pattern(outer, 'scope')}'''" if outer is not None else ""
    text = (
        f'[[rule]]\nid = "{rule_id}"\nnote = "{note_id}"\npath = "{path}"{inside}\n'
        f"query = '''{_pattern(node, 'target')}'''\n"
        f"# [[rule.claims]]\n# capture = \"target\"\n# matches = 'what must stay true'\n"
        f'# says = "the sentence of the note that depends on it"\n'
    )
    _check(text, parsed, path)
    return text


def _covering(root: Node, kinds: frozenset[str], start: int, end: int) -> list[Node]:
    """Definitions that cover lines start-end, outermost first. Where none covers them
    whole (say the lines include an attribute above a struct), the definition that
    overlaps them most."""
    chain: list[Node] = []
    node: Node | None = root
    while node is not None:
        inner = next(
            (c for c in node.named_children if _lines(c)[0] <= start and end <= _lines(c)[1]), None
        )
        if inner is None:
            overlapping = [
                c for c in node.named_children if c.type in kinds and _overlap(c, start, end)
            ]
            chain += (
                [max(overlapping, key=lambda c: _overlap(c, start, end))] if overlapping else []
            )
            break
        if inner.type in kinds:
            chain.append(inner)
        node = inner
    return chain


def _lines(node: Node) -> tuple[int, int]:
    return node.start_point[0] + 1, node.end_point[0] + 1


def _overlap(node: Node, start: int, end: int) -> int:
    first, last = _lines(node)
    return max(0, min(end, last) - max(start, first) + 1)


def _pattern(node: Node, capture: str) -> str:
    field = next(f for f in ("name", "type") if node.child_by_field_name(f) is not None)
    named = node.child_by_field_name(field)
    text = (named.text if named is not None and named.text else b"").decode(errors="replace")
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'({node.type} {field}: (_) @name (#eq? @name "{escaped}")) @{capture}'


def _check(text: str, parsed: syntax.Parsed, path: str) -> None:
    import tomllib

    raw = tomllib.loads(text)["rule"][0]
    rule = Rule(**{k: v for k, v in raw.items() if k in ("id", "note", "path", "query", "inside")},
                file="(draft)")  # fmt: skip
    found = locate.targets(compile_rule(rule), path, parsed)
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
