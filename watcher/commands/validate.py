"""`watch validate`: config, notes and rules checked offline in one pass (a pre-commit hook),
and each cited range read where the mirror holds it (`watcher.locate.lint`)."""

from __future__ import annotations

import contextlib
import functools
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

from watcher.commands.rules import run_all
from watcher.config import Config, Upstream, load
from watcher.errors import ConfigError, TooLarge, UpstreamError
from watcher.judge.plan import Item, cited_problem
from watcher.locate.lint import lint
from watcher.mirror.clone import held_blobs
from watcher.mirror.mirrors import Mirror
from watcher.models import CodeCitation, Note
from watcher.parse.languages import for_path
from watcher.parse.syntax import Parsed, parse
from watcher.pipeline import CheckOptions, gather, group
from watcher.report import annotation, plural


def validate(config_file: Path, out: TextIO, fmt: str = "text") -> int:
    """`watch validate`: config, notes and rules (and rule tests) checked offline in one
    pass, as a pre-commit hook would; exit 2 when anything is wrong. With `fmt="github"`,
    each problem is a workflow command GitHub shows on the pull request's diff.

    Each cited range is linted (`watcher.locate.lint`) where the site's mirror holds the
    file at the cited commit; what it finds is a warning, which leaves the exit code be."""
    try:
        config = load(config_file)
    except ConfigError as exc:
        if fmt != "github":
            raise
        out.write(annotation("error", exc.detail, exc.file, exc.line, title="watch: config"))
        return exc.exit_code
    inputs = gather(config, CheckOptions(offline=True))
    problems = [r.message for r in inputs.errors]
    rules = {i.rule.id: i.rule for i in inputs.items if i.rule is not None}
    problems += [o.describe() for o in run_all(rules.values()) if not o.passed]
    problems += cited_problems(config, inputs.items)
    warnings, skipped = lint_citations(config, inputs.notes.values())
    for level, message in [*(("error", p) for p in problems), *(("warning", w) for w in warnings)]:
        if fmt == "github":
            out.write(annotation(level, message, title="watch validate", root=config.root))
        else:
            out.write(f"{message}\n")
    out.writelines(f"{line}\n" for line in skipped)
    summary = f"{plural(len(inputs.notes), 'note')}, {plural(len(rules), 'rule')}: " + (
        f"{plural(len(problems), 'problem')}" if problems else "valid"
    )
    summary += f", {plural(len(warnings), 'warning')}" if warnings else ""
    out.write(f"{config.display(config.file)}: {summary}\n")
    return 2 if problems else 0


def lint_citations(config: Config, notes: Iterable[Note]) -> tuple[list[str], list[str]]:
    """Warnings for the cited ranges that cut a statement or a definition, or hold one and
    stray lines (`notes/x.md:12: src/a.rs:40-52 starts inside ...; cite 38-52`), and a
    line for what was not read. Only what the mirrors hold is read: nothing is fetched,
    so a file the mirror lacks (no `watch check` yet) is skipped, and said so."""
    by_repo: dict[str, list[tuple[Note, CodeCitation]]] = defaultdict(list)
    for note in notes:
        for citation in note.citations:
            if citation.start_line is not None:
                by_repo[citation.repo.lower()].append((note, citation))
    warnings: list[tuple[str, int, str]] = []
    no_mirror: list[str] = []
    unread = 0
    for cited in by_repo.values():
        repo = cited[0][1].repo
        upstream = config.upstream_for(repo)
        if upstream is None and config.implicit_upstreams:
            upstream = Upstream(repo=repo)
        if upstream is None:
            continue  # `check` says so: no upstream for it
        found = _lint_upstream(config, upstream, cited)
        if found is None:
            no_mirror.append(repo)
            continue
        warnings += found[0]
        unread += found[1]
    lines = []
    if no_mirror:
        lines.append(
            f"citation lint: skipped for {', '.join(sorted(no_mirror))}: no mirror in the "
            "cache; after a `watch check` it reads the cited files offline"
        )
    if unread:
        lines.append(
            f"citation lint: {plural(unread, 'citation')} not read: the file at the cited "
            "commit is not in the mirror yet; a `watch check` fetches it"
        )
    return [text for _, _, text in sorted(warnings)], lines


def _lint_upstream(
    config: Config, upstream: Upstream, cited: list[tuple[Note, CodeCitation]]
) -> tuple[list[tuple[str, int, str]], int] | None:
    """One upstream's warnings (note file, line, text) and how many citations its mirror
    could not give; None when there is no mirror."""
    mirror = Mirror(upstream, config.cache, config.limits)
    if not mirror.exists:
        return None
    warnings, unread = [], 0
    try:
        for note, citation, parsed in _parses(mirror, cited):
            if parsed is None:
                unread += 1
                continue
            assert citation.start_line is not None and citation.end_line is not None
            finding = lint(parsed, citation.start_line, citation.end_line)
            if finding is not None:
                line = citation.line or 1
                text = f"{note.file}:{line}: {citation.cited} {finding.describe()}"
                warnings.append((note.file, line, text))
    finally:
        mirror.close()
    return warnings, unread


def _parses(
    mirror: Mirror, cited: list[tuple[Note, CodeCitation]]
) -> Iterator[tuple[Note, CodeCitation, Parsed | None]]:
    """Each citation of a file some grammar reads, with the parse of that file at the
    cited commit (None: the mirror does not hold it, or it is too large to read)."""
    by_commit: dict[str, list[tuple[Note, CodeCitation]]] = defaultdict(list)
    for note, citation in cited:
        if for_path(citation.path) is not None:
            by_commit[citation.commit].append((note, citation))
    for commit, at_commit in by_commit.items():
        full = mirror.resolve(commit)
        paths = sorted({c.path for _, c in at_commit})
        blobs = held_blobs(mirror.path, full, paths) if full else {}
        for note, citation in at_commit:
            blob, language = blobs.get(citation.path), for_path(citation.path)
            parsed = None
            if blob is not None and language is not None:
                with contextlib.suppress(TooLarge, UpstreamError):
                    parsed = parse(blob, language, functools.partial(mirror.read, blob))
            yield note, citation, parsed


def cited_problems(config: Config, items: list[Item]) -> list[str]:
    """Citations whose lines cannot be anchored, where the mirror holds their file: no
    fetch, so a site whose mirrors are not made yet is validated as before."""
    problems = []
    for upstream, members in group(config, items, CheckOptions(offline=True)):
        if upstream is None:
            continue
        mirror = Mirror(upstream, config.cache, config.limits)
        try:
            problems += [p for i in members if (p := cited_problem(mirror, i)) is not None]
        finally:
            mirror.close()
    return problems
