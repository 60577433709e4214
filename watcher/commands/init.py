"""`watch init`: a working notes site in one command (config, notes/, rules/, .gitignore,
the GitHub Actions workflow). Reads the upstream's default branch and release tags from
the remote when it answers within a few seconds; works offline with defaults."""

from __future__ import annotations

import datetime
import re
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TextIO

from watcher.config import REPO_RE
from watcher.errors import UpstreamError, WatchError
from watcher.mirror.git import call
from watcher.state.store import slug

LS_REMOTE_SECONDS = 10.0
EXAMPLE_REPO = "openai/codex"  # the repository examples/workflows/watch.yml is written for
ACTION = "OWNER/watch@v1"  # where a notes repository finds the watch action


@dataclass(frozen=True)
class Remote:
    """What `git ls-remote` told about the upstream (defaults when it did not answer)."""

    branch: str = "main"
    release_tags: str = "*"
    head: str | None = None
    reached: bool = False


def init(directory: Path, repo: str, url: str | None, *, out: TextIO) -> int:
    """Write a new site into `directory`; never overwrite a file that exists."""
    if not REPO_RE.match(repo):
        raise WatchError(f"--upstream {repo!r}: expected OWNER/NAME, e.g. openai/codex")
    if (directory / "config.toml").exists():
        raise WatchError(
            f"{directory / 'config.toml'}: already exists; watch init does not overwrite "
            "a site (edit it, or pick another DIR)"
        )
    fetch_url = url or f"https://github.com/{repo}.git"
    remote = read_remote(fetch_url)
    if remote.reached:
        out.write(f"{fetch_url}: default branch {remote.branch}, releases {remote.release_tags}\n")
    else:
        out.write(
            f"{fetch_url}: not reachable now; assumed branch {remote.branch} "
            "(check [[upstream]] in config.toml)\n"
        )
    files = site_files(repo, url, remote, datetime.date.today())
    for relative, text in files.items():
        target = directory / relative
        if target.exists():
            out.write(f"  kept     {relative} (exists)\n")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        out.write(f"  created  {relative}\n")
    out.write(
        "next: write a note in notes/ (see notes/example.md), then run "
        "`watch validate` and `watch check`;\n"
        f"      in .github/workflows/watch.yml, point `uses: {ACTION}` at where the watch "
        "action is published\n"
    )
    return 0


def read_remote(url: str, timeout: float = LS_REMOTE_SECONDS) -> Remote:
    """The default branch (HEAD's symref) and a release-tag glob, from one ls-remote
    (through the one git runner: no prompt, stopped at `timeout`)."""
    try:
        code, out, _ = call(
            None, "ls-remote", "--symref", url, "HEAD", "refs/tags/*", timeout=timeout, what=url
        )
    except (OSError, UpstreamError):  # no git, or no answer in time
        return Remote()
    if code != 0:
        return Remote()
    branch, head, tags = "main", None, []
    for line in out.splitlines():
        if match := re.match(r"^ref: refs/heads/(\S+)\s+HEAD$", line):
            branch = match.group(1)
        elif line.endswith("\tHEAD"):
            head = line.split("\t")[0]
        elif "\trefs/tags/" in line and not line.endswith("^{}"):
            tags.append(line.split("\trefs/tags/", 1)[1])
    return Remote(branch, release_glob(tags), head, reached=True)


def release_glob(tags: list[str]) -> str:
    """The commonest prefix of version-like tags, as a glob: `v*`, `rust-v*`; else `*`."""
    prefixes = Counter(m.group(1) for t in tags if (m := re.match(r"^(\D*)\d+\.\d+", t)))
    if not prefixes:
        return "*"
    # On a tie (rmcp-v1.0 and rmcp-macros-v1.0 both tagged) the shorter prefix names the
    # main package.
    best = max(prefixes, key=lambda p: (prefixes[p], -len(p)))
    return f"{best}*"


def site_files(repo: str, url: str | None, remote: Remote, today: datetime.date) -> dict[str, str]:
    """Every file of a new site, by path relative to the site's folder."""
    from watcher.inputs.schema import render

    return {
        "config.toml": _config(repo, url, remote),
        "notes/example.md": _note(repo, remote, today),
        "rules/example.toml": RULES,
        ".gitignore": GITIGNORE,
        ".github/workflows/watch.yml": workflow(repo, ACTION),
        # Editors validate while typing (docs/editors.md): taplo for the TOML files,
        # yaml-language-server for front matter through the modeline in each note.
        ".taplo.toml": TAPLO,
        **{f".schemas/{kind}.schema.json": render(kind) for kind in ("config", "note", "rule")},
    }


def workflow(repo: str, action: str) -> str:
    """examples/workflows/watch.yml, written for `repo` and using the action `action`."""
    text = resources.files("watcher").joinpath("templates/workflow.yml").read_text("utf-8")
    text = text.replace(EXAMPLE_REPO, repo).replace(slug(EXAMPLE_REPO), slug(repo))
    return text.replace("        uses: ./\n", f"        uses: {action}\n")


def _config(repo: str, url: str | None, remote: Remote) -> str:
    url_line = f'url = "{url}"' if url else f'# url = "https://github.com/{repo}.git"  (default)'
    return CONFIG.format(
        repo=repo, url_line=url_line, branch=remote.branch, release_tags=remote.release_tags
    )


def _note(repo: str, remote: Remote, today: datetime.date) -> str:
    commit = remote.head or "COMMIT"
    return NOTE.format(repo=repo, commit=commit, today=today.isoformat())


CONFIG = """\
# watch configuration. Every key, its default and its meaning: docs/config.md in the
# watch documentation; `watch schema config` prints the JSON Schema for editors.
# Paths are relative to this file.

notes = "notes"            # the notes: Markdown files with YAML front matter
rules = "rules"            # rules: tree-sitter queries and claims (*.toml)
state = "state"            # what the last runs saw; commit it (the workflow does)
# cache = "~/.cache/watch/mirrors"  where upstream mirrors live (default: user cache)
track_citations = true     # track every code citation, with or without a rule
# notes_ignore = ["README.md"]      Markdown files in notes/ that are not notes

[[upstream]]
repo = "{repo}"  # OWNER/NAME, as the notes cite it
{url_line}
branch = "{branch}"
release_tags = "{release_tags}"  # glob of the tags that are releases
schedule = "17 */6 * * *"  # for `watch serve`: cron, or "@every 30m"

[issues]
# Stale-verification issues are written as Markdown under state/issues/ until a
# repository is configured. To open GitHub issues instead:
#
#   sink = "github"
#   repo = "OWNER/NOTES-REPO"      # the repository that holds these notes
#   token_env = "GITHUB_TOKEN"     # name of the variable holding the token
sink = "files"
labels = ["stale-verification"]
open_on = ["changed", "broken", "missing", "error"]
dashboard = true           # one "watch dashboard" document with every note's status
"""

NOTE = """\
---
# yaml-language-server: $schema=../.schemas/note.schema.json
# A note states one fact about upstream code and cites it. Every front-matter key and
# every citation form: docs/notes.md in the watch documentation.
id: example-note
title: What this note says about {repo}, in one line
status: current
lastVerified: {today}
sources:
  # A code citation: the repository, the commit you read, FILE:START-END.
  # Uncomment and fill in; `watch rule new example-note` then drafts a rule for it.
  # - url: https://github.com/{repo}
  #   title: what the cited lines are
  #   commit: {commit}
  #   path: src/FILE:10-20
  #   date: {today}
  - url: https://github.com/{repo}
    title: the upstream repository (a plain link; not tracked)
---

# What this note says about {repo}

State the behaviour, then quote the code that does it and cite it above. `watch check`
finds the cited lines at the branch head by their tokens and reports when they change.
"""

RULES = """\
# Rules pin the construct a note depends on and what must stay true about it.
# Queries, `inside`, claims and tests: docs/rules.md in the watch documentation.
# `watch rule new NOTE_ID` drafts one for a note's code citation.
#
# [[rule]]
# id = "example-rule"
# note = "example-note"
# path = "src/FILE"
# query = '''(function_item name: (identifier) @name (#eq? @name "run")) @target'''
#
# [[rule.claims]]
# capture = "target"
# matches = 'what must stay true'
# says = "the sentence of the note that depends on it"
"""

TAPLO = """\
# Editor validation of config.toml and rules (taplo, Even Better TOML). The schemas in
# .schemas/ come from `watch schema config|note|rule`; write them again after upgrading.
[[rule]]
include = ["config.toml"]
schema.path = "./.schemas/config.schema.json"

[[rule]]
include = ["rules/**/*.toml"]
schema.path = "./.schemas/rule.schema.json"
"""

GITIGNORE = """\
# watch: the state lock and half-written temp files are never committed; state/ is.
/state/.lock
/state/*.tmp
.venv/
__pycache__/
"""
