"""Plugins (issue 19): the agent docs/write-an-agent.md builds, as a package of its own, installed
with benchwright into a fresh virtual environment, runs through `benchwright run coding --agent
NAME` on a bundled problem (answered by the fake LLM server); a plugin that fails to load is an
error naming it and its distribution; `agents list` says where each agent comes from.

The fresh venv gets benchwright (from this tree) and the plugin installed with uv, without their
dependencies: those come from the environment running the tests, through a .pth file (no package
is downloaded, and the plugin only sees the benchwright installed beside it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from benchwright.coding.problems.examples import example_problem_dir
from benchwright.errors import PluginError
from benchwright.registry import CODING_AGENTS
from benchwright.sandbox.environments import uv_binary
from benchwright.testing import FakeLLMServer, Script

ROOT = Path(__file__).parents[1]
TUTORIAL = ROOT / "docs" / "write-an-agent.md"
DIST = "benchwright-one-shot 0.1.0"
pytestmark = [pytest.mark.sandbox, pytest.mark.e2e]  # the plugin venv's own `benchwright` CLI


def _block(text: str, language: str) -> str:
    return text.split(f"```{language}\n", 1)[1].split("```", 1)[0]


def _plugin(folder: Path) -> Path:
    """The tutorial's package, plus an entry point whose module does not exist."""
    text = TUTORIAL.read_text(encoding="utf-8")
    folder.mkdir()
    (folder / "one_shot_agent.py").write_text(_block(text, "python"))
    pyproject = _block(text, "toml").replace(
        'one-shot = "one_shot_agent:OneShotAgent"',
        'one-shot = "one_shot_agent:OneShotAgent"\nbroken = "no_such_module:Agent"')
    (folder / "pyproject.toml").write_text(pyproject)
    return folder


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding benchwright from this tree and the tutorial's plugin."""
    root = tmp_path_factory.mktemp("plugin")
    plugin, env = _plugin(root / "benchwright-one-shot"), root / "venv"
    uv = uv_binary()
    subprocess.run([uv, "venv", "-q", str(env), "--python", sys.executable], check=True)
    python = env / "bin" / "python"
    subprocess.run([uv, "pip", "install", "-q", "--python", str(python), "--no-deps",
                    str(ROOT), str(plugin)], check=True)
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True)
    paths = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (Path(site.stdout.strip()) / "_outer_deps.pth").write_text("\n".join(paths) + "\n")
    return env


def _benchwright(venv: Path, *args: str, env: dict[str, str] | None = None
                 ) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([str(venv / "bin" / "benchwright"), *args], capture_output=True,
                          text=True, env={**clean, **(env or {})}, timeout=600)


def test_the_installed_benchwright_is_the_venvs_own(venv: Path) -> None:
    where = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import benchwright; print(benchwright.__file__)"],
                           capture_output=True, text=True, check=True)
    assert where.stdout.strip().startswith(str(venv))


def test_the_tutorial_agent_runs_through_run_coding(venv: Path, tmp_path: Path) -> None:
    problem = example_problem_dir("kv_server")
    turns = [{"text": (problem / "solutions" / f"checkpoint_{n}" / "kv_server.py").read_text()}
             for n in (1, 2, 3)]
    out = tmp_path / "run"
    with FakeLLMServer(Script.model_validate({"turns": turns})) as server:
        done = _benchwright(venv, "run", "coding", "--agent", "one-shot", "--problem",
                            "kv_server", "--no-metrics", "--model", "fake-model",
                            "--base-url", f"{server.base_url}/v1", "--out", str(out), "--json",
                            env={"OPENAI_API_KEY": "sk-plugin-test"})
        assert done.returncode == 0, done.stderr[-3000:]
        assert len(server.model_calls) == 3
    summary = json.loads(done.stdout)
    assert (summary["agent"], summary["n_checkpoints_solved"]) == ("one-shot", 3)
    rows = [json.loads(line) for line in (out / "checkpoint_results.jsonl").read_text()
            .splitlines()]  # SCBench's rows
    assert [r["steps"] for r in rows] == [1, 1, 1]


def test_agents_list_shows_where_each_comes_from(venv: Path) -> None:
    done = _benchwright(venv, "agents", "list", "--json")
    assert done.returncode == 0, done.stderr
    rows = {(r["kind"], r["name"]): r for r in json.loads(done.stdout)}
    assert rows["coding agent", "oracle"]["source"] == "built-in"
    plugin = rows["coding agent", "one-shot"]
    assert (plugin["source"], plugin["target"], plugin["error"]) == (
        DIST, "one_shot_agent:OneShotAgent", None)
    assert "no_such_module" in rows["coding agent", "broken"]["error"]
    table = _benchwright(venv, "agents", "list", env={"COLUMNS": "200"})
    assert "one-shot" in table.stdout and DIST in table.stdout
    assert "broken: the agent plugin 'broken'" in table.stdout


def test_a_plugin_that_fails_to_load_names_itself_and_its_distribution(venv: Path,
                                                                       tmp_path: Path) -> None:
    done = _benchwright(venv, "run", "coding", "--agent", "broken", "--problem", "kv_server",
                        "--no-metrics", "--out", str(tmp_path / "run"))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr
    for needle in ("'broken'", DIST, "benchwright.agents", "No module named 'no_such_module'"):
        assert needle in lines[0], lines[0]
    assert not (tmp_path / "run").exists()


def test_module_colon_class_names_an_agent_where_it_lives(venv: Path) -> None:
    code = ("from benchwright.registry import CODING_AGENTS; "
            "print(CODING_AGENTS.get('one_shot_agent:OneShotAgent').__name__)")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == "OneShotAgent"
    assert CODING_AGENTS.get("benchwright.coding.agents.oracle:OracleAgent").name == "oracle"
    with pytest.raises(PluginError, match="'no_such_module:Agent' failed to load"):
        CODING_AGENTS.get("no_such_module:Agent")
