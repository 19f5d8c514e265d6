"""Every example of issue 26's list, run as a user would (`python -m benchwright` subprocesses, no
key, a 30 s limit each), with the verdict of tests/helpers/bad_input_probes: one `error:` line
holding a fragment, exit 2 (or the code the docs give), no traceback, no run folder left.

    .venv/bin/python scripts/probe_bad_inputs.py [--only SUBSTRING] [--workers 2]

Prints one line per probe that is not answered cleanly, then the counts per kind of failure
(traceback, hung, exit 0, wrong exit code, not one line, wrong message, run folder left) and per
section of the issue. The faults (kill -9, full disks) have their own: scripts/kill_resume.py and
tests/runs/ (ENOSPC, EROFS)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers.bad_input_probes import (  # noqa: E402
    DIR,
    FIFO,
    LOOP,
    QUICK_CONFIG,
    RUN,
    WEB_RUN,
    Probe,
    edit_line,
    finished_web_run,
    problem,
    repeat_line,
    run_probe,
)
from tests.helpers.harbor_probes import harbor_probes  # noqa: E402
from tests.helpers.shared_runs import make_quick_run  # noqa: E402

LONG = "n" * 300
RUN_CODING = ["run", "coding", "--problems-dir", "{tmp}/p", "--no-metrics", "--out", "{tmp}/o"]
GRADE = ["eval", "checkpoint", "--problems-dir", "{tmp}/p", "--problem", "quick", "--checkpoint",
         "checkpoint_1", "--out", "{tmp}/o"]
JUDGE = ["metrics", "judge", "{tmp}/r", "--model", "openai/gpt-4.1",
         "--base-url", "http://127.0.0.1:9/v1"]
WEB = ["run", "web", "--out", "{tmp}/o"]
FAKE = "BENCHWRIGHT_WEB_TRIAL_RUNNER=fake"
JOURNAL = "r/quick/trial_1/journal.jsonl"
WEB_JOURNAL = "w/journal.jsonl"
Section = list[Probe]


def _config(old: str, new: str) -> dict[str, object]:
    assert old in QUICK_CONFIG, old
    return problem({"config.yaml": QUICK_CONFIG.replace(old, new)})


def _manifest(change: dict[str, object]) -> Callable[[Path], None]:
    def edit(path: Path) -> None:
        data = json.loads(path.read_text())
        data["config"].update(change)
        path.write_text(json.dumps(data))
    return edit


def paths() -> Section:
    prob = problem({})
    mount = [*RUN_CODING, "--agent", "command", "--agent-command", "true", "--agent-mount"]
    probes = [
        Probe("long-out", [*RUN_CODING[:-1], f"{{tmp}}/{LONG}"], prob, "--out"),
        Probe("long-problems-dir", ["run", "coding", "--problems-dir", LONG], {},
              "--problems-dir"),
        Probe("long-workspace", [*GRADE, "--workspace", LONG], prob, "--workspace"),
        Probe("long-report", ["report", LONG], {}, "255"),
        Probe("long-view-bundle", ["view", "--bundle", LONG], {}, "--bundle"),
        Probe("long-prompt", [*RUN_CODING, "--prompt", f"{LONG}.jinja"], prob, "--prompt"),
        Probe("long-suite", [*WEB, "--suite", f"{LONG}.json"], {}, "--suite"),
        Probe("loop-problems-dir", ["run", "coding", "--problems-dir", "{tmp}/l", "--out",
                                    "{tmp}/o"], {"l": LOOP}, "symlink loop"),
        Probe("loop-eval", ["eval", "{tmp}/l"], {"l": LOOP}, "symlink loop"),
        Probe("loop-report", ["report", "{tmp}/l"], {"l": LOOP}, "symlink loop"),
        Probe("loop-view", ["view", "{tmp}/l"], {"l": LOOP}, "symlink loop"),
        Probe("loop-prompt", [*RUN_CODING, "--prompt", "{tmp}/l"], prob | {"l": LOOP},
              "symlink loop"),
        Probe("loop-solutions-run", RUN_CODING, problem({"solutions": LOOP}), "symlink loop"),
        Probe("loop-solutions-grade", GRADE, problem({"solutions": LOOP}), "symlink loop"),
        Probe("proc-self-workspace", [*GRADE, "--workspace", "/proc/self"], prob, "--workspace"),
        Probe("lock-fifo-resume", ["run", "coding", "--resume", "{tmp}/r"],
              {"r": RUN, "r/.lock": FIFO}, ".lock"),
        Probe("lock-fifo-eval", ["eval", "{tmp}/r"], {"r": RUN, "r/.lock": FIFO}, ".lock"),
        Probe("empty-workspace-grade", [*GRADE, "--workspace", ""], prob, "--workspace"),
    ]
    for name, value in (("file", "{tmp}/f"), ("dev-null", "/dev/null"),
                        ("under-a-file", "{tmp}/f/c")):
        probes.append(Probe(f"cache-dir-{name}", [f"BENCHWRIGHT_CACHE_DIR={value}", *RUN_CODING],
                            prob | {"f": "x"}, "BENCHWRIGHT_CACHE_DIR"))
    for name, value, files in (("empty", "", {}), ("proc", "/proc/self", {}),
                               ("dev-null", "/dev/null", {}), ("fifo", "{tmp}/f", {"f": FIFO})):
        probes += [
            Probe(f"mount-{name}", [*mount, value], prob | files, "--agent-mount"),
            Probe(f"bundle-{name}", ["view", "--bundle", value], files, "--bundle"),
            Probe(f"static-{name}", ["metrics", "static", "--workspace", value], files,
                  "--workspace"),
            Probe(f"scripts-{name}", [*WEB, "--scripts", value], files, "--scripts")]
    return probes


def templates() -> Section:
    bodies = {
        "include": "{% include 'x' %}", "extends": "{% extends 'x' %}",
        "import": "{% import 'x' as y %}",
        "recursive-macro": "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}",
        "memory": "{{ 'a' * 10**10 }}", "range": "{% for i in range(10**9) %}x{% endfor %}"}
    probes = [Probe(f"prompt-{name}", [*RUN_CODING, "--prompt", "{tmp}/t.jinja"],
                    problem({}) | {"t.jinja": body}, "template")
              for name, body in bodies.items()]
    probes += [Probe(f"judge-{name}", [*JUDGE, "--prefix-template", "{tmp}/t.jinja"],
                     {"r": RUN, "t.jinja": body}, "template") for name, body in bodies.items()]
    return probes


def files_read_back() -> Section:
    deep = "[" * 5000 + "]" * 5000
    return [
        Probe("diff-deep", ["eval", "{tmp}/r"],
              {"r": RUN, "r/quick/trial_1/checkpoint_2/diff.json": deep}, "diff.json"),
        Probe("rubric-deep", [*JUDGE, "--rubric", "{tmp}/k.jsonl"],
              {"r": RUN, "k.jsonl": deep}, "k.jsonl"),
        Probe("null-agent-response", ["web", "eval", "{tmp}/d"],
              {"d/7001/agent_response.json": "null", "d/7001/network.har": "{}"},
              "agent_response.json"),
        Probe("null-dataset", ["web", "eval", "{tmp}/d", "--dataset", "{tmp}/n.json"],
              {"d": DIR, "n.json": "null"}, "n.json"),
        Probe("null-suite", [*WEB, "--suite", "{tmp}/n.json"], {"n.json": "null"}, "n.json"),
        Probe("null-cookies", [*WEB, "--cookies", "{tmp}/n.json"], {"n.json": "null"},
              "n.json"),
        Probe("config-sites-list", ["web", "env", "status", "--site", "shopping", "--config",
                                    "{tmp}/c.yaml"], {"c.yaml": "sites: [a]\n"}, "c.yaml"),
        Probe("config-url-space", ["web", "env", "status", "--site", "shopping", "--config",
                                   "{tmp}/c.yaml"],
              {"c.yaml": "sites:\n  shopping:\n    url: http://a b\n"}, "url"),
        Probe("toml-deep", ["report", "{tmp}/r"],
              {"r": RUN, "benchwright.toml": "a = " + "[" * 3000 + "]" * 3000 + "\n"},
              "benchwright.toml"),
    ]


def run_folders() -> Section:
    coding: list[tuple[str, dict[str, object], str]] = [
        ("duplicate-line", {JOURNAL: repeat_line(1)}, "repeats"),
        ("negative-count", {JOURNAL: edit_line(1, {"counts.Core.passed": -1})}, "line 1"),
        ("passed-over-total", {JOURNAL: edit_line(2, {"counts.Core.passed": 99})}, "line 2"),
        ("negative-tokens", {JOURNAL: edit_line(1, {"agent.usage.input_tokens": -5})}, "negative"),
        ("nan-cost", {JOURNAL: edit_line(1, {"": '{"format": "benchwright.checkpoint/1", '
                                             '"cost": NaN}'})}, "finite"),
        ("other-problem", {JOURNAL: edit_line(1, {"problem": "other"})}, "'other'"),
        ("other-trial", {JOURNAL: edit_line(1, {"trial": 2})}, "trial 2"),
        ("newer-format", {JOURNAL: edit_line(1, {"format": "benchwright.checkpoint/2"})}, "newer"),
        ("manifest-trials-true", {"r/manifest.json": _manifest({"trials": True})}, "trials"),
        ("manifest-no-problems", {"r/manifest.json": _manifest({"problems": []})}, "problems"),
        ("manifest-agent-unknown", {"r/manifest.json": _manifest({"agent": "nope"})}, "agent"),
        ("manifest-prompt-unknown", {"r/manifest.json": _manifest({"prompt": "nope"})},
         "prompt")]
    commands = {"resume": ["run", "coding", "--resume", "{tmp}/r", "--no-metrics"],
                "eval": ["eval", "{tmp}/r"], "report": ["report", "{tmp}/r"]}
    probes = [Probe(f"{cmd}-{name}", argv, {"r": RUN, **files}, fragment)
              for name, files, fragment in coding for cmd, argv in commands.items()]
    web: list[tuple[str, Callable[[Path], None], str]] = [
        ("duplicate-line", repeat_line(1), "repeats"),
        ("unknown-task", edit_line(1, {"task_id": 99999}), "99999"),
        ("unknown-status", edit_line(1, {"status": "nope"}), "status"),
        ("negative-steps", edit_line(1, {"steps": -1}), "negative"),
        ("trial-word", edit_line(1, {"trial": "one"}), "trial")]
    web_commands = {"resume": ["run", "web", "--resume", "{tmp}/w"],
                    "eval": ["eval", "{tmp}/w"], "report": ["report", "{tmp}/w"]}
    return probes + [Probe(f"web-{cmd}-{name}", argv, {"w": WEB_RUN, WEB_JOURNAL: edit},
                           fragment)
                     for name, edit, fragment in web for cmd, argv in web_commands.items()]


def problem_configs() -> Section:
    cases: list[tuple[str, dict[str, object], str]] = [
        ("timeout-true", _config("timeout: 10", "timeout: true"), "timeout"),
        ("order-duplicate", _config("{version: 1, order: 2}", "{version: 1, order: 1}"),
         "same order"),
        ("order-negative", _config("{version: 1, order: 1}", "{version: 1, order: -1}"), "order"),
        ("no-tests", problem({"tests": None}), "tests/"),
        ("tests-a-file", problem({"tests": "not a folder"}), "tests/"),
        ("dependency-marker", _config("timeout: 10", "timeout: 10\ntest_dependencies: "
                                      "[\"requests; python_version < '4'\"]"), "marker")]
    return [Probe(f"{cmd}-{name}", argv, files, fragment) for name, files, fragment in cases
            for cmd, argv in {"run": RUN_CODING, "grade": GRADE}.items()]


def options() -> Section:
    prob = problem({})
    judge = ["metrics", "judge", "{tmp}/r", "--model", "openai/gpt-4.1"]
    local = "--base-url=http://127.0.0.1:9/v1"
    probes = [
        Probe("agent-json-decoder", [*RUN_CODING, "--agent", "json:JSONDecoder"], prob,
              "from_setup"),
        Probe("agent-os-system", [*RUN_CODING, "--agent", "os:system"], prob, "from_setup"),
        Probe("python-true", [*RUN_CODING, "--python", "/bin/true"], prob, "/bin/true"),
        Probe("max-cost-1e400", [*judge, local, "--max-cost", "1e400"], {"r": RUN},
              "--max-cost"),
        Probe("api-key-env-unset", [*judge, local, "--api-key-env", "NO_SUCH_KEY_VAR"],
              {"r": RUN}, "NO_SUCH_KEY_VAR"),
        Probe("view-host-empty", ["view", "{tmp}/r", "--host", "", "--no-open"], {"r": RUN},
              "--host"),
        Probe("agent-command-with-oracle", [*RUN_CODING, "--agent-command", "echo hi"], prob,
              "--agent-command"),
        Probe("replay-from-a-web-run", [*RUN_CODING, "--agent", "replay", "--replay-from",
                                        "{tmp}/w"], prob | {"w": WEB_RUN}, "web run"),
        Probe("web-eval-config-and-run", ["web", "eval", "{tmp}/w/tasks", "--run", "{tmp}/w",
                                          "--config", "{tmp}/c.yaml"],
              {"w": WEB_RUN, "c.yaml": "sites: {}\n"}, "--config"),
        Probe("llm-base-url-notaurl", ["BENCHWRIGHT_LLM_BASE_URL=notaurl", *WEB], {},
              "BENCHWRIGHT_LLM_BASE_URL"),
        Probe("har-log-a-number-package", ["web", "package", "{tmp}/w", "--out", "{tmp}/o"],
              {"w": WEB_RUN, "w/tasks/7001/trial_1/network.har": '{"log": 5}'}, "network.har"),
    ]
    return probes + [Probe(f"fake-delay-{value}", [FAKE, f"BENCHWRIGHT_FAKE_TRIAL_DELAY_S={value}",
                                                   *WEB], {}, "BENCHWRIGHT_FAKE_TRIAL_DELAY_S")
                     for value in ("nan", "-1", "abc")]


def after_progress() -> Section:
    return [
        Probe("bundle-not-empty", ["view", "{tmp}/r", "--bundle", "{tmp}/b"],
              {"r": RUN, "b/keep": "x"}, "not empty"),
        Probe("bundle-a-file", ["view", "{tmp}/r", "--bundle", "{tmp}/b"], {"r": RUN, "b": "x"},
              "not a folder"),
        Probe("bundle-of-no-run", ["view", "{tmp}/e", "--bundle", "{tmp}/b"], {"e": DIR},
              "no run found"),
        Probe("judge-rubric-not-json", [*JUDGE, "--rubric", "{tmp}/k.jsonl"],
              {"r": RUN, "k.jsonl": "{"}, "k.jsonl"),
        Probe("judge-problem-unknown", [*JUDGE, "--problem", "nope"], {"r": RUN}, "nope"),
        Probe("judge-a-web-run", JUDGE, {"r": WEB_RUN}, "web"),
    ]


def missing_dependency() -> Section:
    return [Probe("web-local-without-browser-use",
                  ["BLOCK=browser_use", "run", "web", "--suite", "local", "--out", "{tmp}/o"], {},
                  "pip install --no-deps browser-use")]


def harbor_tasks() -> Section:
    """`run harbor` on bad task folders (the from-* probes ask podman; none starts a
    container)."""
    return harbor_probes("localhost/benchwright-probe/any:1")


SECTIONS: dict[str, Callable[[], Section]] = {
    "Paths": paths, "Templates": templates, "Files read back": files_read_back,
    "Run folders edited": run_folders, "Problem configs": problem_configs, "Options": options,
    "Errors after a progress line": after_progress, "Missing dependency": missing_dependency,
    "Harbor tasks": harbor_tasks}


def kind(verdict: str) -> str:
    """The kind of failure a verdict of run_probe names."""
    text = verdict.split(": ", 1)[1]
    for prefix, name in (("traceback", "traceback"), ("hung", "hung"), ("exit 0", "exit 0"),
                         ("exit", "wrong exit code"), ("not one line", "not one line"),
                         ("a run folder", "run folder left")):
        if text.startswith(prefix):
            return name
    return "wrong message"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="run the probes whose name holds this")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="issue26-probes-") as tmp:
        root = Path(tmp)
        runs = {RUN: make_quick_run(root / "runs"), WEB_RUN: finished_web_run(root / "web")}
        (root / "probes").mkdir()
        failed: Counter[str] = Counter()
        total = 0
        for section, make in SECTIONS.items():
            probes = [p._replace(name=f"{make.__name__}-{p.name}") for p in make()
                      if args.only in p.name]
            with ThreadPoolExecutor(args.workers) as pool:
                verdicts = list(pool.map(lambda p: run_probe(p, root / "probes", runs), probes))
            bad = [v for v in verdicts if v is not None]
            total += len(probes)
            print(f"{section}: {len(probes) - len(bad)}/{len(probes)} answered cleanly",
                  flush=True)
            for verdict in bad:
                print(f"  {verdict}")
                failed[kind(verdict)] += 1
        print(f"total: {total - sum(failed.values())}/{total} answered cleanly; "
              + (", ".join(f"{n} {k}" for k, n in failed.most_common()) or "no failure"))
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except subprocess.SubprocessError as exc:
        raise SystemExit(f"a finished run could not be made: {exc}") from None
