"""Issue 26, points 2, 6 and 7: one check for every path a user gives (too long, a symlink loop,
a FIFO or device, /proc, empty), on every path parameter of every command; a broken problem
folder refused before any run folder exists; options that conflict refused, every bound and
every environment variable the docs name checked; and the error line the last thing printed
(no progress bar before it). Each probe: exit 2, one `error:` line, no traceback, no hang
(30 s), nothing left at `{tmp}/o`."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import typer

from benchwright.cli.entry import command, takes_paths
from benchwright.cli.main import app
from tests.helpers.bad_input_probes import (
    FIFO,
    LOOP,
    QUICK_CONFIG,
    RUN,
    WEB_RUN,
    Probe,
    run_probe,
    shared_probe_runs,
)
from tests.helpers.bad_input_probes import problem as _problem

LONG_NAME = "n" * 300
LONG_PATH = "/".join(["d" * 200] * 25)
BAD_KINDS = {"long-name": LONG_NAME, "long-path": LONG_PATH, "empty": "", "blank": "  ",
             "proc": "/proc/self", "dev-null": "/dev/null", "sys": "/sys/kernel",
             "nul": "a\0b"}


def _path_parameters() -> Iterator[tuple[str, Any, Any]]:
    """(command path, click command, parameter) for every path parameter of every command."""
    def walk(cmd: Any, path: list[str]) -> Iterator[tuple[str, Any, Any]]:
        subs = getattr(cmd, "commands", None)
        if subs is not None:
            for name in list(subs):
                yield from walk(subs[name], [*path, name])
            return
        for param in cmd.params:
            if takes_paths(param):
                yield " ".join(path), cmd, param
    yield from walk(command(app), [])


PATH_PARAMETERS = list(_path_parameters())


def test_the_path_parameters_are_all_found() -> None:
    """The walk sees every path option and argument (so the check below covers them)."""
    names = {f"{where} {param.name}" for where, _cmd, param in PATH_PARAMETERS}
    assert len(PATH_PARAMETERS) >= 45
    for expected in ("run coding agent_mount", "view bundle", "metrics static workspace",
                     "run web scripts", "eval checkpoint workspace", "run coding prompt",
                     "run web suite", "run coding python", "web tasks list python"):
        assert expected in names


@pytest.mark.parametrize("kind", list(BAD_KINDS))
def test_every_path_parameter_refuses_a_bad_path(tmp_path: Path, kind: str) -> None:
    """Each bad kind, given to each path parameter of each command (in-process: the parameter's
    own processing, as click runs it for a value from the command line)."""
    from typer._click.core import ParameterSource

    value = BAD_KINDS[kind]
    accepted = []
    for where, cmd, param in PATH_PARAMETERS:
        ctx = cmd.make_context(cmd.name, [], resilient_parsing=True)
        ctx.set_parameter_source(param.name, ParameterSource.COMMANDLINE)
        given = (value,) if param.multiple or param.nargs != 1 else value
        try:
            param.process_value(ctx, given)
        except typer.BadParameter:
            continue
        accepted.append(f"{where} {param.name}")
    assert not accepted, f"{kind} accepted by: {accepted}"


@pytest.mark.parametrize("kind", ["loop", "fifo"])
def test_every_path_parameter_refuses_a_loop_or_a_fifo(tmp_path: Path, kind: str) -> None:
    from typer._click.core import ParameterSource

    target = tmp_path / kind
    if kind == "loop":
        target.symlink_to(target.name)
    else:
        os.mkfifo(target)
    accepted = []
    for where, cmd, param in PATH_PARAMETERS:
        ctx = cmd.make_context(cmd.name, [], resilient_parsing=True)
        ctx.set_parameter_source(param.name, ParameterSource.COMMANDLINE)
        given = (str(target),) if param.multiple or param.nargs != 1 else str(target)
        try:
            param.process_value(ctx, given)
        except typer.BadParameter as exc:
            assert kind.replace("fifo", "named pipe").replace("loop", "symlink loop") in str(exc)
            continue
        accepted.append(f"{where} {param.name}")
    assert not accepted, f"{kind} accepted by: {accepted}"


def _config(old: str, new: str) -> dict[str, object]:
    assert old in QUICK_CONFIG
    return _problem({"config.yaml": QUICK_CONFIG.replace(old, new)})


def _path_probes() -> list[Probe]:
    """The issue's examples, end to end through the CLI."""
    run = ["run", "coding", "--problems-dir", "{tmp}/p", "--no-metrics", "--out", "{tmp}/o"]
    grade = ["eval", "checkpoint", "--problems-dir", "{tmp}/p", "--problem", "quick",
             "--checkpoint", "checkpoint_1", "--out", "{tmp}/o"]
    command_agent = [*run, "--agent", "command", "--agent-command", "true", "--agent-mount"]
    prob = _problem({})
    return [
        Probe("long-out", [*run[:-1], f"{{tmp}}/{LONG_NAME}"], prob, "--out"),
        Probe("long-problems-dir", ["run", "coding", "--problems-dir", LONG_NAME, "--out",
                                    "{tmp}/o"], {}, "255"),
        Probe("long-workspace", [*grade, "--workspace", LONG_NAME], prob, "--workspace"),
        Probe("long-report", ["report", LONG_NAME], {}, "255"),
        Probe("long-path-report", ["report", LONG_PATH], {}, "4096"),
        Probe("long-bundle", ["view", "--bundle", LONG_NAME], {}, "--bundle"),
        Probe("long-prompt", [*run, "--prompt", f"{LONG_NAME}.jinja"], prob, "--prompt"),
        Probe("long-suite", ["run", "web", "--suite", f"{LONG_NAME}.json", "--out", "{tmp}/o"],
              {}, "--suite"),
        Probe("long-python", [*run, "--python", f"/{LONG_NAME}"], prob, "--python"),
        Probe("loop-problems-dir", [*run[:2], "--problems-dir", "{tmp}/l", *run[4:]],
              {"l": LOOP}, "symlink loop"),
        Probe("loop-eval", ["eval", "{tmp}/l"], {"l": LOOP}, "symlink loop"),
        Probe("loop-view", ["view", "{tmp}/l"], {"l": LOOP}, "symlink loop"),
        Probe("loop-prompt", [*run, "--prompt", "{tmp}/l"], prob | {"l": LOOP}, "symlink loop"),
        Probe("loop-solutions", run, _problem({"solutions": LOOP}), "symlink loop"),
        Probe("loop-eval-checkpoint-solutions", grade, _problem({"solutions": LOOP}),
              "symlink loop"),
        Probe("proc-workspace", [*grade, "--workspace", "/proc/self"], prob, "--workspace"),
        Probe("empty-workspace", [*grade, "--workspace", ""], prob, "--workspace"),
        Probe("mount-empty", [*command_agent, ""], prob, "--agent-mount"),
        Probe("mount-proc", [*command_agent, "/proc/self"], prob, "--agent-mount"),
        Probe("mount-dev-null", [*command_agent, "/dev/null"], prob, "--agent-mount"),
        Probe("mount-fifo", [*command_agent, "{tmp}/f"], prob | {"f": FIFO}, "--agent-mount"),
        Probe("bundle-empty", ["view", "--bundle", ""], {}, "--bundle"),
        Probe("bundle-proc", ["view", "--bundle", "/proc/self"], {}, "--bundle"),
        Probe("bundle-dev-null", ["view", "--bundle", "/dev/null"], {}, "--bundle"),
        Probe("bundle-fifo", ["view", "--bundle", "{tmp}/f"], {"f": FIFO}, "--bundle"),
        Probe("static-empty", ["metrics", "static", "--workspace", ""], {}, "--workspace"),
        Probe("static-proc", ["metrics", "static", "--workspace", "/proc/self"], {},
              "--workspace"),
        Probe("static-dev-null", ["metrics", "static", "--workspace", "/dev/null"], {},
              "--workspace"),
        Probe("scripts-empty", ["run", "web", "--scripts", "", "--out", "{tmp}/o"], {},
              "--scripts"),
        Probe("scripts-proc", ["run", "web", "--scripts", "/proc/self", "--out", "{tmp}/o"], {},
              "--scripts"),
        Probe("scripts-dev-null", ["run", "web", "--scripts", "/dev/null", "--out", "{tmp}/o"],
              {}, "--scripts"),
        Probe("scripts-fifo", ["run", "web", "--scripts", "{tmp}/f", "--out", "{tmp}/o"],
              {"f": FIFO}, "--scripts"),
        Probe("python-not-python", [*run, "--python", "/bin/true"], prob, "/bin/true"),
        Probe("lock-fifo-resume", ["run", "coding", "--resume", "{tmp}/r"],
              {"r": RUN, "r/.lock": FIFO}, ".lock"),
        Probe("lock-fifo-eval", ["eval", "{tmp}/r"], {"r": RUN, "r/.lock": FIFO}, ".lock"),
        Probe("lock-fifo-web-resume", ["run", "web", "--resume", "{tmp}/w"],
              {"w": WEB_RUN, "w/.lock": FIFO}, ".lock"),
    ]


def _cache_probes() -> list[Probe]:
    """BENCHWRIGHT_CACHE_DIR, checked as a path option is (the argv's first item sets it)."""
    run = ["run", "coding", "--problems-dir", "{tmp}/p", "--no-metrics", "--out", "{tmp}/o"]
    grade = ["eval", "checkpoint", "--problems-dir", "{tmp}/p", "--problem", "quick",
             "--checkpoint", "checkpoint_1", "--out", "{tmp}/o"]
    prob = _problem({})
    cases = {"file": ("{tmp}/f", {"f": "x"}), "dev-null": ("/dev/null", {}),
             "under-file": ("{tmp}/f/c", {"f": "x"}), "loop": ("{tmp}/l", {"l": LOOP}),
             "long": (f"{{tmp}}/{LONG_NAME}", {})}
    return [Probe(f"cache-{name}-{cmd}", [f"BENCHWRIGHT_CACHE_DIR={value}", *argv],
                  prob | files, "BENCHWRIGHT_CACHE_DIR")
            for name, (value, files) in cases.items()
            for cmd, argv in {"run": run, "eval-checkpoint": grade}.items()]


def _problem_config_probes() -> list[Probe]:
    """A broken problem refused before the run folder exists (docs/runs.md: problems are
    checked first), by `run coding` and `eval checkpoint`."""
    run = ["run", "coding", "--problems-dir", "{tmp}/p", "--no-metrics", "--out", "{tmp}/o"]
    grade = ["eval", "checkpoint", "--problems-dir", "{tmp}/p", "--problem", "quick",
             "--checkpoint", "checkpoint_1", "--out", "{tmp}/o"]
    cases: list[tuple[str, dict[str, object], str]] = [
        ("timeout-true", _config("timeout: 10", "timeout: true"), "timeout"),
        ("checkpoint-timeout-false", _config("{version: 1, order: 1}",
                                             "{version: 1, order: 1, timeout: false}"), "timeout"),
        ("order-true", _config("{version: 1, order: 1}", "{version: 1, order: true}"), "order"),
        ("order-duplicate", _config("{version: 1, order: 2}", "{version: 1, order: 1}"),
         "same order"),
        ("order-negative", _config("{version: 1, order: 1}", "{version: 1, order: -1}"), "order"),
        ("order-zero", _config("{version: 1, order: 1}", "{version: 1, order: 0}"), "order"),
        ("no-tests", _problem({"tests": None}), "tests/"),
        ("tests-a-file", _problem({"tests": "not a folder"}), "tests/"),
        ("dependency-marker", _config("timeout: 10", "timeout: 10\ntest_dependencies: "
                                      "[\"requests; python_version < '4'\"]"), "marker"),
        ("dependency-option", _config("timeout: 10", "timeout: 10\ntest_dependencies: "
                                      "[\"--index-url=http://evil\"]"), "requirement"),
    ]
    return [Probe(f"{cmd}-{name}", argv, files, fragment) for name, files, fragment in cases
            for cmd, argv in {"run": run, "eval-checkpoint": grade}.items()]


def _option_probes() -> list[Probe]:
    """Options another option makes meaningless, two sources of one setting, and bounds."""
    run = ["run", "coding", "--problems-dir", "{tmp}/p", "--no-metrics", "--out", "{tmp}/o"]
    web = ["run", "web", "--out", "{tmp}/o"]
    judge = ["metrics", "judge", "{tmp}/r", "--model", "openai/gpt-4.1"]
    prob = _problem({})
    local = "--base-url=http://127.0.0.1:9/v1"
    return [
        Probe("agent-command-with-oracle", [*run, "--agent-command", "echo hi"], prob,
              "--agent-command"),
        Probe("agent-command-with-mini", ["OPENAI_API_KEY=sk-probe", *run, "--agent", "mini",
                                          "--model", "openai/gpt-4.1", "--agent-command", "x"],
              prob, "--agent-command"),
        Probe("replay-from-with-oracle", [*run, "--replay-from", "{tmp}/r"], prob | {"r": RUN},
              "--replay-from"),
        Probe("replay-from-a-web-run", [*run, "--agent", "replay", "--replay-from", "{tmp}/w"],
              prob | {"w": WEB_RUN}, "web run"),
        Probe("web-eval-config-and-run", ["web", "eval", "{tmp}/w/tasks", "--run", "{tmp}/w",
                                          "--config", "{tmp}/c.yaml"],
              {"w": WEB_RUN, "c.yaml": "sites: {}\n"}, "--config"),
        Probe("web-eval-dataset-and-run", ["web", "eval", "{tmp}/w/tasks", "--run", "{tmp}/w",
                                           "--dataset", "{tmp}/d.json"],
              {"w": WEB_RUN, "d.json": "[]"}, "--dataset"),
        Probe("agent-json-decoder", [*run, "--agent", "json:JSONDecoder"], prob, "from_setup"),
        Probe("agent-os-system", [*run, "--agent", "os:system"], prob, "from_setup"),
        Probe("web-agent-os-system", [*web, "--agent", "os:system"], {}, "from_setup"),
        Probe("web-agent-json-decoder", [*web, "--agent", "json:JSONDecoder"], {},
              "from_setup"),
        Probe("python-true", [*run, "--python", "/bin/true"], prob, "/bin/true"),
        Probe("judge-max-cost-huge", [*judge, local, "--max-cost", "1e400"], {"r": RUN},
              "--max-cost"),
        Probe("judge-max-cost-nan", [*judge, local, "--max-cost", "nan"], {"r": RUN},
              "--max-cost"),
        Probe("judge-api-key-env-unset", [*judge, local, "--api-key-env", "NO_SUCH_KEY_VAR"],
              {"r": RUN}, "NO_SUCH_KEY_VAR"),
        Probe("judge-no-key", judge, {"r": RUN}, "OPENAI_API_KEY"),
        Probe("judge-base-url-bad", [*judge, "--base-url", "notaurl"], {"r": RUN},
              "--base-url"),
        Probe("view-host-empty", ["view", "{tmp}/r", "--host", "", "--no-open"], {"r": RUN},
              "--host"),
        Probe("view-host-space", ["view", "{tmp}/r", "--host", "a b", "--no-open"],
              {"r": RUN}, "--host"),
        Probe("view-host-url", ["view", "{tmp}/r", "--host", "http://x", "--no-open"],
              {"r": RUN}, "--host"),
        Probe("package-har-log-a-number", ["web", "package", "{tmp}/w", "--out", "{tmp}/o"],
              {"w": WEB_RUN, "w/tasks/7001/trial_1/network.har": '{"log": 5}'}, "network.har"),
    ]


def _env_probes() -> list[Probe]:
    """Every environment variable the docs name, checked like its option, on every command
    that reads it."""
    run = ["run", "coding", "--problems-dir", "{tmp}/p", "--no-metrics", "--out", "{tmp}/o"]
    web = ["run", "web", "--out", "{tmp}/o"]
    fake = "BENCHWRIGHT_WEB_TRIAL_RUNNER=fake"
    judge = ["metrics", "judge", "{tmp}/r", "--model", "openai/gpt-4.1"]
    prob = _problem({})
    probes = [Probe(f"fake-delay-{name}", [fake, f"BENCHWRIGHT_FAKE_TRIAL_DELAY_S={value}", *web],
                    {}, "BENCHWRIGHT_FAKE_TRIAL_DELAY_S")
              for name, value in (("nan", "nan"), ("negative", "-1"), ("word", "abc"),
                                  ("inf", "inf"), ("huge", "1e9"))]
    return [*probes,
        Probe("llm-base-url-run-web", ["BENCHWRIGHT_LLM_BASE_URL=notaurl", *web], {},
              "BENCHWRIGHT_LLM_BASE_URL"),
        Probe("llm-base-url-run-web-browser-use", ["BENCHWRIGHT_LLM_BASE_URL=notaurl", *web,
              "--agent", "browser-use", "--model", "m"], {}, "BENCHWRIGHT_LLM_BASE_URL"),
        Probe("llm-base-url-run-coding", ["BENCHWRIGHT_LLM_BASE_URL=notaurl", *run], prob,
              "base_url"),
        Probe("judge-base-url-env", ["BENCHWRIGHT_JUDGE_BASE_URL=notaurl", *judge],
              {"r": RUN}, "BENCHWRIGHT_JUDGE_BASE_URL"),
        Probe("trial-runner-unknown", ["BENCHWRIGHT_WEB_TRIAL_RUNNER=nope", *web], {},
              "trial runner"),
        Probe("config-file-loop", ["BENCHWRIGHT_CONFIG={tmp}/l", "report", "{tmp}/r"],
              {"r": RUN, "l": LOOP}, "defaults file"),
        Probe("config-file-fifo", ["BENCHWRIGHT_CONFIG={tmp}/f", "report", "{tmp}/r"],
              {"r": RUN, "f": FIFO}, "f"),
        Probe("config-file-long", [f"BENCHWRIGHT_CONFIG={LONG_NAME}", "report", "{tmp}/r"],
              {"r": RUN}, "defaults file"),
        Probe("site-url-env", ["BENCHWRIGHT_WEB_SHOPPING_URL=notaurl", "web", "env", "status",
                               "--site", "shopping"], {}, "BENCHWRIGHT_WEB_SHOPPING_URL"),
    ]


def _progress_probes() -> list[Probe]:
    """Input errors of the commands with a progress bar: the error line is the only line."""
    judge = ["metrics", "judge", "{tmp}/r", "--model", "openai/gpt-4.1",
             "--base-url", "http://127.0.0.1:9/v1"]
    return [
        Probe("bundle-not-empty", ["view", "{tmp}/r", "--bundle", "{tmp}/b"],
              {"r": RUN, "b/keep": "x"}, "not empty"),
        Probe("bundle-a-file", ["view", "{tmp}/r", "--bundle", "{tmp}/b"], {"r": RUN, "b": "x"},
              "not a folder"),
        Probe("bundle-runs-missing", ["view", "{tmp}/none", "--bundle", "{tmp}/b"], {},
              "none"),
        Probe("bundle-of-no-run", ["view", "{tmp}/e", "--bundle", "{tmp}/b"], {"e/x.txt": "x"},
              "no run found"),
        Probe("judge-rubric-not-json", [*judge, "--rubric", "{tmp}/k.jsonl"],
              {"r": RUN, "k.jsonl": "{"}, "k.jsonl"),
        Probe("judge-problem-unknown", [*judge, "--problem", "nope"], {"r": RUN}, "nope"),
        Probe("judge-prefix-template-bad", [*judge, "--prefix-template", "{tmp}/t.jinja"],
              {"r": RUN, "t.jinja": "{% if %}"}, "template"),
        Probe("judge-a-web-run", [*judge], {"r": WEB_RUN}, "web"),
    ]


def _read_back_probes() -> list[Probe]:
    """Files the issue lists that printed a traceback when re-probed (scripts/probe_bad_inputs.py):
    a web config whose `sites:` is a list or whose URL has a space or a port past 65535, and a
    3,000-deep benchwright.toml in the current folder (read by every command)."""
    status = ["web", "env", "status", "--site", "shopping", "--config", "{tmp}/c.yaml"]
    urls = {"space": "http://a b", "port": "http://a:99999", "tab": "http://a\tb"}
    return [
        Probe("config-sites-a-list", status, {"c.yaml": "sites: [a]\n"}, "sites:"),
        *[Probe(f"config-url-{name}", status,
                {"c.yaml": f"sites:\n  shopping:\n    url: {json.dumps(url)}\n"}, "url")
          for name, url in urls.items()],
        Probe("run-web-config-url-space", ["run", "web", "--out", "{tmp}/o", "--config",
                                           "{tmp}/c.yaml"],
              {"c.yaml": "sites:\n  shopping:\n    url: http://a b\n"}, "url"),
        Probe("defaults-file-deep", ["report", "{tmp}/r"],
              {"r": RUN, "benchwright.toml": "a = " + "[" * 3000 + "]" * 3000 + "\n"},
              "benchwright.toml"),
    ]


GROUPS = {"read-back": _read_back_probes, "paths": _path_probes, "cache-dir": _cache_probes,
          "problem-configs": _problem_config_probes, "options": _option_probes,
          "environment": _env_probes, "progress": _progress_probes}


# Session scope, and the runs made once per session (tests/helpers/shared_runs.py): the probe
# groups spread over the xdist workers (a module fixture puts every test of this file on one
# worker, tests/conftest.py `_group`).
@pytest.fixture(scope="session")
def probe_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[object, Path]:
    """A finished coding run and a finished web run the probes copy."""
    return shared_probe_runs(tmp_path_factory)


@pytest.mark.parametrize("group", list(GROUPS))
def test_every_bad_input_gets_one_line_and_exit_2(tmp_path: Path,
                                                  probe_runs: dict[object, Path],
                                                  group: str) -> None:
    selected = os.environ.get("BENCHWRIGHT_PROBES")  # a substring, to run some while iterating
    probes = [p for p in GROUPS[group]() if not selected or selected in p.name]
    with ThreadPoolExecutor(2) as pool:
        verdicts = list(pool.map(lambda p: run_probe(p, tmp_path, probe_runs), probes))
    failures = [v for v in verdicts if v is not None]
    assert not failures, f"{len(failures)} of {len(probes)} probes failed:\n" + "\n".join(
        failures)


def test_probe_names_are_unique() -> None:
    names = [p.name for group in GROUPS.values() for p in group()]
    assert len(names) == len(set(names)) and len(names) >= 100
