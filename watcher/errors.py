"""One error hierarchy. The CLI maps every `WatchError` to exit status 2 and one message."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


class WatchError(Exception):
    """An expected failure: bad input, an unreachable upstream, a held lock.

    The message names the object, where it is, and what to do.
    """

    exit_code = 2


class InputError(WatchError):
    """A user-written file (config, note, rule) is wrong."""

    def __init__(
        self,
        file: Path | str,
        message: str,
        line: int | None = None,
        *,
        item: str = "",
        note: str = "",
        repo: str = "",
    ) -> None:
        self.file = str(file)
        self.line = line
        self.detail = message
        # The item the error belongs to, when it is one citation or rule of a file that
        # otherwise loaded: `check` reports it under that item's id, for its note.
        self.item = item
        self.note = note
        self.repo = repo
        where = f"{self.file}:{line}" if line else self.file
        super().__init__(f"{where}: {message}")


class ConfigError(InputError):
    """config.toml is missing, malformed, or has a bad key."""


class NoteError(InputError):
    """A note's front matter or one of its sources is wrong."""


class RuleError(InputError):
    """A rule file or one rule in it is wrong."""


class UpstreamError(WatchError):
    """An upstream repository cannot be cloned, fetched or read."""


class LockedError(WatchError):
    """Another watch run holds the state lock."""


class Unreadable(WatchError):
    """An upstream file version watch cannot read: the items that need it are told so, the
    rest of the run goes on."""


class TooLarge(Unreadable):
    """An upstream file above `[limits] file_bytes`: reported, never read into memory."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(
            f"{size:,} bytes, above [limits] file_bytes ({limit:,}); cite a smaller file, "
            "or raise the limit in config.toml"
        )


class Absent(Unreadable):
    """A blob the upstream does not have (its history rewritten, or a copy that lacks it):
    the mirror cannot fetch it, and the items that read it cannot be judged."""

    def __init__(self, blob: str, repo: str) -> None:
        self.blob = blob
        super().__init__(
            f"blob {blob[:12]} is not on the upstream {repo}: its history was rewritten, or "
            "the url in config.toml is a copy that lacks it; point the url at the repository "
            "itself"
        )


def plain(message: str) -> str:
    """A pydantic message as a person would write it: without the "Value error, " (or
    "Assertion failed, ") pydantic puts before the text a validator raised."""
    for prefix in ("Value error, ", "Assertion failed, "):
        if message.startswith(prefix):
            return message.removeprefix(prefix)
    return message


def did_you_mean(key: str, known: Iterable[str]) -> str:
    """` (did you mean `tests`?)` for a near miss of a known key, else "": a close spelling
    (difflib), also once two neighbouring letters are swapped back (`tset`)."""
    import difflib

    known = list(known)
    swapped = [key[:i] + key[i + 1] + key[i] + key[i + 2 :] for i in range(len(key) - 1)]
    for variant in (key, *swapped):
        close = difflib.get_close_matches(variant, known, n=1, cutoff=0.6)
        if close:
            return f" (did you mean `{close[0]}`?)"
    return ""
