"""Helpers of the security probes: a tiny problem to attack, and `run coding` through the CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.helpers import FIXTURES, run_cli

QUICK = FIXTURES / "runs" / "quick"
_CALC_1 = (QUICK / "solutions" / "checkpoint_1" / "calc.py").read_text()
SOLVE_1 = f"cat > calc.py <<'PY'\n{_CALC_1}PY\n"
"""Shell lines that write checkpoint 1's reference solution."""


def quick_problem(problems: Path, name: str = "quick", checkpoints: int = 1) -> Path:
    """The fixture problem `quick`, cut to its first `checkpoints` checkpoints, in `problems`."""
    target = problems / name
    shutil.copytree(QUICK, target)
    config = yaml.safe_load((target / "config.yaml").read_text())
    config["name"] = name
    config["checkpoints"] = dict(list(config["checkpoints"].items())[:checkpoints])
    (target / "config.yaml").write_text(yaml.safe_dump(config))
    return target


def run_coding(problems: Path, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`benchwright run coding` on every problem in `problems`, with a JSON summary."""
    return run_cli("run", "coding", "--problems-dir", str(problems), "--out", str(out),
                   "--json", *args)


def run_command_agent(problems: Path, out: Path, command: str,
                      *args: str) -> subprocess.CompletedProcess[str]:
    """A run whose agent is the shell `command`; the run must end normally."""
    proc = run_coding(problems, out, "--agent", "command", "--agent-command", command, *args)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc


def records(out: Path) -> list[dict[str, Any]]:
    """The run's journal records, every problem and trial."""
    lines = (out / "checkpoint_records.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def files_holding(root: Path, needle: bytes) -> list[Path]:
    """Regular files under `root` (links not followed) whose bytes hold `needle`."""
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink() and needle in path.read_bytes():
            found.append(path)
    return found


def tree_state(root: Path) -> dict[str, bytes]:
    """Every file under `root` with its bytes (what an attack must not change)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}
