"""What a mirror is given and what it tells: the upstream it reads, the limits it obeys,
a commit's summary. Plain protocols and tuples: a warm run imports them."""

from __future__ import annotations

from typing import NamedTuple, Protocol


class Source(Protocol):
    """What a mirror reads of an [[upstream]] (watcher.config.Upstream; watcher.state.replay's
    stand-in, which fetches before pydantic is imported)."""

    @property
    def repo(self) -> str: ...
    @property
    def fetch_url(self) -> str: ...
    @property
    def display_url(self) -> str: ...
    @property
    def branch(self) -> str: ...
    @property
    def fetch_seconds(self) -> float | None: ...


class Bounds(Protocol):
    """The limits a mirror obeys (watcher.config.Limits)."""

    @property
    def fetch_seconds(self) -> float: ...
    @property
    def stall_seconds(self) -> int: ...
    @property
    def file_bytes(self) -> int: ...


class CommitInfo(NamedTuple):  # not a dataclass: a warm run imports this module
    sha: str
    date: str
    author: str
    summary: str
    message: str
