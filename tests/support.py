"""Helpers several test files share: git in a work tree, a check's results by id, a
command run in a fresh process, git's own trace of the processes a run started, and a
lock held by another process."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tests.conftest import Project


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def check_results(project: Project, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """`watch check --format json`'s results, by id."""
    _, out, _ = project.run("check", "--format", "json", capsys=capsys)
    return {r["id"]: r for r in json.loads(out)["results"]}


def in_fresh_process(project: Project, probe: str, out: Path, *args: str) -> Any:
    """Run `probe` (a Python script given the path `out` and a `watch` command line) in a
    fresh interpreter on the project's config, and read back the JSON it wrote to `out`:
    what only a process that starts cold can tell (modules imported, validators built)."""
    command = [sys.executable, "-c", probe, str(out), *args, "--config", str(project.config_file)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert out.exists(), done.stderr
    return json.loads(out.read_text())


class Trace:
    """Counts `upload-pack` processes (= fetch round trips) from a fresh trace folder."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.monkeypatch = monkeypatch
        self.runs = 0

    def start(self) -> None:
        self.runs += 1
        self.folder = self.root / f"trace-{self.runs}"
        self.folder.mkdir(parents=True)
        self.monkeypatch.setenv("GIT_TRACE2_EVENT", str(self.folder))

    def upload_packs(self) -> int:
        count = 0
        for file in self.folder.iterdir():
            for line in file.read_text(encoding="utf-8").splitlines():
                event = json.loads(line)
                count += event.get("event") == "cmd_name" and event.get("name") == "upload-pack"
        return count

    def commands(self, name: str) -> list[list[str]]:
        """The arguments of every `git NAME` process run since `start`."""
        found = []
        for file in self.folder.iterdir():
            for line in file.read_text(encoding="utf-8").splitlines():
                event = json.loads(line)
                if event.get("event") != "start":
                    continue
                argv = event["argv"][1:]
                while argv and argv[0].startswith("-"):  # git's own options come first
                    argv = argv[2:] if argv[0] in ("-c", "-C") else argv[1:]
                if argv[:1] == [name]:
                    found.append(argv[1:])
        return found

    def release_queries(self) -> int:
        return sum("--contains" in args for args in self.commands("for-each-ref"))


HOLD = """\
import sys
from filelock import FileLock
lock = FileLock(sys.argv[1])
lock.acquire()
print("held", flush=True)
sys.stdin.read()
"""


@contextlib.contextmanager
def lock_held_elsewhere(path: Path) -> Iterator[None]:
    """filelock's FileLock on `path`, held by another process until the block ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield
    finally:
        holder.communicate("")


class LocalServer(ThreadingHTTPServer):
    """A threading HTTP server on 127.0.0.1 that leaves no thread behind when it stops.

    A client keeps its connection open between requests (PyGithub, git's curl), and the
    thread serving it waits for the next one: stopping closes such connections and joins
    every thread, so a later test in the same process (the worker pool forks only from a
    process with one thread) never sees them."""

    daemon_threads = False
    block_on_close = True

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.open: set[socket.socket] = set()
        self.guard = threading.Lock()
        self.thread = threading.Thread(  # a short poll: shutdown() returns within 50 ms
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        with self.guard:
            self.open.add(request)
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.guard:
                self.open.discard(request)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.shutdown()
        self.thread.join()
        with self.guard:
            for conn in self.open:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        self.server_close()  # joins the threads that served requests
