"""The note front-matter format as a model: its JSON Schema, and the key check notes.py
runs on every note (unknown keys are errors with a "did you mean" suggestion)."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from watcher.errors import did_you_mean, plain

# Notes are loaded with every plain scalar as text (`commit: 010022777` stays a commit, not
# YAML 1.1's octal 2106879); a date is text in YYYY-MM-DD form. A date object (an explicit
# `!!timestamp`) is accepted as written.
DateLike = datetime.date | str
HEX = r"^[0-9a-fA-F]{4,40}$"


class Source(BaseModel):
    """One entry of `sources`: a code citation, an issue/PR citation, or a plain link."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    url: str | None = Field(
        None,
        description="https://github.com/OWNER/NAME (with commit and path), a GitHub permalink "
        "(.../blob/SHA/FILE#L10-L20), an issue or pull request URL, or any other link",
    )
    title: str | None = Field(None, description="what the source is, for humans")
    commit: str | None = Field(
        None,
        description="upstream commit the citation was read at (4-40 hex digits); always "
        "text, even when it is all digits (`010022777`)",
    )
    path: str | None = Field(
        None, description="FILE:START-END, FILE:LINE or FILE (whole file); lines are 1-based"
    )
    date: DateLike | None = Field(
        None, description="when the source was read (issue citations: changes after it count)"
    )


class FrontMatter(BaseModel):
    """The YAML block between the two `---` lines at the top of a note."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)

    id: str = Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
        description="stable note id, used by rules, issues and --note (kebab-case)",
    )
    title: str | None = Field(None, description="one line: the fact the note states")
    kind: str | None = Field(None, description="free text, e.g. idiosyncrasy, bug, feature")
    summary: str | None = Field(None, description="a paragraph, for indexes")
    status: str | None = Field(None, description="free text, e.g. current, outdated")
    lastVerified: DateLike | None = Field(  # the key as notes spell it
        None, description="when a human last checked the note against upstream (YYYY-MM-DD)"
    )
    clients: list[str] | None = Field(None, description="the clients the note is about")
    capabilities: list[str] | None = Field(None, description="protocol areas it touches")
    specVersions: list[str | DateLike] | None = Field(
        None, description="protocol revisions it applies to"
    )
    related: list[str] | None = Field(None, description="ids of related notes")
    canonical: str | None = Field(None, description="the published URL of the note")
    last_updated: DateLike | None = Field(
        None, alias="last-updated", description="when the note's text last changed"
    )
    snooze_until: DateLike | None = Field(
        None, description="mute this note's stale-verification issue until this date"
    )
    sources: list[Source] | None = Field(None, description="citations; see docs/notes.md")


def known_keys() -> list[str]:
    """Every top-level key a note may use, as spelled in YAML."""
    return [f.alias or name for name, f in FrontMatter.model_fields.items()]


def source_keys() -> list[str]:
    return list(Source.model_fields)


Problem = tuple[tuple[str | int, ...], str]  # (where in the front matter, message)


def problems(data: Mapping[str, Any], extra_keys: Iterable[str] = ()) -> list[Problem]:
    """(location, message) for every unknown key or wrong type; `extra_keys` are allowed."""
    allowed = set(extra_keys)
    trimmed = {k: v for k, v in data.items() if k not in allowed}
    try:
        FrontMatter.model_validate(trimmed)
    except ValidationError as exc:
        return [_message(err) for err in exc.errors()]
    return []


def _message(err: Any) -> Problem:
    loc: tuple[str | int, ...] = tuple(err["loc"])
    if err["type"] != "extra_forbidden":
        # `str | date` unions report one error per member: keep the first, plainly.
        where = ".".join(str(p) for p in loc if not _member(p))
        return tuple(p for p in loc if not _member(p)), f"`{where}`: {plain(err['msg'])}"
    key = str(loc[-1])
    in_source = len(loc) > 1
    known = source_keys() if in_source else known_keys()
    where = ".".join(str(p) for p in loc)
    what = "a source" if in_source else "the front matter"
    fix = did_you_mean(key, known) or f"; {what} knows {', '.join(known)}"
    return loc, f"unknown key `{where}`{fix}"


def _member(part: object) -> bool:
    return isinstance(part, str) and part in ("str", "int", "date", "list[...]")
