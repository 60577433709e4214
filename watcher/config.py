"""Load and validate `config.toml` (SPEC 3.3)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from watcher.errors import ConfigError

REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
EVERY_RE = re.compile(r"^@every\s+(\d+)\s*([smhd])$")


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Upstream(_Strict):
    repo: str
    url: str = ""
    branch: str = "main"
    release_tags: str = "*"
    schedule: str = "17 */6 * * *"

    @field_validator("repo")
    @classmethod
    def _repo_form(cls, value: str) -> str:
        if not REPO_RE.match(value):
            raise ValueError(f"expected OWNER/NAME, got {value!r}")
        return value

    @field_validator("schedule")
    @classmethod
    def _schedule_form(cls, value: str) -> str:
        if value.startswith("@") and not EVERY_RE.match(value):
            raise ValueError(f"expected a cron expression or '@every 30s', got {value!r}")
        if not value.startswith("@") and len(value.split()) != 5:
            raise ValueError(f"a cron expression has 5 fields, got {value!r}")
        return value

    @property
    def fetch_url(self) -> str:
        return self.url or f"https://github.com/{self.repo}.git"


class IssuesConfig(_Strict):
    sink: Literal["github", "files", "none"] = "none"
    repo: str | None = None
    labels: tuple[str, ...] = ("stale-verification",)
    token_env: str = "GITHUB_TOKEN"
    api_url: str = "https://api.github.com"
    open_on: tuple[str, ...] = ("changed", "broken", "missing", "error")
    dashboard: bool = False
    reopen: bool = True  # a note stale again reopens its closed issue instead of a new one
    max_wait_seconds: float = 300.0  # the longest a rate limit is waited out
    retries: int = 4

    @field_validator("repo")
    @classmethod
    def _repo_form(cls, value: str | None) -> str | None:
        if value is not None and not REPO_RE.match(value):
            raise ValueError(f"expected OWNER/NAME, got {value!r}")
        return value


class Config(_Strict):
    """The validated configuration; every path in it is absolute."""

    root: Path = Field(exclude=True)  # folder of the config file
    file: Path = Field(exclude=True)
    notes: Path
    rules: Path
    state: Path
    cache: Path
    track_citations: bool = True
    upstream: tuple[Upstream, ...] = ()
    issues: IssuesConfig = IssuesConfig()

    def upstream_for(self, repo: str) -> Upstream | None:
        return next((u for u in self.upstream if u.repo.lower() == repo.lower()), None)

    def display(self, path: Path | str) -> str:
        """A path as users see it: relative to the config's folder when inside it."""
        return display_path(Path(path), self.root)


def display_path(path: Path, root: Path) -> str:
    """`path` relative to `root` when inside it (as users wrote it), else as it is."""
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


def default_cache() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("watch", appauthor=False)) / "mirrors"


def load(file: Path) -> Config:
    """Read config.toml; every problem becomes one ConfigError naming the key."""
    try:
        raw = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            file, "not found; pass --config FILE or run in a notes repository"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(file, f"TOML error: {exc}; fix the syntax at that position") from None
    root = file.resolve().parent
    data = dict(raw)
    for key, default in (("notes", "notes"), ("rules", "rules"), ("state", "state")):
        data[key] = _resolve(root, data.get(key, default))
    data["cache"] = _resolve(root, data["cache"]) if "cache" in data else default_cache()
    try:
        return Config(root=root, file=file.resolve(), **data)
    except ValidationError as exc:
        raise ConfigError(file, _explain(exc)) from None
    except TypeError as exc:  # a key given twice, or a non-table where a table belongs
        raise ConfigError(file, str(exc)) from None


def _resolve(root: Path, value: object) -> object:
    if not isinstance(value, str):
        return value  # pydantic reports the wrong type with the key
    return (root / Path(value).expanduser()).resolve()


def _explain(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key; check its spelling against the documented keys"
        parts.append(f"key {loc}: {msg}")
    return "; ".join(parts)
