"""The registry of issue sinks: `[issues] sink` name -> a factory of that sink."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from watcher.issues.sink import Sink

if TYPE_CHECKING:
    from watcher.config import Config

SinkFactory = Callable[["Config", str | None], Sink]


def _github(config: Config, token: str | None) -> Sink:
    from watcher.errors import ConfigError
    from watcher.issues.github import GithubSink

    if config.issues.repo is None:
        raise ConfigError(
            config.file, '[issues] repo is required with sink = "github": set OWNER/NAME'
        )
    assert token is not None
    return GithubSink.from_config(config.issues, token)


def _files(config: Config, token: str | None) -> Sink:
    from watcher.issues.files import FilesSink

    return FilesSink(config.state / "issues", display=config.display)


SINKS: dict[str, SinkFactory] = {"github": _github, "files": _files}
