"""The GitHub Action: action.yml and the example workflow are valid and agree with each
other and with `watch action`; the action's script, run here with bash and a fake
$GITHUB_STEP_SUMMARY and $GITHUB_OUTPUT, writes what the workflow reads."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import Project
from tests.support import git
from watcher.cli import build_parser
from watcher.commands.action import OUTPUTS
from watcher.commands.init import ACTION
from watcher.config import load
from watcher.mirror.mirrors import Mirror
from watcher.schedule import trigger_for

ROOT = Path(__file__).resolve().parents[1]
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
APP_V1 = 'def greet(name):\n    return "hello " + name\n'
APP_V2 = 'def greet(name):\n    return "hi " + name\n'


def read_yaml(path: Path) -> dict[Any, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def action_yml() -> dict[Any, Any]:
    return read_yaml(ROOT / "action.yml")


@pytest.fixture(scope="module")
def workflow() -> dict[Any, Any]:
    return read_yaml(ROOT / "examples" / "workflows" / "watch.yml")


def check_step(action_yml: dict[Any, Any]) -> dict[str, Any]:
    (step,) = [s for s in action_yml["runs"]["steps"] if s.get("id") == "check"]
    return step


# --- action.yml -------------------------------------------------------------------


def test_action_is_composite_and_declares_exactly_what_watch_action_writes(
    action_yml: dict[Any, Any],
) -> None:
    assert action_yml["runs"]["using"] == "composite"
    assert set(action_yml["outputs"]) == set(OUTPUTS)
    for name, output in action_yml["outputs"].items():
        assert output["value"] == f"${{{{ steps.check.outputs.{name} }}}}"
    for step in action_yml["runs"]["steps"]:
        assert "uses" in step or step.get("shell") == "bash"  # composite run steps need a shell


def test_action_uses_only_declared_inputs_and_flags_watch_accepts(
    action_yml: dict[Any, Any],
) -> None:
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    used = {
        m.group(1).split(".", 1)[1] for m in EXPR.finditer(text) if m.group(1).startswith("inputs.")
    }
    assert used == set(action_yml["inputs"])
    script = check_step(action_yml)["run"]
    flags = re.findall(r"(--[a-z-]+)", script)
    assert {"--config", "--fail-on", "--upstream", "--cache-dir", "--commit-state"} <= set(flags)
    args = build_parser().parse_args(
        [
            "action",
            "--config",
            "c.toml",
            "--fail-on",
            "stale",
            "--upstream",
            "o/r",
            "--cache-dir",
            "d",
            "--commit-state",
        ]
    )
    assert (args.fail_on, args.upstream, args.commit_state) == ("stale", "o/r", True)


# --- the example workflow ---------------------------------------------------------


def steps_of(workflow: dict[Any, Any]) -> list[dict[str, Any]]:
    (job,) = workflow["jobs"].values()
    return list(job["steps"])


def test_workflow_triggers_and_permissions(workflow: dict[Any, Any]) -> None:
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert set(triggers) == {"schedule", "workflow_dispatch"}
    for entry in triggers["schedule"]:
        trigger_for(entry["cron"])  # a cron line watch and Actions read alike
    assert workflow["permissions"] == {
        "contents": "write",
        "issues": "write",
        "pull-requests": "write",
    }
    assert workflow["concurrency"]["cancel-in-progress"] is False


def test_workflow_uses_the_action_with_its_inputs_and_outputs(
    workflow: dict[Any, Any], action_yml: dict[Any, Any]
) -> None:
    steps = steps_of(workflow)
    (watch,) = [s for s in steps if s.get("uses") == ACTION]
    assert set(watch["with"]) <= set(action_yml["inputs"])
    ids = {s["id"] for s in steps if "id" in s}
    text = (ROOT / "examples" / "workflows" / "watch.yml").read_text(encoding="utf-8")
    for expr in EXPR.findall(text):
        for step_id, output in re.findall(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr):
            assert step_id in ids and output in action_yml["outputs"], expr


def test_workflow_caches_each_shipped_upstreams_mirror_where_watch_keeps_it(
    workflow: dict[Any, Any],
) -> None:
    config = load(ROOT / "config.toml")
    steps = steps_of(workflow)
    cache_dir = next(s for s in steps if s.get("uses") == ACTION)["with"]["cache-dir"]
    for upstream in config.upstream:
        path = f"{cache_dir}/{Mirror(upstream, Path('cache')).path.name}"
        name = upstream.repo.replace("/", "__")
        restore = [
            s
            for s in steps
            if s.get("uses") == "actions/cache/restore@v4" and s["with"]["path"] == path
        ]
        save = [
            s
            for s in steps
            if s.get("uses") == "actions/cache/save@v4" and s["with"]["path"] == path
        ]
        assert len(restore) == len(save) == 1, upstream.repo
        assert restore[0]["with"]["restore-keys"] == f"watch-mirror-{name}-"
        assert f"['{upstream.repo}']" in save[0]["with"]["key"]  # keyed by the checked head
        assert "!cancelled()" in save[0]["if"]  # kept even when the run failed
    order = [s.get("uses") for s in steps]
    assert order.index("actions/cache/restore@v4") < order.index(ACTION)
    assert order.index(ACTION) < order.index("actions/cache/save@v4")


# --- the action's script, run locally ---------------------------------------------


def notes_repository(project: Project, tmp_path: Path) -> Path:
    """Make the project a git repository with a bare `origin`, as actions/checkout leaves it."""
    base = project.upstream.commit("add greet", {"src/app.py": APP_V1})
    project.config(sink="files")
    project.note("app-greets", f"{base} src/app.py:1-2")
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "--quiet", "--bare", "--initial-branch=main", str(origin))
    root = project.root
    git(root, "init", "--quiet", "--initial-branch=main")
    for key, value in (("user.name", "Maintainer"), ("user.email", "m@example.com")):
        git(root, "config", key, value)
    git(root, "add", "--all")
    git(root, "commit", "--quiet", "-m", "notes")
    git(root, "remote", "add", "origin", str(origin))
    git(root, "push", "--quiet", "origin", "main")
    return origin


def run_action(
    action_yml: dict[Any, Any], project: Project, tmp_path: Path, **inputs: str
) -> tuple[int, dict[str, str], str, str]:
    """Run the check step's script as Actions would; return (status, outputs, summary, stderr)."""
    step = check_step(action_yml)
    values = {name: spec.get("default", "") for name, spec in action_yml["inputs"].items()}
    values |= {"token": "", "cache-dir": str(tmp_path / "mirrors")} | inputs
    env = {
        key: EXPR.sub(lambda m: values[m.group(1).removeprefix("inputs.")], str(value))
        for key, value in step["env"].items()
    }
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    summary.write_text("", encoding="utf-8")
    output.write_text("", encoding="utf-8")
    import watcher

    env |= {
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(output),
        "WATCH_PYTHON": sys.executable,
        "PYTHONPATH": str(Path(watcher.__file__).parents[1]),
    }
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=project.root,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )
    lines = output.read_text(encoding="utf-8").splitlines()
    outputs = dict(line.split("=", 1) for line in lines)
    return proc.returncode, outputs, summary.read_text(encoding="utf-8"), proc.stderr


def test_stale_notes_are_a_successful_run_that_files_and_commits_back(
    action_yml: dict[Any, Any], project: Project, tmp_path: Path
) -> None:
    origin = notes_repository(project, tmp_path)
    project.upstream.commit("greet more briefly", {"src/app.py": APP_V2})

    code, outputs, summary, err = run_action(action_yml, project, tmp_path)

    assert code == 0, err
    assert set(outputs) == set(OUTPUTS) - {"upstreams"}  # that one: with list-upstreams only
    assert outputs["exit-code"] == "1" and outputs["outcome"] == "stale"
    assert (outputs["stale-items"], outputs["stale-notes"], outputs["errors"]) == ("1", "1", "0")
    assert (outputs["issues"], outputs["issues-opened"]) == ("1", "1")
    assert json.loads(outputs["heads"]) == {"acme/client": project.upstream.head()}
    assert summary.startswith("## watch check\n") and "**changed**" in summary
    assert "app-greets" in summary
    pushed = git(origin, "ls-tree", "-r", "--name-only", "main").splitlines()
    assert "state/acme__client.json" in pushed and "state/issues/app-greets.md" in pushed
    assert "state/.lock" not in pushed
    assert git(origin, "rev-parse", "main") == outputs["state-commit"]
    assert git(origin, "log", "-1", "--format=%an", "main") == "github-actions[bot]"


def test_a_second_run_with_no_news_commits_nothing(
    action_yml: dict[Any, Any], project: Project, tmp_path: Path
) -> None:
    origin = notes_repository(project, tmp_path)
    project.upstream.commit("greet more briefly", {"src/app.py": APP_V2})
    run_action(action_yml, project, tmp_path)
    first = git(origin, "rev-parse", "main")

    code, outputs, _, err = run_action(action_yml, project, tmp_path)

    assert code == 0, err
    assert outputs["issues"] == "0" and outputs["state-commit"] == ""
    assert git(origin, "rev-parse", "main") == first


def test_fail_on_stale_fails_the_step_on_stale_notes(
    action_yml: dict[Any, Any], project: Project, tmp_path: Path
) -> None:
    notes_repository(project, tmp_path)
    project.upstream.commit("greet more briefly", {"src/app.py": APP_V2})
    code, outputs, _, err = run_action(
        action_yml, project, tmp_path, **{"fail-on": "stale", "commit-state": "false"}
    )
    assert code == 1, err
    assert outputs["exit-code"] == "1" and "state-commit" not in outputs


def test_a_run_that_could_not_check_fails_the_step(
    action_yml: dict[Any, Any], project: Project, tmp_path: Path
) -> None:
    notes_repository(project, tmp_path)
    project.upstream.path.rename(tmp_path / "gone")  # the upstream is unreachable

    code, outputs, summary, err = run_action(action_yml, project, tmp_path)

    assert code == 2, err
    assert outputs["exit-code"] == "2" and outputs["outcome"] == "error"
    assert "## watch check" in summary
    assert "Traceback" not in err


def test_a_refused_push_says_why_and_leaves_no_commit_behind(
    action_yml: dict[Any, Any], project: Project, tmp_path: Path
) -> None:
    origin = notes_repository(project, tmp_path)
    hook = origin / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'main is protected: pushes need a review' >&2\nexit 1\n")
    hook.chmod(0o755)
    project.upstream.commit("greet more briefly", {"src/app.py": APP_V2})
    before = git(project.root, "rev-parse", "HEAD")

    code, outputs, _, err = run_action(action_yml, project, tmp_path)

    assert code == 2 and outputs["outcome"] == "error" and outputs["state-commit"] == ""
    assert "main is protected" in err and "pre-receive hook declined" in err  # git's own words
    assert "remote ref" not in err  # no pull was tried: it was not a race
    assert git(project.root, "rev-parse", "HEAD") == before  # no local commit left behind
    assert not any((project.root / ".git" / d).exists() for d in ("rebase-merge", "rebase-apply"))
    assert "state/" in git(project.root, "status", "--porcelain")  # the run's state is kept


# --- the matrix workflow ----------------------------------------------------------


@pytest.fixture(scope="module")
def matrix_workflow() -> dict[Any, Any]:
    return read_yaml(ROOT / "examples" / "workflows" / "watch-matrix.yml")


def test_matrix_workflow_fans_out_over_what_watch_upstreams_prints(
    matrix_workflow: dict[Any, Any], action_yml: dict[Any, Any], project: Project, tmp_path: Path
) -> None:
    text = (ROOT / "examples" / "workflows" / "watch-matrix.yml").read_text(encoding="utf-8")
    for entry in matrix_workflow[True]["schedule"]:
        trigger_for(entry["cron"])
    assert matrix_workflow["permissions"] == {
        "contents": "write",
        "issues": "write",
        "pull-requests": "write",
    }
    plan, check = matrix_workflow["jobs"]["plan"], matrix_workflow["jobs"]["check"]
    (lister,) = [s for s in plan["steps"] if s.get("uses") == ACTION]
    assert lister["with"]["list-upstreams"] == "true"
    assert plan["outputs"]["upstreams"] == f"${{{{ steps.{lister['id']}.outputs.upstreams }}}}"
    assert check["needs"] == "plan" and check["strategy"]["fail-fast"] is False
    matrix = check["strategy"]["matrix"]["upstream"]
    assert matrix == "${{ fromJSON(needs.plan.outputs.upstreams) }}"
    (watch,) = [s for s in check["steps"] if s.get("uses") == ACTION]
    for step in (lister, watch):
        assert set(step["with"]) <= set(action_yml["inputs"])
    assert watch["with"]["upstream"] == "${{ matrix.upstream.repo }}"
    ids = {s["id"] for s in check["steps"] if "id" in s}
    for expr in EXPR.findall(text):
        for step_id, output in re.findall(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr):
            assert step_id in ids | {lister["id"]} and output in action_yml["outputs"], expr

    notes_repository(project, tmp_path)
    code, outputs, _, err = run_action(
        action_yml, project, tmp_path, **{"list-upstreams": "true", "commit-state": "false"}
    )

    assert code == 0, err
    entries = json.loads(outputs["upstreams"])
    assert [e["repo"] for e in entries] == ["acme/client"]
    assert set(re.findall(r"matrix\.upstream\.(\w+)", text)) <= set(entries[0])
    mirror = Mirror(load(project.config_file).upstream[0], Path("cache")).path.name
    restore = next(s for s in check["steps"] if s.get("uses") == "actions/cache/restore@v4")
    save = next(s for s in check["steps"] if s.get("uses") == "actions/cache/save@v4")
    assert entries[0]["mirror"] == mirror
    for step in (restore, save):
        assert (
            step["with"]["path"]
            == f"{watch['with']['cache-dir']}/${{{{ matrix.upstream.mirror }}}}"
        )
        assert step["with"]["key"].startswith("${{ matrix.upstream.cache_key }}")
    assert restore["with"]["restore-keys"] == "${{ matrix.upstream.cache_key }}"
    assert entries[0]["cache_key"] == f"watch-mirror-{entries[0]['slug']}-"
    assert "!cancelled()" in save["if"]
    assert not (project.root / "state").exists()  # listing checks nothing


# --- every example workflow against action.yml and the docs ------------------------

WORKFLOWS = sorted((ROOT / "examples" / "workflows").glob("*.yml"))
SCHEDULED = [p for p in WORKFLOWS if p.name != "watch-pr.yml"]


def test_every_example_workflow_is_checked_here() -> None:
    assert [p.name for p in WORKFLOWS] == ["watch-matrix.yml", "watch-pr.yml", "watch.yml"]


@pytest.mark.parametrize("path", SCHEDULED, ids=lambda p: p.name)
def test_each_example_workflow_agrees_with_action_yml_and_the_docs(
    path: Path, action_yml: dict[Any, Any]
) -> None:
    """What a maintainer copies must run as written once OWNER and the SHA are filled in:
    the action pinned to a commit (no release tag exists yet), only inputs action.yml
    declares, only outputs it sets, and the permissions the docs say each feature needs."""
    text = path.read_text(encoding="utf-8")
    flow = read_yaml(path)
    steps = [s for job in flow["jobs"].values() for s in job["steps"]]
    ours = [s for s in steps if "watch@" in s.get("uses", "") or s.get("uses") == "./"]
    assert ours and all(s["uses"] == ACTION for s in ours), [s["uses"] for s in ours]
    for step in ours:
        assert set(step.get("with", {})) <= set(action_yml["inputs"]), step
    for expr in EXPR.findall(text):
        for _, output in re.findall(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr):
            assert output in action_yml["outputs"], expr
    others = {s["uses"] for s in steps if s not in ours}
    assert all(re.fullmatch(r"actions/[\w/-]+@v\d+", u) for u in others), others
    # init turns dashboards on, and an accepted note is opened as a pull request.
    assert flow["permissions"] == {
        "contents": "write",  # commit-state
        "issues": "write",
        "pull-requests": "write",
    }
    operations = " ".join((ROOT / "docs" / "operations.md").read_text(encoding="utf-8").split())
    issues = " ".join((ROOT / "docs" / "issues.md").read_text(encoding="utf-8").split())
    assert path.name in operations
    for permission in flow["permissions"]:
        assert f"{permission}: write" in operations
    assert "`pull-requests: write`" in issues
    for output in action_yml["outputs"]:
        assert f"`{output}`" in operations


def test_the_docs_pin_the_hook_to_a_commit_and_say_how_releases_are_tagged() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    editors = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    config = re.search(r"```yaml\n(repos:.*?)```", editors, re.S)
    assert config is not None
    (repo,) = yaml.safe_load(config.group(1))["repos"]
    assert repo["rev"] == "COMMIT_SHA"  # no release tag exists to point at
    assert {h["id"] for h in repo["hooks"]} <= {h["id"] for h in hooks}
    (hook,) = hooks
    assert hook["entry"] == "python -m watcher validate" and hook["pass_filenames"] is False
    for changed in ("config.toml", "notes/a-note.md", "rules/codex.toml"):
        assert re.match(hook["files"], changed)
    releasing = (ROOT / "RELEASING.md").read_text(encoding="utf-8")
    assert "git tag -a vX.Y.Z" in releasing and "`v1`" in releasing
    template = (ROOT / "watcher" / "templates" / "workflow.yml").read_text(encoding="utf-8")
    assert "uses: ./" not in template and "In this repository" not in template


def test_the_pull_request_workflow_runs_commands_watch_accepts_with_read_only_rights(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """watch-pr.yml files nothing and commits nothing: read rights only. Each watch
    command it runs parses as written; it installs the pinned commit; it restores the
    mirror caches the scheduled workflow saves (same path, same keys) to where watch
    looks without a `cache` key."""
    import shlex

    from watcher import defaults

    path = ROOT / "examples" / "workflows" / "watch-pr.yml"
    text = path.read_text(encoding="utf-8")
    flow = read_yaml(path)
    assert flow["permissions"] == {"contents": "read"}
    assert set(flow[True]["pull_request"]["paths"]) == {"notes/**", "rules/**", "config.toml"}
    (job,) = flow["jobs"].values()
    steps = job["steps"]
    assert steps[0]["with"]["fetch-depth"] == 0  # --changed diffs against the base branch
    assert f'"git+https://github.com/{ACTION}"' in text  # pinned as the action is
    lines = [line.strip() for s in steps for line in s.get("run", "").splitlines()]
    commands = [line for line in lines if line.startswith("python -m watcher ")]
    assert len(commands) == 3
    for line in commands:
        argv = shlex.split(line.split(">>")[0].split("||")[0])[3:]
        args = build_parser().parse_args([a.replace("$BASE", "origin/main") for a in argv])
        assert (args.command in ("validate", "check") and args.format == "github") or ">>" in line
    restore = [s for s in steps if s.get("uses") == "actions/cache/restore@v4"]
    saved = [s for s in steps_of(read_yaml(ROOT / "examples" / "workflows" / "watch.yml"))
             if s.get("uses") == "actions/cache/restore@v4"]  # fmt: skip
    assert [s["with"] for s in restore] == [s["with"] for s in saved]
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", "/home/runner")
    assert defaults.cache() == Path("/home/runner/.cache/watch/mirrors")
    assert 'ln -sfn "$MIRRORS" ~/.cache/watch/mirrors' in text
    operations = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    assert "watch-pr.yml" in operations
