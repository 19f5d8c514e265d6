"""The run loop's defects of issue 14 (point 3, a-k) and crashed agents (point 5), each through
the CLI where a user meets it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from benchwright.coding.attempts import journal
from benchwright.coding.attempts.layout import RunLayout
from tests.helpers import ROOT, run_cli
from tests.helpers.quick_runs import ADD_ONLY, QUICK, assert_nothing_left, sleeping_run

pytestmark = pytest.mark.sandbox
FAKE_KEY = "sk-benchwright-defects-5b1e0c9a77"


def _json_run(*args: str, env: dict[str, str] | None = None,
              cwd: Path | None = None) -> dict[str, Any]:
    proc = run_cli("run", "coding", *args, "--no-metrics", "--json", env=env, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def _one_line_error(proc: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("error:") == 1, proc.stderr
    for word in words:
        assert word in proc.stderr, proc.stderr


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("oracle") / "run"
    result = _json_run("--problems-dir", str(QUICK), "--trials", "2", "--out", str(out))
    assert result["complete"] is True and result["n_checkpoints_solved"] == 8
    return out


# (a) errors every attempt would hit are refused before the run folder exists -----------------

def test_unknown_prompt_is_refused_before_the_folder_exists(tmp_path: Path) -> None:
    proc = run_cli("run", "coding", "--problems-dir", str(QUICK), "--prompt", "nope.jinja",
                   "--out", str(tmp_path / "run"))
    _one_line_error(proc, 2, "unknown prompt template")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(("options", "message"), [
    (["--agent", "replay"], "--replay-from"),
    (["--agent", "replay", "--replay-from", "/nonexistent/run"], "not a run directory"),
    (["--agent", "command"], "--agent-command"),
    (["--agent", "command", "--agent-command", "true", "--agent-mount", "/nonexistent/x"],
     "--agent-mount"),
    (["--python", "/nonexistent/python3"], "python")])
def test_an_agent_that_cannot_run_is_refused_before_the_folder_exists(
        tmp_path: Path, options: list[str], message: str) -> None:
    proc = run_cli("run", "coding", "--problems-dir", str(QUICK), *options,
                   "--no-metrics", "--out", str(tmp_path / "run"))
    _one_line_error(proc, 2, message)
    assert not (tmp_path / "run").exists()


def test_missing_bubblewrap_is_refused_before_the_folder_exists(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"  # every tool of PATH but bwrap
    bin_dir.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        for tool in Path(folder).glob("*") if Path(folder).is_dir() else []:
            if tool.name != "bwrap" and not (bin_dir / tool.name).exists():
                (bin_dir / tool.name).symlink_to(tool)
    proc = run_cli("run", "coding", "--problems-dir", str(QUICK), "--no-metrics",
                   "--out", str(tmp_path / "run"), env={**os.environ, "PATH": str(bin_dir)})
    _one_line_error(proc, 2, "bubblewrap")
    assert not (tmp_path / "run").exists()


@pytest.fixture(scope="module")
def broken_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path,
                                                                  subprocess.CompletedProcess[str]]:
    """A run whose problem lost the tests of checkpoint 2: each attempt breaks off there."""
    root = tmp_path_factory.mktemp("broken")
    problems = root / "problems"
    shutil.copytree(QUICK, problems)
    tests = problems / "quick" / "tests" / "test_checkpoint_2.py"
    tests.rename(tests.with_suffix(".bak"))
    out = root / "run"
    proc = run_cli("run", "coding", "--problems-dir", str(problems), "--no-metrics",
                   "--trials", "2", "--out", str(out))
    return problems, out, proc


def test_a_run_with_broken_off_attempts_exits_4_naming_them(
        broken_run: tuple[Path, Path, subprocess.CompletedProcess[str]]) -> None:
    _problems, out, proc = broken_run
    assert proc.returncode == 4, proc.stderr
    assert "quick/trial_1" in proc.stderr and "no test file for checkpoint_2" in proc.stderr
    assert "Traceback" not in proc.stderr
    result = json.loads(RunLayout(out).result_json.read_text())
    assert result["complete"] is False and len(result["errors"]) == 2
    assert "## Attempts that broke off" in RunLayout(out).report_md.read_text()


# (c) eval RUN_DIR keeps broken-off attempts incomplete, with their errors ----------------------

def test_eval_keeps_attempt_errors_and_rewrites_the_report(
        broken_run: tuple[Path, Path, subprocess.CompletedProcess[str]], tmp_path: Path) -> None:
    _problems, out, _proc = broken_run
    copy = tmp_path / "run"
    shutil.copytree(out, copy)
    RunLayout(copy).report_md.unlink()
    proc = run_cli("eval", str(copy), "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(RunLayout(copy).result_json.read_text())
    assert result["complete"] is False and len(result["errors"]) == 2
    assert "## Attempts that broke off" in RunLayout(copy).report_md.read_text()


def test_eval_keeps_a_cut_attempt_incomplete(oracle_run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(oracle_run, copy)
    path = RunLayout(copy).journal("quick", 1)
    journal.rewrite(path, journal.read_records(path)[:2])  # killed after checkpoint 2
    proc = run_cli("eval", str(copy))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(RunLayout(copy).result_json.read_text())["complete"] is False
    assert "--resume" in proc.stderr


# (b) secrets never enter the manifest ---------------------------------------------------------

@pytest.mark.parametrize("option", [
    ["--agent", "command", "--agent-command", f"KEY={FAKE_KEY} ./agent.sh"]])
def test_an_option_holding_a_key_is_refused(tmp_path: Path, option: list[str]) -> None:
    proc = run_cli("run", "coding", "--problems-dir", str(QUICK), "--no-metrics", *option,
                   "--out", str(tmp_path / "run"), env={**os.environ, "OPENAI_API_KEY": FAKE_KEY})
    _one_line_error(proc, 2, "OPENAI_API_KEY", "environment", option[-2])
    assert not (tmp_path / "run").exists()


def test_a_key_inside_the_base_url_is_kept_by_reference(tmp_path: Path) -> None:
    """A base URL's credential is the one setting stored as a mark (restored from the
    environment on resume), never in clear and never read back as `<redacted:...>`."""
    run = tmp_path / "run"
    env = {**os.environ, "OPENAI_API_KEY": FAKE_KEY}
    proc = run_cli("run", "coding", "--problems-dir", str(QUICK), "--no-metrics",
                   "--base-url", f"http://127.0.0.1:9/v1?key={FAKE_KEY}", "--out", str(run),
                   env=env)
    assert proc.returncode == 0, proc.stderr
    manifest = (run / "manifest.json").read_text()
    assert FAKE_KEY not in manifest and "<redacted:" in manifest
    resumed = run_cli("run", "coding", "--resume", str(run), env=env)
    assert resumed.returncode == 0, resumed.stderr


def test_a_manifest_with_a_redacted_setting_is_not_resumed(oracle_run: Path,
                                                           tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(oracle_run, copy)
    manifest = json.loads(RunLayout(copy).manifest.read_text())
    manifest["config"]["agent_settings"]["base_url"] = "http://h/<redacted:OPENAI_API_KEY>"
    RunLayout(copy).manifest.write_text(json.dumps(manifest))
    _one_line_error(run_cli("run", "coding", "--resume", str(copy)), 2, "redacted")


# (d) one process at a time per run folder ----------------------------------------------------

def _held_run(out: Path, flag: Path) -> subprocess.Popen[str]:
    """A 2-worker, 2-trial oracle-like run whose agent waits for `flag` before each copy."""
    solutions = QUICK / "quick" / "solutions"
    command = (f"while [ ! -e {flag} ]; do sleep 0.05; done; "
               f"cp -r {solutions}/$BENCHWRIGHT_CHECKPOINT/. .")
    return subprocess.Popen(
        [sys.executable, "-m", "benchwright", "run", "coding", "--problems-dir", str(QUICK),
         "--trials", "2", "--workers", "2", "--no-metrics", "--agent", "command",
         "--agent-command", command, "--agent-mount", str(flag.parent),
         "--agent-mount", str(solutions), "--out", str(out), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_second_process_on_a_running_run_is_refused(tmp_path: Path) -> None:
    out, gate = tmp_path / "run", tmp_path / "gate"
    gate.mkdir()
    proc = _held_run(out, gate / "go")
    deadline = time.monotonic() + 300  # wide: a loaded machine is slow, never wrong
    while time.monotonic() < deadline and not (out / "quick" / "trial_2").is_dir():
        time.sleep(0.1)
    try:
        for argv in (["eval", str(out)], ["run", "coding", "--resume", str(out)],
                     ["eval", "--json", str(out)]):
            second = run_cli(*argv)
            _one_line_error(second, 2, f"pid {proc.pid}", "another benchwright process")
    finally:
        (gate / "go").touch()
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    result = json.loads(stdout)
    assert result["complete"] is True and result["n_checkpoints_solved"] == 8
    for trial in (1, 2):
        records = journal.read_records(RunLayout(out).journal("quick", trial))
        assert [r.checkpoint for r in records] == [f"checkpoint_{i}" for i in range(1, 5)]


def test_two_resumes_at_once_leave_the_journals_whole(oracle_run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(oracle_run, copy)
    for trial in (1, 2):
        path = RunLayout(copy).journal("quick", trial)
        journal.rewrite(path, journal.read_records(path)[:1])
    argv = [sys.executable, "-m", "benchwright", "run", "coding", "--resume", str(copy),
            "--workers", "2", "--json"]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outcomes = [p.communicate(timeout=300) for p in procs]
    codes = sorted(p.returncode for p in procs)
    for (_out, err), proc in zip(outcomes, procs, strict=True):
        assert "Traceback" not in err
        if proc.returncode != 0:
            assert "another benchwright process" in err
    assert codes[0] == 0 and codes[1] in (0, 2)  # the second waits its turn or is refused
    for trial in (1, 2):
        records = journal.read_records(RunLayout(copy).journal("quick", trial))
        assert [r.checkpoint for r in records] == [f"checkpoint_{i}" for i in range(1, 5)]


# (e) relative paths are stored resolved; (f) resume conflicts are listed ----------------------

def test_relative_paths_are_saved_absolute(oracle_run: Path, tmp_path: Path) -> None:
    shutil.copytree(QUICK, tmp_path / "problems")
    shutil.copytree(oracle_run, tmp_path / "ref")
    (tmp_path / "mine.jinja").write_text("{{ spec }}")
    _json_run("--problems-dir", "problems", "--agent", "replay", "--replay-from", "ref",
              "--prompt", "mine.jinja", "--out", "run", cwd=tmp_path)
    config = json.loads((tmp_path / "run" / "manifest.json").read_text())["config"]
    assert config["problems_dir"] == str(tmp_path / "problems")
    assert config["replay_from"] == str(tmp_path / "ref")
    assert config["prompt"] == str(tmp_path / "mine.jinja")
    result = json.loads((tmp_path / "run" / "result.json").read_text())
    assert result["run_dir"] == str(tmp_path / "run")


def test_resume_with_conflicting_options_lists_them(oracle_run: Path) -> None:
    proc = run_cli("run", "coding", "--resume", str(oracle_run), "--trials", "3",
                   "--agent", "command", "--workers", "2")
    _one_line_error(proc, 2, "--trials", "--agent", "may change")
    listed = proc.stderr.split("(")[0]
    assert "--workers" not in listed and "--workers" in proc.stderr  # named as changeable
    same = run_cli("run", "coding", "--resume", str(oracle_run), "--trials", "2",
                   "--no-metrics", "--workers", "2", "--json")
    assert same.returncode == 0, same.stderr


# (g) progress counts only the checkpoints that will run ---------------------------------------

def test_progress_counts_only_checkpoints_that_will_run(oracle_run: Path, tmp_path: Path) -> None:
    from benchwright.coding.attempts.models import CheckpointRecord
    from benchwright.coding.attempts.progress import CheckpointTally
    from benchwright.coding.attempts.runner import execute, load_manifest
    from benchwright.executors.local import LocalExecutor

    copy = tmp_path / "run"
    shutil.copytree(oracle_run, copy)
    shutil.rmtree(RunLayout(copy).checkpoint_dir("quick", 1, "checkpoint_3") / "snapshot")
    tally = CheckpointTally()
    totals: list[int] = []

    def on_plan(plan: dict[tuple[str, int], tuple[int, int]]) -> None:
        tally.start(plan)
        totals.append(tally.total)

    def on_event(event: object) -> None:
        if isinstance(event, CheckpointRecord):
            tally.record(event)

    execute(copy, load_manifest(copy).config, LocalExecutor(1, on_event=on_event),
            on_summary=tally.summary, on_plan=on_plan)
    assert totals == [2]  # checkpoints 3 and 4 of trial 1: the record of 3 no longer holds
    assert (tally.completed, tally.total) == (2, 2)


def test_progress_drops_checkpoints_an_attempt_never_reaches(tmp_path: Path) -> None:
    from benchwright.coding.attempts.models import CheckpointRecord
    from benchwright.coding.attempts.progress import CheckpointTally
    from benchwright.coding.attempts.runner import execute, load_manifest
    from benchwright.executors.local import LocalExecutor

    out = tmp_path / "run"
    _json_run("--problems-dir", str(QUICK), "--agent", "command", "--agent-command", ADD_ONLY,
              "--out", str(out))
    shutil.rmtree(RunLayout(out).checkpoint_dir("quick", 1, "checkpoint_2"))  # to run again
    tally = CheckpointTally()

    def on_event(event: object) -> None:
        if isinstance(event, CheckpointRecord):
            tally.record(event)

    execute(out, load_manifest(out).config, LocalExecutor(1, on_event=on_event),
            on_summary=tally.summary, on_plan=tally.start)
    assert (tally.completed, tally.total) == (1, 1)  # it fails again: 3 and 4 are never run


# (h) eval --json RUN_DIR in any order ----------------------------------------------------------

def test_eval_json_option_first(oracle_run: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(oracle_run, copy)
    proc = run_cli("eval", "--json", str(copy))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["changes"] == []


# (i) SIGTERM takes Ctrl-C's path ---------------------------------------------------------------

def test_sigterm_stops_cleanly_and_the_run_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with sleeping_run(out, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                      env={**os.environ, "COLUMNS": "200"}) as run:
        run.proc.send_signal(signal.SIGTERM)
        _, stderr = run.proc.communicate(timeout=300)
        assert run.proc.returncode == 143, stderr
        assert "--resume" in stderr and "Traceback" not in stderr
        assert_nothing_left(run)
    assert not (out / ".work").exists()
    again = run_cli("eval", str(out))  # the lock went with the process; the run is resumable
    assert again.returncode == 0 and "--resume" in again.stderr, again.stderr
    conflict = run_cli("run", "coding", "--resume", str(out), "--agent-command", "true")
    _one_line_error(conflict, 2, "--agent-command")


# (j) the last progress events are delivered -----------------------------------------------------

def test_every_progress_event_reaches_the_parent() -> None:
    from benchwright.executors.local import LocalExecutor
    from tests.helpers.executor_jobs import EVENTS_PER_JOB, emit_many

    seen: list[int] = []

    def slow(event: Any) -> None:
        time.sleep(0.0005)  # a busy terminal: the drain lags behind the workers
        seen.append(event)

    results = list(LocalExecutor(2, on_event=slow).run(emit_many, [0, 1, 2]))
    assert sorted(results) == [0, 1, 2]
    assert len(seen) == 3 * EVENTS_PER_JOB


# (k) small items ---------------------------------------------------------------------------------

def test_a_failed_launch_leaks_no_pipe(tmp_path: Path) -> None:
    from benchwright.sandbox.bwrap import BwrapRuntime, Limits

    runtime = BwrapRuntime(bwrap=str(tmp_path / "no-bwrap"))
    before = len(list(Path("/proc/self/fd").iterdir()))
    for _ in range(5):
        with pytest.raises(FileNotFoundError):
            runtime.run(["true"], cwd=tmp_path, env={}, mounts=[], limits=Limits())
    assert len(list(Path("/proc/self/fd").iterdir())) == before


def test_docs_list_the_commands_and_exit_codes() -> None:
    from benchwright import registry

    assert "pytest" in registry.GRADERS  # read by the run loop and eval (grading.grader_of)
    text = (ROOT / "docs" / "cli.md").read_text()
    for needle in ("run coding", "run web", "eval", "report", "| 4 |", "| 130 |", "| 143 |"):
        assert needle in text
    architecture = (ROOT / "docs" / "architecture.md").read_text()
    assert "entry.py" in architecture


# 5. an agent that crashes is visible -------------------------------------------------------------

def test_a_crashing_agent_is_an_agent_error_everywhere(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = run_cli("run", "coding", "--problems-dir", str(QUICK), "--no-metrics", "--agent",
                   "command", "--agent-command", "echo 'it went boom' >&2; exit 3",
                   "--out", str(out))
    assert proc.returncode == 0, proc.stderr  # the agent's failure is its score, not the run's
    assert "agent failed" in proc.stderr and "exit code 3" in proc.stderr
    [record] = journal.read_records(RunLayout(out).journal("quick", 1))
    assert record.agent.status == "error" and record.agent.exit_code == 3
    assert "it went boom" in (record.agent.error or "")
    result = json.loads(RunLayout(out).result_json.read_text())
    [line] = result["agent_errors"]
    assert "quick/trial_1/checkpoint_1" in line and "exit code 3" in line and "boom" in line
    report = RunLayout(out).report_md.read_text()
    assert "## Agent errors" in report and "it went boom" in report


def test_an_agent_script_outside_the_sandbox_and_agent_mount(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    script = tools / "agent.sh"
    solutions = QUICK / "quick" / "solutions"
    script.write_text(f"#!/bin/sh\ncp -r {solutions}/$BENCHWRIGHT_CHECKPOINT/. .\n")
    script.chmod(0o755)
    out = tmp_path / "unseen"
    proc = run_cli("run", "coding", "--problems-dir", str(QUICK), "--no-metrics", "--agent",
                   "command", "--agent-command", str(script), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    [record] = journal.read_records(RunLayout(out).journal("quick", 1))
    assert record.agent.exit_code == 127 and "--agent-mount" in (record.agent.error or "")
    result = _json_run("--problems-dir", str(QUICK), "--agent", "command", "--agent-command",
                       str(script), "--agent-mount", str(tools), "--agent-mount", str(solutions),
                       "--out", str(tmp_path / "seen"))
    assert result["n_checkpoints_solved"] == 4 and result["agent_errors"] == []


def test_an_agent_that_leaves_an_empty_workspace_is_graded_with_a_warning(
        tmp_path: Path) -> None:
    """As SCBench's runner (and `eval checkpoint`) grade it: its tests fail, the run goes on,
    and the summary and report.md say the workspace was empty."""
    out = tmp_path / "run"
    proc = run_cli("run", "coding", "--problems-dir", str(QUICK), "--no-metrics", "--agent",
                   "command", "--agent-command", "true", "--out", str(out),
                   env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    [record] = journal.read_records(RunLayout(out).journal("quick", 1))
    assert record.snapshot_files == 0 and record.agent.status == "completed"
    assert record.grade_status == "completed" and not record.passed
    assert "warning: the agent left the workspace empty" in proc.stdout + proc.stderr
    assert "warning: the agent left the workspace empty" in RunLayout(out).report_md.read_text()
