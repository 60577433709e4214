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
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from watcher.config import Config, load
from watcher.errors import WatchError
from watcher.inputs import checkout
from watcher.models import Report
from watcher.redact import redact

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
    "state-commit",  # the commit that saved state/ (with commit_state), else empty
    "upstreams",  # with list_upstreams only: `watch upstreams --json`, for a matrix
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
    commit_state: bool = False,
    list_upstreams: bool = False,
    out: TextIO | None = None,
) -> int:
    """Run one check for a workflow; see the module docstring for the exit status.

    With `commit_state`, `state/` is committed and pushed afterwards, whatever the
    check found: issue bookkeeping of a failed run is worth keeping too.
    """
    if fail_on not in FAIL_ON:
        raise WatchError(f"--fail-on must be one of {', '.join(FAIL_ON)}, got {fail_on!r}")
    out = out or sys.stdout
    config = _config(config_file, cache_dir)
    if list_upstreams:  # the first job of a matrix workflow: what to fan out over
        from watcher.commands.upstreams import upstream_matrix

        matrix = json.dumps(upstream_matrix(config), separators=(",", ":"))
        out.write(matrix + "\n")
        _outputs(output_file, {"upstreams": matrix})
        return 0
    failed_boxes: list[str] = []
    if config.issues.dashboard and config.issues.sink != "none":
        from watcher.commands.ticks import carry_out

        today = datetime.now(UTC).date()
        boxes = carry_out(config, today=today, upstream=upstream)  # ticked boxes
        failed_boxes = boxes.failed
        if boxes.ignored:  # once: the check below draws the dashboard afresh, unticked
            listed = "".join(f"- {_plain(line)}\n" for line in boxes.ignored)
            _append(summary_file, f"## watch dashboard\n\n**Ticks not carried out:**\n\n{listed}")
    try:
        report = _check(config, upstream, wait)
    except WatchError as exc:
        log.error("%s", exc)
        _append(summary_file, f"## watch check\n\n**Could not check:** {_plain(str(exc))}\n")
        values = {"exit-code": "2", "outcome": "error", "heads": "{}"}
    else:
        markdown = _markdown(report)
        out.write(markdown)
        _append(summary_file, markdown)
        values = outputs(report)
    if failed_boxes:  # a box not carried out is a failed run, though the check went well
        lines = (f"**Dashboard box failed:** {_plain(f)}\n" for f in failed_boxes)
        _append(summary_file, "".join(lines))
        values |= {"exit-code": "2", "outcome": "error"}
    if commit_state:
        try:
            values["state-commit"] = _commit_state(config)
        except WatchError as exc:  # the issues are filed; say loudly that state was not kept
            log.error("state/ was not saved: %s", exc)
            values |= {"state-commit": "", "exit-code": "2", "outcome": "error"}
    _outputs(output_file, values)
    return _step_status(int(values["exit-code"]), fail_on)


def _config(config_file: Path, cache_dir: Path | None) -> Config:
    config = load(config_file)
    if cache_dir is not None:  # where the workflow restores its actions/cache of mirrors
        config = config.model_copy(update={"cache": cache_dir.expanduser().resolve()})
    return config


def _check(config: Config, upstream: str | None, wait: float) -> Report:
    from watcher.commands.check import checked
    from watcher.pipeline import CheckOptions

    return checked(config, CheckOptions(upstream=upstream, wait=wait), "action")


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
            handle.write(redact(text if text.endswith("\n") else text + "\n"))


def _outputs(file: Path | None, values: dict[str, str]) -> None:
    """`name=value` lines, as $GITHUB_OUTPUT reads them; every value is one line."""
    if file is None:
        return
    with file.open("a", encoding="utf-8") as handle:
        for name, value in values.items():
            handle.write(redact(f"{name}={value}\n"))


# --- keeping state/ between workflow runs ------------------------------------------


def _commit_state(config: Config) -> str:
    """Commit state/ (not its lock, temp files or run records) and push; "" if unchanged.

    Run records (`state/runs/`) are per-run facts (times, durations) and stay out of
    the commit, so a run with no news commits nothing. A push that loses the race with
    another job's push is rebased on it and the dashboard is rebuilt from the shards
    (never merged as text), then pushed again. Any other failure says git's own words,
    and leaves neither a local commit nor a rebase in progress.
    """
    top = checkout.toplevel(config.root)
    if not config.state.is_relative_to(top):
        raise WatchError(f"{config.state}: outside the repository {top}; cannot commit it")
    rel = config.state.relative_to(top).as_posix()
    branch = checkout.git(top, "rev-parse", "--abbrev-ref", "HEAD")
    if branch == "HEAD":
        raise WatchError(f"{top}: detached HEAD; check out a branch to commit state/ back")
    if not _stage(top, rel):
        log.info("state/ unchanged: nothing to commit")
        return ""
    message = "watch: save state after a check"
    checkout.git(top, *checkout.AS_BOT, "commit", "--quiet", "-m", message, "--", rel)
    try:
        checkout.push(top, lambda: _catch_up(config, top, rel, branch))
    except WatchError:
        checkout.git(top, "reset", "--quiet", "--soft", "HEAD~1")  # state/ as the run left it
        raise
    return checkout.git(top, "rev-parse", "HEAD")


def _stage(top: Path, rel: str) -> bool:
    """Stage state/ as the run left it; whether anything differs from HEAD."""
    excluded = (f"{rel}/.lock", f"{rel}/**/.*.tmp", f"{rel}/.*.tmp", f"{rel}/runs")
    checkout.git(top, "add", "--all", "--", rel, *(f":(exclude){x}" for x in excluded))
    return bool(checkout.git(top, "diff", "--cached", "--name-only", "--", rel))


def _catch_up(config: Config, top: Path, rel: str, branch: str) -> None:
    """Rebase our state commit on the branch as pushed, then rebuild the dashboard.

    Shards are written by one job each, so only shared files (the dashboard) can
    conflict; ours is taken by the rebase and then rebuilt from every shard here.
    """
    checkout.rebase(top, branch)
    from watcher.issues.sync import rebuild_dashboard

    rebuild_dashboard(config, log=log.info)
    if _stage(top, rel):
        checkout.git(top, *checkout.AS_BOT, "commit", "--quiet", "--amend", "--no-edit")
