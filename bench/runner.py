"""Run one measured process: wall time, exit status, output and its own peak memory."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# A forked child starts with its parent's resident-set high-water mark, so a child of the
# bench (which holds the generated history in memory) would report the bench's size. A
# small launcher runs the command instead and reports its RUSAGE_CHILDREN: the peak of the
# command and the git processes under it, the command's wall time, timed in there, and
# the CPU time (user and system) of the command and every process under it.
LAUNCHER = """\
import resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.call(sys.argv[2:])
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as out:
    out.write(f"{wall} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}")
sys.exit(code)
"""


# An installed watch runs from bytecode (pip compiles it); an editable checkout under
# PYTHONDONTWRITEBYTECODE=1 would compile every module of watch on every run instead, a
# cost no user pays. Each bench process gives its runs one bytecode cache outside the
# source tree, filled with all of watch before the first measured run (`_compiled`).
_BYTECODE = tempfile.TemporaryDirectory(prefix="watch-bench-pycache-")
PACKAGE = Path(__file__).resolve().parents[1] / "watcher"


@functools.cache
def _compiled() -> None:
    """Compile watch into the bench's bytecode cache, as pip does when it installs it: the
    first measured run (a cold one) does not pay for compiling (0.15 s here)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(PACKAGE)],
                   env=measured_env(), capture_output=True, check=True)  # fmt: skip


def measured_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's) with the bench's bytecode cache, writes allowed."""
    measured = {**(os.environ if env is None else env), "PYTHONPYCACHEPREFIX": _BYTECODE.name}
    measured.pop("PYTHONDONTWRITEBYTECODE", None)
    return measured


@dataclass(frozen=True)
class Run:
    wall: float  # seconds
    rss_mb: float  # peak resident memory of the process or any of its children
    code: int
    stdout: str
    stderr: str
    cpu: float = 0.0  # seconds of CPU, user and system, of the process and its children


def run(
    cmd: list[str],
    *,
    cwd: Path | None = None,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
) -> Run:
    """Run `cmd` to completion under the launcher; stdout and stderr are captured."""
    _compiled()
    with tempfile.TemporaryDirectory() as tmp:
        usage = Path(tmp) / "usage"
        done = subprocess.run(
            [sys.executable, "-c", LAUNCHER, str(usage), *cmd],
            cwd=cwd, env=measured_env(env), input=stdin, capture_output=True, check=False,
            stdin=None if stdin is not None else subprocess.DEVNULL,
        )  # fmt: skip
        wall, peak_kb, cpu = (float(x) for x in usage.read_text().split())
    return Run(
        wall, peak_kb / 1024, done.returncode,
        done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace"), cpu,
    )  # fmt: skip


def checked(cmd: list[str], *, cwd: Path | None = None, stdin: bytes | None = None) -> Run:
    """`run`, raising with the process's stderr when it fails."""
    result = run(cmd, cwd=cwd, stdin=stdin)
    if result.code != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {result.code}: {result.stderr.strip()[-2000:]}")
    return result
