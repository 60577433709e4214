"""The hidden markers that make issues findable, and the news keys they carry.

A marker is trusted only at a fixed place: the first line of an issue body, or of a
comment. Upstream text can contain any string, but never reaches those places.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from typing import Any

from watcher import fingerprint
from watcher.models import Result

DASHBOARD = "<!-- watch:dashboard -->"
_SAFE_ID = re.compile(r"[^A-Za-z0-9._:/-]")
_SEEN = re.compile(r"^<!-- watch:seen=([0-9a-f,]*) -->$")
_DATA = re.compile(r"^<!-- watch:data=([A-Za-z0-9+/=]*) -->$")
_COMMENT = re.compile(r"^<!-- watch:comment=([0-9a-f]+) -->$")


def note_marker(note_id: str) -> str:
    """`<!-- watch:note=ID -->`; characters that could end the comment are encoded."""
    safe = _SAFE_ID.sub(lambda m: f"%{ord(m.group()):02X}", note_id).replace("--", "-%2D")
    return f"<!-- watch:note={safe} -->"


def search_phrase(note_id: str) -> str:
    """What a GitHub search looks for in bodies: the marker without the comment syntax."""
    return note_marker(note_id).removeprefix("<!-- ").removesuffix(" -->")


def has_marker(body: str | None, marker: str) -> bool:
    """True when `marker` is the body's first line: the only place a marker is trusted."""
    return (body or "").split("\n", 1)[0].strip() == marker


def news_key(result: Result) -> str:
    """What makes an item's staleness news: verdict, introducing commit, release, and a
    later commit that changed the item again (the last of its history, when it is not the
    introducing one: keys of items changed once stay what they were before history)."""
    commit = result.introduced_by.commit if result.introduced_by else ""
    latest = result.history[-1].commit if result.history else commit
    if latest != commit:
        commit += f"+{latest}"
    raw = "\0".join((result.id, result.verdict.value, commit, result.released_in or ""))
    return fingerprint.short(raw, 12)


def news_keys(results: Iterable[Result]) -> frozenset[str]:
    return frozenset(news_key(r) for r in results if r.verdict.stale)


def seen_line(keys: Iterable[str]) -> str:
    return f"<!-- watch:seen={','.join(sorted(keys))} -->"


def parse_seen(body: str | None) -> frozenset[str]:
    """The news keys an issue body was last written with (second line); none if absent."""
    lines = (body or "").split("\n", 2)
    match = _SEEN.match(lines[1].strip()) if len(lines) > 1 else None
    return frozenset(k for k in match.group(1).split(",") if k) if match else frozenset()


def data_line(data: dict[str, Any]) -> str:
    raw = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    return f"<!-- watch:data={base64.b64encode(raw).decode()} -->"


def parse_data(body: str | None) -> dict[str, Any]:
    """The dashboard's hidden data (second line); `{}` when absent or unreadable."""
    lines = (body or "").split("\n", 2)
    match = _DATA.match(lines[1].strip()) if len(lines) > 1 else None
    if not match:
        return {}
    try:
        data = json.loads(base64.b64decode(match.group(1)))
    except (ValueError, RecursionError):  # hand-edited, truncated or nested past Python's
        return {}  # stack: the rows are rebuilt as notes are checked
    return data if isinstance(data, dict) else {}


def comment_marker(key: str) -> str:
    return f"<!-- watch:comment={key} -->"


def comment_key(body: str | None) -> str | None:
    match = _COMMENT.match((body or "").split("\n", 1)[0].strip())
    return match.group(1) if match else None


def digest(*parts: str) -> str:
    return fingerprint.short("\0".join(parts), 12)
