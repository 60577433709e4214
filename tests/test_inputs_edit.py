"""Edits keep bytes: `watch fix --write` and `fix --accept --write` change the values that
moved and nothing else (CRLF line endings, a BOM, YAML anchors stay), and a note whose
value comes through an alias or a merge key is refused with the fix, left as it was."""

from __future__ import annotations

import io
import os

import pytest

from tests.conftest import Project
from watcher.commands.fix import fix
from watcher.gitbuild import Upstream

LIB = "src/lib.py"
SOURCE = "def f():\n    return 1\n\n\ndef g():\n    return 2\n"
TODAY = "2026-12-02"


def run_fix(project: Project, *, accept: str | None = None) -> tuple[int, str]:
    out = io.StringIO()
    code = fix(project.config_file, write=True, offline=False, out=out, accept=accept,
               today=TODAY)  # fmt: skip
    return code, out.getvalue()


def moved(upstream: Upstream) -> tuple[str, str]:
    """The upstream at a base commit, then with two lines put before everything in LIB."""
    base = upstream.commit("lib", {LIB: SOURCE, "src/other.py": SOURCE})
    head = upstream.commit("prepend", {LIB: "import os\n\n" + SOURCE})
    return base, head


def write_note(project: Project, text: str, *, crlf: bool = False, bom: bool = False) -> bytes:
    raw = (b"\xef\xbb\xbf" if bom else b"") + text.replace("\n", "\r\n" if crlf else "\n").encode()
    note = project.root / "notes" / "n.md"
    note.write_bytes(raw)
    os.chmod(note, 0o640)
    return raw


NOTE = """\
---
id: n
title: N  # a comment
sources:
  - url: https://github.com/acme/client
    commit: {base}
    path: 'src/lib.py:5-6'
    date: 2026-01-01
lastVerified: 2026-01-01
---

Body, with `src/lib.py:5-6` as written.
"""


@pytest.mark.parametrize(("crlf", "bom"), [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("accept", [None, "n"])
def test_fix_write_changes_the_values_and_keeps_every_other_byte(
    project: Project, upstream: Upstream, crlf: bool, bom: bool, accept: str | None
) -> None:
    base, head = moved(upstream)
    before = write_note(project, NOTE.format(base=base), crlf=crlf, bom=bom)

    code, shown = run_fix(project, accept=accept)

    assert code == 0, shown
    eol = b"\r\n" if crlf else b"\n"
    expected = (
        before.replace(base.encode(), head.encode())
        .replace(b"    path: 'src/lib.py:5-6'", b"    path: 'src/lib.py:7-8'")
        .replace(b"    date: 2026-01-01", f"    date: {TODAY}".encode())
    )
    if accept:
        expected = expected.replace(b"lastVerified: 2026-01-01" + eol, f"lastVerified: {TODAY}".encode() + eol)  # fmt: skip
    note = project.root / "notes" / "n.md"
    assert note.read_bytes() == expected
    assert oct(note.stat().st_mode & 0o777) == oct(0o640)  # its permissions too


def test_fix_accept_adds_a_missing_key_with_the_notes_own_line_ending(
    project: Project, upstream: Upstream
) -> None:
    base, _ = moved(upstream)
    text = NOTE.format(base=base).replace("lastVerified: 2026-01-01\n", "")
    before = write_note(project, text, crlf=True)

    assert run_fix(project, accept="n")[0] == 0

    after = (project.root / "notes" / "n.md").read_bytes()
    assert f"lastVerified: {TODAY}\r\n---\r\n".encode() in after
    assert after.count(b"\n") == after.count(b"\r\n") == before.count(b"\r\n") + 1


ANCHORED = """\
---
id: n
sources:
  - url: &repo https://github.com/acme/client
    commit: &base {base}
    path: src/lib.py:1-2
  - url: *repo
    commit: {base}
    path: src/lib.py:5-6
---
"""


def test_anchors_and_aliases_written_around_the_edited_values_stay(
    project: Project, upstream: Upstream
) -> None:
    base, head = moved(upstream)
    before = write_note(project, ANCHORED.format(base=base))

    code, shown = run_fix(project)

    assert code == 0, shown
    after = (project.root / "notes" / "n.md").read_text()
    assert after == (
        before.decode()
        .replace(f"&base {base}", f"&base {head}")
        .replace(f"    commit: {base}", f"    commit: {head}")
        .replace("src/lib.py:1-2", "src/lib.py:3-4")
        .replace("src/lib.py:5-6", "src/lib.py:7-8")
    )


SHARED = """\
---
id: n
sources:
  - &first
    url: https://github.com/acme/client
    commit: &base {base}
    path: src/lib.py:1-2
  - url: https://github.com/acme/client
    commit: *base
    path: src/lib.py:5-6
---
"""
MERGED = """\
---
id: n
sources:
  - &first
    url: https://github.com/acme/client
    commit: {base}
    path: src/other.py:1-2
  - <<: *first
    path: src/lib.py:5-6
---
"""


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (SHARED, "notes/n.md:4: sources[0]: `commit` is shared through a YAML anchor (`&x`"),
        (MERGED, "notes/n.md:8: sources[1]: `commit` comes from a merge key (`<<`)"),
    ],
)
@pytest.mark.parametrize("accept", [None, "n"])
def test_a_value_reached_through_an_alias_or_merge_key_is_refused_and_nothing_changes(
    project: Project, upstream: Upstream, text: str, says: str, accept: str | None
) -> None:
    base, head = moved(upstream)
    before = write_note(project, text.format(base=base))
    other = project.note("other", f"{base} {LIB}:1-2")  # the rest of the site is fixed

    code, shown = run_fix(project, accept=accept)

    assert code == 1 and "Traceback" not in shown
    assert "changed nothing in this note" in shown
    if accept is None:
        assert f"todo: {says}" in shown
    else:  # every source is re-based, the first: it is shared with the second
        assert "todo: notes/n.md:4: sources[0]" in shown and "shared through a YAML" in shown
        assert "(nothing of note n was re-based)" in shown
    assert (project.root / "notes" / "n.md").read_bytes() == before
    if accept is None:
        assert head in other.read_text()


def test_a_rule_path_set_by_accept_keeps_the_rule_files_crlf_and_bom(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("lib", {LIB: SOURCE})
    project.note("n", f"{base} {LIB}:1-2")
    rule = (
        '\ufeff# the function\r\n[[rule]]\r\nid = "f-returns-1"\r\nnote = "n"\r\n'
        'path = "src/lib.py"   # where it was\r\n'
        "query = '''(function_definition name: (identifier) @n (#eq? @n \"f\")) @target'''\r\n"
    )
    rules = project.root / "rules" / "rules.toml"
    rules.write_bytes(rule.encode())
    assert project.run("rules", "lint", capsys=capsys)[0] == 0  # a BOM is no TOML error
    upstream.move(LIB, "src/core.py", "Rename lib to core")

    code, shown = run_fix(project, accept="n")

    assert code == 0, shown
    assert rules.read_bytes() == rule.replace("src/lib.py", "src/core.py").encode()


def test_a_note_that_cannot_be_written_is_one_clear_error_and_stays_whole(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    import tempfile

    base, _ = moved(upstream)
    before = write_note(project, NOTE.format(base=base), crlf=True)

    def disk_full(*args: object, **kwargs: object) -> tuple[int, str]:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "mkstemp", disk_full)
    code, _, err = project.run("fix", "--write", capsys=capsys)

    assert code == 2 and "Traceback" not in err
    assert "notes/n.md: cannot write it (No space left on device); check its" in err
    assert (project.root / "notes" / "n.md").read_bytes() == before
