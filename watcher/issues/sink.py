"""Where issues go, as the lifecycle sees it: the Sink Protocol, the documents it trades in,
its error, and the dry run that wraps any sink. The registry of sinks is `sinks`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol

from watcher.errors import WatchError

State = Literal["open", "closed"]


@dataclass(frozen=True)
class IssueDoc:
    """One issue as a sink sees it. `handle` is the sink's own id (number or file name)."""

    handle: str
    title: str
    body: str
    state: State
    labels: tuple[str, ...] = ()
    url: str | None = None
    number: int | None = None
    author: str | None = None  # the account that opened it, where the sink knows


class SinkError(WatchError):
    """One operation failed after its retries; the next run tries again."""


class Sink(Protocol):
    """The operations the lifecycle needs; every write is idempotent or checked first."""

    name: str

    @property
    def dashboard_per_upstream(self) -> bool:
        """One dashboard document per upstream (files: jobs of a matrix never write the
        same file), rather than one issue for all (github)."""
        ...

    def check(self) -> None:
        """Reach the sink once; raise WatchError when nothing can be done (wrong repo)."""
        ...

    def find(
        self, note_id: str, marker: str, hint: str | None, *, thorough: bool = True
    ) -> list[IssueDoc]:
        """Every issue, open or closed, whose body starts with `marker`.

        `thorough=False` (nothing will be opened) lets a sink skip expensive lookups.
        """
        ...

    def dashboard(self, handle: str, recorded: Mapping[str, Any] | None) -> IssueDoc | None:
        """The dashboard document `handle` that watch itself keeps, or None.

        `recorded` is what the bookkeeping says of it (handle, author). An issue anyone
        else could have written is never taken for it (`watcher.issues.github`).
        """
        ...

    def untrusted(self, doc: IssueDoc) -> str | None:
        """Why the boxes ticked in `doc` must not be carried out (who last edited its
        body may not write to the repository); None when they may."""
        ...

    def ensure_labels(self, names: Sequence[str]) -> None:
        """Create the labels that do not exist yet."""
        ...

    def create(self, note_id: str, title: str, body: str, labels: Sequence[str]) -> IssueDoc:
        """Open an issue; if an earlier attempt did open it, return that one instead."""
        ...

    def comment(self, doc: IssueDoc, key: str, text: str) -> bool:
        """Add a comment unless one with `key` is already there; True when added."""
        ...

    def update(
        self, doc: IssueDoc, *, title: str, body: str, labels: Sequence[str], state: State
    ) -> IssueDoc:
        """Rewrite an issue's title, body, labels and state in one step."""
        ...


@dataclass
class DryRunSink:
    """Reads through to a real sink (if any), records writes instead of doing them."""

    inner: Sink | None
    log: Callable[[str], None]
    name: str = "dry-run"

    @property
    def dashboard_per_upstream(self) -> bool:
        return self.inner.dashboard_per_upstream if self.inner else False

    def check(self) -> None:
        if self.inner is not None:
            self.inner.check()

    def dashboard(self, handle: str, recorded: Mapping[str, Any] | None) -> IssueDoc | None:
        return self.inner.dashboard(handle, recorded) if self.inner else None

    def untrusted(self, doc: IssueDoc) -> str | None:
        return self.inner.untrusted(doc) if self.inner else "a dry run carries out nothing"

    def find(
        self, note_id: str, marker: str, hint: str | None, *, thorough: bool = True
    ) -> list[IssueDoc]:
        return self.inner.find(note_id, marker, hint, thorough=thorough) if self.inner else []

    def ensure_labels(self, names: Sequence[str]) -> None:
        return None

    def create(self, note_id: str, title: str, body: str, labels: Sequence[str]) -> IssueDoc:
        self.log(f"  title: {title}\n  labels: {', '.join(labels)}\n" + _indent(body))
        return IssueDoc(handle=f"new:{note_id}", title=title, body=body, state="open")

    def comment(self, doc: IssueDoc, key: str, text: str) -> bool:
        self.log(f"  comment on {doc.url or doc.handle}:\n" + _indent(text))
        return True

    def update(
        self, doc: IssueDoc, *, title: str, body: str, labels: Sequence[str], state: State
    ) -> IssueDoc:
        if state != doc.state:
            self.log(f"  set state of {doc.url or doc.handle} to {state}")
        return replace(doc, title=title, body=body, labels=tuple(labels), state=state)


def _indent(text: str) -> str:
    return "\n".join("  | " + line for line in text.splitlines())
