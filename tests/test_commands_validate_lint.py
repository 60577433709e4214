"""`watch validate`'s citation lint: a cited range that cuts a statement or a definition,
or holds one with stray lines, is a warning naming the lines to cite, read offline from
the mirror a `watch check` left; without a mirror, the lint says it was skipped."""

from __future__ import annotations

import pytest

from tests.conftest import Project
from tests.support import Trace
from tests.test_commands_check_review import commands
from watcher.gitbuild import Upstream
from watcher.locate.lint import lint
from watcher.parse.syntax import _parse

LIB = "src/lib.rs"
SOURCE = """\
use std::fmt;

pub struct Config {
    name: String,
}

pub fn build(name: &str) -> Config {
    let label = format!(
        "{}-{}",
        name,
    );
    Config { name: label }
}

pub fn helper() -> u32 {
    1
}
"""
# Each range cited, and what validate says of it (None: nothing).
CITED = {
    "9-12": "starts inside the statement at 8-11; cite 8-12",
    "7-10": "ends inside `pub fn build` (7-13); cite 7-13",
    "7-16": "holds `pub fn build` (7-13) and 2 lines after it; cite 7-13",
    "3-5": None,
}


@pytest.fixture
def site(project: Project, upstream: Upstream) -> Project:
    base = upstream.commit("lib", {LIB: SOURCE, "README.md": "# lib\n"})
    project.note("lint", *(f"{base} {LIB}:{lines}" for lines in CITED), f"{base} README.md:1")
    return project


def path_line(index: int) -> int:
    """The line of the note's `path:` of its source `index` (`Project.note`'s layout)."""
    return 7 + 3 * index


def test_validate_warns_of_ranges_that_cut_code_and_keeps_its_exit_code(
    site: Project, capsys: pytest.CaptureFixture[str], trace: Trace
) -> None:
    assert site.run("check", "--no-issues", capsys=capsys)[0] == 0  # the mirror, with blobs
    trace.start()

    code, out, _ = site.run("validate", capsys=capsys)

    assert code == 0, out
    expected = [
        f"notes/lint.md:{path_line(index)}: {LIB}:{lines} {says}"
        for index, (lines, says) in enumerate(CITED.items())
        if says is not None
    ]
    assert out.splitlines() == [*expected, "config.toml: 1 note, 0 rules: valid, 3 warnings"]
    assert trace.upload_packs() == 0  # read offline


def test_validate_puts_each_warning_on_its_citation_for_github(
    site: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(site.root)
    site.run("check", "--no-issues", capsys=capsys)

    code, out, _ = site.run("validate", "--format", "github", capsys=capsys)

    assert code == 0
    found = [
        (level, props["file"], props["line"], message) for level, props, message in commands(out)
    ]
    assert found[0] == (
        "warning",
        "notes/lint.md",
        str(path_line(0)),
        f"{LIB}:9-12 starts inside the statement at 8-11; cite 8-12",
    )
    assert [f[:3] for f in found[1:]] == [
        ("warning", "notes/lint.md", str(path_line(1))),
        ("warning", "notes/lint.md", str(path_line(2))),
    ]


def test_validate_without_a_mirror_says_the_lint_was_skipped(
    site: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = site.run("validate", capsys=capsys)

    assert code == 0
    assert out.splitlines() == [
        "citation lint: skipped for acme/client: no mirror in the cache; after a "
        "`watch check` it reads the cited files offline",
        "config.toml: 1 note, 0 rules: valid",
    ]


def test_validate_fetches_nothing_the_mirror_lacks(
    site: Project, capsys: pytest.CaptureFixture[str], trace: Trace
) -> None:
    assert site.run("sync", capsys=capsys)[0] == 0  # commits and trees, no blobs yet
    trace.start()

    code, out, _ = site.run("validate", capsys=capsys)

    assert code == 0
    assert out.splitlines()[0] == (
        "citation lint: 4 citations not read: the file at the cited commit is not in the "
        "mirror yet; a `watch check` fetches it"
    )
    assert trace.upload_packs() == 0


RUST = {
    # A Rust block's closing brace is its own: holding it without the opening one cuts.
    "12-13": "starts inside `pub fn build` (7-13); cite 7-13",
    "8-12": None,  # the body's statements, whole
    "8-11": None,
    "10-10": None,  # inside one statement, touching neither end: a part of it, on purpose
    "9-11": "starts inside the statement at 8-11; cite 8-11",
    "4-4": None,  # one field of a struct
    "15-18": None,  # a whole definition and a blank line
}
PYTHON_SOURCE = """\
import os


class Client:
    def __init__(self, url):
        self.url = url
        self.session = make(
            url,
        )

    @property
    def size(self):
        return 1


def make(url):
    return url
"""
PYTHON = {
    "6-7": "ends inside the statement at 7-9; cite 6-9",
    "6-9": None,  # the body's tail: Python has no closing brace
    "11-13": None,  # decorated, with its decorator
    "12-16": "holds `def size` (11-13) and 1 line after it; cite 11-13",
    "4-5": "ends inside `class Client` (4-13); cite 4-13",
    "8-12": "starts inside `def __init__` (5-9) and ends inside `def size` (11-13); cite 5-13",
    "16-17": None,
}


CHAIN_SOURCE = """\
async fn store(&self, state: &State) {
    self.0
        .write()
        .await
        .insert(state.clone());
}
"""
CHAIN = {
    "2-4": "ends inside the statement at 2-5; cite 2-5",  # the receiver, not the call
    "2-5": None,
}


@pytest.mark.parametrize(
    ("language", "source", "lines", "says"),
    [("rust", SOURCE + "\n", k, v) for k, v in RUST.items()]
    + [("python", PYTHON_SOURCE, k, v) for k, v in PYTHON.items()]
    + [("rust", CHAIN_SOURCE, k, v) for k, v in CHAIN.items()],
)
def test_lint_of_one_range(language: str, source: str, lines: str, says: str | None) -> None:
    start, _, end = lines.partition("-")
    finding = lint(_parse("blob", language, source.encode()), int(start), int(end))
    assert (finding.describe() if finding else None) == says
