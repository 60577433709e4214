"""`bench.draw`, the draw of `bench.differential --shapes`: what it cites of each shape,
on small files written in the shape of real code."""

from __future__ import annotations

from bench import draw

RUST = b"""\
use std::sync::Arc;
use tokio::sync::Mutex;

pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

/// A session's settings.
#[derive(Debug, Clone)]
pub struct Settings {
    #[serde(default)]
    pub name: String,
    pub retries: u8,
}

pub enum Mode {
    Fast,
    Slow(u8),
}

impl Settings {
    pub fn new() -> Self {
        todo!()
    }
}
"""

PY = b"""\
import json
from typing import Any

LATEST_VERSION = "2025-06-18"


@dataclass
class Options:
    name: str = "server"
    retries: int = 3

    def merged(self) -> dict[str, Any]:
        local = 1
        return {}
"""


def spans(source: bytes, path: str) -> dict[str, set[tuple[int, int, str]]]:
    found = draw.candidates(source, path)
    return {shape: {(c.start, c.end, c.name) for c in cites} for shape, cites in found.items()}


def test_rust_types_are_cited_with_their_attributes_and_members_with_theirs() -> None:
    found = spans(RUST, "src/settings.rs")
    # The doc comment is not cited; the `#[derive]` is.
    assert (7, 12, "Settings") in found["type"]
    assert (14, 17, "Mode") in found["type"]
    assert (19, 23, "Settings") in found["type"]  # the `impl`, by its type
    assert found["const"] == {(4, 4, "DEFAULT_TIMEOUT_SECS")}
    imports = {(s, e) for s, e, _ in found["import"]}
    assert imports and all(1 <= s <= e <= 2 for s, e in imports)
    members = {(s, e) for s, e, _ in found["member"]}
    assert all(9 <= s <= e <= 11 or 15 <= s <= e <= 16 for s, e in members)


def test_python_class_attributes_are_members_and_locals_are_not() -> None:
    found = spans(PY, "src/options.py")
    assert found["type"] == {(7, 14, "Options")}  # from its decorator
    assert found["const"] == {(4, 4, "LATEST_VERSION")}
    members = {(s, e) for s, e, _ in found["member"]}
    assert members and all(9 <= s <= e <= 10 for s, e in members)
    imports = {(s, e) for s, e, _ in found["import"]}
    assert imports and all(1 <= s <= e <= 2 for s, e in imports)
