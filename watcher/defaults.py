"""config.toml's defaults, and how its paths resolve (SPEC 3.3).

Stated once, here, for watcher.config (which validates the file with pydantic) and for
watcher.state.replay (which reads the same file before pydantic is imported, to answer
a warm `watch check` without a run). Standard library only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

FOLDERS: Final = ("notes", "rules", "state")  # each defaults to its own name beside config.toml
SINK: Final = "none"  # [issues] sink: where issues go; none files nothing
TOKEN_ENV: Final = "GITHUB_TOKEN"  # [issues] token_env: the variable holding the GitHub token
FILE_BYTES: Final = 10_000_000  # [limits] file_bytes: a larger cited upstream file is an error


def fetch_url(repo: str, url: str) -> str:
    """Where an upstream is fetched from: its `url`, else its repository on GitHub."""
    return url or f"https://github.com/{repo}.git"


def cache() -> Path:
    """Where mirrors live when config.toml names no `cache`: the user's cache folder."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("watch", appauthor=False)) / "mirrors"


def resolve(root: Path, value: str) -> Path:
    """A path from config.toml: `~` expanded, relative to the config's folder, absolute."""
    return (root / Path(value).expanduser()).resolve()


def paths(root: Path, raw: dict[str, object]) -> dict[str, object]:
    """The folders config.toml names (notes, rules, state, cache), defaults filled in and
    resolved; a value that is not a string is left as it is, for the caller to reject."""
    found = {key: _resolved(root, raw.get(key, key)) for key in FOLDERS}
    found["cache"] = _resolved(root, raw["cache"]) if "cache" in raw else cache()
    return found


def _resolved(root: Path, value: object) -> object:
    return resolve(root, value) if isinstance(value, str) else value
