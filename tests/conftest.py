"""Shared fixtures: no network, pinned git, real upstream repositories built in tmp_path,
the local GitHub server, git's trace of a run, and a server that never answers."""

from __future__ import annotations

import ipaddress
import os
import socket
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support import Trace
from watcher.cli import main
from watcher.gitbuild import Upstream
from watcher.judge.session import Counts

if TYPE_CHECKING:
    from tests.github_server import GithubServer

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else address
    if self.family in (socket.AF_INET, socket.AF_INET6):
        try:
            ok = ipaddress.ip_address(host).is_loopback
        except ValueError:
            ok = host == "localhost"
        if not ok:
            raise OSError(f"tests may not reach {host}: only loopback is allowed")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No test reaches the network, the user's git config or the user's cache."""
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_ALLOW_PROTOCOL", "file")  # git itself may not leave the machine
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    yield


@pytest.fixture
def upstream(tmp_path: Path) -> Upstream:
    return Upstream(tmp_path / "upstream")


@dataclass
class Project:
    """A notes repository in tmp_path: config.toml, notes/, rules/, state/, a mirror cache."""

    root: Path
    upstream: Upstream
    repo: str = "acme/client"
    # What this project's checks did, summed over its runs (tests reset it as they go).
    counts: Counts = field(default_factory=Counts)

    def __post_init__(self) -> None:
        for folder in ("notes", "rules"):
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        self.config(sink="none")

    @property
    def config_file(self) -> Path:
        return self.root / "config.toml"

    def config(self, *, sink: str = "none", extra: str = "", upstream_extra: str = "") -> None:
        self.config_file.write_text(
            f'notes = "notes"\nrules = "rules"\nstate = "state"\ncache = "cache"\n{extra}\n'
            f'[[upstream]]\nrepo = "{self.repo}"\nurl = "{self.upstream.url}"\nbranch = "main"\n'
            f'release_tags = "v*"\n{upstream_extra}\n[issues]\nsink = "{sink}"\n',
            encoding="utf-8",
        )

    def note(
        self, note_id: str, *sources: str, name: str | None = None, raw: str | None = None
    ) -> Path:
        """Write a note whose sources are `commit path` pairs like "abc123 src/lib.rs:3-9"."""
        path = self.root / "notes" / (name or f"{note_id}.md")
        path.parent.mkdir(parents=True, exist_ok=True)
        if raw is None:
            items = "".join(
                f"  - url: https://github.com/{self.repo}\n    commit: {s.split()[0]}\n"
                f"    path: {s.split()[1]}\n"
                for s in sources
            )
            raw = f"---\nid: {note_id}\ntitle: About {note_id}\nsources:\n{items}---\n\nBody.\n"
        path.write_text(raw, encoding="utf-8")
        return path

    def rules(self, text: str, name: str = "rules.toml") -> Path:
        path = self.root / "rules" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    def run(self, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
        """Run the CLI in-process with this project's config; return (exit, stdout, stderr)."""
        capsys.readouterr()
        code = main([*args, "--config", str(self.config_file)], counts=self.counts)
        out, err = capsys.readouterr()
        return code, out, err


@pytest.fixture
def project(tmp_path: Path, upstream: Upstream) -> Project:
    return Project(tmp_path / "notes-repo", upstream)


@pytest.fixture
def unpaced(monkeypatch: pytest.MonkeyPatch) -> None:
    """GitHub sinks made from config skip the pacing meant for github.com (PyGithub's 1 s
    between writes, 0.25 s between requests: `GithubSink.throttle`) and retry after 10 ms
    instead of 1 s; how many times they retry, and what they send, stay as configured."""
    from watcher.issues.github import GithubSink

    made = GithubSink.from_config.__func__  # type: ignore[attr-defined]

    def from_config(cls: type[GithubSink], cfg: Any, token: str) -> GithubSink:
        sink: GithubSink = made(cls, cfg, token)
        sink.throttle = False
        sink.policy.backoff = 0.01
        return sink

    monkeypatch.setattr(GithubSink, "from_config", classmethod(from_config))


@pytest.fixture
def api(request: pytest.FixtureRequest, unpaced: None) -> Iterator[GithubServer]:
    """The local GitHub server, accepting the test module's TOKEN; every answer it gave
    must keep GitHub's published contract. Sinks made from config talk to it unpaced."""
    from tests.github_server import GithubServer, contract_errors

    with GithubServer(request.module.TOKEN) as server:
        yield server
        assert contract_errors(server.recorded) == []


@pytest.fixture
def trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Trace:
    return Trace(tmp_path / "trace", monkeypatch)


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts every connection and never says a word."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


@pytest.fixture(autouse=True)
def _no_thread_left_behind(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test leaves no thread running: the worker pool forks only from a process with
    one thread, so a server thread left by one test would change what a later test in
    the same process measures."""
    yield
    left = [t for t in threading.enumerate() if t is not threading.main_thread()]
    assert not left, f"{request.node.nodeid} left threads running: {left}"
