"""A big cited file costs a bounded multiple of its size: above `syntax.TREE_BYTES` it gets
no syntax tree (a tree takes 20-80x its source) and its tokens are its lines. Measured as
the peak resident memory of a `watch check` process (and its git children), reported by a
small launcher's RUSAGE_CHILDREN, with a wide margin; never a time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Project
from watcher.gitbuild import Upstream
from watcher.parse import syntax

LAUNCHER = """\
import resource, subprocess, sys
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stdout.write(proc.stdout)
sys.stderr.write(f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\\n")
sys.exit(proc.returncode)
"""
LINE = "pub const DATA: [u8; 4] = [1, 2, 3, 4];\n"  # generated code: one line, repeated
MB = 2**20


def test_a_file_too_big_for_a_tree_is_tokenized_by_line() -> None:
    source = (LINE * (syntax.TREE_BYTES // len(LINE) + 1)).encode()
    big = syntax.parse("big-blob", "rust", lambda: source)
    small = syntax.parse("small-blob", "rust", lambda: LINE.encode() * 3)

    assert big.tree is None and big.language == syntax.TEXT
    assert big.tokens.texts[:2] == [LINE.strip()] * 2 and big.tokens.start_lines[1] == 2
    assert big.line_texts()[5] == LINE.strip()
    assert small.tree is not None and len(small.tokens.texts) == 3 * 20


def test_a_16_mb_cited_file_stays_within_a_fixed_multiple_of_its_size(
    project: Project, upstream: Upstream, tmp_path: Path
) -> None:
    size = 16 * MB
    lines = [LINE] * (size // len(LINE))
    middle = len(lines) // 2
    lines[middle] = "pub const MARK: u8 = 1;\n"
    base = upstream.commit("generated", {"src/generated.rs": "".join(lines)})
    lines[middle] = "pub const MARK: u8 = 2;\n"
    upstream.commit("one value changed", {"src/generated.rs": "".join(lines)})
    project.note(
        "big", f"{base} src/generated.rs:1-3", f"{base} src/generated.rs:{middle + 1}-{middle + 1}"
    )
    project.config(extra=f"[limits]\nfile_bytes = {size + MB}\n")
    command = [sys.executable, "-m", "watcher", "check", "--config", str(project.config_file)]

    proc = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *command], capture_output=True, text=True, timeout=600
    )

    verdicts = {r["id"]: r["verdict"] for r in json.loads(proc.stdout)["results"]}
    peak_mb = int(proc.stderr.strip().splitlines()[-1]) / 1024
    assert proc.returncode == 1
    assert verdicts == {
        "big:src/generated.rs:1-3": "fresh",
        f"big:src/generated.rs:{middle + 1}-{middle + 1}": "changed",
    }
    # With a tree per version it took 1.5 GB; by line, about 160 MB (Python's own ~60 MB
    # included). The bound is generous: twice the documented 15x, plus the interpreter.
    assert peak_mb < 100 + 2 * 15 * size / MB, f"peak {peak_mb:.0f} MB"


def test_a_rule_on_a_file_too_big_for_a_tree_says_so(
    project: Project, upstream: Upstream, capsys: pytest.CaptureFixture[str]
) -> None:
    big = LINE * (syntax.TREE_BYTES // len(LINE) + 1)
    base = upstream.commit("generated", {"src/generated.rs": big})
    project.note("big", f"{base} src/generated.rs:1-2")
    project.rules(
        """
        [[rule]]
        id = "big-rule"
        note = "big"
        path = "src/generated.rs"
        query = '(const_item) @target'
        """
    )

    code, out, err = project.run("check", "--format", "json", capsys=capsys)

    results = {r["id"]: r for r in json.loads(out)["results"]}
    assert code == 2 and "Traceback" not in err
    assert (results["big-rule"]["verdict"], results["big-rule"]["error"]) == (
        "error",
        "file-too-large",
    )
    assert "guard it with a citation of its lines instead" in results["big-rule"]["message"]
    assert results["big:src/generated.rs:1-2"]["verdict"] == "fresh"
