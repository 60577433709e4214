"""`watch validate`: config, notes and rules checked offline in one pass (a pre-commit hook)."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from watcher.commands.rules import run_all
from watcher.config import Config, load
from watcher.errors import ConfigError
from watcher.judge.plan import Item, cited_problem
from watcher.mirror.mirrors import Mirror
from watcher.pipeline import CheckOptions, gather, group
from watcher.report import annotation, plural


def validate(config_file: Path, out: TextIO, fmt: str = "text") -> int:
    """`watch validate`: config, notes and rules (and rule tests) checked offline in one
    pass, as a pre-commit hook would; exit 2 when anything is wrong. With `fmt="github"`,
    each problem is a workflow command GitHub shows on the pull request's diff."""
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
    for problem in problems:
        if fmt == "github":
            out.write(annotation("error", problem, title="watch validate", root=config.root))
        else:
            out.write(f"{problem}\n")
    summary = f"{plural(len(inputs.notes), 'note')}, {plural(len(rules), 'rule')}: " + (
        f"{plural(len(problems), 'problem')}" if problems else "valid"
    )
    out.write(f"{config.display(config.file)}: {summary}\n")
    return 2 if problems else 0


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
