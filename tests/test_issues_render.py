"""Issue titles, bodies and comments: golden files per verdict, and hostile upstream text.

Golden files live in tests/golden/; after an intended change, regenerate them with
`WATCH_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_issues_render.py` and review
the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.issues_support import HEAD, assert_inert, note, result
from watcher.issues import markdown as md
from watcher.issues import markers, render
from watcher.models import Attribution, Change, ClaimResult, Location, Result, Verdict

GOLDEN = Path(__file__).parent / "golden"


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("WATCH_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} differs; see the module docstring"


@pytest.mark.parametrize("verdict", ["changed", "broken", "missing", "error", "moved"])
def test_body_for_each_verdict_matches_its_golden_file(verdict: str) -> None:
    v = Verdict(verdict)
    results = [result(v), result(Verdict.FRESH, id="codex-reads-one-page-of-tools:src/lib.rs:1-9")]
    keys = markers.news_keys(results)

    text = render.title(note(), results) + "\n\n" + render.body(note(), results, keys)

    golden(f"issue-{verdict}.md", text)
    assert_inert(render.body(note(), results, keys))


def test_comments_match_their_golden_file() -> None:
    stale = [result(Verdict.BROKEN), result(Verdict.CHANGED, id="n:src/a.rs:1-2")]
    fresh = [result(Verdict.FRESH), result(Verdict.MOVED, id="n:src/a.rs:1-2")]
    news = frozenset({markers.news_key(stale[0])})

    text = "\n\n=====\n\n".join(
        [
            render.news_comment(stale, news, reopened=False),
            render.news_comment(stale, markers.news_keys(stale), reopened=True),
            render.close_comment(fresh, [("openai/codex", HEAD)], reopen=True),
        ]
    )

    golden("comments.md", text + "\n")


def hostile_result() -> list[Result]:
    ticks = "`" * 7
    spoof = "<!-- watch:note=someone-elses-note -->"
    diff = "\n".join(
        [
            "--- baseline",
            "+++ HEAD",
            f'+    let s = "{ticks}"; // {spoof}',
            "+```",
            "+~~~",
            "+// @org/team please review #1 and GH-2",
            "+// \u202eevil bidi\u202c and a NUL \x00 and bad bytes \udcff\udcfe",
            "+" + "x" * 200_000,
        ]
    )
    broken = result(
        Verdict.BROKEN,
        message=f"@org/team #1 {spoof} <img src=x onerror=alert(1)> [click](https://evil.example) *bold*",
        diff=diff,
        baseline=Location(commit="b705b6b0", path="src/we`ird @x #1.rs", start_line=1, end_line=2),
        introduced_by=Attribution(
            commit="1234567890abcdef1234567890abcdef12345678",
            date="2026-10-01",
            author="<script>alert(1)</script> @octocat",
            summary="Fix @octocat's bug (#1), see https://github.com/o/r/issues/2 and o/r#4 ```",
            pr=1,
        ),
        history=tuple(
            Change(
                commit=f"{n:040x}",
                state="broken",
                pr=n,
                released_in=f"v1.{n}` <!-- watch:note=x -->",
                date="2026-10-01",
                summary=f"@octocat #{n} </details> <!-- watch:seen=0 --> ```",
            )
            for n in range(1, 80)
        ),
        claims=(
            ClaimResult(
                capture="v",
                says="says | with @someone and #3",
                test="equals",
                expected="None",
                actual="a|b`c``d\n<!-- watch:x -->",
                holds=False,
            ),
        ),
    )
    return [broken, result(Verdict.CHANGED, id="second", diff="\n".join(["+y" * 2000] * 50))]


def test_hostile_upstream_text_gives_a_safe_readable_body() -> None:
    results = hostile_result()

    body = render.body(note(), results, markers.news_keys(results))

    assert len(body) < render.MAX_BODY
    body.encode("utf-8")  # no lone surrogates left
    assert "\x00" not in body and "\u202e" not in body and "<U+202E>" in body
    assert markers.has_marker(body, markers.note_marker(note().id))
    assert [line for line in body.splitlines() if line.startswith("<!--")] == body.splitlines()[:2]
    assert "200,000 characters" not in body and "more characters cut" in body
    assert "Diff cut" in body or "x" * 600 not in body
    assert "@org/team please review" in body  # still readable, inside the code block
    assert "History: 79 commits changed it" in body and "29 more: `watch log" in body
    assert_inert(body)


def test_a_later_change_of_a_stale_item_is_news_and_history_alone_is_not() -> None:
    """Keys of items changed once read as before history existed (no comment on upgrade);
    a commit that changes an already-changed item again is news for a closed issue."""
    once = result(Verdict.CHANGED)
    intro = once.introduced_by
    assert intro is not None
    first = Change(commit=intro.commit, state="changed", pr=intro.pr)
    again = Change(commit="f" * 40, state="changed", pr=2511)

    with_history = once.model_copy(update={"history": (first,)})
    changed_again = once.model_copy(update={"history": (first, again)})

    assert markers.news_key(with_history) == markers.news_key(once)
    assert markers.news_key(changed_again) != markers.news_key(once)
    comment = render.news_comment(
        [changed_again], markers.news_keys([changed_again]), reopened=True
    )
    assert "changed again by [`ffffffffff`]" in comment and "/pull/2511)" in comment
    assert "released in `rust-v0.163.0`" in comment

    unreleased = changed_again.model_copy(update={"released_in": None})
    comment = render.news_comment([unreleased], markers.news_keys([unreleased]), reopened=True)
    assert ", not in a release yet" in comment and "released in not" not in comment


def test_a_note_with_many_huge_items_stays_under_the_limit() -> None:
    big = "\n".join(f"+line {n} " + "z" * 400 for n in range(400))
    results = [result(Verdict.CHANGED, id=f"item-{n}" + "-x" * 100, diff=big) for n in range(400)]

    body = render.body(note(), results, markers.news_keys(results))

    assert len(body) < render.MAX_BODY
    assert "more items not shown" in body
    assert_inert(body)


CASES = [
    ("fence", "a ``` b", "````\na ``` b\n````"),
    ("fence", "`" * 9, "`" * 10 + "\n" + "`" * 9 + "\n" + "`" * 10),
    ("code", "a`b", "``a`b``"),
    ("code", "`edge`", "`` `edge` ``"),
    ("code", "", "(empty)"),
    ("cell", "a|b", "`a\\|b`"),
    ("text", "ping @org/team", "ping `@org/team`"),
    ("text", "see #12 and o/r#3", "see `#12` and `o/r#3`"),
    ("text", "<!-- x --> <b>", "\\<\\!-- x --\\> \\<b\\>"),
    ("text", "[a](http://e)", "\\[a\\](`http://e`)"),
    ("text", "line\nbreak", "line break"),
    ("text", "update it (`watch fix`)", "update it (`watch fix`)"),  # a code span, not \\`
    ("text", "a lone ` tick", "a lone \\` tick"),
    ("text", "`@org/team` in a span", "`@org/team` in a span"),
    ("text", "``", "\\`\\`"),
]


@pytest.mark.parametrize(("kind", "given", "expected"), CASES)
def test_markdown_helpers(kind: str, given: str, expected: str) -> None:
    functions = {
        "fence": md.fence,
        "code": md.code,
        "cell": lambda t: md.code(t, cell=True),
        "text": md.text,
    }
    assert functions[kind](given) == expected


@pytest.mark.parametrize(
    "text",
    [
        "fn main() {}\n",
        'let s = "café 日本";',
        "a\u200bb",
        "bell\x07",
        "\ud800 lone",
        "tab\tok\r\n",
    ],
)
def test_a_text_is_clean_when_cleaning_leaves_it_as_it_is(text: str) -> None:
    assert md.is_clean(text) == (md.clean(text) == text)


def test_marker_cannot_be_closed_by_a_note_id() -> None:
    assert markers.note_marker("a-->b <x>") == "<!-- watch:note=a-%2D%3Eb%20%3Cx%3E -->"
    assert not markers.has_marker("text\n<!-- watch:note=a -->", "<!-- watch:note=a -->")


def test_items_without_code_location_show_no_permalinks() -> None:
    issue = result(
        Verdict.CHANGED, id="n:openai/codex#5", kind="issue", baseline=None, current=None,
        introduced_by=None, released_in=None, diff=None, message="issue #5 was closed as completed",
    )  # fmt: skip

    body = render.body(note(), [issue], markers.news_keys([issue]))

    assert "Baseline:" not in body and "HEAD:" not in body and "Released in" not in body
    assert "issue `#5` was closed as completed" in body
    assert "- Upstream thread: [`openai/codex#5`](https://github.com/openai/codex/issues/5)" in body
    assert_inert(body)


def test_a_merged_pull_request_shows_its_release() -> None:
    pull = result(
        Verdict.CHANGED, id="n:openai/codex#9", kind="issue", baseline=None, current=None,
        introduced_by=None, released_in="rust-v0.9.0", diff=None,
        message="openai/codex#9 was merged on 2026-11-01: re-verify the note",
    )  # fmt: skip

    body = render.body(note(), [pull], markers.news_keys([pull]))

    assert "- Released in: `rust-v0.9.0`" in body
    assert "`openai/codex#9` was merged on 2026-11-01" in body


@pytest.mark.parametrize(
    "payload",
    [b"[" * 100_000 + b"]" * 100_000, b'{"a": ' * 50_000 + b"1" + b"}" * 50_000, b"\xff{", b"[]"],
)
def test_dashboard_data_that_is_not_an_object_reads_as_none(payload: bytes) -> None:
    """A dashboard body edited by hand, or planted, is rebuilt, never a crash."""
    import base64

    body = f"# dashboard\n<!-- watch:data={base64.b64encode(payload).decode()} -->\n"
    assert markers.parse_data(body) == {}
