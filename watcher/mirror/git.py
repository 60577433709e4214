"""The one way watch runs git: in a mirror, against an upstream, or in the notes checkout.

`call` runs one command and hands back its exit code and output; `run` turns a failure
into an UpstreamError with git's own last line. Commands that talk to an upstream run
with a time limit in a process group of their own, killed when the time is up. No git
command ever prompts: a missing credential fails instead of waiting for a terminal.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

from watcher import redact
from watcher.errors import UpstreamError

# For git commands that must not fetch what the mirror lacks: no transport is allowed
# (set, the variable overrides `protocol.allow` and names every transport allowed).
NO_FETCH = {"GIT_ALLOW_PROTOCOL": ""}
# What every git command gets on top of this process's environment.
NO_PROMPT = {"GIT_TERMINAL_PROMPT": "0", "GCM_INTERACTIVE": "never"}
# What every reading command is run with: pathspecs taken as they are, paths not quoted.
READING = ("--literal-pathspecs", "-c", "core.quotePath=false")


class GitTimeout(UpstreamError):
    """A git command that talks to an upstream ran past its time limit and was stopped."""


def call(
    cwd: Path | None,
    *args: str,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    what: str = "",
) -> tuple[int, str, str]:
    """Run git; its exit code, output and error output.

    With a `timeout`, git and every process it started (remote helpers, upload-pack,
    ssh) run in their own process group, which is killed when the time is up.
    """
    import signal
    import subprocess

    command = ["git", *(["-C", str(cwd)] if cwd else []), *args]
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {}), **NO_PROMPT},
        start_new_session=timeout is not None,
    )
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise GitTimeout(
            f"{what or 'upstream'} gave no answer within {timeout:g} s (git {args[0]} stopped); "
            "check that the upstream is reachable, or raise fetch_seconds in config.toml"
        ) from None
    except BaseException:  # Ctrl-C: git is in its own group and would not see it
        if timeout is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    return proc.returncode, out, err


def run(
    cwd: Path | None,
    *args: str,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float | None = None,
    what: str = "",
) -> str:
    """Run git (as `call`) and return its output; a failure becomes an UpstreamError
    with git's own last line."""
    code, out, err = call(cwd, *args, stdin=stdin, env=env, timeout=timeout, what=what)
    if code != 0:
        raise failure(args[0], code, err, cwd)
    return out


def run_bytes(cwd: Path, command: str, stdin: bytes) -> list[str]:
    """Lines of a git command fed binary input (e.g. `show-index` reading a pack index)."""
    import subprocess

    proc = subprocess.run(
        ["git", "-C", str(cwd), command], input=stdin, capture_output=True, check=False
    )
    if proc.returncode != 0:
        raise UpstreamError(f"git {command} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode().splitlines()


def failure(command: str, code: int, err: str, cwd: Path | None = None) -> UpstreamError:
    """A failed git command's error: git's first `fatal:` (else `error:`) line, which says
    what went wrong ("'…' does not appear to be a git repository", "repository '…' not
    found"), not the advice git prints after it ("… and the repository exists."). The
    folder it ran in (a mirror in the cache: a path of this machine) is shown by its name."""
    lines = [line.strip() for line in err.strip().splitlines() if line.strip()]
    said = lines[-1] if lines else f"git {command} failed ({code})"
    for prefix in ("fatal: ", "error: "):
        first = next((line for line in lines if line.startswith(prefix)), None)
        if first is not None:
            said = first.removeprefix(prefix)
            break
    if cwd is not None:
        said = said.replace(str(cwd.resolve()), cwd.name).replace(str(cwd), cwd.name)
    return UpstreamError(said)


def run_all(
    cwd: Path, commands: Sequence[Sequence[str]], options: Sequence[str] = (), at_once: int = 4
) -> list[str]:
    """Run reading git commands (each after git's `options`), `at_once` at a time, and
    return their outputs in order; the first failure becomes an UpstreamError (as in
    `run`), and the commands still running are stopped."""
    import subprocess
    from collections import deque

    env = {**os.environ, **NO_PROMPT}
    running: deque[tuple[subprocess.Popen[str], str]] = deque()
    outputs: list[str] = []
    try:
        for command in [*commands, None]:
            while running and (command is None or len(running) == at_once):
                proc, name = running.popleft()
                out, err = proc.communicate()
                if proc.returncode != 0:
                    raise failure(name, proc.returncode, err, cwd)
                outputs.append(out)
            if command is not None:
                proc = subprocess.Popen(["git", "-C", str(cwd), *options, *command],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
                running.append((proc, command[0]))
    finally:
        for proc, _ in running:  # left by a failure
            proc.kill()
            proc.communicate()
    return outputs


def plain(value: str) -> bool:
    """Whether git writes `value` in its config as it is (no quoting, no escapes)."""
    return not any(c in value for c in '"\\#;') and value == value.strip()


# A credential helper that answers from this process's environment: the secret is
# handed to git without being written into the mirror's config or onto a command line.
_HELPER = (
    '!f() { test "$1" = get || return 0; '
    'printf "username=%s\\npassword=%s\\n" "$WATCH_GIT_USERNAME" "$WATCH_GIT_PASSWORD"; }; f'
)


def credentials(url: str, stall_seconds: int) -> tuple[str, dict[str, str]]:
    """The URL to store (no user-info) and the environment every git command gets."""
    from urllib.parse import unquote, urlsplit

    config = [("http.lowSpeedLimit", "1000"), ("http.lowSpeedTime", str(stall_seconds))]
    env: dict[str, str] = {}
    parts = urlsplit(url)
    stored = url
    if parts.scheme in ("http", "https") and "@" in parts.netloc:
        stored = redact.strip_userinfo(url)
        env["WATCH_GIT_USERNAME"] = unquote(parts.username or "")
        env["WATCH_GIT_PASSWORD"] = unquote(parts.password or "")
        config += [("credential.helper", ""), ("credential.helper", _HELPER)]
    env["GIT_CONFIG_COUNT"] = str(len(config))
    for n, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
    return stored, env
