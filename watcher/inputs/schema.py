"""JSON Schemas of the files a user writes (config.toml, note front matter, rule files),
generated from the pydantic models that load them, and the config reference table that
docs/config.md carries (a test keeps the two identical)."""

from __future__ import annotations

import json
import re
from typing import Any

from watcher.config import Config, IssuesConfig, Limits, Upstream
from watcher.inputs.frontmatter import FrontMatter
from watcher.inputs.rules import RuleFile

SCHEMA_DRAFT = "https://json-schema.org/draft/2020-12/schema"
PATH_DEFAULTS = {"notes": "notes", "rules": "rules", "state": "state"}

# What each config key means: the schema's descriptions and docs/config.md's table.
CONFIG_HELP: dict[str, str] = {
    "notes": "folder of notes (Markdown with YAML front matter), relative to config.toml",
    "rules": "folder of rule files (`*.toml`)",
    "state": "folder where runs record what they saw; commit it",
    "cache": "where upstream mirrors live (default: the user cache dir, `…/watch/mirrors`)",
    "track_citations": "track every code citation, with or without a rule",
    "implicit_upstreams": "check a cited repository with no [[upstream]] at github.com "
    "on its default branch; false: such citations are `no-upstream` errors",
    "notes_ignore": "globs (relative to `notes`) of Markdown files that are not notes",
    "notes_extra_keys": "front-matter keys of your own that notes may use",
    "upstream": "one table per upstream repository (`[[upstream]]`)",
    "upstream.repo": "OWNER/NAME, as the notes cite it (required); each part a name, never "
    "`.` or `..`, not starting with `-`",
    "upstream.url": (
        "where to fetch it; `file://` and paths work (default: GitHub's URL), but only where "
        "that path exists: a workflow in GitHub Actions cannot fetch them (`watch init --url` "
        "warns); never starting with `-`"
    ),
    "upstream.branch": "the branch whose head is checked; empty: the remote's default branch "
    "(its HEAD), read when the mirror is first cloned; a name `git check-ref-format` accepts",
    "upstream.release_tags": "glob of the tags that are releases, e.g. `v*`, `rust-v*`",
    "upstream.schedule": "when `watch serve` checks it: cron (5 fields) or `@every 30m`",
    "upstream.fetch_seconds": "bound on one fetch from it (default: `limits.fetch_seconds`)",
    "issues": "where stale-verification issues go (`[issues]`)",
    "issues.sink": "`github`, `files` (Markdown under state/issues/) or `none`",
    "issues.repo": "OWNER/NAME of the repository issues are opened in",
    "issues.labels": "labels of every issue (plus `verdict:WORST`); created when missing",
    "issues.token_env": (
        "name of the environment variable holding the GitHub token: capital letters, digits "
        "and `_` (`[A-Z_][A-Z0-9_]*`); a token pasted here is refused, never echoed"
    ),
    "issues.api_url": "GitHub API root; change it for GitHub Enterprise",
    "issues.open_on": "verdicts that open an issue",
    "issues.dashboard": "keep one `watch dashboard` issue with every note's status",
    "issues.reopen": "reopen a note's closed issue when it goes stale again (else a new one)",
    "issues.max_wait_seconds": "the longest a run waits out GitHub rate limits, in total",
    "issues.retries": "retries of 5xx answers and timeouts, with backoff",
    "issues.timeout_seconds": "the bound on one GitHub API request, in whole seconds",
    "issues.accept": "how `watch action` lands a note accepted on the dashboard: "
    '`"pull-request"` (branch `watch/accept/NOTE_ID`) or `"commit"` (to the checked-out branch)',
    "limits": "bounds on what one run may spend (`[limits]`)",
    "limits.fetch_seconds": "wall-clock bound on one fetch from an upstream",
    "limits.stall_seconds": "an http(s) fetch below 1 KB/s for this long is given up",
    "limits.note_bytes": "a larger note is an error, not parsed",
    "limits.rule_bytes": "a larger rule file is an error, not parsed",
    "limits.file_bytes": (
        "a larger cited upstream file is an error; a file above 2 MB is compared line by "
        "line, without a syntax tree (docs/design.md, Memory)"
    ),
    "limits.yaml_nodes": "a note's front matter holding more values than this (each key, "
    "value, list and mapping; aliases expanded) is an error: about 900 sources of 5 keys",
    "limits.processes": "processes that judge and walk a big site's items; unset: one per "
    "core, up to 4 (1: everything in one process)",
}
TABLES = (("", Config), ("upstream.", Upstream), ("issues.", IssuesConfig), ("limits.", Limits))

NOT_IN_FILE = {"root", "file"}  # set by the loader, not written by users


def config_schema() -> dict[str, Any]:
    """The JSON Schema of config.toml (the file as written, paths as strings)."""
    schema = Config.model_json_schema()
    props = schema["properties"]
    for key in NOT_IN_FILE:
        props.pop(key, None)
    for key, default in PATH_DEFAULTS.items():
        props[key] = {"type": "string", "default": default}
    props["cache"] = {"type": "string"}
    schema["required"] = [k for k in schema.get("required", []) if k in props and k not in {
        *PATH_DEFAULTS, "cache"}]  # fmt: skip
    if not schema["required"]:
        del schema["required"]
    _describe(props, "")
    for name, sub in schema.get("$defs", {}).items():
        prefix = {m.__name__: p for p, m in TABLES if p}.get(name)
        if prefix:
            _describe(sub["properties"], prefix)
    return _finish(schema, "watch config.toml")


def note_schema() -> dict[str, Any]:
    """The JSON Schema of a note's YAML front matter."""
    return _finish(FrontMatter.model_json_schema(by_alias=True), "watch note front matter")


def rule_schema() -> dict[str, Any]:
    """The JSON Schema of a rule file; a claim takes exactly one test."""
    schema = RuleFile.model_json_schema()
    claim = schema["$defs"]["_RawClaim"]
    claim["oneOf"] = [{"required": [t]} for t in ("equals", "matches", "not_matches")]
    test = schema["$defs"]["_RawTest"]
    test["oneOf"] = [{"required": ["code"]}, {"required": ["file"]}]
    return _finish(schema, "watch rule file")


SCHEMAS = {"config": config_schema, "note": note_schema, "rule": rule_schema}


def render(kind: str) -> str:
    """One schema as JSON text, stable (sorted keys) so it can be committed and diffed."""
    return json.dumps(SCHEMAS[kind](), indent=2, sort_keys=True) + "\n"


def config_table() -> str:
    """The Markdown table of every config key, its type, default and meaning."""
    rows = ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
    for prefix, model in TABLES:
        for name, field in model.model_fields.items():
            if name in NOT_IN_FILE:
                continue
            key = prefix + name
            default = _default(key, field)
            kind = _type(field.annotation)
            if key not in CONFIG_HELP:  # a new key: say what it means, for docs and editors
                raise KeyError(
                    f"config key {key} has no entry in CONFIG_HELP (watcher/inputs/schema.py)"
                )
            rows.append(f"| `{key}` | {kind} | {default} | {CONFIG_HELP[key]} |")
    return "\n".join(rows) + "\n"


def _default(key: str, field: Any) -> str:
    if key in PATH_DEFAULTS:
        return f'`"{PATH_DEFAULTS[key]}"`'
    if key == "cache":
        return "user cache dir"
    if key in ("upstream", "issues", "limits"):
        return "(none)" if key == "upstream" else "(table)"
    if field.is_required():
        return "required"
    value = field.get_default()
    if value is None:
        return "unset"
    if key == "upstream.url":
        return "`https://github.com/OWNER/NAME.git`"
    if key == "upstream.branch":
        return "the remote's default"
    return f"`{_toml(value)}`"


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return str(value)


_TYPES = {
    "Path": "string (path)",
    "str": "string",
    "bool": "boolean",
    "int": "integer",
    "float": "number",
    "tuple[str, ...]": "array of strings",
    "tuple[Upstream, ...]": "array of tables",
    "IssuesConfig": "table",
    "Limits": "table",
}


def _type(annotation: object) -> str:
    text = str(annotation).replace("typing.", "").replace("pathlib.", "")
    text = text.replace("<class '", "").replace("'>", "").replace("watcher.config.", "")
    text = text.removesuffix(" | None")
    if match := re.fullmatch(r"Optional\[(.*)\]", text):
        text = match.group(1)
    text = re.sub(r"Annotated\[(\w+), [^\]]*\]", r"\1", text)
    if match := re.fullmatch(r"tuple\[(Literal\[.*\]), \.\.\.\]", text):
        return "array of " + _type(match.group(1)).removeprefix("one of ")
    if text.startswith("Literal["):
        return "one of " + text.removeprefix("Literal[").removesuffix("]").replace("'", "`")
    return _TYPES.get(text, text)


def _describe(props: dict[str, Any], prefix: str) -> None:
    for name, prop in props.items():
        help_text = CONFIG_HELP.get(prefix + name)
        if help_text:
            prop["description"] = help_text


def _finish(schema: dict[str, Any], title: str) -> dict[str, Any]:
    return {"$schema": SCHEMA_DRAFT, **schema, "title": title}
