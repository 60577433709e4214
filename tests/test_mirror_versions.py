"""Release order as projects tag (`watcher.mirror.versions`): semver and PEP 440
pre-releases before their release, `v` prefixes, package-prefixed monorepo tags;
unreadable tags skipped."""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path

import pytest

from tests.conftest import Project
from watcher.gitbuild import Upstream
from watcher.mirror import versions

ORDERS = {
    "semver": ["v1.2.0-alpha.1", "v1.2.0-alpha.2", "v1.2.0-beta.1", "v1.2.0-rc.1",
               "v1.2.0-rc.2", "v1.2.0", "v1.2.1", "v1.10.0"],
    "pep 440": ["v2.0.0.dev1", "v2.0.0a1", "v2.0.0a2", "v2.0.0b1", "v2.0.0rc1", "v2.0.0",
                "v2.0.0.post1", "v2.0.1"],
    "no v": ["0.9.0", "0.9.1", "0.10.0", "1.0"],
    "scoped package": ["@acme/client@1.0.0-beta.0", "@acme/client@1.0.0",
                       "@acme/client@1.1.0"],
    "package==": ["langchain-mcp-adapters==0.0.9", "langchain-mcp-adapters==0.0.10",
                  "langchain-mcp-adapters==0.1.0rc1", "langchain-mcp-adapters==0.1.0"],
    "package-v": ["rust-v0.9.0-alpha.3", "rust-v0.9.0", "rust-v0.10.0", "rust-v0.163.0"],
    "semver only": ["1.0.0-canary.2", "1.0.0-canary.10", "1.0.0-canary.x", "1.0.0"],
    # inspector's fixes of a release, tagged after it: no pre-release of it
    "hotfix": ["0.8.0", "0.8.1-rc.1", "0.8.1", "0.8.1-hotfix", "0.11.0", "0.11.0-amended",
               "0.21.2", "0.21.2-hotfix", "0.21.2-hotfix-2", "2.0.0"],
}  # fmt: skip


@pytest.mark.parametrize("expected", ORDERS.values(), ids=ORDERS.keys())
def test_release_order(expected: list[str]) -> None:
    shuffled = expected[:]
    random.Random(7).shuffle(shuffled)

    assert versions.ordered(shuffled) == expected


def test_unreadable_tags_are_skipped_with_one_debug_line_each(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="watch")
    versions.key.cache_clear()  # another test may have read these tags already

    assert versions.ordered(["nightly", "v1.0.0", "release-2026-01-02"]) == ["v1.0.0"]
    assert versions.ordered(["release-2026-01-02", "v0.9.0", "nightly"]) == ["v0.9.0"]
    assert [r.getMessage() for r in caplog.records] == [
        "release tag nightly: no version in it; skipped",
        "release tag release-2026-01-02: 2026-01-02 is neither PEP 440 nor semver; skipped",
    ]  # asked twice, said once: once per run, not once per item


def test_a_commit_only_unreadable_tags_contain_is_in_no_release(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    lib = "src/lib.py"
    base = upstream.commit("v1", {lib: "def mode():\n    return 1\n"})
    upstream.tag("v1.0.0")
    project.note("n", f"{base} {lib}:1-2")
    upstream.commit("change (#5)", {lib: "def mode():\n    return 2\n"})
    upstream.tag("vnext")  # matches the default release_tags, reads as no version

    _, out, _ = project.run("check", "--format", "json", capsys=capsys)

    (result,) = json.loads(out)["results"]
    assert result["verdict"] == "changed" and result["released_in"] is None


def test_released_in_is_the_first_pep440_pre_release(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    lib = "src/lib.py"
    base = upstream.commit("v1", {lib: "def mode():\n    return 1\n"})
    project.note("n", f"{base} {lib}:1-2")
    upstream.commit("change (#5)", {lib: "def mode():\n    return 2\n"})
    for tag in ("v2.0.0a1", "v2.0.0b1", "v2.0.0rc1", "v2.0.0"):
        upstream.commit(f"release {tag}", {"CHANGES": tag})
        upstream.tag(tag)

    _, out, _ = project.run("check", "--format", "json", capsys=capsys)

    (result,) = json.loads(out)["results"]
    assert result["released_in"] == "v2.0.0a1"  # git's versionsort puts it after v2.0.0


def test_the_one_pass_release_walk_uses_the_same_order(upstream: Upstream, tmp_path: Path) -> None:
    from watcher.config import Upstream as UpstreamConfig
    from watcher.mirror.mirrors import Mirror
    from watcher.mirror.releases import RELEASE_PASS

    commits = [upstream.commit(f"c{i}", {"f.py": f"x = {i}\n"}) for i in range(RELEASE_PASS + 2)]
    for tag in ("v2.0.0", "v2.0.0rc1", "v2.0.0b1", "v2.0.0a1"):  # newest tag name first
        upstream.tag(tag)
    config = UpstreamConfig(repo="acme/client", url=upstream.url, release_tags="v*")
    mirror = Mirror(config, tmp_path / "cache")
    mirror.sync()

    together = mirror.releases("v*", commits)  # more than RELEASE_PASS: one walk
    one_by_one = Mirror(config, tmp_path / "cache")

    assert mirror.release_passes == 1
    assert set(together.values()) == {"v2.0.0a1"}
    assert together == {c: one_by_one.first_release(c, "v*") for c in commits}
