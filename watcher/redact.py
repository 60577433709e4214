"""The one redaction point: nothing that leaves the process carries a secret.

Everything watch writes goes through `redact`: stdout and stderr (the CLI wraps both),
log records, state files, issue bodies and comments, and the Action's outputs. It
strips the user-info part of every URL (`https://user:TOKEN@host/...` becomes
`https://host/...`), and replaces every registered secret (the token variable's value,
the passwords of upstream URLs) and anything shaped like a GitHub token with `***`.
"""

from __future__ import annotations

import io
import re
from typing import Any, TextIO

MASK = "***"
# Personal, OAuth, user-to-server, server-to-server and refresh tokens, and the
# fine-grained personal tokens (https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/).
GITHUB_TOKEN = re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})")
# scheme://userinfo@ : the user-info ends at the last @ before the host's path.
USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'\"<>]*@")
_MIN_SECRET = 4  # shorter values would mask ordinary words
# Cheap first looks, led by a literal that the regex engine finds with a plain search:
# every match of USERINFO or GITHUB_TOKEN contains one of theirs, and the full patterns,
# which try every word as a URL scheme, cost a hundred times more on a big report.
_MAYBE_USERINFO = re.compile(r"://[^/\s@'\"<>]*@")
_MAYBE_TOKEN = re.compile(r"gh[pousr]_|github_pat_")

_secrets: set[str] = set()


def add_secret(value: str | None) -> None:
    """Mask `value` wherever it appears from now on (a token, a URL's password)."""
    if value and len(value) >= _MIN_SECRET:
        _secrets.add(value)


def looks_like_token(value: str) -> bool:
    return GITHUB_TOKEN.search(value) is not None


def strip_userinfo(url: str) -> str:
    """`https://user:pass@host/x` -> `https://host/x`; any other text is left as it is."""
    return USERINFO.sub(r"\1", url)


def redact(text: str) -> str:
    """`text` with URL credentials, registered secrets and GitHub tokens removed."""
    if not text:
        return text
    if _MAYBE_USERINFO.search(text):
        text = USERINFO.sub(r"\1", text)
    for secret in sorted(_secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    return GITHUB_TOKEN.sub(MASK, text) if _MAYBE_TOKEN.search(text) else text


def redact_data(data: Any) -> Any:
    """A JSON-like value with every string in it redacted (keys included)."""
    if isinstance(data, str):
        return redact(data)
    if isinstance(data, dict):
        return {redact_data(k): redact_data(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [redact_data(v) for v in data]
    return data


def register_url(url: str) -> None:
    """Remember the password (or token) in a URL's user-info as a secret."""
    match = re.match(r"(?i)^[a-z][a-z0-9+.-]*://([^/\s@]*)@", url)
    if match:
        user, _, password = match.group(1).partition(":")
        add_secret(password or user)


class RedactingStream(io.TextIOBase):
    """A text stream that redacts each write before passing it on.

    When its reader goes away (`watch notes | head -1`), the rest is dropped quietly and
    the command runs to its end and its own exit status, as `git log | head` does."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                self.inner.write(redact(text))
            except BrokenPipeError:
                self._reader_gone()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self.inner.flush()
            except BrokenPipeError:
                self._reader_gone()

    def _reader_gone(self) -> None:
        """Point the file descriptor at /dev/null, so that the interpreter's own flush of
        what is still buffered, at exit, finds no broken pipe either."""
        import os

        self.gone = True
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self.inner.fileno())
            os.close(null)
        except (OSError, ValueError, io.UnsupportedOperation):
            pass  # not a file descriptor (a test's capture): nothing will flush it later

    def isatty(self) -> bool:
        return self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self.inner, "encoding", "utf-8"))
