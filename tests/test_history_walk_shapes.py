"""The attribution walk on shapes of real upstreams that made it judge most versions: a Go
method (its name follows its receiver, not a keyword), Python overloads (several
definitions of one name), and a missing function in a file edited at both ends. Each
commit that did not touch the item is followed, not parsed: pinned by the run's counts
(`watcher.judge.session.Counts`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import Project
from tests.support import check_results
from watcher.gitbuild import Upstream
from watcher.history import candidates
from watcher.locate import anchors, matching
from watcher.parse import diffs, syntax

GO = "mcp/server.go"
PY = "src/app/server.py"


def check(project: Project, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    project.counts.parse.reset()
    project.counts.walk.reset()
    return check_results(project, capsys)


def go_server(limit: int = 3, uses: int = 0, other: str = "Stop") -> str:
    """A Go file: a `Server` type and three methods; `Run` (lines 7-13) is cited. `uses`
    more mentions of `Server` in `Stop`; `other`: the name of the last method."""
    mentions = "".join(f"\n\tvar _ *Server = s // {n}" for n in range(uses))
    return (
        "package mcp\n"
        "\n"
        "type Server struct {\n"
        "\tsessions []int\n"
        "}\n"
        "\n"
        "func (s *Server) Run(ctx int) error {\n"
        f"\tif len(s.sessions) > {limit} {{\n"
        "\t\treturn nil\n"
        "\t}\n"
        "\ts.sessions = append(s.sessions, ctx)\n"
        "\treturn nil\n"
        "}\n"
        "\n"
        "func (s *Server) Close() {\n"
        f"\ts.sessions = nil{mentions}\n"
        "}\n"
        "\n"
        f"func (c *Client) {other}() {{\n"
        "\tc.done = true\n"
        "}\n"
    )


def test_uses_of_a_go_methods_receiver_type_are_followed_and_a_namesake_is_judged(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {GO: go_server()})
    project.note("n", f"{base} {GO}:7-13")
    change = upstream.commit("raise the limit (#2)", {GO: go_server(5)})
    for uses in range(1, 4):  # `Server` written once more in each: `Run` is untouched
        upstream.commit(f"use the server (#{2 + uses})", {GO: go_server(5, uses)})
    namesake = upstream.commit("a client runs too (#6)", {GO: go_server(5, 3, "Run")})

    result = check(project, capsys)[f"n:{GO}:7-13"]

    assert result["verdict"] == "changed"
    assert result["introduced_by"]["commit"] == change
    # Its name is counted where it may name a method (after a receiver's `)`): the
    # commits that wrote `Server` again are followed; a second `Run` is judged.
    assert project.counts.walk.judged_commits == [namesake, change]
    assert project.counts.walk.skipped == 3


def py_server(limit: int = 3, calls: int = 0, overloads: int = 2) -> str:
    """A Python class with `overloads` typed overloads of `tool` and its implementation
    (lines 14-17 when there are two), `calls` more calls of `tool` in `run`."""
    typed = "".join(
        f"    @overload\n    def tool(self, fn: T{n}) -> T{n}: ...\n\n" for n in range(overloads)
    )
    more = "".join(f"\n        self.tool(step_{n})" for n in range(calls))
    return (
        "from typing import overload\n"
        "\n"
        "\n"
        "class App:\n"
        "    def __init__(self):\n"
        "        self.tools = []\n"
        "\n"
        f"{typed}"
        "    def tool(self, fn=None, name=None):\n"
        f"        if len(self.tools) > {limit}:\n"
        "            raise ValueError(name)\n"
        "        self.tools.append(fn)\n"
        "\n"
        "    def run(self):\n"
        f"        return self.tools{more}\n"
    )


def test_uses_of_an_overloaded_name_are_followed_and_a_new_overload_is_judged(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {PY: py_server()})
    assert py_server().splitlines()[13].startswith("    def tool(self, fn=None")
    project.note("n", f"{base} {PY}:14-17")
    change = upstream.commit("raise the limit (#2)", {PY: py_server(5)})
    for calls in range(1, 4):  # `tool` called once more in each: the method is untouched
        upstream.commit(f"call it (#{2 + calls})", {PY: py_server(5, calls)})
    third = upstream.commit("one more overload (#6)", {PY: py_server(5, 3, 3)})

    result = check(project, capsys)[f"n:{PY}:14-17"]

    assert result["verdict"] == "changed"
    assert result["introduced_by"]["commit"] == change
    # The three definitions of `tool` share their class: its line and the places that
    # may define `tool` are the guards, not every `tool` in the file.
    assert project.counts.walk.judged_commits == [third, change]
    assert project.counts.walk.skipped == 3


def handlers(tuned: int = 0, dropped: bool = False, helper: bool = False) -> str:
    """Forty Python functions; `handle_20` (lines 141-146) is cited. `tuned`: the first
    and last functions' constant; `dropped`: without `handle_20`; `helper`: a function
    the baseline did not have, in the middle of the file."""
    parts = []
    for n in range(40):
        value = tuned if n in (0, 39) else n
        if n == 20 and dropped:
            continue
        parts.append(
            f"def handle_{n:02d}(request, context):\n"
            f"    payload = request.payload\n"
            f"    if payload.kind == 'step_{n}':\n"
            f"        return context.reply(payload, {value})\n"
            f"    context.log('skipped', payload)\n"
            f"    return None\n"
            "\n"
        )
        if n == 21 and helper:
            parts.append("def handle_later(event):\n    return event.name\n\n")
    return "".join(parts)


def test_a_missing_function_in_a_file_edited_at_both_ends_is_not_judged(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {PY: handlers()})
    assert handlers().splitlines()[140] == "def handle_20(request, context):"
    project.note("n", f"{base} {PY}:141-146")
    drop = upstream.commit("drop handle_20 (#2)", {PY: handlers(0, True, True)})
    for tuned in range(1, 6):  # each edits the file's first and last function
        upstream.commit(f"tune both ends (#{2 + tuned})", {PY: handlers(tuned, True, True)})

    result = check(project, capsys)[f"n:{PY}:141-146"]

    assert result["verdict"] == "missing"
    assert result["introduced_by"]["commit"] == drop
    # A definition of a name the baseline did not have (`handle_later`, which a rename
    # could have made of it) lies between the two edits, far from both: neither can
    # have made it like the item. Searched from the first edit to the last, it was.
    assert project.counts.walk.judged_commits == [drop]
    assert project.counts.walk.quiet == 5


def classes(first: str = "Reader", limit: int = 3) -> str:
    """Two Python classes with a `run` each, much alike; the first's is cited (lines 2-6)."""
    return (
        f"class {first}:\n"
        "    def run(self, items):\n"
        "        found = [item for item in items if item.ready]\n"
        f"        if len(found) > {limit}:\n"
        "            raise OverflowError(len(found))\n"
        "        return found\n"
        "\n"
        "\n"
        "class Writer:\n"
        "    def run(self, items):\n"
        "        found = [item for item in items if item.done]\n"
        "        if len(found) > 9:\n"
        "            raise OverflowError(len(found))\n"
        "        return found\n"
    )


def test_a_namesake_is_compared_with_the_citation_once_however_many_versions_are_judged(
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its class renamed, the cited method is found by its name in another scope
    (`matching._moved`), where a namesake the baseline had (`Writer.run`) is weighed
    against it: how much of itself it kept, and of the citation. Each version of the
    method's edits is judged, and the namesake is the same in all of them."""
    base = upstream.commit("base (#1)", {PY: classes()})
    project.note("n", f"{base} {PY}:2-6")
    upstream.commit("rename the reader (#2)", {PY: classes("Loader")})
    edits = [upstream.commit(f"limit {n} (#{n})", {PY: classes("Loader", n)}) for n in (4, 5, 6)]
    compared: list[int] = []
    kept = matching.kept
    monkeypatch.setattr(matching, "kept", lambda a, b: compared.append(1) or kept(a, b))

    result = check(project, capsys)[f"n:{PY}:2-6"]

    assert result["verdict"] == "changed"
    assert result["introduced_by"]["commit"] == edits[0]
    assert len(project.counts.walk.judged_commits) >= 3
    assert len(compared) == 2  # once with the citation's tokens, once with its own


def services(kept: bool = True, other: int = 0, similar: bool = False) -> str:
    """Python classes with a `run` each; `Cache.run` (lines 2-6) is cited; `kept`: with
    it; `other`: a constant of `Queue.run`, far below; `similar`: `Queue.run` rewritten
    into the cited one's likeness but for its last line, whose words are its rarest."""
    shared = (
        "    def run(self, size):\n"
        "        self.size = size\n"
        "        self.used = size\n"
        "        self.slots = size\n"
    )
    cited = shared + "        self.journal = Journal(size, 7)\n"
    queue = (
        shared
        if similar
        else f"    def run(self, size):\n        return len(self.pending) + {other}\n"
    )
    filler = "".join(
        f"\n    def step_{n}(self):\n        return self.size + self.used + self.slots + {n}\n"
        for n in range(40)
    )
    cache = f"class Cache:\n{cited if kept else '    size = 3'}\n"
    return f"{cache}\n\nclass Queue:\n{queue}{filler}"


def _tune_step(text: str, n: int) -> str:
    return text.replace(f"slots + {10 + n}\n", f"slots + {100 + n}\n")


def _add_method(text: str, n: int) -> str:
    return text + f"\n    def extra_{n}(self):\n        return self.size * {n}\n"


@pytest.mark.parametrize(
    ("dropped", "edit"),
    [
        (services(kept=False), _tune_step),
        (services(kept=False).replace("class Cache:\n    size = 3\n", ""), _add_method),
    ],
    ids=["edits far from them", "methods added elsewhere, its class gone"],
)
def test_a_missing_method_whose_name_other_classes_define_is_judged_only_near_them(
    project: Project,
    upstream: Upstream,
    capsys: pytest.CaptureFixture[str],
    dropped: str,
    edit: Callable[[str, int], str],
) -> None:
    """Every version holds a `run`, which `locate` weighs for the missing one: told from
    the bytes, any could be it. Known from the version judged, the places of the
    definitions it could be found in are carried through the commits that edit far from
    them (the filler's constants), or, its class gone, add a method whole elsewhere, and
    a commit that edits one of them is judged."""
    base = upstream.commit("base (#1)", {PY: services()})
    project.note("n", f"{base} {PY}:2-6")
    drop = upstream.commit("drop the cache's constructor (#2)", {PY: dropped})
    for n in range(3):
        dropped = edit(dropped, n)
        upstream.commit(f"edit {n} (#{3 + n})", {PY: dropped})
    near = upstream.commit(
        "tune the queue (#6)", {PY: dropped.replace("pending) + 0", "pending) + 1")}
    )

    result = check(project, capsys)[f"n:{PY}:2-6"]

    assert result["verdict"] == "missing"
    assert result["introduced_by"]["commit"] == drop
    assert project.counts.walk.judged_commits == [near, drop]
    assert project.counts.walk.quiet == 3


def test_a_namesake_rewritten_into_the_missing_methods_likeness_is_judged(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    base = upstream.commit("base (#1)", {PY: services()})
    project.note("n", f"{base} {PY}:2-6")
    drop = upstream.commit("drop the cache's constructor (#2)", {PY: services(kept=False)})
    upstream.commit(
        "tune step 10 (#3)", {PY: services(kept=False).replace("slots + 10\n", "slots + 99\n")}
    )
    alike = upstream.commit("the queue sizes (#4)", {PY: services(kept=False, similar=True)})
    again = upstream.commit("the queue, as it was (#5)", {PY: services(kept=False)})
    upstream.commit(
        "tune step 11 (#6)", {PY: services(kept=False).replace("slots + 11\n", "slots + 98\n")}
    )

    result = check(project, capsys)[f"n:{PY}:2-6"]

    assert result["verdict"] == "missing"
    assert result["introduced_by"]["commit"] == again
    assert [c["commit"] for c in result["history"]] == [drop, alike, again]


def test_the_places_a_missing_item_could_be_found_in_are_carried_only_past_other_code() -> None:
    """`candidates.carried` on two versions' bytes: a stretch far from every place shifts
    them; one inside a place, at its edge, in the blank lines a parse may give it, or
    writing a definition's line anywhere, leaves them untold."""
    newer = services(kept=False).encode()
    anchor = anchors.anchor(syntax.parse("b", "python", lambda: services().encode()), PY, 2, 6)
    known = candidates.extents(anchor, syntax.parse("n", "python", lambda: newer))
    assert known is not None and len(known.places) == 1  # Queue.run: a namesake by its name
    (start, end), run = known.places[0], newer.index(b"    def run")
    assert (start, newer[end:].startswith(b"    def step_0")) == (run, True)

    def carried(older: bytes) -> tuple[tuple[int, int], ...] | None:
        stretches = diffs.differing(older, newer, 0, len(older), 0, len(newer))
        found = candidates.carried(known, stretches, newer, older)
        return None if found is None else found.places

    far = newer.replace(b"slots + 30\n", b"slots + 31\n")
    above = newer.replace(b"size = 3\n", b"size = 30\n")
    assert carried(far) == known.places
    assert carried(above) == ((start + 1, end + 1),)
    assert carried(newer.replace(b"pending) + 0", b"pending) + 1")) is None
    assert carried(newer.replace(b"+ 0\n\n", b"+ 0\n\n        self.size = 0\n")) is None
    written = newer.replace(b"    def step_30(self)", b"    def run_later(self)")
    assert carried(written) is None


def test_definitions_written_where_the_missing_one_cannot_be_are_carried_past() -> None:
    """With the missing method's class gone, a method added or removed whole elsewhere,
    or a signature edited, changes no place it could be found in; one of its name, or a
    header whose body runs on past the stretch (a method renamed), may."""
    newer = services(kept=False).replace("class Cache:\n    size = 3\n", "").encode()
    anchor = anchors.anchor(syntax.parse("b", "python", lambda: services().encode()), PY, 2, 6)
    known = candidates.extents(anchor, syntax.parse("n", "python", lambda: newer))
    assert known is not None and known.names == ("Cache", "run")

    def carried(older: bytes) -> bool:
        stretches = diffs.differing(older, newer, 0, len(older), 0, len(newer))
        return candidates.carried(known, stretches, newer, older) is not None

    step = b"\n    def step_30(self):\n        return self.size + self.used + self.slots + 30\n"
    assert step in newer
    assert carried(newer.replace(step, b""))  # removed whole
    assert carried(newer.replace(step, step + step.replace(b"step_30", b"step_99")))  # added
    assert carried(newer.replace(b"def step_30(self)", b"def step_30(self, n)"))  # signature
    assert not carried(newer.replace(b"def step_30(self)", b"def other(self)"))  # renamed
    assert not carried(newer.replace(step, step + step.replace(b"step_30", b"run")))
    with_class = newer + b"\n\nclass Cache:\n    size = 3\n"
    assert not carried(with_class.replace(step, b""))  # its class is there: in its scope
