"""`watch init`: a working notes site in one command (config, notes/, rules/, .gitignore,
the GitHub Actions workflow). Reads the upstream's default branch and release tags from
the remote when it answers within a few seconds; works offline with defaults."""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
import os
import re
import stat
import tempfile
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TextIO

from watcher.errors import UpstreamError, WatchError
from watcher.inputs import inside
from watcher.mirror.git import call
from watcher.state.store import slug

log = logging.getLogger("watcher.init")

LS_REMOTE_SECONDS = 10.0
EXAMPLE_REPO = "openai/codex"  # the repository examples/workflows/watch.yml is written for
# Where a notes repository finds the watch action: a placeholder the workflow's header
# explains, pinned to a commit until releases are tagged (RELEASING.md).
ACTION = "OWNER/watch@COMMIT_SHA"


@dataclass(frozen=True)
class Remote:
    """What `git ls-remote` told about the upstream (defaults when it did not answer)."""

    branch: str = "main"
    release_tags: str = "*"
    head: str | None = None
    reached: bool = False


def init(directory: Path, repo: str, url: str | None, *, out: TextIO) -> int:
    """Write a new site into `directory`: every file or none. A file that exists is kept;
    a folder in the way (a file named `notes`, a symlink) stops it before it writes."""
    if problem := inside.repo_problem(repo):
        raise WatchError(f"--upstream: {problem}")
    if url is not None and (url.startswith("-") or not url.strip()):
        raise WatchError(
            f"--url {url!r}: not a URL or a path; give where the upstream is fetched from, "
            "like https://github.com/OWNER/NAME.git"
        )
    relatives = list(site_files(repo, url, Remote(), datetime.date.today()))
    written = plan(directory, relatives)  # refuses a hostile folder before writing anything
    fetch_url = url or f"https://github.com/{repo}.git"
    if url is not None and is_local(url):
        log.warning(
            "--url is a path on this machine: the workflow in .github/workflows/watch.yml "
            "runs on GitHub's machines, where it does not exist, and every run would exit 2. "
            "Before pushing the site, set [[upstream]] url in config.toml to a URL CI can "
            "reach (or delete the line: https://github.com/%s.git)",
            repo,
        )
    remote = read_remote(fetch_url)
    if remote.reached:
        out.write(f"{fetch_url}: default branch {remote.branch}, releases {remote.release_tags}\n")
    else:
        out.write(
            f"{fetch_url}: not reachable now; assumed branch {remote.branch} "
            "(check [[upstream]] in config.toml)\n"
        )
    found = survey(fetch_url) if remote.reached else None
    if found is not None:
        out.write(f"{fetch_url}: mostly {found.language}, under {found.folder or 'the root'}/\n")
    files = site_files(repo, url, remote, datetime.date.today(), found or Layout())
    write(directory, {name: files[name] for name in written})
    for relative in files:
        made = relative in written
        out.write(f"  created  {relative}\n" if made else f"  kept     {relative} (exists)\n")
    out.write(
        "next: write a note in notes/ (see notes/example.md), then run "
        "`watch validate` and `watch check`;\n"
        f"      in .github/workflows/watch.yml, replace `{ACTION}` with where the watch "
        "action is published and a commit of it (or a release tag, once there is one)\n"
    )
    return 0


def plan(directory: Path, relatives: list[str]) -> list[str]:
    """The files of `relatives` to write into `directory` (those that exist are kept).

    Refuses, before anything is written, a `directory` that is not a folder, a site that
    has a config.toml, and anything in the way: a file where a folder goes (`notes`),
    a folder where a file goes, a symlink (init never writes through one it did not make:
    a dangling one would put the file wherever it points)."""
    if os.path.lexists(directory) and not directory.is_dir():
        kind = "a symlink to nothing" if directory.is_symlink() else "a file"
        raise WatchError(f"{directory}: is {kind}, not a folder; pick a folder for the site")
    if _kind(directory / "config.toml") == "file":
        raise WatchError(
            f"{directory / 'config.toml'}: already exists; watch init does not overwrite "
            "a site (edit it, or pick another DIR)"
        )
    problems: dict[str, str] = {}
    wanted = []
    for relative in relatives:
        found, problem = _place(directory, relative)
        if problem is not None:
            problems[problem[0]] = problem[1]
        elif found is None:
            wanted.append(relative)
    if problems:
        listed = "; ".join(f"{name} {why}" for name, why in sorted(problems.items()))
        raise WatchError(
            f"{directory}: cannot make a site here: {listed}; move them away, or pick "
            "another DIR (nothing was written)"
        )
    return wanted


def _place(directory: Path, relative: str) -> tuple[str | None, tuple[str, str] | None]:
    """What is at a file's place (`_kind`), and what is in its way, if anything."""
    parts = relative.split("/")
    for depth in range(1, len(parts)):
        name = "/".join(parts[:depth])
        found = _kind(directory / name)
        if found is None:
            return None, None  # its folder is to be made: nothing below it exists
        if found == "symlink":
            return found, (name, "is a symlink (init never writes through one)")
        if found == "file":
            return found, (name, "is a file where the site has a folder")
    found = _kind(directory / relative)
    if found == "symlink":
        return found, (relative, "is a symlink (init never writes through one)")
    if found == "folder":
        return found, (relative, "is a folder where the site has a file")
    return found, None


def _kind(path: Path) -> str | None:
    """What is at `path`, its symlink not followed: None (nothing), symlink, folder, file."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(mode):
        return "symlink"
    return "folder" if stat.S_ISDIR(mode) else "file"


def write(directory: Path, files: dict[str, str]) -> None:
    """Write `files` (checked by `plan`) into `directory`: all of them, or none.

    A new folder is built beside it and renamed into place. Into a folder that exists,
    each file appears whole or not at all (`_create`), config.toml last, and on a failure
    every file and folder made so far is removed again: even a killed init leaves no
    config.toml, so running it again finishes the site."""
    if not os.path.lexists(directory):
        _stage(directory, files)
        return
    made: list[Path] = []
    try:
        for relative in sorted(files, key=lambda name: name == "config.toml"):
            _create(directory, relative, files[relative], made)
    except BaseException as exc:  # a full disk, or Ctrl-C: what was made goes again
        for path in reversed(made):
            with contextlib.suppress(OSError):
                path.rmdir() if _kind(path) == "folder" else path.unlink()
        if not isinstance(exc, OSError):
            raise
        raise WatchError(
            f"{directory}: cannot write the site ({exc.strerror}); nothing was written"
        ) from None


def _create(directory: Path, relative: str, text: str, made: list[Path]) -> None:
    """One file under `directory`, its missing folders made first (each noted in `made`)."""
    target = directory / relative
    for folder in reversed(target.relative_to(directory).parents[:-1]):
        path = directory / folder
        if _kind(path) is None:
            path.mkdir()
            made.append(path)
    # Written under a temp name, then linked to its own: `link` fails on anything at the
    # target, a dangling symlink included, and never follows one.
    tmp = target.with_name(f".{target.name}.init-{os.getpid()}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        with os.fdopen(os.open(tmp, flags, 0o666), "w", encoding="utf-8") as handle:
            handle.write(text)
        os.link(tmp, target, follow_symlinks=False)
        made.append(target)
    finally:
        tmp.unlink(missing_ok=True)


def _new_folder(parent: Path, name: str) -> Path:
    """A folder made for this run in `parent`: `name`, or `name-1`, `name-2`, … when a
    killed run of the same process id left one."""
    number = 0
    while True:
        path = parent / (f"{name}-{number}" if number else name)
        try:
            path.mkdir()
            return path
        except FileExistsError:
            number += 1


def _stage(directory: Path, files: dict[str, str]) -> None:
    """A new site folder: made beside `directory` under a temp name, then renamed."""
    import shutil

    parent = directory.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    stage: Path | None = None
    try:
        stage = _new_folder(parent, f".{directory.name}.init-{os.getpid()}")
        for relative, text in files.items():
            _create(stage, relative, text, [])
        os.rename(stage, directory)
    except BaseException as exc:  # a full disk, or Ctrl-C: no half site is left
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
        if not isinstance(exc, OSError):
            raise
        raise WatchError(
            f"{directory}: cannot write the site ({exc.strerror}); nothing was written"
        ) from None


@dataclass(frozen=True)
class Layout:
    """What the example note and rule are written in: the upstream's main language (the
    one most of its source files at HEAD are in) and the folder holding most of them."""

    language: str = "rust"
    folder: str = "src"


# Per language: an example file name, and a query for a function named like the example.
EXAMPLES = {
    "rust": ("lib.rs", '(function_item name: (identifier) @name (#eq? @name "run")) @target'),
    "python": (
        "client.py",
        '(function_definition name: (identifier) @name (#eq? @name "run")) @target',
    ),
    "go": (
        "client.go",
        '(function_declaration name: (identifier) @name (#eq? @name "Run")) @target',
    ),
    "javascript": (
        "client.js",
        '(function_declaration name: (identifier) @name (#eq? @name "run")) @target',
    ),
    "typescript": (
        "client.ts",
        '(function_declaration name: (identifier) @name (#eq? @name "run")) @target',
    ),
    "tsx": (
        "App.tsx",
        '(function_declaration name: (identifier) @name (#eq? @name "App")) @target',
    ),
}
_NOT_SOURCE = re.compile(r"(^|/)(tests?|testing|docs?|examples?|vendor|third_party|node_modules)/")


def survey(url: str, timeout: float = LS_REMOTE_SECONDS) -> Layout | None:
    """The upstream's layout from its file list at HEAD (one shallow, blobless fetch of
    trees only: no file is downloaded); None when it does not answer in time."""
    with tempfile.TemporaryDirectory() as scratch:
        try:
            code, _, _ = call(None, "init", "--quiet", "--bare", scratch)
            fetch = ("fetch", "--quiet", "--depth=1", "--filter=blob:none", "--", url, "HEAD")
            code = code or call(Path(scratch), *fetch, timeout=timeout)[0]
            code, out, _ = (
                (code, "", "")
                if code
                else call(Path(scratch), "ls-tree", "-r", "--name-only", "FETCH_HEAD")
            )
        except (UpstreamError, OSError):  # no git, or no answer in time
            return None
    return layout(out.splitlines()) if code == 0 else None


def layout(paths: list[str]) -> Layout:
    """The commonest language among source files (tests, docs and examples aside), and
    the folder most of its files sit in."""
    from watcher.parse.languages import for_path

    sources = [(p, lang) for p in paths if (lang := for_path(p)) and not _NOT_SOURCE.search(p)]
    if not sources:
        return Layout()
    language = Counter(lang for _, lang in sources).most_common(1)[0][0]
    folders = Counter(p.rsplit("/", 1)[0] if "/" in p else "" for p, lang in sources
                      if lang == language)  # fmt: skip
    return Layout(language, folders.most_common(1)[0][0])


def is_local(url: str) -> bool:
    """Whether git reads `url` from this machine's disk (file://, a path), not a server."""
    if url.startswith("file:"):
        return True
    return not re.match(r"^[a-z][a-z0-9+.-]*://|^[\w.-]+@[\w.-]+:", url)


def read_remote(url: str, timeout: float = LS_REMOTE_SECONDS) -> Remote:
    """The default branch (HEAD's symref) and a release-tag glob, from one ls-remote
    (through the one git runner: no prompt, stopped at `timeout`)."""
    try:
        # `--`: a URL is never read as an option (`--upload-pack=...` runs a command)
        code, out, _ = call(
            None,
            "ls-remote",
            "--symref",
            "--",
            url,
            "HEAD",
            "refs/tags/*",
            timeout=timeout,
            what=url,
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


def site_files(
    repo: str, url: str | None, remote: Remote, today: datetime.date, shape: Layout | None = None
) -> dict[str, str]:
    """Every file of a new site, by path relative to the site's folder; the example note
    and rule are written for the upstream's main language (`shape`)."""
    from watcher.inputs.schema import render

    shape = shape or Layout()
    name, query = EXAMPLES[shape.language]
    example = f"{shape.folder}/{name}" if shape.folder else name
    return {
        "config.toml": _config(repo, url, remote),
        "notes/example.md": _note(repo, remote, today, example, shape.language),
        "rules/example.toml": RULES.format(path=example, query=query),
        ".gitignore": GITIGNORE,
        ".github/workflows/watch.yml": workflow(repo),
        # Editors validate while typing (docs/editors.md): taplo for the TOML files,
        # yaml-language-server for front matter through the modeline in each note.
        ".taplo.toml": TAPLO,
        **{f".schemas/{kind}.schema.json": render(kind) for kind in ("config", "note", "rule")},
    }


def workflow(repo: str) -> str:
    """examples/workflows/watch.yml, written for `repo`."""
    text = resources.files("watcher").joinpath("templates/workflow.yml").read_text("utf-8")
    return text.replace(EXAMPLE_REPO, repo).replace(slug(EXAMPLE_REPO), slug(repo))


def _config(repo: str, url: str | None, remote: Remote) -> str:
    default = f'# url = "https://github.com/{repo}.git"  (default)'
    url_line = f"url = {json.dumps(url, ensure_ascii=False)}" if url else default
    if url and is_local(url):
        url_line += "  # on this machine only: CI cannot fetch it (docs/operations.md)"
    return CONFIG.format(
        repo=repo, url_line=url_line, branch=remote.branch, release_tags=remote.release_tags
    )


def _note(repo: str, remote: Remote, today: datetime.date, example: str, language: str) -> str:
    commit = remote.head or "COMMIT"
    return NOTE.format(
        repo=repo, commit=commit, today=today.isoformat(), path=example, language=language
    )


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
  #   path: {path}:10-20
  #   date: {today}
  - url: https://github.com/{repo}
    title: the upstream repository (a plain link; not tracked)
---

# What this note says about {repo}

State the behaviour, then quote the code that does it (a ```{language} block: `watch
check` finds it in the cited files; `…` elides a part) and cite it above. `watch check`
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
# path = "{path}"
# query = '''{query}'''
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
