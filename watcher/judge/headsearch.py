"""Every file at HEAD in one language, indexed by the words of its bytes: where a citation
whose file is gone, or a rule's target, is looked for by name (`watcher.judge.relocate`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from watcher.parse import languages, syntax

if TYPE_CHECKING:
    from watcher.mirror.mirrors import Mirror


def words(text: bytes) -> set[bytes]:
    """The identifier words of a text: runs of ASCII letters, digits and `_`."""
    return set(syntax.words(text))


class HeadSearch:
    """Every file at HEAD in one language, indexed once by the identifier words of its
    bytes, shared by every item of the run whose file is gone.

    A definition's name is a token of its file, so each of its words is a whole word
    of the file's bytes: only the files holding every word of the definition's name
    path are candidates, and only those are parsed (`defining`). Each file's words are
    read once; which files hold a word is found when a name asks for it (a few hundred
    words a run, against every word of every file for a whole index).
    """

    def __init__(self, mirror: Mirror, head: str, language: str) -> None:
        mirror.session.counts.search.searches += 1
        at_head = mirror.files(head, languages.LANGUAGES[language].extensions)
        self.files = sorted(at_head.items())
        mirror.prefetch(at_head.values())
        blobs = list(dict.fromkeys(at_head.values()))
        held = {blob: words(data) for blob, data in mirror.contents(blobs)}
        self.words = [held.get(blob, set()) for _, blob in self.files]  # over the limit: none
        self.postings: dict[bytes, set[int]] = {}  # word -> positions in self.files

    def holding(self, names: Sequence[str]) -> list[tuple[str, str]]:
        """The files whose bytes hold every word of `names`, in path order."""
        wanted = set().union(*(words(n.encode()) for n in names))
        if not wanted:
            return list(self.files)
        found = set.intersection(*(self._holding(w) for w in wanted))
        return [self.files[n] for n in sorted(found)]

    def _holding(self, word: bytes) -> set[int]:
        if word not in self.postings:
            self.postings[word] = {n for n, held in enumerate(self.words) if word in held}
        return self.postings[word]


def head_search(mirror: Mirror, head: str, language: str) -> HeadSearch:
    """The run's one search of HEAD in `language` for this mirror (kept by its session
    until every item is judged: `Session.judged`)."""
    searches = mirror.session.searches
    if (language, head) not in searches:
        searches[(language, head)] = HeadSearch(mirror, head, language)
    return searches[(language, head)]
