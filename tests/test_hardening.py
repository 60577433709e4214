"""Hostile conditions: silent upstreams, crashes, damaged mirrors and state, huge input."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import pytest

from tests.conftest import Project
from watcher.gitbuild import Upstream

LIB = "src/lib.rs"
SOURCE = "pub fn a() -> u32 {\n    1\n}\n"


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


def _two_upstreams(project: Project, upstream: Upstream, url: str, extra: str = "") -> str:
    """A note on the good upstream, and one on `acme/silent`, fetched from `url`."""
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("good", f"{base} {LIB}:1-3")
    (project.root / "notes" / "other.md").write_text(
        f"---\nid: other\nsources:\n  - url: https://github.com/acme/silent\n"
        f"    commit: {base}\n    path: {LIB}:1-3\n---\n"
    )
    with project.config_file.open("a") as handle:
        handle.write(f'\n[[upstream]]\nrepo = "acme/silent"\nurl = "{url}"\n{extra}')
    return base


@pytest.mark.parametrize("scheme", ["git", "http"])
def test_a_silent_upstream_ends_within_its_limit_and_the_others_are_judged(
    scheme: str,
    silent_port: int,
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GIT_ALLOW_PROTOCOL", "file:git:http")
    url = f"{scheme}://127.0.0.1:{silent_port}/acme/silent.git"
    _two_upstreams(project, upstream, url, extra="fetch_seconds = 1\n")

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    report = json.loads(out)
    assert code == 2 and "Traceback" not in err
    by_repo = {u["repo"]: u for u in report["upstreams"]}
    assert "no answer within 1 s" in by_repo["acme/silent"]["error"]
    assert "fetch_seconds" in by_repo["acme/silent"]["error"]  # the fix is named
    verdicts = {r["id"]: (r["verdict"], r["error"]) for r in report["results"]}
    assert verdicts[f"other:{LIB}:1-3"] == ("error", "upstream-unreachable")
    assert verdicts[f"good:{LIB}:1-3"] == ("fresh", None)


def test_an_unexpected_exception_exits_2_with_its_traceback(
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("good", f"{base} {LIB}:1-3")

    def bug(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in watch")

    monkeypatch.setattr("watcher.classify.judge", bug)
    code, _out, err = project.run("check", "--format", "json", capsys=capsys)

    assert code == 2  # never 1, which means "stale notes" and passes for success
    assert "Traceback" in err and "RuntimeError: a bug in watch" in err
    assert err.strip().splitlines()[-1].startswith("watch: internal error")
