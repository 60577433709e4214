"""`watch fix`: move citations to where upstream has them now, in the notes themselves.

Without `--accept`, only `moved` citations change (token-identical code at new lines):
their `commit`, `path` (or permalink) and `date`. With `--accept NOTE_ID`, a human has
re-read the note against HEAD, and everything it tracks is re-based there (see
`accept`). Nothing is written without `--write`: the change is shown as a diff.
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from watcher.config import Config, Upstream, load
from watcher.errors import NoteError, WatchError
from watcher.inputs import edit
from watcher.inputs.notememo import site_notes
from watcher.inputs.rules import load_rules
from watcher.models import ErrorCode, Location, Note, Quote, Result, Rule, Verdict
from watcher.pipeline import CheckOptions, run_check

if TYPE_CHECKING:
    from watcher.mirror.mirrors import Mirror


@dataclass
class Changes:
    """New texts of the files a fix touches, and what a human still has to do."""

    root: Path
    texts: dict[Path, tuple[str, str]] = field(default_factory=dict)  # path -> (old, new)
    todo: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    renamed: dict[str, dict[str, str]] = field(default_factory=dict)  # repo -> old id -> new

    def rename(self, repo: str, old: str, new: str) -> None:
        self.renamed.setdefault(repo, {})[old] = new

    def keep_aliases(self, state_dir: Path) -> None:
        """Remember the ids re-based citations leave behind (`watch log OLD_ID`)."""
        from watcher.state import aliases

        for repo, renamed in self.renamed.items():
            aliases.record(state_dir, repo, renamed)

    def text(self, path: Path) -> str:
        if path not in self.texts:
            old = edit.read(path)  # as stored: CRLF and a BOM kept
            self.texts[path] = (old, old)
        return self.texts[path][1]

    def set(self, path: Path, new: str) -> None:
        self.texts[path] = (self.texts[path][0], new)

    def show(self, out: TextIO) -> None:
        for path, (old, new) in self.texts.items():
            name = path.relative_to(self.root).as_posix()
            out.writelines(
                difflib.unified_diff(
                    old.splitlines(keepends=True),
                    new.splitlines(keepends=True),
                    f"a/{name}",
                    f"b/{name}",
                )
            )

    def write(self) -> int:
        changed = [(p, new) for p, (old, new) in self.texts.items() if old != new]
        for path, new in changed:
            try:
                edit.write(path, new)  # atomic: a note is never half-written
            except OSError as exc:
                name = path.relative_to(self.root).as_posix()
                raise WatchError(
                    f"{name}: cannot write it ({exc.strerror}); check its permissions and "
                    "run `watch fix --write` again (the files before it were written)"
                ) from None
        return len(changed)


def fix(
    config_file: Path,
    *,
    write: bool,
    offline: bool,
    out: TextIO,
    accept: str | None = None,
    today: str | None = None,
) -> int:
    """`watch fix [--accept NOTE_ID] [--write]`: show the edits as a diff, or write them.

    Exit 0 when done, 1 when something still needs a human (listed on `out`)."""
    config = load(config_file)
    date = today or datetime.now(UTC).date().isoformat()
    changes = plan(config, accept, offline=offline, date=date)
    changes.show(out)
    for line in changes.done:
        out.write(f"{line}\n")
    for line in changes.todo:
        out.write(f"todo: {line}\n")
    if write:
        count = changes.write()
        changes.keep_aliases(config.state)
        out.write(f"updated {count} file{'s' if count != 1 else ''}\n")
    elif any(old != new for old, new in changes.texts.values()):
        again = f"--accept {accept} --write" if accept else "--write"
        out.write(f"run `watch fix {again}` to write these changes\n")
    else:
        out.write("nothing to change\n" if accept else "no moved citations\n")
    return 1 if changes.todo else 0


def plan(config: Config, accept: str | None, *, offline: bool, date: str) -> Changes:
    """The edits `watch fix` (or `fix --accept NOTE_ID`) would make; nothing is written."""
    notes = site_notes(config).notes
    if accept is not None and accept not in notes:
        raise WatchError(f"--accept {accept}: no note has this id; `watch notes` lists them")
    options = CheckOptions(
        note=accept, offline=offline, no_issues=True, issue_citations=False, read_only=True
    )
    report = run_check(config, options)
    changes = Changes(config.root)
    if accept is None:
        _moved(config, notes, report.results, changes, date)
    else:
        limit = config.limits.rule_bytes
        rules = load_rules(config.rules, display_root=config.root, max_bytes=limit).rules
        accept_note(config, notes[accept], rules, report.results, changes, date)
    return changes


def _moved(
    config: Config, notes: dict[str, Note], results: tuple[Result, ...], changes: Changes, date: str
) -> None:
    """Moved citations only: new commit and lines, and their `date`."""
    for note in notes.values():
        rebases = [
            edit.Rebase(c.index, c.repo, r.current.commit, cited(r.current))
            for c in note.citations
            if (r := _result(results, c.id)) is not None
            and r.verdict is Verdict.MOVED
            and r.current is not None
        ]
        if not rebases:
            continue
        path = config.root / note.file
        try:
            changes.set(path, edit.rebase_sources(changes.text(path), rebases, date, note.file))
        except NoteError as exc:  # a value it cannot edit in place: the note is left alone
            changes.todo.append(str(exc))
            continue
        _renames(note, rebases, changes)
        for rebase, citation in zip(rebases, _cited(note, rebases), strict=True):
            changes.done.append(
                f"{note.file}: {citation} -> {rebase.commit[:12] if rebase.commit else ''} "
                f"{rebase.cited}"
            )


def accept_note(
    config: Config,
    note: Note,
    rules: dict[str, Rule],
    results: tuple[Result, ...],
    changes: Changes,
    date: str,
) -> None:
    """Re-base a re-verified note on HEAD: every citation at its lines there (dropped when
    missing), quotes rewritten to the code they match now, moved rule paths updated,
    every source's `date` and the note's `lastVerified` set to `date`."""
    path = config.root / note.file
    rebases: list[edit.Rebase] = []
    done, todo = len(changes.done), len(changes.todo)
    for citation in note.citations:
        result = _result(results, citation.id)
        where = f"{note.file}: sources[{citation.index}] {citation.cited}"
        if result is None or result.verdict is Verdict.ERROR:
            why = result.message if result else "not checked"
            changes.todo.append(f"{where}: kept as it is, it cannot be re-based ({why})")
        elif result.current is None:
            rebases.append(edit.Rebase(citation.index, citation.repo, None, None))
            changes.done.append(f"{where}: dropped, not found at HEAD ({result.message})")
        else:
            new = cited(result.current)
            rebases.append(edit.Rebase(citation.index, citation.repo, result.current.commit, new))
    # Quotes first: their lines are the note's lines before the front matter changes.
    text = _quotes(config, note, results, changes.text(path), changes)
    try:
        # Every source's date, issue citations' too: the whole note was re-read.
        text = edit.rebase_sources(text, rebases, date, note.file, every_date=True)
        text = edit.set_key(text, "lastVerified", date, note.file)
    except NoteError as exc:  # a value it cannot edit in place: nothing is re-based
        del changes.done[done:], changes.todo[todo:]
        changes.todo.append(f"{exc} (nothing of note {note.id} was re-based)")
        return
    changes.set(path, text)
    _renames(note, rebases, changes)
    _rules(config, note, rules, results, changes)


def _quotes(
    config: Config, note: Note, results: tuple[Result, ...], text: str, changes: Changes
) -> str:
    """Changed quotes rewritten to their closest match at HEAD, last first (lines stay)."""
    for quote in sorted(note.quotes, key=lambda q: -q.line):
        result = _result(results, quote.id)
        where = f"{note.file}:{quote.line}: quote {quote.index}"
        if result is None or result.verdict is Verdict.FRESH:
            continue
        if result.verdict is Verdict.CHANGED and result.current is not None:
            now = _quote_now(config, result, quote.language, quote.text)
            if now is not None:
                text = edit.replace_quote(text, quote, now)
                changes.done.append(f"{where}: rewritten to {where_at(result.current)}; check it")
                continue
        if result.error is ErrorCode.QUOTE_BASELINE:
            # Not at the old commits: corrected by hand to HEAD? Judge it where it is going.
            found = _quote_at_new_baseline(config, note, quote, results)
            if found is not None:
                changes.done.append(f"{where}: occurs at {where_at(found)}, the new baseline")
                continue
        changes.todo.append(f"{where}: {result.message}; edit or remove it by hand")
    return text


def _quote_at_new_baseline(
    config: Config, note: Note, quote: Quote, results: tuple[Result, ...]
) -> Location | None:
    """Where the quote, as written, occurs in the files of the note's citations at the
    commits `--accept` re-bases them to; None when it occurs in none of them."""
    from watcher.inputs import quotes
    from watcher.judge.classify import parse_at
    from watcher.parse import languages

    family = languages.family(quote.language)
    pattern = quotes.pattern(quote.text, quote.language)
    for citation in note.citations:
        result = _result(results, citation.id)
        lang = languages.for_path(citation.path)
        if result is None or result.current is None or lang is None:
            continue
        if result.verdict is Verdict.ERROR or languages.family(lang) != family:
            continue
        now = result.current
        with _at_head(config, result) as held:
            if held is None:
                continue
            parsed = parse_at(held[0], now.path, held[1])
            match = quotes.find(pattern, parsed) if pattern.segments else None
            if match is not None:
                start, end = quotes.lines(parsed, match)
                return now.model_copy(update={"start_line": start, "end_line": end})
    return None


def _quote_now(config: Config, result: Result, language: str, text: str) -> str | None:
    from watcher.judge import classify

    assert result.current is not None
    with _at_head(config, result) as held:
        if held is None:
            return None
        mirror, blob = held
        return classify.quote_now(mirror, text, language, result.current.path, blob)


@contextlib.contextmanager
def _at_head(config: Config, result: Result) -> Iterator[tuple[Mirror, str] | None]:
    """The mirror of the result's upstream and the blob of the file where HEAD has the
    item, fetched (None: no such file there); the mirror is closed after."""
    from watcher.mirror.mirrors import Mirror

    assert result.current is not None
    upstream = config.upstream_for(result.repo) or Upstream(repo=result.repo)
    mirror = Mirror(upstream, config.cache)
    try:
        blob = mirror.blob_id(result.current.commit, result.current.path)
        if blob is not None:
            mirror.prefetch([blob])
        yield None if blob is None else (mirror, blob)
    finally:
        mirror.close()


def _rules(
    config: Config,
    note: Note,
    rules: dict[str, Rule],
    results: tuple[Result, ...],
    changes: Changes,
) -> None:
    for rule in (r for r in rules.values() if r.note == note.id):
        result = _result(results, rule.id)
        if result is None:
            continue
        where = f"{rule.file}: rule {rule.id}"
        if result.current is not None and result.current.path != rule.path:
            path = config.root / rule.file
            new = edit.set_rule_path(path, changes.text(path), rule.id, result.current.path)
            changes.set(path, new)
            changes.done.append(f"{where}: path {rule.path} -> {result.current.path}")
        if result.verdict in (Verdict.BROKEN, Verdict.MISSING, Verdict.ERROR):
            changes.todo.append(
                f"{where}: {result.verdict.value} at HEAD ({result.message}); at its new "
                "baseline it must match one target with every claim holding: update it, "
                "then run `watch rules lint`"
            )
        elif result.current is not None and (count := _targets_at(config, rule, result)) != 1:
            changes.todo.append(
                f"{where}: matches {count} @target nodes in {result.current.path} at "
                f"{result.current.commit[:12]}, its new baseline once the note is re-based; "
                "it must match exactly one there: tighten the query or its `inside` scope, "
                "then run `watch rules lint`"
            )


def _targets_at(config: Config, rule: Rule, result: Result) -> int:
    """How many @target nodes the rule matches in the file where HEAD has it: the rule's
    baseline after `--accept` (a check at HEAD tolerates several; a baseline does not)."""
    from watcher.inputs.rules import compile_rule
    from watcher.judge.classify import parse_at
    from watcher.locate.targets import targets

    assert result.current is not None
    path = result.current.path
    with _at_head(config, result) as held:
        if held is None:
            return 0
        compiled = compile_rule(rule)
        parsed = parse_at(held[0], path, held[1], compiled.language)
        return len(targets(compiled, path, parsed))


def cited(loc: Location) -> str:
    """`FILE:START-END` (or `FILE:LINE`, or `FILE`) for a location."""
    return loc.cited


def where_at(loc: Location) -> str:
    return f"{cited(loc)} at {loc.commit[:12]}"


def _result(results: tuple[Result, ...], item_id: str) -> Result | None:
    return next((r for r in results if r.id == item_id), None)


def _renames(note: Note, rebases: list[edit.Rebase], changes: Changes) -> None:
    """Old citation id -> the id it has once re-based (its new lines are in the id)."""
    by_index = {c.index: c for c in note.citations}
    for rebase in rebases:
        if rebase.cited is not None:
            old = by_index[rebase.index]
            changes.rename(old.repo, old.id, f"{note.id}:{rebase.cited}")


def _cited(note: Note, rebases: list[edit.Rebase]) -> list[str]:
    by_index = {c.index: c for c in note.citations}
    return [f"{by_index[r.index].commit[:12]} {by_index[r.index].cited}" for r in rebases]
