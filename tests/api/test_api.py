"""The Python API (issue 19): docs/api.md's walkthrough runs as written (its doctests), and what
it shows holds exactly: a checkpoints frame is the run's checkpoint_results.jsonl, a trials frame
the web run's journal; the public surface is `benchwright.__all__`; the options are checked."""

from __future__ import annotations

import doctest
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import benchwright
from benchwright.api.coding import coding_config
from benchwright.coding.agents.toolchain import CLAUDE_CODE
from benchwright.errors import UserInputError
from tests.helpers import ROOT

DOC = ROOT / "docs" / "api.md"
WEB_PART = "## Run the web track"
needs_browser_use = pytest.mark.skipif(importlib.util.find_spec("browser_use") is None,
                                       reason="needs browser-use")


def run_doc(text: str, globs: dict[str, Any]) -> dict[str, Any]:
    """Run the doctests in `text` with `globs`; fail on any difference; return the names."""
    test = doctest.DocTestParser().get_doctest(text, globs, DOC.name, str(DOC), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    runner.run(test, out=report.append, clear_globs=False)
    assert runner.failures == 0, "".join(report)
    return test.globs


@pytest.fixture(scope="module")
def walkthrough() -> Any:
    """docs/api.md's coding part, run once; its names (workdir, result, checkpoints...)."""
    globs = run_doc(DOC.read_text(encoding="utf-8").split(WEB_PART)[0], {})
    yield globs
    shutil.rmtree(globs["workdir"], ignore_errors=True)


@pytest.mark.sandbox
def test_checkpoints_frame_is_the_runs_checkpoint_results(walkthrough: dict[str, Any]) -> None:
    run_dir: Path = walkthrough["workdir"] / "first"
    # SCBench's flat rows, one per checkpoint graded ("ran")
    lines = [json.loads(line) for line in
             (run_dir / "checkpoint_results.jsonl").read_text().splitlines()]
    frame = benchwright.checkpoints_frame(run_dir)
    assert len(frame) == len(lines) == walkthrough["result"].n_checkpoints
    assert {r["state"] for r in lines} == {"ran"}
    counts = ("passed_tests", "total_tests", *(f"{g}_{k}" for g in
                                               ("core", "functionality", "error", "regression")
                                               for k in ("passed", "total")))
    from_file = {(r["problem"], r["trial"], r["checkpoint"]): tuple(r[c] for c in counts)
                 for r in lines}
    from_frame = {(r["problem"], r["trial"], r["checkpoint"]): tuple(int(r[c]) for c in counts)
                  for r in frame.to_dict("records")}
    assert from_frame == from_file
    assert list(frame["solved"]) == [r["pass_rate"] == 1.0 for r in lines]


@pytest.mark.sandbox
@pytest.mark.browser
@needs_browser_use
def test_the_web_walkthrough_and_trials_frame_is_the_journal(
        walkthrough: dict[str, Any]) -> None:
    globs = run_doc(WEB_PART + DOC.read_text(encoding="utf-8").split(WEB_PART)[1], walkthrough)
    run_dir: Path = globs["workdir"] / "web"
    journal = [json.loads(line) for line in (run_dir / "journal.jsonl").read_text().splitlines()]
    trials = benchwright.trials_frame(run_dir)
    assert len(trials) == len(journal) == globs["web"].n_trials
    assert ({(r.task_id, r.trial, r.steps) for r in trials.itertuples()}
            == {(r["task_id"], r["trial"], r["steps"]) for r in journal})
    assert trials["score"].sum() == globs["web"].n_passed
    run = benchwright.load_run(run_dir)
    assert isinstance(run, benchwright.WebRun) and run.result == globs["web"]


def test_the_public_surface_is_all_and_every_name_loads() -> None:
    assert set(benchwright.__all__) == {"__version__", *benchwright._PUBLIC}
    for name in benchwright.__all__:
        assert getattr(benchwright, name) is not None, name
    assert set(dir(benchwright)) >= set(benchwright.__all__)
    with pytest.raises(AttributeError):
        _ = benchwright.no_such_name  # type: ignore[attr-defined]


def test_frames_without_pandas_name_the_install_line(tmp_path: Path) -> None:
    code = ("import sys\n"
            "class Block:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'pandas':\n"
            "            raise ImportError(name)\n"
            "sys.meta_path.insert(0, Block())\n"
            "import benchwright\n"
            "benchwright.runs_frame([])\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "data frames need pandas (install it with: pip install 'benchwright[pandas]')" in (
        done.stderr)


def test_load_run_of_a_folder_without_a_run_is_the_users_error(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="not a run directory"):
        benchwright.load_run(tmp_path)
    with pytest.raises(UserInputError, match="no run here"):
        benchwright.runs_frame(tmp_path)
    assert benchwright.runs_frame([]).empty


def test_resume_takes_no_other_option_but_where_jobs_run(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="drop agent, model"):
        benchwright.run_coding(resume=tmp_path, agent="mini", model="m", executor="local")
    # where jobs run is not part of a run: the folder is read (and refused) as a run
    with pytest.raises(UserInputError, match="not a run directory"):
        benchwright.run_coding(resume=tmp_path, executor="local", job_cpus=2.0)
    with pytest.raises(UserInputError, match="not a web run directory"):
        benchwright.run_web(resume=tmp_path, executor="local")


def test_a_run_asks_for_its_judge_through_the_api(tmp_path: Path) -> None:
    config = coding_config(None, {"judge_model": "m", "judge_options": {"samples": 3}})
    assert config.judge is not None and (config.judge.model, config.judge.samples) == ("m", 3)
    with pytest.raises(UserInputError, match="unknown judge option 'sample'"):
        coding_config(None, {"judge_model": "m", "judge_options": {"sample": 3}})
    with pytest.raises(UserInputError, match="need --judge-model"):
        coding_config(None, {"judge_options": {"samples": 3}})
    with pytest.raises(UserInputError, match="rubric: no such file"):
        coding_config(None, {"judge_model": "m", "judge_rubric": tmp_path / "none.jsonl"})


def test_a_thinking_preset_is_scbenchs_budget_and_both_are_recorded() -> None:
    config = coding_config(None, {"agent": "oracle", "thinking": "low"})
    assert config.agent_settings.thinking == "low"
    assert config.agent_settings.thinking_budget == 4000
    high = coding_config(None, {"thinking": "high"}).agent_settings
    assert high.thinking_budget == 31999
    budget = coding_config(None, {"thinking_budget": 2048}).agent_settings
    assert (budget.thinking, budget.thinking_budget) == (None, 2048)
    with pytest.raises(UserInputError, match="a preset or a budget, not both"):
        coding_config(None, {"thinking": "low", "thinking_budget": 5})


def test_a_cli_agent_records_its_pinned_version_or_the_one_asked_for() -> None:
    assert coding_config(None, {"agent": "claude_code"}).agent_version == CLAUDE_CODE.version
    asked = coding_config(None, {"agent": "claude_code", "agent_version": "2.0.51"})
    assert asked.agent_version == "2.0.51"
    assert coding_config(None, {"agent": "oracle"}).agent_version is None
    with pytest.raises(UserInputError, match="oracle agent is not an installed CLI"):
        coding_config(None, {"agent": "oracle", "agent_version": "1.0.0"})
    with pytest.raises(UserInputError, match="agent_version"):
        coding_config(None, {"agent": "codex", "agent_version": "1.0; rm -rf ~"})


def test_every_run_option_of_the_cli_is_an_api_option() -> None:
    from benchwright.cli.entry import command
    from benchwright.cli.main import app
    from benchwright.cli.run_cmd import coding_options
    from benchwright.cli.run_web_cmd import web_options

    run = command(app).commands["run"].commands
    for name, to_api, known in (("coding", coding_options, benchwright.CodingOptions),
                                ("web", web_options, benchwright.WebOptions)):
        given = {p.name: [] if p.multiple else "x" for p in run[name].params if p.name}
        assert set(to_api(given)) <= set(known.__annotations__), name


def test_an_unknown_option_is_refused_not_dropped() -> None:
    with pytest.raises(UserInputError, match="unknown option 'agnet'"):
        benchwright.run_coding(agnet="mini")  # type: ignore[call-arg]
    with pytest.raises(UserInputError, match="unknown option 'max_steps'"):
        benchwright.run_web(max_steps=3)  # type: ignore[call-arg]


def test_scbench_config_reads_the_recorded_thinking_and_version() -> None:
    from benchwright.coding.attempts.scbench.run_config import (
        agent_version,
        thinking,
        thinking_max_tokens,
    )

    low = coding_config(None, {"agent": "claude_code", "thinking": "low"})
    assert (thinking(low), thinking_max_tokens(low)) == ("low", None)  # a preset, or tokens
    assert agent_version(low, benchwright.__version__) == CLAUDE_CODE.version
    budget = coding_config(None, {"agent": "claude_code", "thinking_budget": 8000,
                                  "agent_version": "2.0.51"})
    assert (thinking(budget), thinking_max_tokens(budget)) == ("medium", 8000)
    assert agent_version(budget, benchwright.__version__) == "2.0.51"
