"""Logging for every command: `-v/-q` pick the level, `--log-format json` suits daemons.

Logs always go to stderr, so that `watch check --format json` keeps stdout to exactly
one JSON document. In `json` format each record is one JSON object on one line, with
any `extra={...}` fields of the record carried along as keys, so a log collector can
filter runs by upstream or outcome without parsing prose.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any, Literal, TextIO

from watcher.redact import redact

LogFormat = Literal["text", "json"]
FORMATS: tuple[LogFormat, ...] = ("text", "json")

# Attributes every LogRecord has; anything else on a record came from `extra=`.
_STANDARD = frozenset(
    vars(logging.LogRecord("", 0, "", 0, "", None, None)).keys() | {"message", "asctime"}
)


def level_for(verbosity: int) -> int:
    """`-q -q` errors only, `-q` warnings, default info, `-v` debug."""
    if verbosity <= -2:
        return logging.ERROR
    if verbosity == -1:
        return logging.WARNING
    return logging.INFO if verbosity == 0 else logging.DEBUG


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ts, level, logger, msg, the extras, and any traceback."""

    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "ts": _utc(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                doc[key] = value
        if record.exc_info:
            doc["exc"] = self.formatException(record.exc_info)
        return redact(json.dumps(doc, default=str, ensure_ascii=False, sort_keys=True))


class TextFormatter(logging.Formatter):
    """`LEVEL logger: message`, redacted."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def _utc(created: float) -> str:
    return (
        time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created))
        + f".{int(created % 1 * 1000):03d}Z"
    )


def configure_logging(verbosity: int = 0, fmt: str = "text", stream: TextIO | None = None) -> None:
    """Send the `watcher` loggers (and APScheduler's) to stderr at the chosen level.

    Replaces any handler an earlier call installed, so tests and `serve` restarts in
    one process do not print every line twice.
    """
    if fmt not in FORMATS:
        raise ValueError(f"log format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(
        JsonFormatter() if fmt == "json" else TextFormatter("%(levelname)s %(name)s: %(message)s")
    )
    level = level_for(verbosity)
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "_watch", False)]:
        root.removeHandler(old)
    handler._watch = True  # type: ignore[attr-defined]  # marks the handler we own
    root.addHandler(handler)
    root.setLevel(level)
    # APScheduler logs every job start at INFO; that is noise next to our own run line.
    logging.getLogger("apscheduler").setLevel(max(level, logging.WARNING))
