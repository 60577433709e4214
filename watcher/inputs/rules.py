"""Read rules (SPEC 3.2) and compile their tree-sitter queries."""

from __future__ import annotations

import contextlib
import difflib
import functools
import json
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from watcher.config import display_path
from watcher.errors import RuleError, WatchError, did_you_mean, plain
from watcher.fingerprint import short
from watcher.inputs import inside, walk
from watcher.models import Claim, Rule, RuleTest
from watcher.parse import languages
from watcher.state import store

if TYPE_CHECKING:
    from tree_sitter import Query

KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
QUERY_POSITION = re.compile(r"row (\d+)(?:, column (\d+))?")
COMPILED = "compiled-queries.json"  # in the cache folder: see Compiles


class _RawClaim(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    capture: str = Field(description="a capture name of the query, without @")
    equals: str | None = Field(None, description="the capture's text, whitespace collapsed")
    matches: str | None = Field(None, description="a regular expression the text must contain")
    not_matches: str | None = Field(None, description="a regular expression it must not contain")
    says: str = Field("", description="the sentence of the note that depends on the claim")

    @model_validator(mode="after")
    def _one_test(self) -> _RawClaim:
        tests = [t for t in ("equals", "matches", "not_matches") if getattr(self, t) is not None]
        if len(tests) != 1:
            raise ValueError("give exactly one of equals, matches, not_matches")
        for test in ("matches", "not_matches"):
            pattern = getattr(self, test)
            if pattern is not None:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise ValueError(f"{test} is not a valid regular expression: {exc}") from None
        return self

    def claim(self) -> Claim:
        test: Literal["equals", "matches", "not_matches"]
        test = (
            "equals"
            if self.equals is not None
            else ("matches" if self.matches is not None else "not_matches")
        )
        return Claim(
            capture=self.capture, test=test, expected=str(getattr(self, test)), says=self.says
        )


class _RawTest(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    name: str = Field(description="what the case shows, for the test report")
    code: str | None = Field(None, description="a source snippet in the rule's language")
    file: str | None = Field(
        None, description="a fixture file instead of `code`, relative to the rule file"
    )
    expect: Literal["holds", "broken", "missing"] = Field(
        description="holds: one @target, every claim holds; broken: one @target, a claim "
        "fails; missing: no @target"
    )
    fails: list[str] = Field(
        [], description="for expect = broken: exactly the captures whose claims fail"
    )

    @model_validator(mode="after")
    def _one_source(self) -> _RawTest:
        if (self.code is None) == (self.file is None):
            raise ValueError(f"test {self.name!r}: give exactly one of code, file")
        if self.fails and self.expect != "broken":
            raise ValueError(f'test {self.name!r}: `fails` goes with expect = "broken"')
        return self

    def test(self, rule_file: Path, roots: tuple[Path, ...]) -> RuleTest:
        """The case, its `file` read from beside the rule file: inside the site (one of
        `roots`, the config's folder and the rules folder), never anywhere else."""
        code = self.code
        if code is None:
            fixture = rule_file.parent / str(self.file)
            if not any(fixture.resolve().is_relative_to(r.resolve()) for r in roots):
                raise ValueError(
                    f"test {self.name!r}: file {self.file} is outside the notes site; "
                    "keep fixtures in the site, relative to the rule file (fixtures/x.rs)"
                )
            try:
                code = fixture.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                why = exc.strerror if isinstance(exc, OSError) else "not UTF-8"
                reason = f"cannot read file {self.file}: {why}"
                raise ValueError(f"test {self.name!r}: {reason}") from None
        return RuleTest(name=self.name, code=code, expect=self.expect, fails=tuple(self.fails))


class _RawRule(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    id: str = Field(description="unique, kebab-case")
    note: str = Field(description="id of the note the rule protects")
    path: str = Field(description="upstream file, as the note cites it")
    repo: str | None = Field(None, description="OWNER/NAME; default: the note's source for path")
    language: str | None = Field(
        None, description="rust, python, go, javascript, typescript, tsx; default: from path"
    )
    query: str = Field(description="tree-sitter query; must capture @target")
    inside: str | None = Field(
        None, description="optional query capturing @scope: query runs only inside it"
    )
    claims: list[_RawClaim] = Field([], description="what must stay true of the captures")
    tests: list[_RawTest] = Field([], description="snippets run by `watch rules test`")

    # Field validators, not one model validator: each bad key is told with the others.
    @field_validator("id")
    @classmethod
    def _kebab(cls, value: str) -> str:
        if not KEBAB.match(value):
            raise ValueError(f"{value!r} must be kebab-case (a-z, 0-9, dashes)")
        return value

    @field_validator("language")
    @classmethod
    def _known_language(cls, value: str | None) -> str | None:
        if value is not None and value not in languages.LANGUAGES:
            raise ValueError(f"{value!r} is not one of {', '.join(languages.LANGUAGES)}")
        return value


# What `watch schema rule` describes (its docstring is the schema's description); loading
# reads the tables one by one (`_RawFile`), so that one bad rule is one error.
class RuleFile(BaseModel):
    """A rule file: `[[rule]]` tables."""

    model_config = ConfigDict(extra="forbid", defer_build=True)
    rule: list[_RawRule] = Field([], description="the rules; see docs/rules.md")


class _RawFile(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    rule: list[dict[str, object]] = []


@dataclass(frozen=True)
class Rules:
    rules: dict[str, Rule]
    errors: list[RuleError]  # an `InvalidRule` among them names its rule, hence its note

    @property
    def unusable(self) -> dict[str, Rule]:
        """The rules that were read but cannot be used, by id (their errors say why)."""
        return {e.rule.id: e.rule for e in self.errors if isinstance(e, InvalidRule)}


class InvalidRule(RuleError):
    """A rule that was read but cannot be used (its query does not compile, a claim names
    a capture the query lacks, its language is unknown): an error of that rule, so of its
    note, not of the rule file alone."""

    def __init__(self, rule: Rule, message: str, *, line: int | None = None, query: bool = False):
        super().__init__(rule.file, f"rule {rule.id}: {message}", line=line or rule.line)
        self.rule = rule
        self.query = query  # the query itself does not compile (`query-invalid`)


class Compiles:
    """Rules whose queries compiled before, by what decides that: the queries, the language
    and the installed tree-sitter versions. A run that finds a rule here does not compile
    it again, so a warm run never loads tree-sitter; a new grammar compiles everything anew.
    """

    def __init__(self, known: Iterable[str] = ()) -> None:
        self.known = set(known)
        self.seen: set[str] = set()

    @classmethod
    def load(cls, cache: Path) -> Compiles:
        """What compiled before on this machine; an unreadable cache only costs compiling."""
        try:
            known = store.read_json(cache / COMPILED).get("compiled", [])
        except WatchError:
            return cls()
        return cls([k for k in known if isinstance(k, str)] if isinstance(known, list) else [])

    def save(self, cache: Path) -> None:
        """Remember what compiled, when it changed: next to the mirrors, not in state/,
        for it is a fact about this machine's grammars."""
        if self.changed():
            with contextlib.suppress(OSError):  # a read-only cache only costs compiling again
                store.write_json(cache / COMPILED, {"compiled": sorted(self.seen)})

    def fingerprint(self, rule: Rule, language: str) -> str:
        """What decides that a rule compiles: its queries, the captures its claims name
        (checked against the query's), its language and the grammar's version."""
        captures = sorted({c.capture for c in rule.claims})
        parts = [rule.query, rule.inside, language, *_versions(language), *captures]
        return short(json.dumps(parts), 24)

    def changed(self) -> bool:
        """Whether the rules seen this run differ from the known ones (worth saving)."""
        return self.seen != self.known


@functools.cache
def _versions(language: str) -> tuple[str, ...]:
    from importlib.metadata import PackageNotFoundError, version

    names = ("tree-sitter", languages.LANGUAGES[language].module.replace("_", "-"))
    try:
        return tuple(version(name) for name in names)
    except PackageNotFoundError:
        return ("unknown",)


def load_rules(
    folder: Path,
    *,
    display_root: Path,
    compiles: Compiles | None = None,
    max_bytes: int = 1_000_000,
) -> Rules:
    """Read every `*.toml` below `folder`; one bad rule is an error, the others still load.

    With `compiles`, a rule that compiled before (same queries, same grammar) is trusted.
    A file above `max_bytes` is an error, not parsed.
    """
    rules: dict[str, Rule] = {}
    errors: list[RuleError] = []
    for found in walk.files(folder, ".toml"):  # any name, no loop, files only
        file = Path(found.path)
        shown = display_path(file, display_root)
        for item in _load_file(file, shown, compiles, max_bytes, (display_root, folder)):
            if isinstance(item, RuleError):
                errors.append(item)
            elif item.id in rules:
                errors.append(
                    RuleError(
                        shown,
                        f"rule {item.id}: duplicate id, also in {rules[item.id].file}; rename one",
                        line=item.line,
                    )
                )
            else:
                rules[item.id] = item
    return Rules(rules, errors)


def _load_file(
    file: Path, shown: str, compiles: Compiles | None, max_bytes: int, roots: tuple[Path, ...]
) -> list[Rule | RuleError]:
    try:
        if (size := file.stat().st_size) > max_bytes:
            return [
                RuleError(
                    shown,
                    f"{size:,} bytes, above [limits] rule_bytes ({max_bytes:,}); "
                    "split the file, or raise the limit in config.toml",
                )
            ]
        # utf-8-sig: a BOM some editors save is not TOML, and is not the author's either
        text = file.read_text(encoding="utf-8-sig", errors="replace")
    except OSError as exc:
        return [RuleError(shown, f"cannot read it ({exc.strerror}); check its permissions")]
    try:
        raw = _RawFile.model_validate(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        return [RuleError(shown, f"TOML error: {exc}; fix the syntax there")]
    except ValidationError as exc:
        return [_top_level(exc, text, shown)]
    starts = [n for n, line in enumerate(text.splitlines(), 1) if line.strip() == "[[rule]]"]
    out: list[Rule | RuleError] = []
    for index, entry in enumerate(raw.rule):
        line = starts[index] if index < len(starts) else None
        name = entry.get("id", f"#{index + 1}")
        try:
            parsed = _RawRule.model_validate(entry)
        except ValidationError as exc:  # its query's errors too: every problem at once
            more = _query_problems(entry, shown, text)
            out.append(
                RuleError(shown, f"rule {name}: {'; '.join([_explain(exc), *more])}", line=line)
            )
            continue
        if problem := _where_problem(parsed):
            where = {"item": parsed.id, "note": parsed.note, "repo": parsed.repo or ""}
            out.append(RuleError(shown, f"rule {name}: {problem}", line=line, **where))
            continue
        try:
            tests = tuple(t.test(file, roots) for t in parsed.tests)
        except ValueError as exc:
            out.append(RuleError(shown, f"rule {name}: {exc}", line=line))
            continue
        rule = Rule(
            id=parsed.id,
            note=parsed.note,
            path=parsed.path,
            repo=parsed.repo,
            language=parsed.language,
            query=parsed.query,
            inside=parsed.inside,
            claims=tuple(c.claim() for c in parsed.claims),
            tests=tests,
            file=shown,
            line=line,
        )
        language = language_of(rule)
        mark = compiles.fingerprint(rule, language) if compiles and language else None
        if compiles is None or mark not in compiles.known:
            try:
                compile_rule(rule, text)
            except RuleError as exc:
                out.append(exc)
                continue
        if compiles is not None and mark is not None:
            compiles.seen.add(mark)
        out.append(rule)
    return out


def _where_problem(parsed: _RawRule) -> str | None:
    """A `path` or `repo` that does not name a file inside an upstream, and the fix."""
    if problem := inside.path_problem(parsed.path):
        return f"path {parsed.path!r} {problem}"
    if parsed.repo is not None and (problem := inside.repo_problem(parsed.repo)):
        return f"repo: {problem}"
    return None


def _top_level(exc: ValidationError, text: str, shown: str) -> RuleError:
    """A rule file whose top level is wrong (`[[rules]]`, `[rule]`), at the key's line."""
    parts, line = [], None
    for err in exc.errors():
        key = str(err["loc"][0]) if err["loc"] else ""
        if err["type"] == "extra_forbidden":
            parts.append(f"unknown top-level key `{key}`")
        else:
            parts.append(f"`{key}`: {err['msg']}; write each rule as a [[rule]] table")
        line = line or _key_line(text, key)
    hint = "; a rule file holds only [[rule]] tables (two brackets, `rule` singular)"
    return RuleError(shown, "; ".join(parts) + hint, line=line)


def _key_line(text: str, key: str) -> int | None:
    """The first line that names top-level `key`: `[[key]]`, `[key]`, `[key.x]`, `key =`."""
    pattern = re.compile(rf"^\s*(?:\[\[?\s*{re.escape(key)}\s*[\].]|{re.escape(key)}\s*[=.])")
    return next((n for n, line in enumerate(text.splitlines(), 1) if pattern.match(line)), None)


def language_of(rule: Rule) -> str | None:
    return rule.language or languages.for_path(rule.path)


@dataclass(frozen=True)
class Compiled:
    query: Query
    inside: Query | None
    language: str


def compile_rule(rule: Rule, file_text: str | None = None) -> Compiled:
    """Compile a rule's queries; errors name the rule file, the rule and the position."""
    language = language_of(rule)
    if language is None:
        raise InvalidRule(
            rule,
            f"cannot tell the language of {rule.path}; "
            'set language = "rust" (or python, go, javascript, typescript, tsx)',
        )
    query = _compiled(rule, "query", rule.query, language, file_text)
    inside = _compiled(rule, "inside", rule.inside, language, file_text) if rule.inside else None
    compiled = Compiled(query, inside, language)
    _check_captures(rule, compiled)
    return compiled


def _compiled(rule: Rule, key: str, text: str, language: str, file_text: str | None) -> Query:
    from tree_sitter import QueryError

    try:
        return _query(text, language)
    except QueryError as exc:
        raise _query_error(rule, key, text, str(exc), file_text) from None


@functools.lru_cache(maxsize=512)
def _query(text: str, language: str) -> Query:
    """One compiled query per text and language, however many rules and runs use it."""
    from tree_sitter import Query

    return Query(languages.grammar(language), text)


def _check_captures(rule: Rule, compiled: Compiled) -> None:
    """Every capture the rule relies on is there; all that are not, in one error."""
    names = {compiled.query.capture_name(i) for i in range(compiled.query.capture_count)}
    problems = []
    if "target" not in names:
        problems.append(
            "query must capture @target (the construct whose text and lines are tracked)"
        )
    if compiled.inside is not None:
        scopes = {compiled.inside.capture_name(i) for i in range(compiled.inside.capture_count)}
        if "scope" not in scopes:
            problems.append("inside must capture @scope")
    has = ", ".join(f"@{n}" for n in sorted(names)) or "none"
    for claim in rule.claims:
        if claim.capture not in names:
            close = difflib.get_close_matches(claim.capture, sorted(names), n=1)
            fix = f"did you mean @{close[0]}?" if close else "name one of those"
            problems.append(
                f"claim names capture @{claim.capture}, which the query does not capture "
                f"(it has {has}); {fix}"
            )
    if problems:
        raise InvalidRule(rule, "; ".join(problems))


def _query_error(
    rule: Rule, key: str, query: str, message: str, file_text: str | None
) -> InvalidRule:
    position = QUERY_POSITION.search(message)
    if position:
        row, column = int(position.group(1)), position.group(2)
    else:  # "Unexpected EOF": the query ends too early, say where it ends
        row, column = query.rstrip().count("\n"), None
    line = None
    if file_text is not None and (at := file_text.find(query)) >= 0:
        line = file_text.count("\n", 0, at) + 1 + row
    where = f"{key} line {row + 1}" + (f" column {int(column) + 1}" if column else "")
    return InvalidRule(
        rule,
        f"{where}: query error: {message}; check node and field names against the grammar",
        line=line,
        query=True,
    )


def _query_problems(entry: dict[str, object], shown: str, text: str) -> list[str]:
    """What is wrong with the queries of a rule whose keys are wrong too (compiled as far
    as its `path`, `language`, `query` and `inside` allow), so that fixing the keys does
    not reveal a second layer of errors."""
    query, inside, path = entry.get("query"), entry.get("inside"), entry.get("path")
    language = entry.get("language")
    if not isinstance(query, str) or not isinstance(path, str):
        return []
    if language is not None and language not in languages.LANGUAGES:
        return []
    rule = Rule(
        id=str(entry.get("id", "")), note="", path=path, query=query,
        inside=inside if isinstance(inside, str) else None,
        language=language if isinstance(language, str) else None, file=shown,
    )  # fmt: skip
    try:
        compile_rule(rule, text)
    except RuleError as exc:
        return [exc.detail.removeprefix(f"rule {rule.id}: ")]
    return []


# The keys of each table of a rule file, for "did you mean" and the list after it.
KEYS = {
    "rule": tuple(_RawRule.model_fields),
    "claims": tuple(_RawClaim.model_fields),
    "tests": tuple(_RawTest.model_fields),
}


def _explain(exc: ValidationError) -> str:
    """One clause per bad key, each with its fix."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        table = next((t for t in ("claims", "tests") if t in err["loc"]), "rule")
        keys = KEYS[table]
        if err["type"] == "extra_forbidden":
            near = did_you_mean(str(err["loc"][-1]), keys)
            whose = {"rule": "a rule's", "claims": "a claim's", "tests": "a test's"}[table]
            msg = f"unknown key{near}; {whose} keys: {', '.join(keys)}"
        elif err["type"] == "missing":
            msg = "missing; add it" + (
                " (a tree-sitter query capturing @target)" if loc == "query" else ""
            )
        else:
            msg = plain(err["msg"])
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts)
