"""A mirror's pack files: whether they are whole (`health`), and rolling the small ones
up into one (`roll_up`), since every object lookup pays for each pack."""

from __future__ import annotations

import contextlib
import logging
import re
from pathlib import Path

from watcher.errors import UpstreamError
from watcher.mirror.git import run, run_bytes

log = logging.getLogger("watch")

# Every fetch leaves a pack and every object lookup pays for each pack: past this many,
# `Mirror.tidy` rolls the small ones into one.
PACK_LIMIT = 4
MID_RUN_PACKS = 16  # a run that fetched this many packs rolls them up before going on


def pack_files(path: Path) -> list[Path]:
    """The pack files of the mirror at `path`."""
    return sorted((path / "objects" / "pack").glob("pack-*.pack"))


def smallest(packs: list[Path]) -> list[Path]:
    """The packs to roll into one for PACK_LIMIT to be left: the smallest (none when
    there are no more than PACK_LIMIT)."""
    if len(packs) <= PACK_LIMIT:
        return []
    return sorted(packs, key=lambda p: p.stat().st_size)[: len(packs) - PACK_LIMIT + 1]


def roll_up(path: Path, small: list[Path]) -> bool:
    """Replace the packs `small` of the mirror at `path` by one; whether it did.

    `git repack -a` would rewrite the whole clone each time, and `--geometric` and
    the multi-pack-index repack (git 2.39) drop the promisor mark that tells git the
    blobs these trees name are fetched on demand, not lost. So the small packs'
    objects are packed anew with `pack-objects`, the new pack is marked as a
    promisor pack like the ones it replaces, and only then are those removed. The
    cost is that of the small packs: the big ones (the clone's, a cold run's blob
    fetches) are left alone. Rolling up all but the largest rewrote a cold run's
    clone pack too: 0.7 s at the end of a cold run of 1,000 codex citations.
    """
    try:
        name = _pack(path, small)
    except UpstreamError as exc:  # the old packs are all still there: nothing is lost
        log.warning("%s: packs not rolled up (%s); the next run tries again", path, exc)
        return False
    (path / "objects" / "pack" / f"pack-{name}.promisor").touch()
    for pack in small:
        if pack.stem != f"pack-{name}":
            for suffix in (".promisor", ".bitmap", ".rev", ".keep", ".pack", ".idx"):
                pack.with_suffix(suffix).unlink(missing_ok=True)
    return True


def _pack(path: Path, packs: list[Path]) -> str:
    """Write one pack of every object in `packs`; its name.

    The deltas the fetches brought are kept and no new ones are searched for
    (`--window=0`): on a cold run of 1,000 codex citations the search cost 5 s of CPU
    to make the pack a tenth smaller.
    """
    oids: set[str] = set()
    for pack in packs:
        index = pack.with_suffix(".idx").read_bytes()
        oids.update(line.split()[1] for line in run_bytes(path, "show-index", index))
    objects = "".join(oid + "\n" for oid in sorted(oids))
    return run(
        path, "pack-objects", "--quiet", "--window=0", "objects/pack/pack", stdin=objects
    ).strip()


def health(path: Path) -> str | None:
    """What is wrong with the mirror at `path` (a half-made folder, a damaged pack), or None.

    Each pack is checked against its own SHA-1 trailer once: what was verified is
    remembered by name, size and modification time in `watch-verified`, so a warm run
    reads no pack, and a pack changed on disk is read again.
    """
    if not path.is_dir() or path.is_symlink():
        return "a file where the mirror's folder belongs"
    for name in ("HEAD", "config", "objects", "refs"):
        if not (path / name).exists():
            return f"{name} is missing"
    if not config_readable(path / "config"):
        return "its config is not one git can read"
    memo_file = path / "watch-verified"
    try:
        memo = set(memo_file.read_text(encoding="utf-8").split("\n"))
    except (OSError, UnicodeDecodeError):
        memo = set()
    seen = []
    for pack in sorted((path / "objects" / "pack").glob("*.pack")):
        stat = pack.stat()
        key = f"{pack.name} {stat.st_size} {stat.st_mtime_ns}"
        seen.append(key)
        if key in memo:
            continue
        if not pack.with_suffix(".idx").is_file():
            return f"{pack.name} has no index"
        if not _checksum_ok(pack) or not _checksum_ok(pack.with_suffix(".idx")):
            return f"{pack.name} fails its checksum"
    if set(seen) != memo:
        with contextlib.suppress(OSError):
            memo_file.write_text("\n".join(seen), encoding="utf-8")
    return None


# A line of a git config file as git writes it: a section header, `key = value`, a
# comment or a blank line (a value may run on past a trailing backslash).
_CONFIG_LINE = re.compile(rb"^\s*(?:\[[^\]\n]+\]|[A-Za-z][A-Za-z0-9-]*\s*(?:=.*)?|[#;].*|)\s*$")


def config_readable(file: Path) -> bool:
    """Whether git can read the mirror's config. Told from its lines without a process on
    every run; only a config that does not look like one git wrote is asked of git (a
    hand edit git accepts is kept)."""
    try:
        raw = file.read_bytes()
    except OSError:
        return False
    lines = raw.replace(b"\\\n", b" ").split(b"\n")
    if b"\0" not in raw and all(_CONFIG_LINE.match(line) for line in lines):
        return True
    try:
        run(None, "config", "--file", str(file), "--list")
    except UpstreamError:
        return False
    return True


def _checksum_ok(file: Path) -> bool:
    """A pack or pack index ends with the SHA-1 of everything before it."""
    import hashlib

    digest = hashlib.sha1(usedforsecurity=False)
    size = file.stat().st_size
    if size < 20:
        return False
    with file.open("rb") as handle:
        left = size - 20
        while left:
            chunk = handle.read(min(left, 1 << 20))
            if not chunk:
                return False
            digest.update(chunk)
            left -= len(chunk)
        return digest.digest() == handle.read(20)
