"""Deciding a comparison through the CLI on the bundled problems (issue 41): `plan`, `run coding
--until-decided`, `report --fail-if-worse` and `eval --repeat`, with the `mini` agent answered by
the fake LLM server.

A verdict needs at least MIN_CLUSTERS (6) paired problems, and an unanimous change needs 7 to
pass the sign test at a look's level (0.05 / 3), while the package bundles two problems: the
problems folder holds seven copies of them (their own statements, tests and samples), cut to
checkpoint 1 to keep the suite fast: six of kv_server (graded in about 3 s) and one of
ledger_cli (about 13 s: each of its tests starts the program in the jail). The good agent writes
each problem's reference solution; the agent made worse on purpose writes a program that prints
-1. For `eval --repeat`, a copy of kv_server gets planted coin tests (os.urandom: the grading
sandbox keeps nothing between gradings), so flaky tests are there to be named.
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
import yaml

from benchwright.coding.problems.examples import example_problem_dir
from benchwright.testing import FakeLLMServer, Script
from tests.helpers import run_cli
from tests.helpers.mini_runs import FAKE_KEY

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
BUNDLED = {"ledger_cli": ("Ledger balances from a CSV file", "ledger.py"),
           "kv_server": ("A JSON key-value server", "kv_server.py")}
COPIES = {"kv_server": 6, "ledger_cli": 1}
BAD = "import sys\nprint(-1)\n"
DONE = "I will write the program now."
COINS = """

@pytest.mark.functionality
@pytest.mark.parametrize("coin", range(16))
def test_planted_coin(coin):
    # 16 coins over 4 gradings: the chance that none changes is 8**-16
    assert __import__("os").urandom(1)[0] % 2 == 0, f"coin {coin} came up odd"
"""


def _script(bad: bool) -> Script:
    """mini writes the problem's program with bash (the reference solution of checkpoint 1, or
    one that prints -1), then says it is done (the second call sees the first)."""
    rules: list[dict[str, object]] = [{"match": [DONE], "replies": [{"text": "Done."}]}]
    for name, (title, entry) in BUNDLED.items():
        code = BAD if bad else (example_problem_dir(name) / "solutions" / "checkpoint_1" /
                                entry).read_text()
        write = f"cat > {entry} <<'BENCHWRIGHT_EOF'\n{code}BENCHWRIGHT_EOF"
        rules.append({"match": [title], "replies": [{"text": DONE, "tool_calls": [
            {"name": "bash", "arguments": {"command": write}}]}]})
    return Script.model_validate({"rules": rules})


def _copy(name: str, target: Path) -> None:
    """A bundled problem under another name, with checkpoint 1 only."""
    shutil.copytree(example_problem_dir(name), target,
                    ignore=shutil.ignore_patterns("__pycache__"))
    config = yaml.safe_load((target / "config.yaml").read_text())
    config["name"] = target.name
    config["checkpoints"] = {"checkpoint_1": config["checkpoints"]["checkpoint_1"]}
    (target / "config.yaml").write_text(yaml.safe_dump(config))


def _problems(root: Path) -> Path:
    for name, copies in COPIES.items():
        for i in range(1, copies + 1):
            _copy(name, root / f"{name}_{i}")
    return root


def _flaky_problem(root: Path) -> Path:
    """kv_server with coin tests planted beside its own (Functionality: Core still holds)."""
    _copy("kv_server", root / "kv_server")
    tests = root / "kv_server" / "tests" / "test_checkpoint_1.py"
    tests.write_text(tests.read_text() + COINS)
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
    with FakeLLMServer(_script(False)) as good, FakeLLMServer(_script(True)) as bad:
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
    assert plan["available"] == sum(COPIES.values()) and plan["population"]["pass_rate"] == 1.0
    assert plan["mde"] is not None and str(base) in plan["population"]["source"]
    shown = run_cli("plan", "--baseline", str(base), "--difference", "-30")
    assert "problems needed" in shown.stdout and "the baseline's 7 problems" in shown.stdout
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


def test_eval_repeat_names_the_planted_flaky_tests(tmp_path: Path) -> None:
    # a server of its own, not the module's: the test then needs no module fixture and runs on
    # any xdist worker, beside the tests that share the baseline (tests/conftest.py: _group)
    problems = _flaky_problem(tmp_path / "problems")
    run = tmp_path / "flaky"
    with FakeLLMServer(_script(False)) as good:
        done = run_cli(*_mini(problems, run, good.base_url), env=_env())
    assert done.returncode == 0, done.stderr[-2000:]
    done = run_cli("eval", str(run), "--repeat", "3", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    noise = json.loads(done.stdout)["grading_noise"]
    assert (noise["repeats"], noise["n_units"]) == (3, 1)
    flaky = {t["test"] for t in noise["flaky_tests"]}
    assert flaky and all(t.startswith("test_planted_coin[") for t in flaky)
    assert noise["changed"] == []  # Core passes every time: the verdict holds
    report = (run / "report.md").read_text()
    assert "## Grading noise" in report and "- flaky: `test_planted_coin[" in report
