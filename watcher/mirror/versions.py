"""Release order as projects tag: `v1.2.0-rc.1 < v1.2.0`, `2.0.0a1 < 2.0.0b1 < 2.0.0rc1 <
2.0.0`, and monorepo tags with a package prefix (`@scope/pkg@1.2.3`, `pkg-v1.2.3`,
`rust-v0.163.0`, and langchain-ai's pin-like `langchain-mcp-adapters==0.1.11`).

PEP 440 versions (which cover most semver pre-releases too: `-rc.1` is `rc1`) are read
by `packaging`, other semver ones (`1.0.0-canary.3`) by `semver`. A tag neither reads
(`nightly`, `release-2026-01-02`) is no release: it is skipped, with one debug line per
tag in a process, however many commits and items ask.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable

log = logging.getLogger("watch")

# An optional package prefix ending in - @ / _ or ==, an optional v, then the version.
TAG = re.compile(r"^(?:(?P<package>.+?)(?:==|[-@/_]))?[vV]?(?P<version>\d[\w.+-]*)$")

# Part of the key of the first releases a run remembers: bump it whenever the order changes.
ORDER_VERSION = 3  # 2: a hotfix after its release; 3: `pkg==1.2.3` read

BARE = re.compile(r"^[vV]?(?P<version>\d[\w.+-]*)$")

# (release, stage, pre-release, post): stage 0 dev only, 1 pre-release, 2 release
Key = tuple[tuple[int, ...], int, tuple[tuple[int, int | str], ...], int]


@functools.cache  # each tag is read (and a bad one reported) once per process
def key(tag: str) -> tuple[Key, str] | None:
    """A tag's place in release order (its version, then its package), or None."""
    whole = BARE.match(tag)  # `0.21.2-hotfix-2` is a version, not package `0.21.2-hotfix`
    if whole is not None and (version := _version(whole["version"])) is not None:
        return version, ""
    match = TAG.match(tag)
    if match is None:
        log.debug("release tag %s: no version in it; skipped", tag)
        return None
    version = _version(match["version"])
    if version is None:
        log.debug("release tag %s: %s is neither PEP 440 nor semver; skipped",
                  tag, match["version"])  # fmt: skip
        return None
    return version, match["package"] or ""


def _version(text: str) -> Key | None:
    return _pep440(text) or _semver(text)


def ordered(tags: Iterable[str]) -> list[str]:
    """The tags that read as versions, earliest release first; the others are skipped."""
    keyed = [(found, tag) for tag in tags if (found := key(tag)) is not None]
    return [tag for _, tag in sorted(keyed)]


def _pep440(text: str) -> Key | None:
    from packaging.version import InvalidVersion, Version

    try:
        version = Version(text)
    except InvalidVersion:
        return None
    pre: tuple[tuple[int, int | str], ...] = ()
    if version.pre is not None:
        pre = ((1, version.pre[0]), (0, version.pre[1]))
    stage = 2 if not version.is_prerelease else (1 if version.pre else 0)
    if version.dev is not None:
        pre += ((1, "dev"), (0, version.dev))
    return _padded(version.release), stage, pre, version.post or 0


def _semver(text: str) -> Key | None:
    import semver

    try:
        version = semver.Version.parse(text)
    except ValueError:
        return None
    parts = str(version.prerelease or "").split(".") if version.prerelease else []
    release = (version.major, version.minor, version.patch)
    if parts and (post := POST.match(parts[0])):  # `0.8.1-hotfix` comes after `0.8.1`
        return _padded(release), 2, (), 1 + int(post["n"] or 0)
    pre = tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)
    return _padded(release), 1 if pre else 2, pre, 0


# A suffix that projects put after a release, not before it (semver reads any suffix as a
# pre-release): inspector's `0.8.1-hotfix`, `0.11.0-amended`, `0.21.2-hotfix-2`.
POST = re.compile(r"^(?:hotfix|amended|patch|fix|post|security)(?:[-_]?(?P<n>\d+))?$", re.I)


def _padded(release: tuple[int, ...]) -> tuple[int, ...]:
    """1.2 and 1.2.0 are one version."""
    return (*release, *(0,) * (4 - len(release)))[: max(4, len(release))]
