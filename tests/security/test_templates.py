"""Templates are data: a prompt or judge template that reaches for Python's internals, other
files or unbounded work is one clear line, exit 2, within 30 s, before any run folder exists,
through every command that takes one (`run coding --prompt`, `run web --prompt`, `metrics judge
--prefix-template/--criteria-template`). Written as an attacker sharing a template would."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import benchwright
from tests.helpers import FIXTURES
from tests.helpers.cli import run_cli
from tests.helpers.shared_runs import quick_finished_run

SOURCE_ROOT = str(Path(benchwright.__file__).resolve().parents[1])
LIMIT_S = 30

# name -> (template, a fragment of the one-line error)
HOSTILE = {
    "globals-popen": ("{{ lipsum.__globals__['os'].popen('touch MARK').read() }}", "lipsum"),
    "class-walk": ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "unsafe"),
    "cycler-init": ("{{ cycler.__init__.__globals__.os.popen('touch MARK').read() }}", "unsafe"),
    "include": ("{% include '/etc/passwd' %}", "{% include %} is not allowed"),
    "extends": ("{% extends '/etc/passwd' %}", "{% extends %} is not allowed"),
    "import": ("{% import '/etc/passwd' as p %}", "{% import %} is not allowed"),
    "recursive-macro": ("{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}", "deep"),
    "huge-string": ("{{ 'a' * 10**10 }}", "over the limit"),
    "huge-range": ("{% for i in range(10**9) %}{% endfor %}", "range()"),
    "nested-loops": ("{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}"
                     "{% endfor %}", "loop steps"),
    "doubling": ("{% set ns = namespace(s='ab') %}{% for i in range(64) %}"
                 "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}", "over the limit"),
    "wide-format": ("{{ '{:>9999999999}'.format(1) }}", "wider than the limit"),
    "wide-ljust": ("{{ 'a'.ljust(10**10) }}", "over the limit"),
}


def _cli(argv: list[str], cwd: Path, extra_env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env.update({"PYTHONPATH": SOURCE_ROOT, "COLUMNS": "200", "NO_COLOR": "1", **(extra_env or {})})
    return run_cli(*argv, env=env, cwd=cwd, timeout=LIMIT_S)


def _refused(done: subprocess.CompletedProcess[str], fragment: str, folder: Path) -> None:
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and fragment in done.stderr, done.stderr[-2000:]
    assert len(lines) <= 3, done.stderr  # one error line (rich may wrap it)
    assert not (folder / "MARK").exists()  # nothing ran on the host


def _template(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "t.jinja"
    path.write_text(text)
    return path


@pytest.mark.e2e
@pytest.mark.parametrize("name", list(HOSTILE))
def test_run_coding_refuses_a_hostile_prompt_before_the_run(tmp_path: Path, name: str) -> None:
    text, fragment = HOSTILE[name]
    shutil.copytree(FIXTURES / "runs" / "quick", tmp_path / "p" / "quick")
    path = _template(tmp_path, text)
    done = _cli(["run", "coding", "--problems-dir", str(tmp_path / "p"), "--no-metrics",
                 "--out", str(tmp_path / "o"), "--prompt", str(path)], cwd=tmp_path)
    _refused(done, fragment, tmp_path)
    assert not (tmp_path / "o").exists()


@pytest.mark.e2e
@pytest.mark.parametrize("name", list(HOSTILE))
def test_run_web_refuses_a_hostile_prompt_before_the_run(tmp_path: Path, name: str) -> None:
    from tests.helpers.web_suites import write_suite

    text, fragment = HOSTILE[name]
    tasks, config = write_suite(tmp_path / "suite")
    path = _template(tmp_path, text)
    done = _cli(["run", "web", "--suite", str(tasks), "--config", str(config), "--task-ids",
                 "7001", "--out", str(tmp_path / "w"), "--prompt", str(path)], cwd=tmp_path,
                extra_env={"BENCHWRIGHT_WEB_TRIAL_RUNNER": "fake"})
    _refused(done, fragment, tmp_path)
    assert not (tmp_path / "w").exists()


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real, finished run of the `quick` fixture problem (oracle agent), made once per test
    session (tests.helpers.shared_runs), this module's own copy."""
    return quick_finished_run(tmp_path_factory)


@pytest.mark.e2e
@pytest.mark.sandbox
@pytest.mark.parametrize("option", ["--prefix-template", "--criteria-template"])
@pytest.mark.parametrize("name", ["globals-popen", "include", "recursive-macro", "huge-string",
                                  "huge-range", "nested-loops"])
def test_metrics_judge_refuses_a_hostile_template(tmp_path: Path, finished_run: Path,
                                                  name: str, option: str) -> None:
    text, fragment = HOSTILE[name]
    path = _template(tmp_path, text)
    done = _cli(["metrics", "judge", str(finished_run), "--model", "m", "--base-url",
                 "http://127.0.0.1:9/v1", option, str(path)], cwd=tmp_path,
                extra_env={"OPENAI_API_KEY": "sk-test-not-used"})
    if name == "globals-popen":  # the judge's templates are lenient: `lipsum` is empty there
        fragment = "undefined"
    _refused(done, fragment, tmp_path)
    assert not list(finished_run.rglob("judge.json"))


def test_an_ordinary_template_still_renders() -> None:
    from benchwright.templating import render

    text = ("{% macro line(x) %}- {{ x|upper }}{% endmacro %}{% for i in range(3) %}"
            "{{ line(spec ~ i) }}\n{% endfor %}{{ '%d%%' % 5 }} {{ '{:,}'.format(12345678) }}")
    assert render(text, {"spec": "s"}) == "- S0\n- S1\n- S2\n5% 12,345,678"
