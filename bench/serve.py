"""Serve the generated upstream over git:// on 127.0.0.1, counting what goes over the wire.

`git daemon` serves the bare repository (which allows partial clone, as GitHub does); a
small TCP relay in front of it counts bytes sent to the client and connections made.
Every git fetch over git:// is one connection, so connections = network round trips.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path


class Counter:
    """Bytes from the server to clients, and connections, since the last `reset`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.bytes_down = 0
        self.connections = 0

    def add(self, down: int = 0, connections: int = 0) -> None:
        with self._lock:
            self.bytes_down += down
            self.connections += connections

    def reset(self) -> None:
        with self._lock:
            self.bytes_down = 0
            self.connections = 0


class Relay:
    """Accepts on an ephemeral 127.0.0.1 port and relays each connection to `target`."""

    def __init__(self, target: int, counter: Counter) -> None:
        self.target = target
        self.counter = counter
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return  # closed
            self.counter.add(connections=1)
            upstream = socket.create_connection(("127.0.0.1", self.target))
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, down: bool) -> None:
        with contextlib.suppress(OSError):
            while chunk := src.recv(65536):
                dst.sendall(chunk)
                if down:
                    self.counter.add(down=len(chunk))
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.server.close()


@contextlib.contextmanager
def serve(base: Path) -> Iterator[tuple[str, Counter]]:
    """Serve every repository under `base`; yields (url prefix, counter)."""
    port = _free_port()
    daemon = subprocess.Popen(
        ["git", "daemon", "--reuseaddr", "--listen=127.0.0.1", f"--port={port}", "--export-all",
         f"--base-path={base}", "--informative-errors", str(base)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_for(port)
        counter = Counter()
        relay = Relay(port, counter)
        try:
            yield f"git://127.0.0.1:{relay.port}", counter
        finally:
            relay.close()
    finally:
        daemon.terminate()
        daemon.wait()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_for(port: int) -> None:
    for _ in range(200):
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.1):
            return
        time.sleep(0.05)
    raise RuntimeError(f"git daemon did not start on 127.0.0.1:{port}")
