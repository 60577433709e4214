"""Load and validate `config.toml` (SPEC 3.3)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PositiveFloat,
    PositiveInt,
    StrictBool,
    ValidationError,
    field_validator,
)

from watcher import defaults, redact
from watcher.errors import ConfigError, did_you_mean, plain
from watcher.inputs import inside

ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")  # as POSIX names them: upper case
REPO_RE = inside.REPO  # OWNER/NAME; `inside.repo_problem` says why a value is not one
# What `git check-ref-format` refuses in a branch name (a leading `-` is refused apart).
BAD_BRANCH = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//|^/|/$|\.lock$")
EVERY_RE = re.compile(r"^@every\s+(\d+)\s*([smhd])$")


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Limits(_Strict):
    """Bounds on what one run may spend: time waiting on the network, bytes of input."""

    fetch_seconds: PositiveFloat = 600.0  # wall-clock bound on one fetch from an upstream
    stall_seconds: PositiveInt = 60  # an http(s) fetch under 1 KB/s this long is given up
    note_bytes: PositiveInt = 1_000_000  # a larger note is an error, not parsed
    rule_bytes: PositiveInt = 1_000_000  # a larger rule file is an error, not parsed
    file_bytes: PositiveInt = defaults.FILE_BYTES
    yaml_nodes: PositiveInt = 10_000  # front matter expanding (aliases included) past this
    # Processes judging and walking a big site (watcher.judge.pool); none: one per core, up to 4.
    processes: PositiveInt | None = None


class Upstream(_Strict):
    repo: str
    url: str = ""
    branch: str = ""  # empty: the remote's default branch (its HEAD), read at the first clone
    release_tags: str = "*"
    schedule: str = "17 */6 * * *"
    fetch_seconds: PositiveFloat | None = None  # this upstream's bound; default [limits]

    @field_validator("repo")
    @classmethod
    def _repo_form(cls, value: str) -> str:
        if problem := inside.repo_problem(value):
            raise ValueError(problem)
        return value

    @field_validator("url")
    @classmethod
    def _url_form(cls, value: str) -> str:
        if value.startswith("-"):  # git would read it as an option (`--upload-pack=...`)
            raise ValueError(
                "starts with `-`; give the upstream's URL (https://github.com/OWNER/NAME.git) "
                "or a path (./upstream)"
            )
        return value

    @field_validator("branch")
    @classmethod
    def _branch_form(cls, value: str) -> str:
        if value.startswith("-") or BAD_BRANCH.search(value):
            raise ValueError(f"{value!r} is not a branch name; write it as `git branch` shows it")
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
        """The URL git fetches from, credentials included: never show or store it."""
        return defaults.fetch_url(self.repo, self.url)

    @property
    def display_url(self) -> str:
        """The URL as reports, logs and state show it: without user-info."""
        return redact.strip_userinfo(self.fetch_url)


OpenOn = Literal["moved", "changed", "broken", "missing", "error"]


class IssuesConfig(_Strict):
    sink: Literal["github", "files", "none"] = defaults.SINK
    repo: str | None = None
    labels: tuple[str, ...] = ("stale-verification",)
    token_env: str = defaults.TOKEN_ENV
    api_url: str = "https://api.github.com"
    open_on: tuple[OpenOn, ...] = ("changed", "broken", "missing", "error")
    dashboard: StrictBool = False
    reopen: StrictBool = True  # a note stale again reopens its closed issue, not a new one
    max_wait_seconds: float = 300.0  # the longest a rate limit is waited out
    retries: int = 4
    timeout_seconds: PositiveInt = 15  # one GitHub API request; PyGithub takes whole seconds
    accept: Literal["pull-request", "commit"] = "pull-request"  # a ticked dashboard "accept"

    @field_validator("token_env")
    @classmethod
    def _variable_name(cls, value: str) -> str:
        # Never echo the value: it may be the token itself, pasted in by mistake.
        if redact.looks_like_token(value):
            raise ValueError(
                "holds what looks like a token, not the name of a variable: put the token "
                'in the environment, set token_env = "GITHUB_TOKEN" (its name), and revoke '
                "the token now that it is in a file"
            )
        if not ENV_NAME.fullmatch(value):
            raise ValueError(  # not echoed either: a token may be anything
                "must be the name of an environment variable (capital letters, digits, _, "
                'not starting with a digit), like "GITHUB_TOKEN"'
            )
        return value

    @field_validator("api_url")
    @classmethod
    def _api_url_form(cls, value: str) -> str:
        if not re.match(r"^https?://[^\s/]+", value):
            shown = redact.strip_userinfo(value)
            raise ValueError(f"expected an http(s) URL like https://api.github.com, got {shown!r}")
        return value

    @field_validator("repo")
    @classmethod
    def _repo_form(cls, value: str | None) -> str | None:
        if value is not None and (problem := inside.repo_problem(value)):
            raise ValueError(problem)
        return value


class Config(_Strict):
    """The validated configuration; every path in it is absolute."""

    root: Path = Field(exclude=True)  # folder of the config file
    file: Path = Field(exclude=True)
    notes: Path
    rules: Path
    state: Path
    cache: Path
    track_citations: StrictBool = True
    notes_ignore: tuple[str, ...] = ()
    notes_extra_keys: tuple[str, ...] = ()
    # Notes citing a repository with no [[upstream]] check it at github.com/OWNER/NAME
    # on its default branch; false makes such citations errors (`no-upstream`) instead.
    implicit_upstreams: StrictBool = True
    upstream: tuple[Upstream, ...] = ()
    issues: IssuesConfig = IssuesConfig()
    limits: Limits = Limits()

    @field_validator("upstream")
    @classmethod
    def _one_entry_per_repo(cls, value: tuple[Upstream, ...]) -> tuple[Upstream, ...]:
        seen: set[str] = set()
        for entry in value:
            if entry.repo.lower() in seen:
                raise ValueError(
                    f"{entry.repo} is listed twice; keep one [[upstream]] entry per repository"
                )
            seen.add(entry.repo.lower())
        return value

    def fetch_seconds(self, upstream: Upstream) -> float:
        """The wall-clock bound on one fetch from `upstream`."""
        return upstream.fetch_seconds or self.limits.fetch_seconds

    def upstream_for(self, repo: str) -> Upstream | None:
        return next((u for u in self.upstream if u.repo.lower() == repo.lower()), None)

    def display(self, path: Path | str) -> str:
        """A path as users see it: relative to the config's folder when inside it."""
        return display_path(Path(path), self.root)


def display_path(path: Path, root: Path) -> str:
    """`path` relative to `root` when inside it (as users wrote it), else as it is; a
    name that is not UTF-8 with those bytes written `\\xNN` (watcher.inputs.walk.shown)."""
    from watcher.inputs.walk import shown

    try:
        return shown(path.resolve().relative_to(root).as_posix())
    except ValueError:
        return shown(str(path))


def load(file: Path) -> Config:
    """Read config.toml; every problem becomes one ConfigError naming the key."""
    try:
        text = file.read_text(encoding="utf-8")
        raw = tomllib.loads(text)
    except FileNotFoundError:
        raise ConfigError(
            file, "not found; pass --config FILE or run in a notes repository"
        ) from None
    except UnicodeDecodeError as exc:
        held = exc.object if isinstance(exc.object, bytes) else b""
        line = held.count(b"\n", 0, exc.start) + 1
        column = exc.start - (held.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError(
            file, f"not UTF-8 at column {column}; save it as UTF-8", line=line
        ) from None
    except OSError as exc:  # a folder, or unreadable
        raise ConfigError(file, f"cannot read it ({exc.strerror}); pass a readable file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(file, f"TOML error: {exc}; fix the syntax at that position") from None
    root = file.resolve().parent
    data = {**raw, **defaults.paths(root, raw)}
    try:
        config = Config(root=root, file=file.resolve(), **data)
    except ValidationError as exc:
        where = key_line(text, tuple(exc.errors()[0]["loc"]))
        raise ConfigError(file, _explain(exc), line=where) from None
    except TypeError as exc:  # a key given twice, or a non-table where a table belongs
        raise ConfigError(file, str(exc)) from None
    _check_folders(config, explicit=set(raw), text=text)
    _register_secrets(config)
    return config


def _register_secrets(config: Config) -> None:
    """Everything secret the config leads to, masked in all output from now on."""
    import os

    redact.add_secret(os.environ.get(config.issues.token_env))
    for upstream in config.upstream:
        redact.register_url(upstream.fetch_url)


def _check_folders(config: Config, explicit: set[str], text: str) -> None:
    """A folder that is not there makes a green run that checked nothing: say so."""
    for key in ("notes", "rules", "state", "cache"):
        folder: Path = getattr(config, key)
        shown = config.display(folder)
        if folder.exists() and not folder.is_dir():
            raise ConfigError(
                config.file,
                f"key {key}: {shown} is a file, not a folder; point {key} at a folder",
                line=_folder_line(text, key, explicit),
            )
        # notes must be there; rules only when named (a site may have none yet);
        # state and cache are made on first use.
        required = key == "notes" or (key == "rules" and key in explicit)
        if required and not folder.is_dir():
            raise ConfigError(
                config.file,
                f"key {key}: folder {shown} does not exist; create it, or fix the path "
                "(relative to config.toml)",
                line=_folder_line(text, key, explicit),
            )


def _folder_line(text: str, key: str, explicit: set[str]) -> int | None:
    """The line of a top-level key the file sets, for an error about it: looked up only
    then, as finding it compiles a pattern."""
    return key_line(text, (key,)) if key in explicit else None


def _explain(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
        msg = plain(err["msg"])
        if err["type"] == "extra_forbidden":
            msg = "unknown key" + (
                _did_you_mean(err["loc"]) or "; check its spelling against docs/config.md"
            )
        parts.append(f"key {loc}: {msg}")
    return "; ".join(parts)


def key_line(text: str, loc: tuple[int | str, ...]) -> int | None:
    """The line of the key at `loc` (`("upstream", 1, "brnch")`) in a TOML text: the
    table's header (the Nth `[[upstream]]`), then the key's own line after it."""
    lines = text.splitlines()
    start, keys = 0, [str(p) for p in loc if not isinstance(p, int)]
    if len(keys) > 1:
        nth = next((p for p in loc if isinstance(p, int)), 0)
        headers = [
            n for n, line in enumerate(lines)
            if re.fullmatch(rf"\s*\[\[?\s*{re.escape(keys[0])}\s*\]\]?\s*(#.*)?", line)
        ]  # fmt: skip
        if nth >= len(headers):
            return None
        start = headers[nth] + 1
    key = re.compile(rf"\s*[\"']?{re.escape(keys[-1])}[\"']?\s*=") if keys else None
    for n in range(start, len(lines)):
        if len(keys) == 1 and lines[n].lstrip().startswith("["):
            break  # a top-level key comes before the first table
        if key is not None and key.match(lines[n]):
            return n + 1
    return start or None


def _did_you_mean(loc: tuple[int | str, ...]) -> str:
    """` (did you mean `branch`?)` for a near miss of a key of the same table."""
    tables: dict[str, type[BaseModel]] = {
        "upstream": Upstream,
        "issues": IssuesConfig,
        "limits": Limits,
    }
    model = tables.get(str(loc[0]), Config) if len(loc) > 1 else Config
    known = [k for k in model.model_fields if k not in ("root", "file")]
    return did_you_mean(str(loc[-1]), known)
