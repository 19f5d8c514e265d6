"""Deciding a comparison through the CLI (issue 41): `plan`, `run coding --until-decided` and
`report --fail-if-worse`, with the `mini` agent answered by the fake LLM server.

The problems are eight copies of the quick calculator's first checkpoint: a verdict needs at
least MIN_CLUSTERS (6) paired problems, and an unanimous change needs 8 to pass the sign test at
a look's level (0.05 / 3), while the bundled folder holds two problems. The good agent writes
the reference calc.py; the agent made worse on purpose writes one that prints -1.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.testing import FakeLLMServer, Script
from tests.helpers import FIXTURES, run_cli
from tests.helpers.mini_runs import FAKE_KEY

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
QUICK = FIXTURES / "runs" / "quick"
GOOD = (QUICK / "solutions" / "checkpoint_1" / "calc.py").read_text()
BAD = "import sys\nprint(-1)\n"


def _script(calc: str) -> Script:
    """mini writes calc.py with bash, then says it is done (the second call sees the first)."""
    write = f"cat > calc.py <<'BENCHWRIGHT_EOF'\n{calc}BENCHWRIGHT_EOF"
    return Script.model_validate({"rules": [
        {"match": ["I will write calc.py now."], "replies": [{"text": "Done: calc.py works."}]},
        {"match": ["calc"], "replies": [{"text": "I will write calc.py now.", "tool_calls": [
            {"name": "bash", "arguments": {"command": write}}]}]}]})


def _problems(root: Path, count: int = 8) -> Path:
    for i in range(1, count + 1):
        folder = root / f"q{i}"
        (folder / "tests").mkdir(parents=True)
        (folder / "config.yaml").write_text(
            f"name: q{i}\nentry_file: calc\ntimeout: 10\n"
            "checkpoints:\n  checkpoint_1: {version: 1, order: 1}\n")
        shutil.copy(QUICK / "checkpoint_1.md", folder / "checkpoint_1.md")
        for name in ("conftest.py", "test_checkpoint_1.py"):
            shutil.copy(QUICK / "tests" / name, folder / "tests" / name)
        shutil.copytree(QUICK / "solutions" / "checkpoint_1", folder / "solutions" /
                        "checkpoint_1")
    return root


def _env() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")},
            "OPENAI_API_KEY": FAKE_KEY}


def _mini(problems: Path, out: Path, base_url: str, *more: str) -> list[str]:
    return ["run", "coding", "--agent", "mini", "--model", "fake", "--problems-dir",
            str(problems), "--base-url", f"{base_url}/v1", "--no-metrics", "--out", str(out),
            "-A", "input_price_per_mtok=2", "-A", "output_price_per_mtok=8",
            "-A", "infra_retries=0", "--workers", "2", *more]


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, str]]:
    with FakeLLMServer(_script(GOOD)) as good, FakeLLMServer(_script(BAD)) as bad:
        yield {"good": good.base_url, "bad": bad.base_url}


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory,
          servers: dict[str, str]) -> tuple[Path, Path]:
    """The problems, and a baseline run of the good agent on them."""
    root = tmp_path_factory.mktemp("decide")
    problems = _problems(root / "problems")
    done = run_cli(*_mini(problems, root / "base", servers["good"]), env=_env())
    assert done.returncode == 0, done.stderr[-2000:]
    return problems, root / "base"


def _sequence(run: Path) -> dict[str, object]:
    return json.loads((run / "sequence.json").read_text())


def test_plan_from_assumptions_and_from_the_baseline(setup: tuple[Path, Path]) -> None:
    _problems_dir, base = setup
    assumed = run_cli("plan", "--pass-rate", "45", "--spread", "20", "--difference", "10",
                      "--trials", "3", "--json")
    assert assumed.returncode == 0, assumed.stderr
    row = json.loads(assumed.stdout)["rows"][0]
    assert row["trials"] == 3 and row["problems"] > 50 and row["power"] >= 0.8
    read = run_cli("plan", "--baseline", str(base), "--difference", "-30", "--json")
    assert read.returncode == 0, read.stderr
    plan = json.loads(read.stdout)
    assert plan["available"] == 8 and plan["population"]["pass_rate"] == 1.0
    assert plan["mde"] is not None and str(base) in plan["population"]["source"]
    shown = run_cli("plan", "--baseline", str(base), "--difference", "-30")
    assert "problems needed" in shown.stdout and "the baseline's 8 problems" in shown.stdout
    bad = run_cli("plan", "--difference", "10")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--pass-rate" in bad.stderr


def test_a_worse_agent_is_stopped_early_and_fails_the_gate(
        setup: tuple[Path, Path], servers: dict[str, str], tmp_path: Path) -> None:
    problems, base = setup
    run = tmp_path / "worse"
    done = run_cli(*_mini(problems, run, servers["bad"], "--baseline", str(base),
                          "--until-decided", "--max-rounds", "3"), env=_env())
    assert done.returncode == 0, done.stderr[-2000:]
    seq = _sequence(run)
    assert seq["stopped"] == "difference" and len(seq["looks"]) == 1  # type: ignore[arg-type]
    assert "round 1: -100.0 points" in done.stderr
    report = (run / "report.md").read_text()
    assert "## Stopping when decided" in report and "**difference**" in report
    gate = run_cli("report", str(run), "--baseline", str(base), "--fail-if-worse", "5")
    assert gate.returncode == 1, gate.stderr
    assert "worse by more than 5 points with 95% confidence" in gate.stderr
    assert "Traceback" not in gate.stderr


def test_an_equal_agent_runs_to_the_budget_across_a_kill_and_passes_the_gate(
        setup: tuple[Path, Path], servers: dict[str, str], tmp_path: Path) -> None:
    problems, base = setup
    run = tmp_path / "equal"
    args = _mini(problems, run, servers["good"], "--baseline", str(base), "--until-decided",
                 "--max-rounds", "2")
    first = _killed_after_round_one(args, run)
    resumed = run_cli("run", "coding", "--resume", str(run), env=_env())
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    seq = _sequence(run)
    looks = seq["looks"]
    assert isinstance(looks, list) and [lk["round"] for lk in looks] == [1, 2]
    assert looks[0] == first  # the look before the kill is kept as it was
    assert {lk["alpha_spent"] for lk in looks} == {0.05 / 2}
    assert seq["stopped"] == "trial budget spent"
    assert "trial budget spent" in (run / "report.md").read_text()
    gate = run_cli("report", str(run), "--baseline", str(base), "--fail-if-worse", "5")
    assert gate.returncode == 0, gate.stderr
    assert "gate passed" in gate.stderr


def _killed_after_round_one(args: list[str], run: Path) -> object:
    """Start the sequence, kill -9 its process group once round 1's look is written (round 2
    under way), and return that look."""
    proc = subprocess.Popen([sys.executable, "-m", "benchwright", *args], env=_env(),
                            start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        while proc.poll() is None and not _has_look(run):
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    looks = _sequence(run)["looks"]
    assert isinstance(looks, list) and len(looks) == 1 and _sequence(run)["stopped"] is None
    return looks[0]


def _has_look(run: Path) -> bool:
    try:
        return bool(_sequence(run)["looks"])
    except (OSError, ValueError):
        return False
