"""`watch action`: what the GitHub Action (action.yml) runs, kept in Python so it is tested.

It runs the check, appends the Markdown report to `$GITHUB_STEP_SUMMARY`, writes the
numbers a workflow acts on to `$GITHUB_OUTPUT`, and maps the result to the step's
exit status: finding stale notes and filing their issues is the job done (0); a run
that could not check, or could not file an issue, fails the step (2). With
`fail_on="stale"` stale notes fail the step too (1).
"""

from __future__ import annotations

import io
import json
import logging
import sys
from pathlib import Path
from typing import TextIO

from watcher.config import Config, load
from watcher.errors import WatchError
from watcher.models import Report

log = logging.getLogger("watcher.action")

# Every output `watch action` writes; action.yml declares exactly these.
OUTPUTS = (
    "exit-code",  # 0 nothing stale, 1 stale notes, 2 could not check (as `watch check`)
    "outcome",  # fresh | stale | error
    "stale-items",  # changed + broken + missing items
    "stale-notes",  # notes with at least one such item
    "errors",  # items that could not be judged
    "issues",  # issues opened, commented on, closed or reopened by this run
    "issues-opened",
    "heads",  # JSON object: upstream repo -> the branch head that was checked
)
_FILED = ("opened", "commented", "closed", "reopened")
FAIL_ON = ("error", "stale")


def action(
    config_file: Path,
    *,
    upstream: str | None = None,
    cache_dir: Path | None = None,
    fail_on: str = "error",
    wait: float = 0.0,
    summary_file: Path | None = None,
    output_file: Path | None = None,
    out: TextIO | None = None,
) -> int:
    """Run one check for a workflow; see the module docstring for the exit status."""
    if fail_on not in FAIL_ON:
        raise WatchError(f"--fail-on must be one of {', '.join(FAIL_ON)}, got {fail_on!r}")
    out = out or sys.stdout
    try:
        report = _check(_config(config_file, cache_dir), upstream, wait)
    except WatchError as exc:
        log.error("%s", exc)
        _append(summary_file, f"## watch check\n\n**Could not check:** {_plain(str(exc))}\n")
        _outputs(output_file, {"exit-code": "2", "outcome": "error", "heads": "{}"})
        return 2
    markdown = _markdown(report)
    out.write(markdown)
    _append(summary_file, markdown)
    values = outputs(report)
    _outputs(output_file, values)
    return _step_status(int(values["exit-code"]), fail_on)


def _config(config_file: Path, cache_dir: Path | None) -> Config:
    config = load(config_file)
    if cache_dir is not None:  # where the workflow restores its actions/cache of mirrors
        config = config.model_copy(update={"cache": cache_dir.expanduser().resolve()})
    return config


def _check(config: Config, upstream: str | None, wait: float) -> Report:
    from watcher.check import CheckOptions, run_check

    return run_check(config, CheckOptions(upstream=upstream, wait=wait))


def outputs(report: Report) -> dict[str, str]:
    """The step outputs for one report; failed issue updates count as a failed run."""
    stale = [r for r in report.results if r.verdict.stale and r.verdict.value != "error"]
    failed_issues = any(a.action == "failed" for a in report.issues)
    code = 2 if failed_issues else report.exit_code
    heads = {u.repo: u.head for u in report.upstreams if u.head}
    return {
        "exit-code": str(code),
        "outcome": {0: "fresh", 1: "stale"}.get(code, "error"),
        "stale-items": str(len(stale)),
        "stale-notes": str(len({r.note for r in stale})),
        "errors": str(report.summary.error),
        "issues": str(sum(a.action in _FILED for a in report.issues)),
        "issues-opened": str(sum(a.action == "opened" for a in report.issues)),
        "heads": json.dumps(heads, sort_keys=True, separators=(",", ":")),
    }


def _step_status(exit_code: int, fail_on: str) -> int:
    if exit_code == 2:
        return 2
    return 1 if exit_code == 1 and fail_on == "stale" else 0


def _markdown(report: Report) -> str:
    from watcher.report import render

    buffer = io.StringIO()
    render(report, "markdown", buffer)
    return buffer.getvalue()


def _plain(text: str) -> str:
    """Error text as Markdown that cannot ping anyone or start a block."""
    return text.replace("@", "@\u200b").replace("\n", " ")


def _append(file: Path | None, text: str) -> None:
    if file is not None:
        with file.open("a", encoding="utf-8") as handle:
            handle.write(text if text.endswith("\n") else text + "\n")


def _outputs(file: Path | None, values: dict[str, str]) -> None:
    """`name=value` lines, as $GITHUB_OUTPUT reads them; every value is one line."""
    if file is None:
        return
    with file.open("a", encoding="utf-8") as handle:
        for name, value in values.items():
            handle.write(f"{name}={value}\n")
