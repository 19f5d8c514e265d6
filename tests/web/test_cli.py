"""`benchwright web ...` through Typer, mounted the way cli/main.py will mount it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from benchwright.cli import web_cmd
from benchwright.errors import UserInputError
from benchwright.web.evaluation.synthetic import expected_answer, start_entry, write_log
from benchwright.web.evaluation.tasks import WebDataset
from benchwright.web.sites.config import WebEnvConfig

root = typer.Typer()
root.add_typer(web_cmd.app, name="web")
runner = CliRunner()


def _yaml(tmp_path: Path, config: WebEnvConfig) -> Path:
    lines = ["sites:"] + [f"  {site}: {{url: '{config.site(site).url}'}}"
                          for site in config.configured()]
    path = tmp_path / "env.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _folder(root_dir: Path, dataset: WebDataset, config: WebEnvConfig,
            wrong: set[int]) -> Path:
    for task_id in (0, 1, 2, 21, 22):
        task = dataset.tasks[task_id]
        answer = expected_answer(task)
        if task_id in wrong:
            answer = {**answer, "retrieved_data": ["wrong"]}
        write_log(root_dir / str(task_id), answer, [start_entry(task, config)])
    return root_dir


def test_tasks_list_filters(dataset: WebDataset) -> None:
    result = runner.invoke(root, ["web", "tasks", "list", "--task-ids", "0-50,77",
                                  "--sites", "shopping_admin", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert rows and all("shopping_admin" in r["sites"] for r in rows)
    assert all(r["task_id"] <= 50 or r["task_id"] == 77 for r in rows)
    hard = json.loads(runner.invoke(root, ["web", "tasks", "list", "--subset", "hard",
                                           "--template", "270", "--json"]).output)
    assert 108 in {r["task_id"] for r in hard}
    assert all(r["hard"] for r in hard)
    table = runner.invoke(root, ["web", "tasks", "list", "--task-ids", "319"])
    assert "known" in table.output and "319" in table.output


def test_eval_prints_per_task_json_and_totals(tmp_path: Path, dataset: WebDataset,
                                              local_cfg: WebEnvConfig) -> None:
    out = _folder(tmp_path / "run", dataset, local_cfg, wrong={2})
    cfg = _yaml(tmp_path, local_cfg)
    result = runner.invoke(root, ["web", "eval", str(out), "--config", str(cfg),
                                  "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [(t["task_id"], t["score"], t["status"]) for t in data["tasks"]] == [
        (0, 1.0, "success"), (1, 1.0, "success"), (2, 0.0, "failure"), (21, 1.0, "success"),
        (22, 1.0, "success")]
    assert data["totals"]["n_success"] == 4 and data["totals"]["pass_rate"] == 0.8
    assert data["evaluator"]["version"] == "1.2.3"
    assert data["report"]["macro"]["n_clusters"] >= 1
    assert (out / "eval_report.md").is_file() and (out / "eval_summary.json").is_file()


def test_eval_table_and_baseline(tmp_path: Path, dataset: WebDataset,
                                 local_cfg: WebEnvConfig) -> None:
    cfg = _yaml(tmp_path, local_cfg)
    base = _folder(tmp_path / "base", dataset, local_cfg, wrong=set())
    now = _folder(tmp_path / "now", dataset, local_cfg, wrong={0, 1})
    assert runner.invoke(root, ["web", "eval", str(base), "--config",
                                str(cfg)]).exit_code == 0
    result = runner.invoke(root, ["web", "eval", str(now), "--config", str(cfg),
                                  "--baseline", str(base)], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    for needle in ("shopping_admin", "template macro average", "against", "-40.0 points",
                   "webarena-verified 1.2.3"):
        assert needle in result.output
    report = (now / "eval_report.md").read_text()
    assert "## Against the baseline" in report


def test_env_status_json(tmp_path: Path) -> None:
    cfg = tmp_path / "env.yaml"
    cfg.write_text("sites:\n  reddit: {url: 'http://127.0.0.1:9'}\n")
    result = runner.invoke(root, ["web", "env", "status", "--config", str(cfg), "--json",
                                  "--timeout", "0.5"])
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.output)
    assert (row["site"], row["state"]) == ("reddit", "down")


def test_bad_input_is_a_user_input_error(tmp_path: Path) -> None:
    result = runner.invoke(root, ["web", "env", "start", "--site", "shoping"])
    assert isinstance(result.exception, UserInputError)
    assert "unknown site 'shoping'" in str(result.exception)
    result = runner.invoke(root, ["web", "eval", str(tmp_path / "none")])
    assert isinstance(result.exception, UserInputError)


@pytest.mark.parametrize("args", [["--help"], ["tasks", "list", "--task-ids", "x"]])
def test_runs_as_a_module(args: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "benchwright.cli.web_cmd", *args],
                          capture_output=True, text=True, timeout=120, check=False)
    if args == ["--help"]:
        assert done.returncode == 0 and "eval" in done.stdout
    else:
        assert done.returncode == 2 and "--task-ids" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_benchwright_eval_run_dir_scores_a_web_folder(tmp_path: Path, dataset: WebDataset,
                                                      local_cfg: WebEnvConfig) -> None:
    out = _folder(tmp_path / "run", dataset, local_cfg, wrong={1})
    cfg = _yaml(tmp_path, local_cfg)
    proc = subprocess.run([sys.executable, "-m", "benchwright", "eval", str(out), "--config",
                           str(cfg), "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    scores = {t["task_id"]: t["score"] for t in json.loads(proc.stdout)["tasks"]}
    assert scores == {0: 1.0, 1: 0.0, 2: 1.0, 21: 1.0, 22: 1.0}


def test_tasks_list_of_another_suite() -> None:
    result = runner.invoke(root, ["web", "tasks", "list", "--suite", "local", "--json"])
    assert result.exit_code == 0, result.output
    ids = {r["task_id"] for r in json.loads(result.output)}
    assert {9001, 9004} <= ids and all(i >= 9000 for i in ids)
    result = runner.invoke(root, ["web", "tasks", "list", "--suite", "local", "--subset", "hard"])
    assert isinstance(result.exception, UserInputError)
