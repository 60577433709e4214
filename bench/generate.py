"""Build the benchmark's upstream repository and notes site under one output folder."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from bench import site
from bench.history import Size, import_repo
from bench.site import Cited, Manifest

SEED = 20251202
UPSTREAM = "codex.git"  # served as git://127.0.0.1:PORT/codex.git


def generate(out: Path, size: Size, seed: int = SEED) -> Manifest:
    """Write `out/upstream/codex.git` and `out/site/{notes,rules}`; return the manifest."""
    shutil.rmtree(out, ignore_errors=True)
    repo = out / "upstream" / UPSTREAM
    repo.parent.mkdir(parents=True)
    gen, shas = import_repo(repo, size, seed)
    for key, value in (
        ("uploadpack.allowFilter", "true"),
        ("uploadpack.allowAnySHA1InWant", "true"),
    ):  # as GitHub allows
        _git(repo, "config", key, value)
    # One well-deltified pack, as a long-lived server holds: a fair full-clone baseline.
    _git(repo, "repack", "-a", "-d", "-q")
    citations, stable, one_change = site.choose(gen, size.citations, seed)
    baseline = shas[gen.baseline]
    site.write_notes(out / "site" / "notes", citations, baseline)
    site.write_rules(out / "site" / "rules", stable)
    manifest = Manifest(
        baseline=baseline, first_hot=shas[gen.first_hot], flip=shas[gen.flip],
        head=shas[gen.head], first_parent=gen.first_parent, commits=gen.commits,
        tags=gen.tags, files=len(gen.files_at_baseline), citations=citations,
        hot=citations[0], stable=stable, one_change=one_change,
    )  # fmt: skip
    manifest.save(out / "manifest.json")
    return manifest


def touch_cited(repo: Path, cited: Cited) -> str:
    """Add one upstream commit that edits the body of a cited function; return its id."""
    path = cited.path
    lines = _git(repo, "cat-file", "blob", f"refs/heads/main:{path}").splitlines()
    signature = next(
        i for i in range(cited.start - 1, cited.end) if f"fn {cited.name}(" in lines[i]
    )
    lines.insert(signature + 1, '    tracing::info!("one more upstream change");')
    blob = ("\n".join(lines) + "\n").encode()
    who = "Bench Bot <bench@example.com> 1800000000 +0000"
    message = "fix(bench): one more upstream change (#99999)\n"
    stream = (
        (
            f"commit refs/heads/main\nauthor {who}\ncommitter {who}\n"
            f"data {len(message)}\n{message}"
            f"from refs/heads/main^0\nM 100644 inline {path}\ndata {len(blob)}\n"
        ).encode()
        + blob
        + b"\n"
    )
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=stream, check=True)
    return _git(repo, "rev-parse", "refs/heads/main").strip()


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout
