"""A citation HEAD holds byte for byte is placed from the bytes, HEAD not parsed
(`watcher.judge.untouched`); where what decides it changed, HEAD is parsed and the
citation placed as any other. Pinned by the blobs parsed, not by timings."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from watcher.config import load
from watcher.gitbuild import Upstream
from watcher.mirror.mirrors import Mirror
from watcher.models import Report, Verdict
from watcher.pipeline import CheckOptions, run_check

PATH = "src/engine.rs"


def fn(name: str, body: str = "let value = 1;\n    value + 1") -> str:
    return f"pub fn {name}() -> u32 {{\n    {body}\n}}\n"


def engine(*parts: str) -> str:
    return "\n".join(parts)


def check(project: Project) -> Report:
    return run_check(load(project.config_file), CheckOptions(no_issues=True), counts=project.counts)


def cited(upstream: Upstream, project: Project) -> str:
    """An engine of three functions; the note cites `settle` (lines 6-9). The base."""
    base = upstream.commit(
        "base (#1)",
        {PATH: engine(fn("start"), fn("settle", "let due = 2;\n    due * 3"), fn("stop"))},
    )
    project.note("engine", f"{base} {PATH}:6-9")
    return base


def head_blob(upstream: Upstream) -> str:
    return upstream.git("rev-parse", f"HEAD:{PATH}")


def test_a_citation_whose_lines_no_commit_touched_is_placed_without_parsing_head(
    project: Project, upstream: Upstream
) -> None:
    cited(upstream, project)
    upstream.commit(
        "grow start, add a helper (#2)",
        {PATH: engine(fn("start", "let value = 1;\n    let more = 2;\n    value + more"),
                      fn("settle", "let due = 2;\n    due * 3"), fn("stop"),
                      fn("helper", "let other = 5;\n    other"))},
    )  # fmt: skip

    (result,) = check(project).results

    assert result.verdict is Verdict.MOVED
    assert result.current is not None
    assert (result.current.start_line, result.current.end_line) == (7, 10)
    assert head_blob(upstream) not in project.counts.parse.parsed_blobs
    assert project.counts.parse.parses == 1  # the baseline, for its anchor


def test_a_new_definition_of_the_cited_name_makes_head_parsed(
    project: Project, upstream: Upstream
) -> None:
    cited(upstream, project)
    upstream.commit(
        "an Other with its own settle (#3)",
        {PATH: engine(fn("start"), fn("settle", "let due = 2;\n    due * 3"), fn("stop"),
                      "pub struct Other;\n\nimpl Other {\n    pub fn settle() {}\n}\n")},
    )  # fmt: skip

    (result,) = check(project).results

    assert result.verdict is Verdict.FRESH
    assert head_blob(upstream) in project.counts.parse.parsed_blobs  # judged, not followed


def test_code_edited_right_beside_the_lines_makes_head_parsed(
    project: Project, upstream: Upstream
) -> None:
    cited(upstream, project)
    upstream.commit(
        "settle inlined (#4)",
        {PATH: engine(fn("start"), "#[inline]\n" + fn("settle", "let due = 2;\n    due * 3"),
                      fn("stop"))},
    )  # fmt: skip

    (result,) = check(project).results

    assert head_blob(upstream) in project.counts.parse.parsed_blobs
    assert result.current is not None  # the attribute is the function's: it changed
    assert result.verdict is Verdict.CHANGED
    assert (result.current.start_line, result.current.end_line) == (6, 10)


def test_a_citation_whose_lines_changed_is_judged_as_before(
    project: Project, upstream: Upstream
) -> None:
    cited(upstream, project)
    changed = upstream.commit(
        "settle triples (#5)",
        {PATH: engine(fn("start"), fn("settle", "let due = 3;\n    due * 3"), fn("stop"))},
    )

    (result,) = check(project).results

    assert result.verdict is Verdict.CHANGED
    assert result.introduced_by is not None and result.introduced_by.commit == changed


def test_the_citations_of_one_file_read_head_once_between_them(
    project: Project, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [f"step_{i}" for i in range(6)]
    base = upstream.commit("base (#6)", {PATH: engine(*map(fn, names))})
    # All but the first: a function added right above it would be code beside its lines.
    project.note("steps", *(f"{base} {PATH}:{1 + 5 * i}-{4 + 5 * i}" for i in range(1, 6)))
    upstream.commit("a helper on top (#7)", {PATH: engine(fn("helper"), *map(fn, names))})
    reads: list[str] = []
    read = Mirror.read
    monkeypatch.setattr(Mirror, "read", lambda self, blob: reads.append(blob) or read(self, blob))

    report = check(project)

    moved = sorted((r.baseline.start_line, r.current.start_line) for r in report.results
                   if r.verdict is Verdict.MOVED and r.baseline and r.current)  # fmt: skip
    assert moved == [(1 + 5 * i, 6 + 5 * i) for i in range(1, 6)]
    assert reads.count(head_blob(upstream)) == 1  # not once per citation
    assert head_blob(upstream) not in project.counts.parse.parsed_blobs
