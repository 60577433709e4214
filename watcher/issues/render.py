"""Titles, bodies and comments of stale-verification issues (SPEC 6.2).

Everything from upstream goes through `markdown`; everything from the user's own notes
is still treated as untrusted, because notes quote upstream too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import quote

from watcher.config import REPO_RE
from watcher.issues import markdown as md
from watcher.issues import markers
from watcher.models import Candidate, Change, Location, Note, Result, Verdict, worst

MAX_BODY = 65_536  # GitHub's limit, in characters
_BUDGET = 60_000  # leaves room for the footer and for a later reopen comment
_DIFF_BUDGETS = (12_000, 4_000, 1_000, 0)  # per item, tried in turn until the body fits
_LINE_LIMIT = 500  # one 200 kB minified line must not eat the whole body
_HISTORY_LIMIT = 50  # commits listed per item; `watch log` has the rest

CODE_KINDS = ("citation", "rule", "quote")


def title(note: Note, results: Sequence[Result]) -> str:
    """`Stale verification: NOTE_ID — SHORT REASON`, e.g. `... — 1 broken, 2 changed`."""
    counts: dict[Verdict, int] = {}
    for result in results:
        if result.verdict.stale:
            counts[result.verdict] = counts.get(result.verdict, 0) + 1
    order = sorted(counts, key=lambda v: -v.severity)
    reason = ", ".join(f"{counts[v]} {v.value}" for v in order) or "re-verified"
    return md.cut(f"Stale verification: {note.id} — {reason}", 250)


def labels(base: Sequence[str], results: Sequence[Result]) -> tuple[str, ...]:
    """The configured labels plus `verdict:WORST`."""
    return (*base, f"verdict:{worst([r.verdict for r in results]).value}")


def closed_labels(labels: Sequence[str]) -> tuple[str, ...]:
    """A closed issue's labels: its `verdict:*` label goes (it no longer describes the
    note), every other label stays, a maintainer's own included."""
    return tuple(label for label in labels if not label.startswith("verdict:"))


def body(
    note: Note, results: Sequence[Result], seen: frozenset[str], *, closed: bool = False
) -> str:
    """The issue body: marker, summary table, one section per item that moved or went stale;
    then what closes it, or (`closed`) that it is verified again."""
    ordered = sorted(results, key=lambda r: (-r.verdict.severity, r.id))
    for budget in _DIFF_BUDGETS:
        text = _body(note, ordered, seen, budget, closed)
        if len(text) <= _BUDGET:
            return text
    return _shrink(note, ordered, seen, closed)


def _body(
    note: Note, results: Sequence[Result], seen: frozenset[str], diff_budget: int, closed: bool
) -> str:
    parts = [_head(note, results, seen), _table(results)]
    parts += [
        _item(n, r, diff_budget) for n, r in enumerate(results, 1) if r.verdict != Verdict.FRESH
    ]
    parts += [_verified() if closed else _checklist(note, results), _footer()]
    return "\n\n".join(parts) + "\n"


def _verified() -> str:
    return (
        "### Verified again\n\nEvery tracked item is fresh or moved; nothing is left to do. "
        "The closing comment below says at which upstream heads."
    )


def _shrink(note: Note, results: Sequence[Result], seen: frozenset[str], closed: bool) -> str:
    """Last resort for notes with hundreds of items: details of the worst ones only."""
    shown = list(results)
    while shown:
        shown = shown[: len(shown) // 2]
        text = _body(note, shown, seen, 0, closed)
        if len(text) <= _BUDGET:
            cut = len(results) - len(shown)
            more = f"{cut} more items not shown (body limit); see `watch check --note {note.id}`"
            return text + f"\n_{more}._\n"
    return _head(note, results, seen) + "\n"


def _head(note: Note, results: Sequence[Result], seen: frozenset[str]) -> str:
    status = worst([r.verdict for r in results])
    lines = [
        markers.note_marker(note.id),
        markers.seen_line(seen),
        f"## Stale verification: {md.code(note.id)}",
        "",
        f"**Note:** {md.text(note.title or note.id)} ({md.code(note.file)})  ",
        f"**Status:** **{status.value}**, the worst of {_count(len(results), 'tracked item')}",
    ]
    return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _table(results: Sequence[Result]) -> str:
    rows = ["| # | item | kind | verdict | introduced by | release |", "|---|---|---|---|---|---|"]
    for n, r in enumerate(results, 1):
        rows.append(
            f"| {n} | {md.code(r.id, 120, cell=True)} | {r.kind} | **{r.verdict.value}** "
            f"| {_commit_link(r)} | {_release(r) if _shows_release(r) else ''} |"
        )
    return "\n".join(rows)


def _item(n: int, r: Result, diff_budget: int) -> str:
    lines = [f"### {n}. {md.code(r.id, 200)}: {r.verdict.value}", "", md.text(r.message, 1000), ""]
    if r.error:
        lines.append(f"- Error code: `{r.error.value}`")
    if r.baseline is not None:  # issue citations and unreadable notes have no code location
        lines.append(f"- Baseline: {_permalink(r.repo, r.baseline)}")
        head = _permalink(r.repo, r.current) if r.current else "not found at HEAD"
        lines.append(f"- HEAD: {head}")
    if r.verdict.stale and r.introduced_by:
        lines.append(f"- Introduced by: {_attribution(r)}")
    if r.verdict.stale and r.introduced_by and r.kind != "issue":
        lines.append(f"- Released in: {_release(r)}")
    thread = _thread_link(r)
    if thread:
        lines.append(f"- Upstream thread: {thread}")
        if r.released_in:  # a merged pull request's first release
            lines.append(f"- Released in: {_release(r)}")
    if r.verdict == Verdict.MOVED and r.current:
        lines.append(f"- Suggested citation: {_suggestion(r.current)}")
    if r.candidates:
        lines.append("- Candidates (where it may be now):")
        lines += [f"  - {_candidate(r, c)}" for c in r.candidates[:10]]
    text = "\n".join(lines)
    if r.claims:
        text += "\n\n" + _claims(r)
    if r.baseline_code and diff_budget:  # where it is: the Baseline link above
        text += "\n\n" + _collapsed("Baseline code", r.baseline_code, _lang(r), diff_budget)
    if r.diff and diff_budget:
        text += "\n\n" + _collapsed("Diff (baseline → HEAD)", r.diff, "diff", diff_budget)
    if len(r.history) > 1 and diff_budget:  # one commit is the "Introduced by" line above
        text += "\n\n" + _history(r)
    return text


def _history(r: Result) -> str:
    """Every commit since the baseline that changed the item, oldest first: `watch log`."""
    shown = r.history[:_HISTORY_LIMIT]
    rows = [f"- {_change(r.repo, c)}" for c in shown]
    if len(shown) < len(r.history):
        more = len(r.history) - len(shown)
        rows.append(f"- … {more} more: {md.code(f'watch log {r.id}', 200)}")
    summary = f"History: {_count(len(r.history), 'commit')} changed it since the baseline"
    return f"<details><summary>{summary}</summary>\n\n" + "\n".join(rows) + "\n\n</details>"


def _change(repo: str, c: Change) -> str:
    release = md.code(c.released_in, 100) if c.released_in else "not in a release yet"
    return (
        f"{md.text(c.date[:10], 10)} {_link(repo, c.commit, c.pr)} **{md.text(c.state, 10)}**"
        f" ({release}): {md.text(c.summary, 200)}"
    )


def _lang(r: Result) -> str:
    from watcher.parse.languages import LANGUAGES, for_path

    language = for_path(r.baseline.path) if r.baseline else None
    return language if language in LANGUAGES else ""


def _claims(r: Result) -> str:
    rows = ["| claim | test | expected | actual | holds |", "|---|---|---|---|---|"]
    for c in sorted(r.claims, key=lambda c: c.holds):  # failing claims first
        actual = md.code(c.actual, 200, cell=True) if c.actual is not None else "(no capture)"
        rows.append(
            f"| {md.text(c.says or c.capture, 300, cell=True)} | {c.test} "
            f"| {md.code(c.expected, 200, cell=True)} | {actual} "
            f"| {'yes' if c.holds else '**no**'} |"
        )
    return "**Claims at risk**\n\n" + "\n".join(rows)


def _collapsed(summary: str, code: str, lang: str, budget: int) -> str:
    """Code in a fence inside <details>, cut to `budget` characters at a line end."""
    lines = code.splitlines()
    kept = _fit(lines, budget, plain=True)  # most code: nothing to clean (4,190 items: 0.4 s)
    if not md.is_clean("\n".join(lines[: len(kept) + 1])):  # told of the lines looked at only
        kept = _fit(lines, budget, plain=False)  # cleaned one by one: costs only what is shown
    note = ""
    if len(kept) < len(lines):
        note = f"\n\n_Cut: {len(lines) - len(kept):,} of {len(lines):,} lines not shown._"
    head = f"<details><summary>{summary}</summary>"
    return f"{head}\n\n{md.fence(chr(10).join(kept), lang)}{note}\n\n</details>"


def _fit(lines: list[str], budget: int, *, plain: bool) -> list[str]:
    """The first lines, each cleaned unless `plain` and cut, that fit in `budget`."""
    kept: list[str] = []
    used = 0
    for line in lines:
        shown = md.cut(line if plain else md.clean(line), _LINE_LIMIT)
        if used + len(shown) + 1 > budget:
            break
        kept.append(shown)
        used += len(shown) + 1
    return kept


def _checklist(note: Note, results: Sequence[Result]) -> str:
    """What closes this issue, for the kinds of items that are stale in this note."""
    stale = [r for r in results if r.verdict.stale]
    kinds = {r.kind for r in stale if r.verdict != Verdict.ERROR}
    steps: list[str] = []
    if kinds & set(CODE_KINDS):
        steps.append("Re-read the code at HEAD (the links above) and decide whether the note holds")
    if "issue" in kinds:
        steps.append("Re-read the upstream threads above and decide whether the note holds")
    if kinds:
        steps.append("Update the note's text where upstream behaviour changed")
    if any(r.kind == "quote" and r.verdict != Verdict.ERROR for r in stale):
        steps.append("Check each changed quote: `fix --accept` rewrites it to the closest match")
    for r in stale:
        if r.kind == "rule" and r.verdict in (Verdict.BROKEN, Verdict.MISSING):
            what = "its claims" if r.verdict == Verdict.BROKEN else "its query"
            steps.append(
                f"Update rule {md.code(r.id, 120)}: {what} must hold at HEAD (`watch rules lint`)"
            )
    for r in stale:
        if r.verdict == Verdict.ERROR:
            code = r.error.value if r.error else "error"
            steps.append(f"Fix {md.code(r.id, 120)} ({md.code(code)}): see its message above")
    if kinds:
        accept = md.code(f"watch fix --accept {note.id} --write", 300)
        steps.append(
            f"Run {accept} and commit: every citation is re-based to HEAD at its current lines "
            "(missing ones are dropped), moved rule paths are updated, `date` and "
            "`lastVerified` are bumped"
        )
    else:
        steps.append("Commit the fix")
    return (
        "### Checklist\n\n"
        + "\n".join(f"- [ ] {step}" for step in steps)
        + "\n\nThe next run closes this issue once every item is fresh or moved again."
    )


def _footer() -> str:
    return (
        "<sub>Opened by `watch`. It edits this body and comments only when something new "
        "happens; it closes the issue when every item is fresh or moved again.</sub>"
    )


# --- links ------------------------------------------------------------------------


def permalink_url(repo: str, loc: Location) -> str | None:
    """https://github.com/OWNER/NAME/blob/COMMIT/PATH#Lstart-Lend, or None for a bad repo."""
    if not REPO_RE.match(repo) or not re.fullmatch(r"[0-9A-Fa-f]{4,40}", loc.commit):
        return None
    url = f"https://github.com/{repo}/blob/{loc.commit}/{quote(loc.path)}"
    if loc.start_line is not None:
        url += f"#L{loc.start_line}"
        if loc.end_line is not None and loc.end_line != loc.start_line:
            url += f"-L{loc.end_line}"
    return url


def _where(loc: Location) -> str:
    lines = ""
    if loc.start_line is not None:
        lines = f":{loc.start_line}" + (
            f"-{loc.end_line}" if loc.end_line != loc.start_line else ""
        )
    return f"{loc.path}{lines}"


def _permalink(repo: str, loc: Location | None) -> str:
    if loc is None:
        return "(none)"
    label = f"{md.code(_where(loc), 200)} at {md.code(loc.commit[:12])}"
    url = permalink_url(repo, loc)
    return f"[{label}]({url})" if url else label


def _commit_link(r: Result) -> str:
    a = r.introduced_by
    if a is None or not r.verdict.stale:
        return ""
    return _link(r.repo, a.commit, a.pr)


def _link(repo: str, commit: str, pr: int | None) -> str:
    """A commit (and its pull request) linked on GitHub when the repository reads as one."""
    sha = commit if re.fullmatch(r"[0-9a-f]{7,40}", commit) else "0000000"
    if not REPO_RE.match(repo):
        return f"`{sha[:10]}`"
    link = f"[`{sha[:10]}`](https://github.com/{repo}/commit/{sha})"
    if pr is not None:
        link += f" ([PR {pr}](https://github.com/{repo}/pull/{pr}))"
    return link


def _shows_release(r: Result) -> bool:
    return r.verdict.stale and bool(r.introduced_by or (r.kind == "issue" and r.released_in))


def _thread_link(r: Result) -> str:
    """For an issue citation (`NOTE:OWNER/NAME#N`), the link to that issue or pull request."""
    match = re.search(r"#(\d+)$", r.id)
    if r.kind != "issue" or match is None or not REPO_RE.match(r.repo):
        return ""
    number = match.group(1)
    return f"[{md.code(f'{r.repo}#{number}')}](https://github.com/{r.repo}/issues/{number})"


def _attribution(r: Result) -> str:
    a = r.introduced_by
    assert a is not None
    return (
        f"{_commit_link(r)} {md.text(a.summary, 200)}, by {md.text(a.author, 100)}"
        f" on {md.text(a.date, 40)}"
    )


def _release(r: Result) -> str:
    if r.released_in:
        return md.code(r.released_in, 100, cell=True)
    return "not in a release yet"


def _candidate(r: Result, c: Candidate) -> str:
    """One candidate place: linked at HEAD, how alike, how it was found, whether chosen."""
    where = Location(
        commit=r.current.commit if r.current else "", path=c.path,
        start_line=c.start_line, end_line=c.end_line,
    )  # fmt: skip
    shown = _permalink(r.repo, where) if r.current else md.code(_where(where), 200)
    alike = "identical" if c.identical else f"{c.similarity:.0%} alike"
    chosen = ", **chosen**" if c.chosen else ""
    return f"{shown}: {alike}, {md.text(c.found, 200)}{chosen}"


def _suggestion(loc: Location) -> str:
    return f"`commit: {loc.commit}`, path {md.code(_where(loc), 200)}"


# --- comments ---------------------------------------------------------------------


def news_comment(results: Sequence[Result], news: frozenset[str], *, reopened: bool) -> str:
    """What changed since the issue was last written: new verdicts, commits, releases."""
    fresh = [r for r in results if r.verdict.stale and markers.news_key(r) in news]
    head = "This note is stale again." if reopened else "New since the last report:"
    lines = [head, ""]
    for r in sorted(fresh, key=lambda r: (-r.verdict.severity, r.id)):
        line = f"- {md.code(r.id, 200)}: **{r.verdict.value}**"
        if r.introduced_by:
            line += f", introduced by {_commit_link(r)}"
        if r.introduced_by and r.kind != "issue":
            line += f", released in {_release(r)}" if r.released_in else ", not in a release yet"
        latest = r.history[-1] if r.history else None
        if latest and r.introduced_by and latest.commit != r.introduced_by.commit:
            line += f"; changed again by {_link(r.repo, latest.commit, latest.pr)}"
        lines.append(line)
    lines += ["", "The issue body above shows every item as of this run."]
    return "\n".join(lines)


def close_comment(
    results: Sequence[Result], heads: Sequence[tuple[str, str]], *, reopen: bool
) -> str:
    """Why the issue is closed: every item is fresh or moved at the upstream heads named."""
    moved = [r for r in results if r.verdict == Verdict.MOVED]
    at = ", ".join(f"{md.code(repo)} {md.code(sha[:12])}" for repo, sha in heads)
    at = at or "the upstream heads of this run"
    lines = [f"Every tracked item of this note is fresh or moved at {at}, so it is verified again."]
    if moved:
        lines += ["", "Citations to update (`watch fix --write` does it):", ""]
        lines += [f"- {md.code(r.id, 200)} → {_suggestion(r.current)}" for r in moved if r.current]
    again = "reopens this issue" if reopen else "opens a new issue"
    lines += ["", f"Closing. If the note goes stale again, `watch` {again}."]
    return "\n".join(lines)
