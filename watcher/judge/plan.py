"""What judging an item needs from the mirror: the item, and its plan (the commits and
blobs at baseline and HEAD), keyed so that the same plan gives the same verdict.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from watcher.fingerprint import short
from watcher.models import Verdict

if TYPE_CHECKING:
    from watcher.mirror.mirrors import Mirror
    from watcher.models import Quote, Result, Rule

# Part of every cached result's key: bump it whenever locating or judging changes, so
# that no state/ written by an older watch is taken for this one's verdict.
JUDGE_VERSION = 63  # 3: baseline_code, quotes; 4: path histories; 5: text files by line;
# 6: a region kept in order in its definition is found there; 7: an item is what was cited;
# 8: a definition renamed and resized is found; 9: a definition moved to another scope
# is found by its name and tokens; 10: a citation carried by lines, then tokens; 11: carried
# through the stretch around it when its definition does not hold it; 12: a file's own
# definition before a copy's; 13: a cited comment's line widens the span only if still one;
# 14: a text file's lines by git's diff; 15: a definition renamed, then moved to a new file;
# 16: a renamed definition need not keep its rarest tokens, only enough of its tokens;
# 17: a string counts its words; a scope's rewrite ends with the definition it began in;
# a rename is one to one; a missing method hinted in other classes
# 18: cited statements stay within the statements they became (code inserted at an edge)
# 19: a look-alike written after the cited definition was gone is not it; a namesake
# rewritten into the citation's likeness is it; a walk parses a version that may hold
# the definition renamed with its rarest tokens
# 20: a scope's neighbours lie apart (not a method of the class above); tokens after the
# last cited one in its statement are the item's
# 21: a line of signs alone is told by its indentation (a block's `}`, not its inner
# one's); a string keeps its words in a replacement of another shape
# 22: replaced lines of a scope pair with their successors first (a deleted import, none)
# 23: a small construct found in another file must be more alike the smaller it is;
# attributes above a cited item do not decide whether it is found
# 24: a walk's guards: a Go method's name after its receiver, overloads together; a missing
# item searched around each stretch a commit edited, its namesakes' places carried (Python)
# 25: a definition renamed is told between the two versions its commit joins
# 26: a changed citation is carried commit by commit through the changes its walk found;
# of verbatim matches whose statement goes on, one in the citation's own definition first;
# a namesake that stood beside the cited definition is not it (`history.beside`)
# 27: a scope's neighbours reach past the definitions around the citation that went with it
# 28: a citation one jump lost for good is carried across, step by step, where each step
# keeps it and does not take in functions it did not hold
# 29: where its path is gone, a definition is found by its path without type arguments
# 30: the commits up to one that found a citation again after one jump lost it are walked
# 31: a citation carried commit by commit is walked from its last change to HEAD as carried
# 32: a namesake in a scope the baseline had is a definition moved there only if mostly it
# 33: found tokens that start inside a statement ending on their lines start where it does
# 34: a step carries one member left of the members cited, a whole definition now
# 35: new lines below a line and its successor are inserted code, not its tail replaced
# 36: a region found by likeness ends as far as the cited tokens go, lines inserted in it
# 37: a missing citation no definition held is judged where what differs holds its words
# 38: a verbatim match outside its own definition, where the baseline had a copy, is not it
# 39: code no definition held, found by likeness, ends where its statement ends; a region
# found by likeness or through a scope holds one of the cited names
# 40: a citation its definition holds no more is found by likeness in a new definition
# 41: a namesake that only lost code, or of a name many definitions share, is no move
# 42: a quote is no cited name, and a citation with no names is not held to them
# 43: a namesake written into a file the removing commit renamed is no move
# 44: cited code found verbatim inside a construct begun before it on its line is changed
# 45: edge statements of a scope-carried citation that hold none of its names are not its
# 46: ... while each cited statement keeps one of its names in what is left
# 47: a construct found in another file is alike in its words with a long string as its words
# 48: a definition no cited statement went to is no part of an item carried through its scope
# 49: a region of its own definition like the citation, where it moved within it, is it
# 50: whole statements of an inner block are paired too; a statement with a stray cited
# token is outside; what the statements cited beside it became bounds it
# 51: a definition moved into a new file is followed there after its class is renamed
# 52: cited lines as they were in their definition renamed are identical (moved)
# 53: what a commit that renamed the followed file added is no place a construct it
# no longer held went
# 54: the file a split moved a definition into is chosen wherever a later commit put it
# 55: a cited statement made a local declaration is carried on into it
# 56: the commits between two of a carried citation's changes are walked too
# 57: a JavaScript local is not another function's local of its name
# 58: a verbatim match in the citation's own definition comes before a nearer one elsewhere
# 59: of several such matches, the one the alignment of the definition carries it to
# 60: a verbatim match elsewhere is a copy where the definition still holds every cited token
# 61: the definition gone by its name, the match the scope's alignment carries it to
# 62: a citation HEAD holds byte for byte, with the code beside it, is where its lines went
# 63: with its definition gone, a common statement in another old definition is that one's


@dataclass(frozen=True)
class Item:
    """A citation or a rule, with the note it protects and the commit it was verified at."""

    id: str
    kind: str  # "citation" | "rule" | "quote"
    note: str
    note_file: str
    repo: str
    commit: str  # as cited; may be abbreviated
    path: str
    start_line: int | None = None
    end_line: int | None = None
    rule: Rule | None = None
    quote: Quote | None = None
    sources: tuple[tuple[str, str], ...] = ()  # a quote's cited files: (commit, path)

    @functools.cached_property  # a run asks it for every key of the item: encode it once
    def fingerprint(self) -> str:
        """Changes whenever anything that decides this item's verdict is edited."""
        rule = self.rule.model_dump(exclude={"file", "line"}) if self.rule else None
        data: list[Any] = [self.id, self.commit, self.path, self.start_line, self.end_line, rule]
        if self.quote is not None:
            data += [self.quote.language, self.quote.text, [list(s) for s in self.sources]]
        return short(json.dumps(data, sort_keys=True), 16)


@dataclass(frozen=True)
class Plan:
    """An item resolved against the mirror: the blobs it needs at baseline and HEAD."""

    item: Item
    base: str
    base_blob: str
    head: str
    files: tuple[tuple[str, str], ...]  # (path, blob) at HEAD: the file, or its renames
    search_repo: bool  # the file is gone at HEAD: look for the item in other files
    bases: tuple[tuple[str, str, str], ...] = ()  # a quote's files at baseline: path, commit, blob
    removed_by: str | None = None  # the commit that removed it, when git saw no rename
    removals: tuple[str, ...] = ()  # commits that removed a followed path: where it may be
    removed_path: str | None = None  # the path `removed_by` removed: its own, or a rename's

    @functools.cached_property  # asked several times per item on every run
    def key(self) -> str:
        """Same key, same verdict: the cache key for a result found in the followed files."""
        return self._key(self.head if self.search_repo else "")

    @functools.cached_property
    def searched_key(self) -> str:
        """The key of a result that looked beyond the followed files (a candidate, or
        missing after the search): it holds for this HEAD only."""
        return self._key(self.head)

    def key_for(self, result: Result) -> str:
        searched = result.candidates or (result.verdict is Verdict.MISSING and self.removals)
        return self.searched_key if searched else self.key

    def _key(self, head: str) -> str:
        parts = [JUDGE_VERSION, self.item.fingerprint, self.base, self.base_blob, list(self.files),
                 head]  # fmt: skip
        if self.bases:
            parts.append([list(x) for x in self.bases])
        return short(json.dumps(parts), 24)

    @property
    def blobs(self) -> list[str]:
        return [self.base_blob, *(b for _, _, b in self.bases), *(blob for _, blob in self.files)]


def cited_problem(mirror: Mirror, item: Item) -> str | None:
    """Why a citation's lines cannot be anchored (blank, past the file's end, or only
    punctuation), told offline from what the mirror already holds; None when they can,
    or when that is not known without fetching (no mirror, commit or blob here)."""
    from watcher.locate.anchors import LocateError, anchor
    from watcher.mirror import objects
    from watcher.parse import languages, syntax

    if item.kind != "citation" or item.start_line is None or not mirror.exists:
        return None
    commit = mirror.resolve(item.commit)
    blob = mirror.blob_id(commit, item.path) if commit else None
    if blob is None or not objects.Presence(mirror.path / "objects").has(blob):
        return None
    language = languages.for_path(item.path) or syntax.TEXT
    parsed = syntax.parse(blob, language, lambda: mirror.read(blob), item.path)
    try:
        anchor(parsed, item.path, item.start_line, item.end_line)
    except LocateError as exc:
        return f"{item.note_file}: {item.id}: {item.path}: {exc}; fix the note's lines"
    return None
