"""Where a construct went when the file it was followed to no longer has it.

A file removed by a commit that also added files (a split whose other half git did not
pair, a move with heavy edits) is searched there: the definition that enclosed the
citation, by kind and name, in the files each such commit added; and when the file is
gone at HEAD, in every file at HEAD in the same language. A rule's target is searched
the same way, and in every other file at HEAD whenever its followed file no longer has it
(the file may still be there). Every match is a candidate; the chosen one is the most
like the baseline (identical first, then token similarity), then the closest in path.
None is picked without the others being reported.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from watcher.errors import Unreadable
from watcher.judge.headsearch import head_search
from watcher.locate.alignment import LONG_TOKEN
from watcher.locate.anchors import Anchor, Found
from watcher.locate.definitions import definition_keys, definition_nodes, may_define
from watcher.locate.matching import SIMILAR_IN_FILE, find, may_be_alike, renamed_definition
from watcher.locate.targets import best_target, literals, several, targets
from watcher.models import Candidate, span
from watcher.parse import languages
from watcher.parse.nodes import with_attributes
from watcher.parse.words import WORD

if TYPE_CHECKING:
    from watcher.inputs.rules import Compiled
    from watcher.judge.plan import Plan
    from watcher.mirror.mirrors import Mirror
    from watcher.parse.syntax import Parsed

Parse = Callable[[str, str], "Parsed"]  # (path, blob) -> parsed file
Key = tuple[str, tuple[str, ...]]  # a definition's kind and name path


# Bytes of candidate files kept for the run (`_candidate`).
CANDIDATE_BYTES = 16 * 2**20


def defining(
    mirror: Mirror, parse: Parse, path: str, blob: str, source: bytes, key: Key
) -> Parsed | None:
    """The parse of a candidate file (its bytes: `source`) when it has a definition of
    this kind and name path (`definitions.definition_keys`), else None; its definitions are
    listed once per run (the session keeps them): a file many items look in is parsed
    again (the parse cache holds a few files) only for an item whose definition it has."""
    defined, counts = mirror.session.defined, mirror.session.counts
    at = (blob, languages.for_path(path) or "")
    keys = defined.get(at)
    if keys is not None and key not in keys:
        return None
    if keys is None and not may_define(source, at[1], key, counts.parse):
        counts.search.unparsed += 1
        return None
    parsed = parse(path, blob)
    if keys is None:
        counts.search.keys += 1
        keys = defined[at] = definition_keys(parsed)
    return parsed if key in keys else None


def citation(
    mirror: Mirror, plan: Plan, anchor: Anchor, parse: Parse
) -> tuple[Found | None, tuple[Candidate, ...]]:
    """The cited construct in files that could have taken it over, and every candidate.
    A definition of its kind and name is the construct when it is like it, or when it is
    the only one of that name in the files the commit that removed the construct added,
    in the file that commit moved it into (`moved_by`: mcp-proxy's `create_starlette_app`,
    moved and rewritten; not a `main` when the commit removed several, nor one written
    there later), wherever a later commit renamed that file, in its class or another one
    there (codex's `call_tool`, moved into `connection_manager.rs` by the split that
    deleted its file, whose `McpConnectionManager` later became `McpConnectionSet`), and
    only where the file that commit removed held it just before. Anywhere at HEAD, or
    among several in those files, an unlike one is a namesake (codex's and
    typescript-sdk's many `main` functions): listed but not chosen, and the next place is
    searched. With none chosen, the construct is missing."""
    if anchor.definition is None:
        return None, ()  # nothing to look for by name
    namesakes: list[Candidate] = []
    for found_in, files in _places(mirror, plan, plan.item.path, names=anchor.definition[1]):
        commit = None if found_in == ELSEWHERE else _removal(plan, found_in)
        moved = [] if commit is None else _moved_to(mirror, plan, anchor, commit, parse)
        files = [*files, *(f for f in moved if f not in files)]  # the file it went into
        matches = definitions_in(mirror, anchor, files, parse)
        if not matches and moved:  # in another class or module there: its own renamed
            matches = definitions_in(mirror, anchor, moved, parse, other_class=True)
        if not matches and commit is not None:
            renamed = _renamed(mirror, anchor, files, parse)
            matches = [f for f in renamed if alike(anchor.tokens, f.tokens, SIMILAR_IN_FILE)]
        if matches and commit is not None and not _left_with(mirror, plan, anchor, commit, parse):
            continue  # asked only of a place that has it: what held it before costs a parse
        if matches:
            best, candidates = choose(plan.item.path, anchor.tokens, matches, found_in)
            alone = len(candidates) == 1 and best.path in {p for p, _ in moved}
            if alone or _alike(candidates, anchor.tokens, best.tokens):
                return best, candidates
            listed = {where(c) for c in namesakes}  # a file added then is at HEAD too
            namesakes += [
                c.model_copy(update={"chosen": False}) for c in candidates if where(c) not in listed
            ]
    return None, tuple(namesakes)


def _left_with(mirror: Mirror, plan: Plan, anchor: Anchor, commit: str, parse: Parse) -> bool:
    """Whether the path `commit` removed held the citation just before it: otherwise the
    construct had left it already, and what that commit added is unrelated (cline's
    `McpConnection`, moved into a new `types.ts` while `McpHub.ts` stayed, is not followed
    into that file when a later commit moves both into `apps/vscode/`)."""
    links = mirror.paths.where(plan.base, plan.head, plan.item.path).links
    paths = {link.old for link in links if link.commit == commit and not link.kept}
    if commit == plan.removed_by and plan.removed_path is not None:
        paths.add(plan.removed_path)
    held = [(p, b) for p in sorted(paths) if (b := mirror.blob_id(f"{commit}^1", p)) is not None]
    mirror.prefetch(b for _, b in held)
    return not held or find(anchor, [(p, parse(p, b)) for p, b in held]) is not None


def _moved_to(
    mirror: Mirror, plan: Plan, anchor: Anchor, commit: str, parse: Parse
) -> list[tuple[str, str]]:
    """Where the file `commit` moved the definition into (`moved_by`) is at HEAD, through
    later renames: mcp-golang's `NewToolReponse`, split into a new `server/tool_api.go`
    that a later commit made `tool_api.go`; python-sdk's `INVALID_REQUEST`, moved into a
    new `types/jsonrpc.py` that went into a package of its own (a module of that path at
    HEAD is a later alias, not that file)."""
    into = moved_by(mirror, plan, anchor, commit, parse)
    if into is None:
        return []
    followed = {p for p, _ in plan.files}
    later = [f for f in mirror.paths.where(commit, plan.head, into).files if f[0] not in followed]
    mirror.prefetch(b for _, b in later)
    return later


def moved_by(
    mirror: Mirror, plan: Plan, anchor: Anchor, commit: str, parse: Parse, least: float = 0.0
) -> str | None:
    """The file that `commit`, which removed a file the citation was followed in, added
    and moved the cited definition into, as the commit wrote it (chosen as `citation`
    chooses in the files it added: like it, or the only one of its name, at least `least`
    alike); None when there is none. Where HEAD no longer has it there, the citation went
    missing later, from that file: mcp-proxy's `create_starlette_app`, moved into the new
    `mcp_server.py` with the split that deleted `sse_server.py` (0.36 alike), and
    removed from it two commits later.

    Where the commit also removed another definition of the name, the one it added is no
    sign of where this one went (inspector's v2 removed three files, each with its own
    `main`), unless that file held it as it is: it was moved with it."""
    language = languages.for_path(plan.item.path)
    if anchor.definition is None or language is None or commit not in plan.removals:
        return None
    suffixes = languages.LANGUAGES[language].extensions
    followed = {p for p, _ in plan.files} | {plan.item.path}
    added = sorted(mirror.paths.added(commit).items())
    files = [(p, b) for p, b in added if p.endswith(suffixes) and p not in followed]
    mirror.prefetch(b for _, b in files)
    matches = definitions_in(mirror, anchor, files, parse)
    if not matches:
        renamed = _renamed(mirror, anchor, files, parse)
        matches = [f for f in renamed if alike(anchor.tokens, f.tokens, SIMILAR_IN_FILE)]
    if not matches:
        return None
    best, candidates = choose(plan.item.path, anchor.tokens, matches, f"{ADDED}{commit[:12]}")
    if _alike(candidates, anchor.tokens, best.tokens):
        return best.path
    if _written_into(mirror, anchor, commit, best.path, suffixes, parse):
        return None
    others = _removed_namesakes(mirror, plan, anchor, commit, suffixes, parse)
    shared = any(other.tokens != best.tokens for other in others)
    alone = len(candidates) == 1 and not shared
    return best.path if alone and _similarity(anchor.tokens, best.tokens) >= least else None


def _written_into(
    mirror: Mirror, anchor: Anchor, commit: str, path: str, suffixes: tuple[str, ...], parse: Parse
) -> bool:
    """Whether `commit` wrote the definition at `path` into a file it renamed or copied
    from one that had none of its kind and name: such a file was there before, and a
    namesake written into it is no sign of a move, as in any other file (deepchat's
    `createMcpClient`, removed from the client as a test file was renamed beside it and
    given a helper of that name, 0.2 alike). One it carried from there is."""
    source = mirror.paths.source(commit, path)
    if source is None:
        return False
    blob = mirror.files(f"{commit}^1", suffixes).get(source)
    return blob is None or not definitions_in(mirror, anchor, [(source, blob)], parse)


def _removal(plan: Plan, found_in: str) -> str:
    """The commit whose added files a candidate was `found_in`."""
    return next(c for c in plan.removals if found_in == f"{ADDED}{c[:12]}")


def _removed_namesakes(
    mirror: Mirror,
    plan: Plan,
    anchor: Anchor,
    commit: str,
    suffixes: tuple[str, ...],
    parse: Parse,
) -> list[Found]:
    """The cited construct's namesakes in the other files of its language that `commit`
    removed (its own file and its renames aside)."""
    after, own = mirror.files(commit, suffixes), {plan.item.path, plan.removed_path}
    removed = [(p, b) for p, b in sorted(mirror.files(f"{commit}^1", suffixes).items())
               if p not in after and p not in own]  # fmt: skip
    mirror.prefetch(b for _, b in removed)
    return definitions_in(mirror, anchor, removed, parse)


def twins(plan: Plan, anchor: Anchor, found: Found, parse: Parse) -> tuple[Candidate, ...]:
    """Where a found item is token-identical in the other files it was followed to (a
    file and its copies): the place judged first, chosen, then the others; none when it
    is in one file only. Not judged on its own: the verdict is about the chosen one."""
    if len(plan.files) < 2 or not found.identical:
        return ()
    others = [
        f
        for path, blob in plan.files
        if path != found.path
        and (f := find(anchor, [(path, parse(path, blob))])) is not None
        and f.identical
    ]
    if not others:
        return ()
    return tuple(
        Candidate(
            path=f.path, start_line=f.start_line, end_line=f.end_line, identical=True,
            similarity=1.0, found=COPIES, chosen=f is found,
        )
        for f in [found, *others]
    )  # fmt: skip


COPIES = "followed there, renamed or copied"


def _alike(candidates: Sequence[Candidate], cited: Sequence[str], found: Sequence[str]) -> bool:
    """Whether the chosen candidate (its tokens `found`) is like the cited construct
    (`SIMILAR_ELSEWHERE`, as `alike` asks)."""
    chosen = next(c for c in candidates if c.chosen)
    return chosen.identical or alike(cited, found, SIMILAR_ELSEWHERE)


def alike(cited: Sequence[str], found: Sequence[str], least: float) -> bool:
    """Whether a construct found in another file is the cited one: at least `least` alike
    (token similarity), and as alike in the tokens that hold a word (names, keywords,
    strings; punctuation aside) as `needed` asks for so many of them. A small construct
    shares most of its tokens with any other of its kind by its shape alone:
    typescript-sdk's `type JsonSchema = Record<string, unknown>` against a test's
    `type JsonSchema = { $defs?: Record<string, ...> }` (0.56; 0.67 by its words, of five),
    its `type ZodRawShapeCompat = Record<string, AnySchema>` against `type MetaObject =
    Record<string, unknown>` (0.82; 0.67), python-sdk's `__all__ = ["FastMCP", ...]`
    against another module's `__all__` of five other names (0.78, by its quotes and
    commas; 0.17)."""
    if _similarity(cited, found) < least:
        return False
    words, other = _telling(cited), _telling(found)
    if not words:
        return True
    return _similarity(words, other) >= needed(least, len(words))


def _telling(tokens: Sequence[str]) -> tuple[str, ...]:
    """The tokens that hold a word (a name, a keyword, a string's text), a long string
    as its words (as the share rule counts it: `alignment.weight`): a function whose SQL
    script is another is not alike for the `executescript(` call around it (oterm's
    upgrade steps, each a script in one string)."""
    return tuple(
        word
        for token in tokens
        if WORD.search(token.encode())
        for word in (token.split() if len(token) >= LONG_TOKEN else (token,))
    )


def needed(least: float, words: int) -> float:
    """The likeness in its words a construct of so many words must have to be taken for
    the cited one in another file: `least` for a large one, more as it shrinks (halfway
    from `least` to identical at SMALL words)."""
    return least + (1 - least) * SMALL / (SMALL + words)


def definitions_in(
    mirror: Mirror,
    anchor: Anchor,
    files: Sequence[tuple[str, str]],
    parse: Parse,
    other_class: bool = False,
) -> list[Found]:
    """The anchor found in each of the files that has its enclosing definition; with
    `other_class`, a definition of its kind and name in another class or module (a
    method moved to a mixin or a base class: python-sdk's and fastmcp's `Client`
    methods split into `Client*Mixin` classes), where `find` carries it."""
    assert anchor.definition is not None
    name, key = anchor.definition[1][-1].encode(), anchor.definition
    matches = []
    for path, blob in files:
        source = candidate_source(mirror, blob)
        if source is None or name not in source:
            continue
        if other_class:
            parsed = _defining_elsewhere(mirror, parse, path, blob, source, key)
        else:
            parsed = defining(mirror, parse, path, blob, source, key)
        if parsed is not None and (found := find(anchor, [(path, parsed)])) is not None:
            matches.append(found)
    return matches


def _defining_elsewhere(
    mirror: Mirror, parse: Parse, path: str, blob: str, source: bytes, key: Key
) -> Parsed | None:
    """`defining`, for a definition of this kind and last name at the same depth in
    another container (the file's bytes, `source`, hold the name): the parse of the file
    when it has one. Its definitions are listed once per run, as there, and a file whose
    bytes cannot define the last name (`may_define`, which reads only the kind and the
    last name) is not parsed: on codex, most files a big commit touched only call it."""
    kind, names = key
    at = (blob, languages.for_path(path) or "")
    keys = mirror.session.defined.get(at)
    if keys is None and not may_define(source, at[1], key, mirror.session.counts.parse):
        mirror.session.counts.search.unparsed += 1
        return None
    if keys is None:
        mirror.session.counts.search.keys += 1
        keys = mirror.session.defined[at] = definition_keys(parse(path, blob))
    if not any(k == kind and len(n) == len(names) and n[-1] == names[-1] for k, n in keys):
        return None
    return parse(path, blob)


def _renamed(
    mirror: Mirror, anchor: Anchor, files: Sequence[tuple[str, str]], parse: Parse
) -> list[Found]:
    """The anchor in a definition of its kind renamed before the commit that added
    `files` moved it there (`renamed_definition`: in the same container, as like it as
    a rename in its own file must be): fastmcp's `list_tools`, renamed `_list_tools`,
    then moved to a module a split added. Files whose bytes could not hold a definition
    that alike (`may_be_alike`) are not parsed."""
    found = []
    for path, blob in files:
        source = candidate_source(mirror, blob)
        if source is None or not may_be_alike(anchor, source, 0, len(source), SIMILAR_IN_FILE):
            continue
        if not any(
            may_be_alike(anchor, source, low, high, SIMILAR_IN_FILE)
            for low, high in _renames(mirror, anchor, path, blob, parse)
        ):
            continue  # no definition there could be it: not parsed again for this one
        if (match := renamed_definition(anchor, path, parse(path, blob))) is not None:
            found.append(match)
    return found


def _renames(
    mirror: Mirror, anchor: Anchor, path: str, blob: str, parse: Parse
) -> Iterator[tuple[int, int]]:
    """The bytes of each definition in a candidate file that `renamed_definition` would
    weigh: of the anchor's kind, in its container, not one the baseline file had. The
    file's definitions are listed once per run (the session keeps their keys and bytes):
    inspector's v2 commit added 926 files, which every citation of the CLI it removed
    looks in, and the parse cache holds a few of them."""
    if anchor.definition is None:
        return
    kind, names = anchor.definition
    at = (blob, languages.for_path(path) or "")
    if at not in mirror.session.extents:  # what it defines, too, from the same parse
        parsed = parse(path, blob)
        mirror.session.defined.setdefault(at, definition_keys(parsed))
        mirror.session.extents[at] = tuple(
            (key, head.start_byte, max(node.end_byte, head.end_byte))
            for node, key in definition_nodes(parsed)
            for head in (with_attributes(node),)
        )
    for (other, name), low, high in mirror.session.extents[at]:
        if other == kind and name[:-1] == names[:-1] and (other, name) not in anchor.known:
            yield low, high


def _holds(mirror: Mirror, blob: str, needles: Sequence[bytes]) -> bool:
    """Whether a candidate file holds every needle."""
    data = candidate_source(mirror, blob)
    return data is not None and all(n in data for n in needles)


def candidate_source(mirror: Mirror, blob: str) -> bytes | None:
    """A candidate file's bytes; one above the size limit is no candidate. A file read a
    second time is kept, up to CANDIDATE_BYTES in all: every citation of a file a commit
    removed looks in the same files it added, in the same order, where a cache that
    dropped the oldest would keep none of them long enough."""
    session = mirror.session
    if (source := session.candidates.get(blob)) is not None:
        return source
    try:
        source = mirror.read(blob)
    except Unreadable:
        return None
    if blob not in session.candidates_read:
        session.candidates_read.add(blob)
    elif session.candidate_bytes + len(source) <= CANDIDATE_BYTES:
        session.candidates[blob] = source
        session.candidate_bytes += len(source)
    return source


def rule_target(
    mirror: Mirror, plan: Plan, compiled: Compiled, baseline: Found, parse: Parse
) -> tuple[Found | None, tuple[Candidate, ...]]:
    """The rule's target at HEAD: in the followed files (all listed when there are several),
    else in the files that took it over or anywhere else at HEAD, with every candidate."""
    found = [t for p, b in plan.files for t in targets(compiled, p, parse(p, b))]
    if found and (best := best_target(baseline, found)) is not None:
        return best, several(baseline, found, best)
    return rule_targets(mirror, plan, compiled, baseline, parse)


def rule_targets(
    mirror: Mirror, plan: Plan, compiled: Compiled, baseline: Found, parse: Parse
) -> tuple[Found | None, tuple[Candidate, ...]]:
    """A rule's target in files that could have taken it over, and every candidate."""
    rule = plan.item.rule
    words = [*literals(rule.query), *literals(rule.inside or "")] if rule else []
    needles = [s.encode() for s in literals(rule.query if rule else "")]
    places = _places(mirror, plan, plan.item.path, compiled.language, words, anywhere=True)
    for found_in, files in places:
        matches = [
            target
            for path, blob in files
            if _holds(mirror, blob, needles)
            for target in targets(compiled, path, parse(path, blob))
        ]
        if matches:
            same = [replace(m, identical=m.tokens == baseline.tokens) for m in matches]
            return choose(plan.item.path, baseline.tokens, same, found_in)
    return None, ()


ELSEWHERE = "elsewhere at HEAD"
ADDED = "added by "  # and the commit: found in the files it added
# Found elsewhere at HEAD, a definition of the cited kind and name is the cited construct
# only when this alike (token similarity): python-sdk's RequestContext, removed, shares
# its name with an unrelated class of client/streamable_http.py (0.38).
SIMILAR_ELSEWHERE = 0.5
# A definition moved into a file the removing commit added is followed there, after it
# left that file too, when it is the only one of its name there and this alike
# (`moved_by`): mcp-proxy's `create_starlette_app` is 0.36 alike; the web client's
# launcher that inspector's CLI build added beside the deleted `bin/cli.js`, 0.15.
SIMILAR_MOVED = 0.25
# A construct found in another file of this many words (tokens holding one) must be
# halfway from the least likeness to identical in them (`needed`): fewer, more.
SMALL = 10


def _places(
    mirror: Mirror,
    plan: Plan,
    path: str,
    language: str | None = None,
    names: Sequence[str] | None = None,
    *,
    anywhere: bool = False,
) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """Where to look, in order: the files added by each commit that removed a followed path
    (still at HEAD, not followed already), then, when the file is gone (or `anywhere`: a
    rule's target, searched "from the whole repository"), every other file at HEAD in the
    language (with `names`: those holding their words); each place's blobs fetched in one
    batch, and only when the places before it held nothing."""
    language = language or languages.for_path(path)
    if language is None:
        return
    at_head = mirror.files(plan.head, languages.LANGUAGES[language].extensions)
    followed = {p for p, _ in plan.files}
    for commit in plan.removals:
        added = mirror.paths.added(commit)
        files = [(p, at_head[p]) for p in sorted(added) if p in at_head and p not in followed]
        mirror.prefetch(b for _, b in files)
        yield f"{ADDED}{commit[:12]}", files
    if not (plan.search_repo or anywhere):
        return
    if names is not None:
        files = head_search(mirror, plan.head, language).holding(names)
    else:
        mirror.prefetch(at_head.values())
        files = sorted(at_head.items())
    yield ELSEWHERE, [(p, b) for p, b in files if p not in followed]


def choose(
    path: str, tokens: Sequence[str], matches: list[Found], found_in: str
) -> tuple[Found, tuple[Candidate, ...]]:
    """The best match, and all of them as candidates (the chosen one marked)."""
    scored = [(_similarity(tokens, f.tokens), f) for f in matches]
    scored.sort(key=lambda sf: (not sf[1].identical, -sf[0], -_closeness(path, sf[1].path),
                                sf[1].path, sf[1].start_line or 0))  # fmt: skip
    best = scored[0][1]
    candidates = tuple(
        Candidate(
            path=f.path,
            start_line=f.start_line,
            end_line=f.end_line,
            identical=f.identical,
            similarity=round(score, 3),
            found=found_in,
            chosen=f is best,
        )
        for score, f in scored
    )
    return best, candidates


def _similarity(a: Sequence[str], b: Sequence[str]) -> float:
    if tuple(a) == tuple(b):
        return 1.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def _closeness(old: str, new: str) -> int:
    """Path parts shared at the end (file name first), then at the start."""
    a, b = PurePosixPath(old).parts, PurePosixPath(new).parts
    tail = 0
    while tail < min(len(a), len(b)) and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    return 100 * tail + head


def explain(candidates: Sequence[Candidate]) -> str:
    """One sentence on which candidate was chosen and why, naming the others."""
    chosen = next(c for c in candidates if c.chosen)
    at = where(chosen)
    if len(candidates) == 1:
        return f"found at {at} ({chosen.found})"
    why = "identical" if chosen.identical else f"most similar ({chosen.similarity:.0%})"
    others = ", ".join(where(c) for c in candidates if not c.chosen)
    return f"{len(candidates)} candidates ({chosen.found}): chose {at}, {why}; also {others}"


def where(candidate: Candidate) -> str:
    """`path:start-end` of a candidate."""
    lines = span(candidate.start_line, candidate.end_line)
    return f"{candidate.path}{lines}"
