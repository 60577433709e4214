"""Bounded retries for GitHub calls, following GitHub's published rate-limit rules.

- primary limit: 403/429 with `x-ratelimit-remaining: 0` -> wait until `x-ratelimit-reset`;
- secondary limit: 403/429 with `retry-after` -> wait that long; without it, a minute,
  doubling each time;
- 5xx and timeouts: retry with exponential backoff, `retries` times.
The sum of rate-limit waits in one run never exceeds `max_wait_seconds`: beyond it the
operation fails and the next run retries it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from watcher.issues.sink import SinkError

if TYPE_CHECKING:
    from github import GithubException

    from watcher.issues.github import GithubSink

T = TypeVar("T")
_SECONDARY = ("secondary rate limit", "abuse detection", "try again", "retry your request")


def run(sink: GithubSink, what: str, fn: Callable[[], T], recheck: Callable[[], Any] | None) -> Any:
    """`fn()` under the sink's policy. `recheck` answers "did the POST happen after all?"."""
    import requests
    from github import GithubException

    policy = sink.policy
    failures = 0
    limited = 0
    while True:
        try:
            return fn()
        except GithubException as exc:
            wait = rate_limit_wait(exc, limited, policy.clock())
            if wait is not None:
                _wait_limit(sink, what, exc, wait)
                limited += 1
                continue
            if exc.status < 500 or failures >= policy.retries:
                raise SinkError(sink._scrub(f"GitHub {what}: {_describe(exc)}")) from _bare(exc)
        except requests.RequestException as exc:
            if failures >= policy.retries:
                raise SinkError(sink._scrub(f"GitHub {what}: {type(exc).__name__}")) from None
        failures += 1
        policy.sleep(policy.backoff * 2.0 ** (failures - 1))
        if recheck is not None:  # the failed POST may have happened: look before repeating
            done = _safe(recheck)
            if done is not None:
                return done


def rate_limit_wait(exc: GithubException, attempt: int, now: float) -> float | None:
    """Seconds to wait for a rate-limited response, or None when it is no rate limit."""
    if exc.status not in (403, 429):
        return None
    headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
    message = str((exc.data or {}).get("message", "") if isinstance(exc.data, dict) else "").lower()
    if "retry-after" in headers:
        return _number(str(headers["retry-after"]), SECONDARY_DEFAULT)
    if headers.get("x-ratelimit-remaining") == "0":
        reset = _number(str(headers.get("x-ratelimit-reset", now)), now)
        return max(0.0, reset - now) + 1.0
    if exc.status == 429 or any(s in message for s in _SECONDARY) or "rate limit" in message:
        return SECONDARY_DEFAULT * 2.0**attempt
    return None  # a plain 403: no permission; waiting will not help


SECONDARY_DEFAULT = 60.0


def _wait_limit(sink: GithubSink, what: str, exc: GithubException, wait: float) -> None:
    policy = sink.policy
    if policy.waited + wait > policy.max_wait:
        raise SinkError(
            f"GitHub {what}: rate limited (HTTP {exc.status}); waiting {wait:.0f} s more would "
            f"exceed [issues] max_wait_seconds = {policy.max_wait:g}; the next run retries"
        ) from None
    policy.waited += wait
    policy.sleep(wait)


def _number(value: str | None, default: float) -> float:
    try:
        return float(value) if value is not None else default
    except ValueError:
        return default


def _describe(exc: GithubException) -> str:
    message = exc.data.get("message") if isinstance(exc.data, dict) else None
    return f"HTTP {exc.status}" + (f" {message}" if message else "")


def _bare(exc: GithubException) -> GithubException:
    """The exception without the response headers (they could echo credentials)."""
    return type(exc)(exc.status, {"message": _describe(exc)}, None)


def _safe(recheck: Callable[[], Any]) -> Any:
    try:
        return recheck()
    except SinkError:
        return None  # could not tell: try the POST again
