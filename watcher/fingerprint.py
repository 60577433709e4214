"""Digests, and the fingerprint of "has our code changed?": one of each, standard library
only (hashlib is imported on first use: its OpenSSL costs a warm run more than the
hashing it does, so the warm path hashes with blake2b from `_blake2`).

- `digest(*parts)`: a name for some parts (blake2b, each part length-prefixed).
- `short(text, chars)`: the first hex digits of a sha256, the form of the keys that
  `state/` and issue bodies already store (their bytes must stay as they are).
- `code(*files)`: a digest of source files' bytes, for a memo or a stamp that a new
  watch must not take for its own.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path

try:  # blake2b without hashlib (see above)
    from _blake2 import blake2b as blake2b
except ImportError:  # pragma: no cover - another Python
    from hashlib import blake2b as blake2b

PACKAGE = Path(__file__).parent  # watcher/


def digest(*parts: str | bytes) -> str:
    """A name for `parts`: blake2b-256 of each part's length and bytes, as hex."""
    hashed = blake2b(digest_size=32)
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        hashed.update(len(data).to_bytes(8, "big") + data)
    return hashed.hexdigest()


def short(text: str | bytes, chars: int) -> str:
    """The first `chars` hex digits of the sha256 of `text` (UTF-8, a lone surrogate as
    `?`): the keys of results, compiled rules and issue markers that state/ stores."""
    import hashlib

    data = text.encode("utf-8", "replace") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()[:chars]


def code(files: Iterable[str | None]) -> str | None:
    """Our code, for a memo or a stamp: the sha256 of these source files' bytes (a
    module's `__file__`); None when one cannot be read (then nothing may be remembered)."""
    import hashlib

    hashed = hashlib.sha256()
    for file in files:
        try:
            hashed.update(Path(file or "").read_bytes())
        except OSError:
            return None
    return hashed.hexdigest()


def installed() -> str:
    """This watch as installed: its own files (by name, size and modification time:
    installing or checking out another version rewrites them), Python, and the installed
    packages' versions (their metadata folders are named by version). Cheaper than
    `code` over every file, for the warm path, which asks on every run."""
    files = []
    for folder, dirs, names in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            info = os.stat(os.path.join(folder, name))
            files.append(f"{folder}/{name} {info.st_size} {info.st_mtime_ns}")
    packages = [
        name
        for entry in sys.path
        if os.path.isdir(entry)
        for name in sorted(os.listdir(entry))
        if name.endswith((".dist-info", ".egg-info", ".pth"))
    ]
    return digest(sys.version, sys.executable, *files, *packages)
