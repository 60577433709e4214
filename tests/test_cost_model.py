"""The cost model (issue 5), pinned by counters rather than timings.

- a warm run with the upstream unchanged parses nothing and makes one fetch (the refs);
- after one upstream commit to one cited file, only that file's versions are parsed;
- the blobs a partial mirror lacks come in one batch, however many files are cited;
- a long attribution walk parses each distinct blob at most once and stops at the answer.

Network round trips are counted from git's own trace (GIT_TRACE2_EVENT): every fetch,
whatever its transport, runs exactly one `upload-pack` on the serving side.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Project
from watcher import syntax
from watcher.check import CheckOptions, run_check
from watcher.config import Upstream as UpstreamConfig
from watcher.config import load
from watcher.gitbuild import Upstream
from watcher.mirrors import Mirror
from watcher.models import Report, Verdict


class Trace:
    """Counts `upload-pack` processes (= fetch round trips) from a fresh trace folder."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.monkeypatch = monkeypatch
        self.runs = 0

    def start(self) -> None:
        self.runs += 1
        self.folder = self.root / f"trace-{self.runs}"
        self.folder.mkdir(parents=True)
        self.monkeypatch.setenv("GIT_TRACE2_EVENT", str(self.folder))

    def upload_packs(self) -> int:
        count = 0
        for file in self.folder.iterdir():
            for line in file.read_text(encoding="utf-8").splitlines():
                event = json.loads(line)
                count += event.get("event") == "cmd_name" and event.get("name") == "upload-pack"
        return count


@pytest.fixture
def trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Trace:
    return Trace(tmp_path / "trace", monkeypatch)


def fn(name: str, value: int) -> str:
    return f"pub fn {name}() -> u32 {{\n    let value = {value};\n    value + 1\n}}\n"


def module(names: list[str], salt: int = 0, **values: int) -> str:
    """A Rust file of small functions, 4 lines and a blank line each; `salt` makes it unique."""
    return "\n".join(fn(n, values.get(n, salt + i)) for i, n in enumerate(names))


def span(names: list[str], name: str) -> str:
    start = 1 + 5 * names.index(name)
    return f"{start}-{start + 3}"


def publish(upstream: Upstream) -> None:
    """Pack the upstream with a reachability bitmap, as GitHub's servers do.

    Bitmaps change what a server leaves out of a pack (everything reachable from what the
    client says it has), so a blob fetch must be right against them too.
    """
    upstream.git("repack", "-a", "-d", "-q", "--write-bitmap-index")


def check(project: Project) -> Report:
    return run_check(load(project.config_file), CheckOptions(no_issues=True))


def verdicts(report: Report) -> dict[str, tuple[Verdict, str | None]]:
    return {
        r.id: (r.verdict, r.introduced_by.commit if r.introduced_by else None)
        for r in report.results
    }


NAMES = ["alpha", "beta", "gamma"]
FILES = [f"src/m{i}.rs" for i in range(4)]


def cite_everything(project: Project, upstream: Upstream, files: list[str]) -> str:
    """Commit `files` of NAMES functions; one note cites every function. Returns the base."""
    base = upstream.commit(
        "base (#1)", {p: module(NAMES, salt=10 * i) for i, p in enumerate(files)}
    )
    sources = [f"{base} {path}:{span(NAMES, n)}" for path in files for n in NAMES]
    project.note("everything", *sources)
    return base


def test_warm_run_parses_nothing_and_only_fetches_refs(
    project: Project, upstream: Upstream, trace: Trace
) -> None:
    cite_everything(project, upstream, FILES)
    changed = upstream.commit("change beta (#2)", {FILES[1]: module(NAMES, salt=10, beta=99)})
    upstream.commit("docs (#3)", {"README.md": "hello\n"})
    publish(upstream)
    cold = check(project)
    assert cold.summary.fresh == 11 and cold.summary.changed == 1
    assert verdicts(cold)[f"everything:{FILES[1]}:{span(NAMES, 'beta')}"] == (
        Verdict.CHANGED,
        changed,
    )

    syntax.STATS.reset()
    trace.start()
    warm = check(project)

    assert syntax.STATS.parses == 0
    assert trace.upload_packs() == 1  # the refs; no blob is fetched again
    assert verdicts(warm) == verdicts(cold)


def test_one_changed_file_parses_only_its_own_versions(
    project: Project, upstream: Upstream, trace: Trace
) -> None:
    base = cite_everything(project, upstream, FILES)
    publish(upstream)
    assert check(project).summary.fresh == 12
    touched = FILES[2]
    upstream.commit("change gamma (#4)", {touched: module(NAMES, salt=20, gamma=7)})
    publish(upstream)

    syntax.STATS.reset()
    trace.start()
    report = check(project)

    versions = {upstream.git("rev-parse", f"{rev}:{touched}") for rev in (base, "HEAD")}
    parsed = syntax.STATS.parsed_blobs
    assert upstream.git("rev-parse", f"HEAD:{touched}") in parsed
    assert set(parsed) <= versions  # nothing of the three untouched files
    assert len(parsed) == len(set(parsed))
    assert trace.upload_packs() == 2  # the refs, then the one new blob
    assert report.summary.changed == 1 and report.summary.fresh == 11


@pytest.mark.parametrize("count", [2, 12])
def test_missing_blobs_come_in_one_batch(
    project: Project, upstream: Upstream, trace: Trace, count: int
) -> None:
    files = [f"src/f{i}.rs" for i in range(count)]
    cite_everything(project, upstream, files)
    upstream.commit("uncited file (#5)", {"src/other.rs": module(["delta"])})
    publish(upstream)

    trace.start()
    report = check(project)

    assert report.summary.fresh == 3 * count
    assert trace.upload_packs() == 2  # clone of commits and trees, then one batch of blobs
    mirror = Mirror(load(project.config_file).upstream[0], load(project.config_file).cache)
    present = mirror.repo.git.cat_file("--batch-all-objects", "--batch-check=%(objecttype)")
    assert present.split().count("blob") == count  # the cited blobs, and no other


def test_mirror_counts_one_round_trip_per_batch_and_reads_without_fetching(
    upstream: Upstream, tmp_path: Path, trace: Trace
) -> None:
    files = {f"src/f{i}.rs": module(NAMES, salt=10 * i) for i in range(20)}
    head = upstream.commit("base (#1)", files)
    publish(upstream)
    mirror = Mirror(UpstreamConfig(repo="acme/client", url=upstream.url), tmp_path / "cache")
    trace.start()
    mirror.sync()
    blobs = [b for p in files if (b := mirror.blob_id(head, p)) is not None]

    mirror.prefetch(blobs[:12])
    mirror.prefetch(blobs)  # only the 8 still missing
    mirror.prefetch(blobs)  # nothing missing: no round trip
    texts = [mirror.read(b) for b in blobs]

    assert (mirror.round_trips, mirror.blobs_fetched) == (3, 20)  # sync + two batches
    assert trace.upload_packs() == 3  # reading went to the local objects only
    assert {t.decode() for t in texts} == set(files.values())


TURN = "src/turn.rs"
WALK_RULE = """\
[[rule]]
id = "legacy-cursor"
note = "walk"
path = "src/turn.rs"
inside = '''(function_item name: (identifier) @n (#eq? @n "run_turn")) @scope'''
query = '''
(match_arm pattern: (match_pattern) @p (#eq? @p "Mode::Legacy") value: (_) @legacy) @target
'''
[[rule.claims]]
capture = "legacy"
equals = "None"
"""


def turn(budget: int, flipped: bool) -> str:
    """`run_turn` with a value edited in every commit and a match arm that flips once."""
    legacy = "response.next" if flipped else "None"
    return (
        "pub fn helper() -> u32 {\n    3\n}\n\n"
        "pub fn run_turn(mode: Mode, response: Response) -> Option<u32> {\n"
        f"    let budget = {budget};\n"
        "    let next = match mode {\n"
        f"        Mode::Legacy => {legacy},\n"
        "        Mode::Current => response.next,\n"
        "    };\n"
        "    next.map(|n| n + budget)\n"
        "}\n"
    )


def walk_history(project: Project, upstream: Upstream, budgets: list[int], flip_at: int) -> str:
    """A base, then one commit per budget editing `run_turn`; returns the flip commit."""
    base = upstream.commit("base (#1)", {TURN: turn(-1, flipped=False)})
    project.note("walk", f"{base} {TURN}:1-3")
    project.rules(WALK_RULE)
    flip = ""
    for index, budget in enumerate(budgets):
        sha = upstream.commit(
            f"edit {index} (#{index + 10})", {TURN: turn(budget, index >= flip_at)}
        )
        flip = sha if index == flip_at else flip
    publish(upstream)
    return flip


def test_long_walk_parses_each_distinct_blob_once(project: Project, upstream: Upstream) -> None:
    # 48 edits but only 8 distinct versions of the file: the budget cycles through 0..3.
    flip = walk_history(project, upstream, [i % 4 for i in range(48)], flip_at=30)

    report = check(project)

    assert verdicts(report)["legacy-cursor"] == (Verdict.BROKEN, flip)
    parsed = syntax.STATS.parsed_blobs
    assert len(parsed) == len(set(parsed))
    assert len(parsed) <= 1 + 8  # the base and the distinct versions, each once


def test_long_walk_stops_once_the_answer_is_known(project: Project, upstream: Upstream) -> None:
    # 48 edits, all distinct; the flip is 12 commits before HEAD.
    flip = walk_history(project, upstream, list(range(48)), flip_at=36)

    report = check(project)

    assert verdicts(report)["legacy-cursor"] == (Verdict.BROKEN, flip)
    # The walk back from HEAD needs HEAD, the 12 versions down to the flip's parent, and the
    # base; the 36 older versions are never read: the cost is the distance to the answer.
    assert syntax.STATS.parses <= 14


HEAVY_PROBE = """\
import sys
from watcher.cli import main
code = main(sys.argv[1:])
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"github", "apscheduler"})
print("heavy:", ",".join(heavy) or "none", "exit:", code, file=sys.stderr)
"""


def test_check_without_issues_imports_neither_pygithub_nor_apscheduler(
    project: Project, upstream: Upstream
) -> None:
    cite_everything(project, upstream, FILES[:1])
    project.config(sink="github")  # even with a GitHub sink configured ([issues] is last)
    project.config_file.write_text(project.config_file.read_text() + 'repo = "acme/notes"\n')
    command = [sys.executable, "-c", HEAVY_PROBE, "check", "--no-issues", "--format", "json",
               "--config", str(project.config_file)]  # fmt: skip

    done = subprocess.run(command, capture_output=True, text=True, check=False)

    assert "heavy: none exit: 0" in done.stderr, done.stderr
