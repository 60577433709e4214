"""An upstream that needs credentials: `git http-backend` behind HTTP basic auth on 127.0.0.1.

Git's own smart-HTTP server (a CGI program) is run per request, as a web server would;
requests without the right user and password get 401, as GitHub answers a bad token.
"""

from __future__ import annotations

import base64
import os
import subprocess
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.support import LocalServer

# What GitHub allows, so that a blobless mirror can be made and filled on demand.
_SERVER_CONFIG = {
    "uploadpack.allowFilter": "true",
    "uploadpack.allowAnySHA1InWant": "true",
    "http.receivepack": "false",
}


class GitHttpServer:
    """Serves the repositories under `root` at http://127.0.0.1:PORT/NAME."""

    def __init__(self, root: Path, user: str, password: str) -> None:
        self.root = root
        self.expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self.requests: list[tuple[str, int]] = []  # (path, status) of each request
        self.server = LocalServer(_handler(self))

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def __enter__(self) -> GitHttpServer:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    def backend(self, method: str, path: str, body: bytes, headers: Any) -> bytes:
        parts = urlsplit(path)
        env = {
            "PATH": os.environ.get("PATH", ""),
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": method,
            "PATH_INFO": parts.path,
            "QUERY_STRING": parts.query,
            "CONTENT_TYPE": headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": "watch",
            "REMOTE_ADDR": "127.0.0.1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_COUNT": str(len(_SERVER_CONFIG)),
        }
        if protocol := headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = protocol
        if encoding := headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = encoding
        for n, (key, value) in enumerate(_SERVER_CONFIG.items()):
            env[f"GIT_CONFIG_KEY_{n}"] = key
            env[f"GIT_CONFIG_VALUE_{n}"] = value
        proc = subprocess.run(
            ["git", "http-backend"], input=body, capture_output=True, env=env, check=False
        )
        return proc.stdout


def _handler(server: GitHttpServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def _serve(self, method: str) -> None:
            body = self._body()
            if self.headers.get("Authorization") != server.expected:
                server.requests.append((self.path, 401))
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="git"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            out = server.backend(method, self.path, body, self.headers)
            head, _, payload = out.partition(b"\r\n\r\n")
            status = 200
            fields = []
            for line in head.decode("latin-1").split("\r\n"):
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.split()[0])
                elif name:
                    fields.append((name, value.strip()))
            server.requests.append((self.path, status))
            self.send_response(status)
            for name, value in fields:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks = []
                while size := int(self.rfile.readline().strip() or b"0", 16):
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                self.rfile.readline()
                return b"".join(chunks)
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    return Handler
