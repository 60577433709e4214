"""Run one measured process: wall time, exit status, output and its own peak memory."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Run:
    wall: float  # seconds
    rss_mb: float  # peak resident memory of the process or any of its children
    code: int
    stdout: str
    stderr: str


def run(
    cmd: list[str],
    *,
    cwd: Path | None = None,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
) -> Run:
    """Run `cmd` to completion; its rusage comes from wait4, so it is this run's alone.

    (getrusage(RUSAGE_CHILDREN) keeps a maximum over every child so far; wait4 gives the
    same kernel accounting for one child: its peak and its waited-for descendants'.)
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=err,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        )
        if stdin is not None and proc.stdin is not None:
            with proc.stdin:
                proc.stdin.write(stdin)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # Popen must not wait again
        out.seek(0)
        err.seek(0)
        return Run(
            wall,
            usage.ru_maxrss / 1024,
            proc.returncode,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
        )


def checked(cmd: list[str], *, cwd: Path | None = None, stdin: bytes | None = None) -> Run:
    """`run`, raising with the process's stderr when it fails."""
    result = run(cmd, cwd=cwd, stdin=stdin)
    if result.code != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {result.code}: {result.stderr.strip()[-2000:]}")
    return result
