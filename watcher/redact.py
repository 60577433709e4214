"""The one redaction point: nothing that leaves the process carries a secret.

Everything watch writes goes through `redact`, last, on the text as it leaves: stdout
and stderr (the CLI wraps both), log records, state files, issue titles, bodies and
comments as a sink sends or writes them, and the Action's outputs. It strips the
user-info part of every URL (`https://user:TOKEN@host/...` becomes `https://host/...`),
and replaces every registered secret (the token variable's value, the passwords of
upstream URLs) and anything shaped like a GitHub token with `***`.

Output is escaped before it leaves (Markdown puts a backslash before `_`, JSON before
`"` and `\\`, URLs percent-encode, HTML uses entities), so a secret is looked for in
each of those forms too: `ghp\\_abc…` in an issue body is the token `ghp_abc…`.
"""

from __future__ import annotations

import io
import re
from typing import Any, TextIO
from urllib.parse import unquote

MASK = "***"
# Personal, OAuth, user-to-server, server-to-server and refresh tokens, and the
# fine-grained personal tokens (https://github.blog/2021-04-05-behind-githubs-new-authentication-token-formats/),
# each `_` perhaps escaped by backslashes (Markdown, JSON, or both).
GITHUB_TOKEN = re.compile(
    r"\b(?:gh[pousr]\\*_[A-Za-z0-9]{20,}|github\\*_pat\\*_(?:[A-Za-z0-9]|\\*_){20,})"
)
# scheme://userinfo@ : the user-info ends at the last @ before the host's path.
USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'\"<>]*@")
_MIN_SECRET = 4  # shorter values would mask ordinary words
# Cheap first looks, led by a literal that the regex engine finds with a plain search:
# every match of USERINFO or GITHUB_TOKEN contains one of theirs, and the full patterns,
# which try every word as a URL scheme, cost a hundred times more on a big report.
_MAYBE_USERINFO = re.compile(r"://[^/\s@'\"<>]*@")
_MAYBE_TOKEN = re.compile(r"gh[pousr]\\*_|github\\*_pat")
# What a value pasted where a name belongs looks like when it is a credential: a known
# token prefix (GitHub, GitLab, Slack, OpenAI, AWS), 20+ hex digits, or a 20+ run of
# base64 that is not a word (mixed case, `+` or `/`, or several digits among capitals).
_TOKEN_PREFIX = re.compile(r"gh[pousr]_|github_pat_|glpat-|xox[abposr]-|sk-|AKIA[0-9A-Z]{16}")
_HEX_RUN = re.compile(r"[0-9a-fA-F]{20,}")
_B64_RUN = re.compile(r"[A-Za-z0-9+/]{20,}")
_ENTITIES = {"&": "amp", "<": "lt", ">": "gt", '"': "quot", "'": "#39"}


class Secrets:
    """The secrets of this process, and one pattern finding any of them in any of the
    escaped forms output gives them. Process-wide on purpose: a token registered once
    is masked in everything the process writes afterwards, by every stream and log
    handler, whichever run or thread writes it."""

    def __init__(self) -> None:
        self.values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._needles: tuple[str, ...] = ()  # a literal part of each (escapes keep it)
        self._always = False  # some secret has no such part: always search

    def add(self, value: str) -> None:
        for form in {value, unquote(value)}:  # a URL's password, as given and as decoded
            if len(form) >= _MIN_SECRET and form not in self.values:
                self.values.add(form)
                self._pattern = None

    def mask(self, text: str) -> str:
        if not self.values:
            return text
        if self._pattern is None:
            self._compile()
        if not self._always and not any(n in text for n in self._needles):
            return text
        assert self._pattern is not None
        return self._pattern.sub(MASK, text)

    def _compile(self) -> None:
        ordered = sorted(self.values, key=len, reverse=True)
        self._pattern = re.compile("|".join(_escaped_forms(v) for v in ordered))
        runs = [max(re.findall(r"[A-Za-z0-9]+", v) or [""], key=len) for v in ordered]
        self._needles = tuple(r for r in runs if len(r) >= 3)
        self._always = len(self._needles) < len(runs)


def _escaped_forms(secret: str) -> str:
    """A pattern matching `secret` as written, and with each character that output may
    escape escaped: backslashes before it (Markdown, JSON), percent-encoded (URLs), an
    HTML entity, or a JSON `\\uXXXX`. Letters and digits are never escaped."""
    parts = []
    for char in secret:
        if char.isascii() and char.isalnum():
            parts.append(re.escape(char))
            continue
        forms = [re.escape(char), rf"\\u{ord(char):04x}"]
        encoded = char.encode()
        forms += ["".join(f"%{b:02X}" for b in encoded), "".join(f"%{b:02x}" for b in encoded)]
        if char in _ENTITIES:
            forms += [f"&{_ENTITIES[char]};", f"&#{ord(char)};"]
        parts.append(r"\\*(?:" + "|".join(forms) + ")")
    return "".join(parts)


SECRETS = Secrets()


def add_secret(value: str | None) -> None:
    """Mask `value` wherever it appears from now on (a token, a URL's password)."""
    if value:
        SECRETS.add(value)


def looks_like_token(value: str) -> bool:
    """Whether `value` (written where a name belongs) looks like a credential."""
    if GITHUB_TOKEN.search(value) or _TOKEN_PREFIX.search(value) or _HEX_RUN.search(value):
        return True
    for match in _B64_RUN.finditer(value):
        run = match.group()
        mixed = run.lower() != run and run.upper() != run
        if mixed or "+" in run or "/" in run or sum(c.isdigit() for c in run) >= 3:
            return True
    return False


def strip_userinfo(url: str) -> str:
    """`https://user:pass@host/x` -> `https://host/x`; any other text is left as it is."""
    return USERINFO.sub(r"\1", url)


def redact(text: str) -> str:
    """`text` with URL credentials, registered secrets and GitHub tokens removed, in
    whatever escaped form output gave them."""
    if not text:
        return text
    if _MAYBE_USERINFO.search(text):
        text = USERINFO.sub(r"\1", text)
    text = SECRETS.mask(text)
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
