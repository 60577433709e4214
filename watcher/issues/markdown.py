"""Markdown that stays inert whatever upstream puts in it.

Everything that comes from an upstream repository (diffs, commit summaries, author
names, file paths, claim values) is untrusted: it must not ping people (`@org/team`),
link or cross-reference issues (`#1`, `owner/repo#2`, issue URLs), inject HTML (a
spoofed `<!-- watch:... -->` marker, `<img>`), or break out of a code block.
"""

from __future__ import annotations

import re

from watcher.redact import redact

# Invisible or direction-changing characters ("Trojan Source") are shown, not obeyed.
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Tokens GitHub turns into pings, links or cross-references when they appear in text.
_ACTIVE = re.compile(
    r"`[^`]+`"  # a code span as written (`watch fix`): kept a code span, not escaped
    r"|(?:https?|ftp)://[^\s)\]>]+"  # URLs (an issue URL cross-references that issue)
    r"|www\.[^\s)\]>]+"
    r"|[\w.+-]*@[\w-]+(?:/[\w.-]+)?"  # @user, @org/team, emails
    r"|(?:[\w.-]+/[\w.-]+)?#\d+"  # #1, owner/repo#2
    r"|\bGH-\d+"
    r"|\b[0-9a-f]{7,40}\b",  # bare SHAs autolink to commits
    re.IGNORECASE,
)
_PUNCT = re.compile(r"([\\`*_{}\[\]<>#!|~&])")  # what could start markup mid-line
_BACKTICKS = re.compile(r"`+")


def clean(text: str) -> str:
    """Valid UTF-8 without control or invisible characters; newlines and tabs stay."""
    text = text.encode("utf-8", "replace").decode("utf-8")  # lone surrogates -> '?'
    text = _CONTROL.sub("\ufffd", text)
    return _INVISIBLE.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


def is_clean(text: str) -> bool:
    """Whether `clean` leaves `text` as it is: told of a whole text in one pass, in C."""
    if _CONTROL.search(text) or _INVISIBLE.search(text):
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


def cut(text: str, limit: int) -> str:
    """At most `limit` characters, saying how much was cut. Secrets are masked before
    the cut: a token cut in two is no longer shaped like one, and its head is a secret."""
    if len(text) <= limit:
        return text
    text = redact(text)
    if len(text) <= limit:
        return text
    return text[:limit] + f" … [{len(text) - limit:,} more characters cut]"


def longest_backtick_run(text: str) -> int:
    return max((len(m.group()) for m in _BACKTICKS.finditer(text)), default=0)


def fence(text: str, lang: str = "") -> str:
    """A fenced code block no line of `text` can close early."""
    text = clean(text)
    ticks = "`" * max(3, longest_backtick_run(text) + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{ticks}{lang}\n{body}{ticks}"


def code(text: str, limit: int = 300, *, cell: bool = False) -> str:
    """An inline code span for untrusted text: one line, cut, delimited safely.

    `cell=True` also escapes `|`, which ends a table cell even inside a code span.
    """
    text = cut(" ".join(clean(text).split()), limit)
    if not text:
        return "(empty)"
    ticks = "`" * (longest_backtick_run(text) + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" else ""
    if cell:
        text = text.replace("|", "\\|")
    return f"{ticks}{pad}{text}{pad}{ticks}"


def text(value: str, limit: int = 500, *, cell: bool = False) -> str:
    """Untrusted prose rendered as plain, inert text on one line.

    Markdown punctuation is backslash-escaped (so no HTML, links or emphasis), and
    the tokens GitHub would turn into mentions or references go into code spans,
    where GitHub leaves them alone; so do spans written between backticks, which read
    as code rather than as escaped backticks (`\\`watch fix\\``).
    """
    value = cut(" ".join(clean(value).split()), limit)
    out: list[str] = []
    pos = 0
    for match in _ACTIVE.finditer(value):
        out.append(_escape(value[pos : match.start()]))
        token = match.group()
        spanned = token.startswith("`") and token.endswith("`") and len(token) > 2
        out.append(code(token[1:-1] if spanned else token, limit, cell=cell))
        pos = match.end()
    out.append(_escape(value[pos:]))
    return "".join(out)


def _escape(value: str) -> str:
    return _PUNCT.sub(r"\\\1", value)
