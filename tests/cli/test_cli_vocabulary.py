"""One vocabulary (issue 19): every command's options, walked from the Typer app, use the same
name for the same idea; no synonym of a chosen name appears in any `--help`; flags show no
`<bool>`; every old spelling still works, with one deprecation line; benchwright.toml gives
defaults below the command line and the environment."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.core import TyperArgument, TyperOption

from benchwright.api import coding as coding_api
from benchwright.cli.defaults import default_map
from benchwright.cli.entry import command
from benchwright.cli.main import app
from benchwright.cli.old_spellings import OLD_SPELLINGS, upgrade
from benchwright.coding.problems.examples import example_problem_dir
from benchwright.errors import UserInputError
from tests.helpers.cli import run_cli

ROOT = command(app)
# A synonym that must not appear in any command's options or help -> the name chosen instead.
SYNONYMS = {
    "--max-steps": "--step-limit", "--steps": "--step-limit", "--max-turns": "--step-limit",
    "--max-iterations": "--step-limit", "--problem-dir": "--problems-dir",
    "--output-dir": "a LOGS_DIR argument", "--output": "--out", "--out-dir": "--out",
    "--outdir": "--out", "--run-dir": "a RUN_DIR argument or --resume RUN_DIR",
    "--format": "--json", "--api-base": "--base-url", "--endpoint": "--base-url",
    "--llm-base-url": "--base-url", "--max-thinking-tokens": "--thinking-budget",
    "--thinking-tokens": "--thinking-budget", "--version-of-agent": "--agent-version",
    "--env-config": "--config", "--site-config": "--config", "--task-id": "--task-ids",
    "--verbosity": "-v/-q", "--silent": "-q",
}
# Each idea's one spelling: the parameter name -> its option, wherever a command has it.
ONE_NAME = {"base_url": "--base-url", "step_limit": "--step-limit", "as_json": "--json",
            "problems_dir": "--problems-dir", "resume": "--resume", "problem": "--problem",
            "python": "--python", "config": "--config", "thinking": "--thinking",
            "thinking_budget": "--thinking-budget", "agent_version": "--agent-version"}
NO_JSON = {("testing", "fake-llm"), ("view",)}  # servers (or a site written): no result to print


def commands(group: Any = ROOT, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...],
                                                                             Any]]:
    """Every command under `group`, by its path (groups included)."""
    yield path, group
    for name, sub in getattr(group, "commands", {}).items():
        yield from commands(sub, (*path, name))


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")  # help on one line per option


def help_text(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> str:
    ROOT.main([*path, "--help"], prog_name="benchwright", standalone_mode=False)
    return capsys.readouterr().out


def test_every_help_renders_with_no_synonym_and_no_bool_type(
        capsys: pytest.CaptureFixture[str]) -> None:
    found = []
    for path, _ in commands():
        text = help_text(path, capsys)
        assert "Usage: benchwright" in text, path
        found += [f"{' '.join(path)}: <bool>" for _ in re.findall(r"<bool>", text)]
        found += [f"{' '.join(path)}: {old} (say {new})" for old, new in SYNONYMS.items()
                  if re.search(rf"{re.escape(old)}\b(?!-)", text)]
    assert found == []


def test_the_same_idea_has_the_same_name_on_every_command() -> None:
    wrong = []
    for path, cmd in commands():
        for param in cmd.params:
            flags = [o for o in param.opts if o.startswith("--")]
            if isinstance(param, TyperOption) and param.name in ONE_NAME and \
                    flags[:1] != [ONE_NAME[param.name]]:
                wrong.append(f"{' '.join(path)}: {param.name} is {flags}")
            # the judge's endpoint is its own (a run may judge with another provider)
            variable = "BENCHWRIGHT_JUDGE_BASE_URL" if path == ("metrics", "judge") else \
                "BENCHWRIGHT_LLM_BASE_URL"
            if param.name == "base_url" and param.envvar != variable:
                wrong.append(f"{' '.join(path)}: --base-url without its variable")
    assert wrong == []


def test_every_command_that_prints_offers_json() -> None:
    leaves = [path for path, cmd in commands() if not getattr(cmd, "commands", None)]
    missing = [" ".join(path) for path in leaves if path not in NO_JSON and
               "as_json" not in {p.name for p in dict(commands())[path].params}]
    assert len(leaves) > 15 and missing == []


def test_run_dirs_are_named_alike() -> None:
    for path, cmd in commands():
        for param in cmd.params:
            if param.name in ("resume", "run_dir", "replay_from", "baseline"):
                shown = param.metavar or (param.name.upper() if isinstance(
                    param, TyperArgument) else None)
                assert shown in ("RUN_DIR", "DIR", None), (path, param.name, shown)
            if param.name == "resume":
                assert param.metavar == "RUN_DIR" and not param.is_flag, path


def test_eval_run_dir_is_in_eval_help(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_text(("eval",), capsys)
    assert "RUN_DIR | COMMAND" in text and "benchwright eval RUN_DIR" in text
    assert re.search(r"^\s*│?\s*run\s", text, re.MULTILINE)


# --- old spellings ---------------------------------------------------------------------------

def test_each_old_spelling_is_rewritten_to_todays(capsys: pytest.CaptureFixture[str]) -> None:
    problem = example_problem_dir("kv_server")
    cases = {
        ("run", "web", "--max-steps", "5"): ["run", "web", "--step-limit", "5"],
        ("run", "web", "--max-steps=5"): ["run", "web", "--step-limit=5"],
        ("run", "web", "--out", "R", "--json", "--resume"): ["run", "web", "--resume", "R",
                                                               "--json"],
        ("run", "web", "--resume", "R"): ["run", "web", "--resume", "R"],  # today's: untouched
        ("web", "eval", "--output-dir", "L", "--json"): ["web", "eval", "L", "--json"],
        ("eval", "checkpoint", "--problem-dir", str(problem)): [
            "eval", "checkpoint", "--problems-dir", str(problem.parent), "--problem",
            "kv_server"],
        ("report", "R", "--format", "json"): ["report", "R", "--json"],
        ("report", "R", "--format=md"): ["report", "R"],
        ("-q", "report", "R", "--format", "json"): ["-q", "report", "R", "--json"],
    }
    for old, new in cases.items():
        assert upgrade(ROOT, old) == new, old
    warnings = capsys.readouterr().err.splitlines()
    assert len(warnings) == len(cases) - 1  # one line per rewrite
    assert all(line.startswith("warning: ") and "deprecated" in line for line in warnings)
    with pytest.raises(UserInputError, match="give md or json"):
        upgrade(ROOT, ["report", "R", "--format", "pdf"])


def test_every_old_spelling_is_in_no_help_and_has_a_case() -> None:
    assert {s.old for s in OLD_SPELLINGS} <= set(SYNONYMS) | {"--resume"}
    assert {s.command for s in OLD_SPELLINGS} == {("run", "web"), ("web", "eval"),
                                                  ("eval", "checkpoint"), ("report",)}


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return run_cli(*args, env=env, cwd=cwd, timeout=300)


@pytest.mark.parametrize(("old", "then"), [
    (["run", "web", "--suite", "nope", "--max-steps", "3"], "unknown suite 'nope'"),
    (["run", "web", "--out", "{tmp}", "--resume"], "not a web run directory"),
    (["web", "eval", "--output-dir", "{tmp}/none"], "{tmp}/none"),
    (["eval", "checkpoint", "--problem-dir", "{kv}", "--checkpoint", "nope"],
     "unknown checkpoint 'nope'"),
    (["report", "{tmp}", "--format", "json"], "not a run directory"),
], ids=["max-steps", "out-resume", "output-dir", "problem-dir", "format"])
def test_old_spellings_still_work_with_one_deprecation_line(tmp_path: Path, old: list[str],
                                                            then: str) -> None:
    kv = str(example_problem_dir("kv_server"))
    args = [a.replace("{tmp}", str(tmp_path)).replace("{kv}", kv) for a in old]
    done = _cli(*args)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("warning: ") and "deprecated" in lines[0]
    assert lines[1].startswith("error: ") and then.replace("{tmp}", str(tmp_path)) in lines[1]


# --- defaults from benchwright.toml ----------------------------------------------------------

class _Captured(Exception):
    pass


def _parsed_options(monkeypatch: pytest.MonkeyPatch, args: list[str],
                    defaults: dict[str, Any] | None) -> dict[str, Any]:
    """What `run coding ARGS` hands `run_coding`, with `defaults` as the file's."""
    seen: dict[str, Any] = {}

    def fake_run_coding(**kwargs: Any) -> None:
        seen.update(kwargs)
        raise _Captured

    monkeypatch.setattr(coding_api, "run_coding", fake_run_coding)  # imported when it runs
    with pytest.raises(_Captured):
        ROOT.main(["run", "coding", *args], prog_name="benchwright", standalone_mode=False,
                  default_map=defaults)
    return seen


def test_file_defaults_are_below_the_environment_and_the_command_line(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "benchwright.toml").write_text(
        '[run.coding]\nbase-url = "http://file.invalid/v1"\nstep_limit = 7\nthinking = "low"\n'
        "trials = 2\n")
    defaults = default_map(ROOT, cwd=tmp_path)
    monkeypatch.delenv("BENCHWRIGHT_LLM_BASE_URL", raising=False)
    from_file = _parsed_options(monkeypatch, [], defaults)
    assert (from_file["base_url"], from_file["step_limit"], from_file["trials"]) == (
        "http://file.invalid/v1", 7, 2)
    assert from_file["thinking"] == "low"
    monkeypatch.setenv("BENCHWRIGHT_LLM_BASE_URL", "http://env.invalid/v1")
    assert _parsed_options(monkeypatch, [], defaults)["base_url"] == "http://env.invalid/v1"
    given = _parsed_options(monkeypatch, ["--base-url", "http://cli.invalid/v1", "--trials",
                                          "3"], defaults)
    assert (given["base_url"], given["trials"]) == ("http://cli.invalid/v1", 3)


def test_pyproject_tool_table_and_bad_keys(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.benchwright]\nquiet = true\n'
                                             '[tool.benchwright.report]\njson = true\n')
    assert default_map(ROOT, cwd=tmp_path) == {"quiet": True, "report": {"as_json": True}}
    (tmp_path / "benchwright.toml").write_text('[run.coding]\nmax-steps = 3\n')
    with pytest.raises(UserInputError, match=r"unknown key 'run\.coding\.max-steps'"):
        default_map(ROOT, cwd=tmp_path)
    (tmp_path / "benchwright.toml").write_text('[run.web]\nstep-limit = "many"\n')
    with pytest.raises(UserInputError, match=r"run\.web\.step-limit"):
        default_map(ROOT, cwd=tmp_path)
    (tmp_path / "benchwright.toml").write_text('[run.web\n')
    with pytest.raises(UserInputError, match="not valid TOML"):
        default_map(ROOT, cwd=tmp_path)


def test_a_defaults_file_reaches_the_real_command(tmp_path: Path) -> None:
    (tmp_path / "benchwright.toml").write_text('[problems.list]\njson = true\n')
    done = _cli("problems", "list", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.lstrip().startswith("["), done.stderr
    (tmp_path / "benchwright.toml").write_text('[problems.list]\njsonn = true\n')
    done = _cli("problems", "list", cwd=tmp_path)
    assert done.returncode == 2 and "unknown key 'problems.list.jsonn'" in done.stderr


def test_quiet_silences_progress_and_notes(tmp_path: Path) -> None:
    from tests.helpers.web_suites import write_suite

    write_suite(tmp_path / "suite")
    suite = ["--suite", str(tmp_path / "suite" / "tasks.json"), "--config",
             str(tmp_path / "suite" / "env.yaml"), "--task-ids", "7001"]
    env = {**os.environ, "BENCHWRIGHT_WEB_TRIAL_RUNNER": "fake"}
    loud = subprocess.run([sys.executable, "-m", "benchwright", "run", "web", *suite, "--out",
                           str(tmp_path / "a")], capture_output=True, text=True, env=env)
    quiet = subprocess.run([sys.executable, "-m", "benchwright", "-q", "run", "web", *suite,
                            "--out", str(tmp_path / "b")], capture_output=True, text=True,
                           env=env)
    assert loud.returncode == quiet.returncode == 0, loud.stderr + quiet.stderr
    assert "report:" in loud.stderr and quiet.stderr == ""
    assert "trials passed" in quiet.stdout


@pytest.mark.parametrize("kind", ["fifo", "folder", "not-utf8", "huge"])
def test_a_hostile_defaults_file_is_one_error_never_a_hang(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "benchwright.toml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "not-utf8":
        path.write_bytes(b'[run.coding]\nmodel = "\xff"\n')
    else:
        path.write_text("# " + "x" * (2**20 + 10) + "\n")
    with pytest.raises(UserInputError, match=r"defaults file|benchwright\.toml"):
        default_map(ROOT, cwd=tmp_path)


def test_a_bad_key_of_another_command_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "benchwright.toml").write_text('[run.coding]\nmax-steps = 3\n'
                                               '[problems.list]\njson = true\n')
    done = _cli("problems", "list", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.lstrip().startswith("["), done.stderr
    assert "warning:" in done.stderr and "'run.coding.max-steps'" in done.stderr
    assert "ignored" in done.stderr
    done = _cli("view", "--help", cwd=tmp_path)
    assert done.returncode == 0 and "Usage" in done.stdout
    done = _cli("run", "coding", "--help", cwd=tmp_path)
    assert done.returncode == 2 and "unknown key 'run.coding.max-steps'" in done.stderr


def test_agent_network_help_says_what_it_allows() -> None:
    done = _cli("run", "coding", "--help")
    text = " ".join(done.stdout.replace("\u2502", " ").split())  # the help box's sides
    assert "reach its LLM endpoint and nothing else" in text and "egress proxy" in text
    assert "package indexes" in text and "sandbox the network" not in text
