"""Issue 41, point 4 on the coding track: `eval RUN --repeat N` grades every checkpoint N more
times and names the planted flaky tests (tests/fixtures/flaky: coins tossed from os.urandom, as
the grading sandbox keeps nothing between gradings); report.md states the harness's noise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import FIXTURES, run_cli

pytestmark = pytest.mark.sandbox


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("repeat") / "run"
    done = run_cli("run", "coding", "--problems-dir", str(FIXTURES), "--problem", "flaky",
                   "--agent", "oracle", "--no-metrics", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_repeat_names_the_flaky_tests_and_not_the_steady_one(run: Path) -> None:
    done = run_cli("eval", str(run), "--repeat", "3", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    noise = json.loads(done.stdout)["grading_noise"]
    assert (noise["repeats"], noise["n_units"], len(noise["rates"])) == (3, 1, 4)
    flaky = {t["test"] for t in noise["flaky_tests"]}
    assert flaky and all(t.startswith("test_coin[") for t in flaky)
    assert all(len(t["outcomes"]) == 4 and len(set(t["outcomes"])) == 2
               for t in noise["flaky_tests"])
    assert noise["changed"] == []  # Core passes every time: the verdict holds
    saved = json.loads((run / "grading_noise.json").read_text())
    assert saved == noise
    report = (run / "report.md").read_text()
    assert "## Grading noise" in report
    assert "| harness noise (std of the pass rate across gradings) | 0.0 points |" in report
    assert "| agent spread (std of the pass rate across trials) | unknown |" in report
    assert "- flaky: `test_coin[" in report


def test_repeat_prints_the_flaky_tests_and_each_change(run: Path) -> None:
    done = run_cli("eval", str(run), "--repeat", "3")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "- flaky: `test_coin[" in done.stdout
    assert "re-graded 1 checkpoints" in done.stdout  # then the counts that changed, if any
    assert "test_prints_one" not in done.stdout


@pytest.mark.parametrize("bad", ["0", "-1", "x", "101"])
def test_bad_repeat_is_one_line(run: Path, bad: str) -> None:
    done = run_cli("eval", str(run), "--repeat", bad)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and "--repeat" in done.stderr
