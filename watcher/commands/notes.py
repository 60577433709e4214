"""`watch notes`: every note, its citations, and the rules guarding them."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from watcher.config import Config, load
from watcher.models import CodeCitation, Rule


def notes(config_file: Path, out: TextIO) -> int:
    """`watch notes`: every note, its citations, and which are guarded by rules."""
    from watcher.inputs.notememo import site_notes
    from watcher.inputs.rules import load_rules

    config = load(config_file)
    loaded = site_notes(config)
    rules = load_rules(config.rules, display_root=config.root, max_bytes=config.limits.rule_bytes)
    for note in loaded.notes.values():
        out.write(f"{note.id}  ({note.file})  {note.title}\n")
        guards = [r for r in rules.rules.values() if r.note == note.id]
        for number, citation in enumerate(note.citations, start=1):  # `rule new --source N`
            guard = _guard_text(config, citation, [r for r in guards if r.path == citation.path])
            where = f"{citation.repo}@{citation.commit[:10]} {citation.cited}"
            out.write(f"  code {number:<2} {where}{guard}\n")
        for issue in note.issue_citations:
            out.write(f"  {issue.kind:<6} {issue.repo}#{issue.number}\n")
        for other in note.untracked:
            out.write(f"  other  {other} (not tracked)\n")
    for err in [*loaded.errors, *rules.errors]:
        out.write(f"error: {err}\n")
    return 2 if loaded.errors or rules.errors else 0


def _guard_text(config: Config, citation: CodeCitation, rules: list[Rule]) -> str:
    """Which rules guard the citation: those whose baseline target (as the last run saw
    it) overlaps the cited lines; a rule not judged yet is named as such."""
    from watcher.inputs import guards
    from watcher.state.upstream import last_baselines

    if not rules:
        return ""
    baselines = last_baselines(config.state, citation.repo, [r.id for r in rules])
    guarding, unknown = [], []
    for rule in rules:
        target = baselines.get(rule.id)
        commit = target.commit if target and target.commit.startswith(citation.commit) else ""
        covers = guards.covers(target, citation, commit) if target else None
        if covers:
            guarding.append(rule.id)
        elif covers is None:
            unknown.append(rule.id)
    text = f"  guarded by {', '.join(guarding)}" if guarding else ""
    if unknown:
        text += f"  (same file as {', '.join(unknown)}: run `watch check` to see its lines)"
    return text
