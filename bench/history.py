"""Write a codex-shaped upstream history with one `git fast-import` stream.

Shape: a few thousand Rust files under `codex-rs/<crate>/src/`, a first-parent history of
thousands of commits (squash commits `... (#N)` and `Merge pull request #N` merges of short
side branches), annotated `rust-vX.Y.Z` release tags, and one hot function that is edited
in every commit of the "hot" phase after the baseline, with a tracked match arm inside it
that flips once, at `flip_at`.
"""

from __future__ import annotations

import random
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from bench import rustgen
from bench.rustgen import RustFile, Writer

EPOCH = 1_743_465_600  # 2025-04-01T00:00:00Z: dates are pinned so that SHAs are stable
AUTHORS = (
    ("Ada Rustacean", "ada@example.com"),
    ("Brook Tokio", "brook@example.com"),
    ("Cyd Serde", "cyd@example.com"),
    ("Dee Clippy", "dee@example.com"),
)


@dataclass(frozen=True)
class Size:
    """How big the generated upstream is."""

    crates: int
    files_per_crate: int
    pre_commits: int  # first-parent commits before the baseline the notes cite
    hot_commits: int  # commits after the baseline, each editing the hot function
    flip_at: int  # the hot commit (1-based) at which the tracked construct flips
    citations: int  # code citations in the notes (plus 2 rules = the tracked items)
    merge_every: int = 8  # about one first-parent commit in N is a merge
    tag_every: int = 150  # first-parent commits between release tags
    items_per_file: tuple[int, int] = (8, 30)
    quiet_share: float = 0.1  # files nobody edits after the baseline
    assets: int = 60  # binary files (screenshots, demo recordings): most of a real repo's bytes
    asset_kb: tuple[int, int] = (30, 400)
    asset_churn: float = 0.03  # share of commits that replace one asset
    lock_packages: int = 900  # entries in codex-rs/Cargo.lock
    lock_churn: float = 0.1  # share of commits that bump a few locked versions


FULL = Size(
    crates=40, files_per_crate=75, pre_commits=400, hot_commits=2000, flip_at=1500, citations=198
)
QUICK = Size(
    crates=8,
    files_per_crate=12,
    pre_commits=40,
    hot_commits=200,
    flip_at=150,
    citations=58,
    assets=6,
    lock_packages=100,
    tag_every=40,
)


@dataclass
class Generated:
    """What the history holds, by fast-import mark (resolved to SHAs after the import)."""

    files_at_baseline: dict[str, RustFile]
    quiet: set[str]
    baseline: int = 0
    first_hot: int = 0
    flip: int = 0
    head: int = 0
    first_parent: int = 0
    commits: int = 0
    tags: list[str] = field(default_factory=list)


class Stream:
    """Writes fast-import commands; tracks marks, the clock and PR numbers."""

    def __init__(self, out: IO[bytes], rng: random.Random) -> None:
        self.out = out
        self.rng = rng
        self.mark = 0
        self.clock = EPOCH
        self.pr = 1000

    def commit(
        self,
        ref: str,
        message: str,
        files: dict[str, bytes],
        parent: int | None = None,
        merge: int | None = None,
    ) -> int:
        """One commit on `ref`; `files` are written inline. Returns its mark."""
        self.mark += 1
        self.clock += self.rng.randrange(600, 7200)
        name, email = self.rng.choice(AUTHORS)
        who = f"{name} <{email}> {self.clock} +0000"
        head = [f"commit {ref}", f"mark :{self.mark}", f"author {who}", f"committer {who}"]
        self._write("\n".join(head) + "\n")
        self._data(message.encode())
        if parent is not None:
            self._write(f"from :{parent}\n")
        if merge is not None:
            self._write(f"merge :{merge}\n")
        for path, blob in sorted(files.items()):
            self._write(f"M 100644 inline {path}\n")
            self._data(blob)
        self._write("\n")
        return self.mark

    def tag(self, name: str, target: int) -> None:
        self._write(
            f"tag {name}\nfrom :{target}\ntagger Release Bot <release@example.com> "
            f"{self.clock} +0000\n"
        )
        self._data(f"Release {name}\n".encode())

    def next_pr(self) -> int:
        self.pr += self.rng.randrange(1, 9)
        return self.pr

    def _data(self, blob: bytes) -> None:
        self._write(f"data {len(blob)}\n")
        self.out.write(blob)
        self.out.write(b"\n")

    def _write(self, text: str) -> None:
        self.out.write(text.encode())


class Upstream:
    """The evolving working state of the generated repository."""

    def __init__(self, size: Size, seed: int, stream: Stream) -> None:
        self.size = size
        self.rng = random.Random(seed)
        self.writer = Writer(self.rng)
        self.stream = stream
        self.files: dict[str, RustFile] = {}
        self.quiet: set[str] = set()
        self.tip = 0
        self.fp = 0
        self.commits = 0
        self.tags: list[str] = []
        self.hot_budget = 1000
        self.lock = rustgen.lock_entries(self.rng, size.lock_packages)
        self.assets = [f"docs/images/screen-{i}.png" for i in range(size.assets)]

    def initial(self) -> None:
        """The first commit: every file, plus the hot file with `run_turn` in it."""
        lo, hi = self.size.items_per_file
        for c in range(self.size.crates):
            crate = rustgen.CRATES[c % len(rustgen.CRATES)] + (
                "" if c < len(rustgen.CRATES) else f"-{c}"
            )
            for f in range(self.size.files_per_crate):
                path = f"codex-rs/{crate}/src/{self.rng.choice(rustgen.NOUNS)}_{f}.rs"
                self.files[path] = self.writer.file(path, self.rng.randrange(lo, hi))
        hot = self.writer.file(rustgen.HOT_PATH, 6)
        hot.items.insert(3, rustgen.hot_item(self.hot_budget, 0, flipped=False))
        self.files[rustgen.HOT_PATH] = hot
        paths = sorted(self.files)
        self.quiet = set(self.rng.sample(paths, int(len(paths) * self.size.quiet_share)))
        self.quiet.discard(rustgen.HOT_PATH)
        blobs = {p: f.render() for p, f in self.files.items()}
        blobs[rustgen.LOCK_PATH] = rustgen.render_lock(self.lock)
        blobs.update((path, self._asset()) for path in self.assets)
        self._main("Initial import of codex-rs", blobs)

    def ordinary(self, after_baseline: bool, hot: int | None = None) -> None:
        """One first-parent commit: random edits, the hot edit if `hot`, maybe a merge."""
        if self.rng.randrange(self.size.merge_every) == 0:
            self._merge(after_baseline)
        changed = self._random_edits(after_baseline, self.rng.randrange(1, 4))
        blobs = {p: self.files[p].render() for p in changed}
        if self.rng.random() < self.size.lock_churn:
            rustgen.bump(self.rng, self.lock)
            blobs[rustgen.LOCK_PATH] = rustgen.render_lock(self.lock)
        if self.assets and self.rng.random() < self.size.asset_churn:
            blobs[self.rng.choice(self.assets)] = self._asset()
        if hot is not None:
            flipped = hot >= self.size.flip_at
            self.hot_budget += self.rng.randrange(1, 50)
            self._set_hot(rustgen.hot_item(self.hot_budget, (hot // 40) % 4, flipped))
            blobs[rustgen.HOT_PATH] = self.files[rustgen.HOT_PATH].render()
        crate = self.rng.choice(rustgen.CRATES)
        verb = self.rng.choice(("fix", "feat", "chore", "refactor", "perf"))
        message = (
            f"{verb}({crate}): {self.rng.choice(rustgen.VERBS)} "
            f"{self.rng.choice(rustgen.NOUNS)} (#{self.stream.next_pr()})\n"
        )
        self._main(message, blobs)

    def _asset(self) -> bytes:
        # incompressible, like the PNG screenshots and recordings of a real repository
        lo, hi = self.size.asset_kb
        return self.rng.randbytes(self.rng.randrange(lo, hi) * 1024)

    def _merge(self, after_baseline: bool) -> None:
        """A side branch of 1-3 commits off main, merged back with a merge commit."""
        side_tip = self.tip
        touched: set[str] = set()
        for _ in range(self.rng.randrange(1, 4)):
            changed = self._random_edits(after_baseline, 1)
            touched |= changed
            blobs = {p: self.files[p].render() for p in changed}
            side_tip = self.stream.commit("refs/heads/bench-side", "wip\n", blobs, parent=side_tip)
            self.commits += 1
        pr = self.stream.next_pr()
        message = f"Merge pull request #{pr} from dev/topic-{pr}\n"
        self._main(message, {p: self.files[p].render() for p in touched}, merge=side_tip)

    def _random_edits(self, after_baseline: bool, count: int) -> set[str]:
        changed = set()
        for _ in range(count):
            path = self.rng.choice(self._editable)
            if after_baseline and path in self.quiet:
                continue
            for _ in range(self.rng.randrange(1, 4)):
                self._edit(self.files[path])
            changed.add(path)
        return changed

    def _edit(self, file: RustFile) -> None:
        """Upstream's usual churn: new functions above or below, small body edits, deletes."""
        kind = self.rng.choices(("insert", "append", "tweak", "delete"), (4, 3, 3, 0.3))[0]
        if kind == "insert":
            file.items.insert(self.rng.randrange(len(file.items) + 1), self.writer.item())
        elif kind == "append":
            file.items.append(self.writer.item())
        elif kind == "tweak" and file.items:
            self.writer.tweak(self.rng.choice(file.items))
        elif kind == "delete" and len(file.items) > 2:
            file.items.pop(self.rng.randrange(len(file.items)))

    def _set_hot(self, item: rustgen.Item) -> None:
        items = self.files[rustgen.HOT_PATH].items
        index = next(i for i, it in enumerate(items) if it.name == rustgen.HOT_FN)
        items[index] = item

    def _main(self, message: str, blobs: dict[str, bytes], merge: int | None = None) -> None:
        parent = self.tip or None
        self.tip = self.stream.commit("refs/heads/main", message, blobs, parent, merge)
        self.commits += 1
        self.fp += 1
        if self.fp % self.size.tag_every == 0:
            name = f"rust-v0.{self.fp // self.size.tag_every}.0"
            self.stream.tag(name, self.tip)
            self.tags.append(name)

    @property
    def _editable(self) -> list[str]:
        # cached: the set of paths never changes after the initial commit
        if not hasattr(self, "_paths"):
            self._paths = sorted(p for p in self.files if p != rustgen.HOT_PATH)
        return self._paths


def write_history(size: Size, seed: int, out: IO[bytes]) -> Generated:
    """Stream the whole history into `out`; return what the notes need to cite it."""
    up = Upstream(size, seed, Stream(out, random.Random(seed + 1)))
    up.initial()
    for _ in range(size.pre_commits):
        up.ordinary(after_baseline=False)
    gen = Generated(files_at_baseline=_snapshot(up.files), quiet=up.quiet, baseline=up.tip)
    for hot in range(1, size.hot_commits + 1):
        up.ordinary(after_baseline=True, hot=hot)
        if hot == 1:
            gen.first_hot = up.tip
        if hot == size.flip_at:
            gen.flip = up.tip
    gen.head, gen.first_parent, gen.commits, gen.tags = up.tip, up.fp, up.commits, up.tags
    return gen


def _snapshot(files: dict[str, RustFile]) -> dict[str, RustFile]:
    return {
        p: RustFile(f.path, list(f.header), [rustgen.Item(i.name, list(i.lines)) for i in f.items])
        for p, f in files.items()
    }


def import_repo(repo: Path, size: Size, seed: int) -> tuple[Generated, dict[int, str]]:
    """Create the bare repository `repo` from a generated stream; marks resolve to SHAs."""
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(repo)], check=True)
    marks = repo / "bench-marks"
    proc = subprocess.Popen(
        ["git", "fast-import", "--quiet", f"--export-marks={marks}"],
        cwd=repo,
        stdin=subprocess.PIPE,
    )
    assert proc.stdin is not None
    with proc.stdin:
        gen = write_history(size, seed, proc.stdin)
    if proc.wait() != 0:
        raise RuntimeError(f"git fast-import failed with status {proc.returncode}")
    shas = {}
    for line in marks.read_text().splitlines():
        mark, sha = line.split()
        shas[int(mark[1:])] = sha
    marks.unlink()
    subprocess.run(["git", "update-ref", "-d", "refs/heads/bench-side"], cwd=repo, check=True)
    return gen, shas
