"""Front matter is read as written: no plain scalar becomes a number, a boolean or a date
behind the user's back (YAML 1.1 reads `010022777` as the octal number 2106879)."""

from __future__ import annotations

import hashlib
import subprocess

import pytest

from tests.conftest import Project
from tests.support import check_results
from watcher.gitbuild import Upstream
from watcher.inputs import frontmatter
from watcher.inputs.notes import parse_note

LIB = "src/lib.rs"
SOURCE = "pub fn a() -> u32 {\n    1\n}\n\npub fn b() -> u32 {\n    2\n}\n"


def _note(commit: str, extra: str = "") -> bytes:
    return (
        f"---\nid: n\n{extra}sources:\n  - url: https://github.com/acme/client\n"
        f"    commit: {commit}\n    path: {LIB}:5-7\n---\n\nBody.\n"
    ).encode()


@pytest.mark.parametrize("written", ["010022777", "1e10", "12345678", "2026", "0x1f", "1_000"])
def test_a_commit_stays_the_text_written(written: str) -> None:
    note, errors = parse_note(_note(written), "notes/n.md")
    if not all(c in "0123456789abcdef" for c in written):  # refused as written (at the key)
        assert [str(e) for e in errors] == [
            f"notes/n.md:5: sources[0]: commit {written!r} is not a hex commit id"
        ]
        return
    assert errors == []
    assert [c.commit for c in note.citations] == [written.lower()]


def test_dates_and_other_scalars_stay_text() -> None:
    extra = "lastVerified: 2026-08-22\nsnooze_until: 2026-09-01\ntitle: yes\nstatus: 1.5\n"
    note, errors = parse_note(_note("abc1234", extra), "notes/n.md")
    assert errors == []
    assert (note.last_verified, note.snooze_until, note.title, note.status) == (
        "2026-08-22", "2026-09-01", "yes", "1.5",
    )  # fmt: skip


def test_the_schema_says_a_commit_is_a_string() -> None:
    schema = frontmatter.FrontMatter.model_json_schema(by_alias=True)
    commit = schema["$defs"]["Source"]["properties"]["commit"]
    assert commit["anyOf"] == [{"type": "string"}, {"type": "null"}]


def _octal_looking_commit(upstream: Upstream, message: str, digits: int = 9) -> str:
    """Commit the work tree with a message nonce chosen so that the id's first `digits`
    characters are a 0 and octal digits: what YAML 1.1 reads as an octal number."""
    upstream.git("add", "--all")
    tree = upstream.git("write-tree")
    parent = upstream.head()
    who = "Ada Upstream <ada@example.com> 1767225600 +0000"
    for nonce in range(1_000_000):
        body = (
            f"tree {tree}\nparent {parent}\nauthor {who}\ncommitter {who}\n\n{message} ({nonce})\n"
        )
        raw = body.encode()
        sha = hashlib.sha1(b"commit %d\0" % len(raw) + raw).hexdigest()
        if sha[0] == "0" and all(c in "01234567" for c in sha[:digits]):
            break
    made = subprocess.run(
        ["git", "-C", str(upstream.path), "hash-object", "-t", "commit", "-w", "--stdin"],
        input=raw, capture_output=True, check=True,
    ).stdout.decode().strip()  # fmt: skip
    assert made == sha
    upstream.git("update-ref", "refs/heads/main", sha)
    return sha


def test_an_octal_looking_short_commit_is_found_end_to_end(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    upstream.commit("init", {"README.md": "hello\n"})
    upstream.write({LIB: SOURCE})
    sha = _octal_looking_commit(upstream, "add lib")
    short = sha[:9]
    assert str(yaml_1_1_reading(short)) != short  # the trap: YAML 1.1 makes it a number
    upstream.commit("later", {"README.md": "hello again\n"})
    project.note("octal", f"{short} {LIB}:5-7")
    code, out, _ = project.run("validate", capsys=capsys)
    assert code == 0, out
    result = check_results(project, capsys)[f"octal:{LIB}:5-7"]
    assert (result["verdict"], result["baseline"]["commit"]) == ("fresh", sha)


def yaml_1_1_reading(text: str) -> object:
    import yaml

    return yaml.safe_load(f"commit: {text}")["commit"]


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/acme/client/issues/12#issuecomment-3141592",
        "https://github.com/acme/client/pull/12/files",
        "https://github.com/acme/client/pull/12#discussion_r27182818",
        "https://github.com/acme/client/issues/12?ref=notes",
    ],
)
def test_a_link_to_a_comment_or_tab_of_a_thread_cites_the_thread(url: str) -> None:
    raw = f"---\nid: n\nsources:\n  - url: {url}\n    date: 2026-03-01\n---\n".encode()
    note, errors = parse_note(raw, "notes/n.md")
    assert errors == [] and note.untracked == ()
    assert [(c.repo, c.number) for c in note.issue_citations] == [("acme/client", 12)]


def test_a_link_elsewhere_in_a_repository_stays_untracked() -> None:
    url = "https://github.com/acme/client/issues/12/timeline-of-something"
    raw = f"---\nid: n\nsources:\n  - url: {url}\n---\n".encode()
    note, _ = parse_note(raw, "notes/n.md")
    assert note.issue_citations == () and note.untracked == (url,)
