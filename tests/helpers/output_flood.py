"""Output amplification, as an attacker would do it: a submission that prints MB to stderr per
call, which the tests echo into every assertion message; `eval checkpoint` measured in-process
(its own peak resident memory and write() bytes, and the size of its --out folder).
Shared by tests/security/test_output_flood.py and bench/output_flood.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.helpers.peak_memory import PROBE_SOURCE
from tests.helpers.problems import CONFTEST

# The harness in-process, reporting its own peak RSS and write() bytes when it exits.
_PROBE = PROBE_SOURCE + """
import atexit, json, os, runpy, sys
def report():
    io = dict(line.split(": ") for line in open("/proc/self/io").read().splitlines())
    with open(os.environ["FLOOD_STATS"], "w") as out:
        json.dump({"peak_rss_mb": peak_rss_mb(),
                   "wchar_mb": int(io["wchar"]) / 2**20}, out)
atexit.register(report)
sys.argv = ["benchwright", *sys.argv[1:]]
runpy.run_module("benchwright", run_name="__main__")
"""


def flood_problem(root: Path, tests: int) -> Path:
    """A problem whose `tests` tests each run the submission and echo its stderr on failure."""
    folder = root / "problems" / "flood"
    (folder / "tests").mkdir(parents=True)
    (folder / "config.yaml").write_text(textwrap.dedent("""\
        name: flood
        entry_file: tool
        timeout: 120
        checkpoints:
          checkpoint_1: {version: 1, order: 1}
    """))
    (folder / "tests" / "conftest.py").write_text(CONFTEST)
    (folder / "tests" / "test_checkpoint_1.py").write_text(textwrap.dedent(f"""\
        import subprocess
        import pytest


        @pytest.mark.parametrize("case", range({tests}))
        def test_case(entrypoint_argv, case):
            done = subprocess.run([*entrypoint_argv, str(case)], capture_output=True, text=True)
            assert done.returncode == 0, done.stderr  # the tests echo stderr: SCBench's do
    """))
    return folder


def flood_workspace(root: Path, name: str, mb: int) -> Path:
    """A submission that writes `mb` MiB to stderr and fails per call (0: a quiet one)."""
    folder = root / name
    folder.mkdir()
    body = (f"import sys\nsys.stderr.write('x' * {mb} * 1024 * 1024)\nsys.exit(1)\n" if mb
            else "import sys\nsys.exit(0)\n")
    (folder / "tool.py").write_text(body)
    return folder


def grade_measured(problem: Path, workspace: Path, out: Path) -> dict[str, float]:
    """Grade and measure; the harness runs with this interpreter, as `python -m benchwright`."""
    stats = out.with_suffix(".stats.json")
    env = {**os.environ, "FLOOD_STATS": str(stats)}
    done = subprocess.run([sys.executable, "-c", _PROBE, "eval", "checkpoint", "--problems-dir",
                           str(problem.parent), "--problem", problem.name, "--checkpoint",
                           "checkpoint_1", "--workspace", str(workspace), "--out", str(out),
                           "--json"], capture_output=True, text=True, env=env, timeout=1800)
    figures: dict[str, float] = json.loads(stats.read_text())
    figures["out_mb"] = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 2**20
    figures["exit"] = done.returncode
    grading = json.loads((out / "grading.json").read_text())
    figures["status"] = grading["status"]
    figures["passed"] = sum(c["passed"] for c in grading["counts"].values())
    figures["cut"] = json.dumps(grading.get("output_cut"))  # type: ignore[assignment]
    return figures


