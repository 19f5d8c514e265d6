"""Every command answers bad input with one line and exit 2: no traceback, no hang, no silent
acceptance. Each probe is (argv, files to create, a fragment the message must hold); `{tmp}` in
argv is the probe's own folder. Probes run as a user would: `python -m benchwright` subprocesses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import benchwright
from tests.helpers import FIXTURES
from tests.helpers.bad_input_probes import RUN as SHARED_RUN
from tests.helpers.bad_input_probes import WEB_RUN as SHARED_WEB_RUN
from tests.helpers.bad_input_probes import Probe, edit_line, repeat_line, shared_probe_runs
from tests.helpers.bad_input_probes import verdict as _verdict
from tests.helpers.cli import run_cli

SOURCE_ROOT = str(Path(benchwright.__file__).resolve().parents[1])
"""The probes run from their own folders: import the benchwright this test imported."""

DIR = object()
"""A file entry that is a folder."""
FIFO = object()
"""A file entry that is a named pipe with no writer."""
RUN = object()
"""A file entry that is a copy of a finished coding run (of the `quick` fixture problem)."""
QUICK = object()
"""A file entry that is a copy of the `quick` fixture problem."""
WEB_RUN = object()
"""A file entry that is a copy of a finished web run (two tasks of the tests' own suite)."""

BAD_UTF8 = b"name: q\xff\xfe\n"
DEEP_JSON = "[" * 3000 + "]" * 3000
DEEP_YAML = "a: " + "[" * 1500 + "]" * 1500 + "\n"
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8))
BIG = "x" * 65
"""Not big: probes that need a big file write one with `big_file`."""
HUGE_INT = "99999999999999999999999"
MANIFEST_EDITS = ("trials", "problems", "agent", "prompt")
"""A file entry "key=value" for manifest.json sets config.key (JSON for lists and `true`)."""
QUICK_CONFIG = (FIXTURES / "runs" / "quick" / "config.yaml").read_text()


def _manifest(run_dir: Path, change: dict[str, object]) -> None:
    path = run_dir / "manifest.json"
    data = json.loads(path.read_text())
    data["config"].update(change)
    path.write_text(json.dumps(data))


def _coding_run_probes() -> list[Probe]:
    """`run coding --resume`, `eval RUN_DIR` and `report RUN_DIR` on damaged run folders."""
    damages: list[tuple[str, dict[str, object], str]] = [
        ("manifest-not-utf8", {"r/manifest.json": b'{"format": "\xff"}'}, "UTF-8"),
        ("manifest-folder", {"r/manifest.json": DIR}, "manifest.json"),
        ("manifest-fifo", {"r/manifest.json": FIFO}, "manifest.json"),
        ("manifest-deep", {"r/manifest.json": DEEP_JSON}, "manifest.json"),
        ("manifest-trials-huge", {"r/manifest.json": "trials=10**12"}, "trials"),
        ("manifest-list", {"r/manifest.json": "[]"}, "manifest.json"),
        ("journal-folder", {"r/quick/trial_1/journal.jsonl": DIR}, "journal.jsonl"),
        ("journal-fifo", {"r/quick/trial_1/journal.jsonl": FIFO}, "journal.jsonl"),
        ("trial-is-file", {"r/quick/trial_1": "not a folder"}, "trial_1"),
        ("infra-error-folder", {"r/quick/trial_1/infra_error.json": DIR}, "infra_error.json"),
    ]
    commands = {"resume": ["run", "coding", "--resume", "{tmp}/r", "--no-metrics"],
                "eval": ["eval", "{tmp}/r"], "report": ["report", "{tmp}/r"]}
    return [Probe(f"{cmd}-{name}", argv, {"r": RUN, **files}, fragment)
            for name, files, fragment in damages for cmd, argv in commands.items()]


def _problem(files: dict[str, object]) -> dict[str, object]:
    return {"p/quick": QUICK, **{f"p/quick/{k}": v for k, v in files.items()}}


def _problem_probes() -> list[Probe]:
    """A broken problem folder, through `run coding` and `eval checkpoint`."""
    nl = QUICK_CONFIG.replace("checkpoint_1:", '"checkpoint\\n_1":')
    cases: list[tuple[str, dict[str, object], str]] = [
        ("config-not-utf8", {"config.yaml": BAD_UTF8}, "UTF-8"),
        ("config-folder", {"config.yaml": DIR}, "config.yaml"),
        ("config-fifo", {"config.yaml": FIFO}, "config.yaml"),
        ("config-deep", {"config.yaml": DEEP_YAML}, "nested"),
        ("config-alias-bomb", {"config.yaml": ALIAS_BOMB}, "config.yaml"),
        ("timeout-nan", {"config.yaml": QUICK_CONFIG.replace("timeout: 10", "timeout: .nan")},
         "timeout"),
        ("timeout-inf", {"config.yaml": QUICK_CONFIG.replace("timeout: 10", "timeout: .inf")},
         "timeout"),
        ("timeout-negative", {"config.yaml": QUICK_CONFIG.replace("timeout: 10", "timeout: -5")},
         "timeout"),
        ("timeout-zero", {"config.yaml": QUICK_CONFIG.replace("timeout: 10", "timeout: 0")},
         "timeout"),
        ("checkpoint-name-newline", {"config.yaml": nl}, "checkpoint"),
        # A NUL byte reached a path or a process's environment: a traceback before.
        ("entry-nul", {"config.yaml": QUICK_CONFIG.replace("entry_file: calc",
                                                           'entry_file: "ca\\0lc"')},
         "entry_file"),
        ("env-nul", {"config.yaml": QUICK_CONFIG + 'env: {A: "x\\0y"}\n'}, "NUL"),
        ("env-name-equals", {"config.yaml": QUICK_CONFIG + 'env: {"A=B": "x"}\n'}, "A=B"),
    ]
    spec_cases: list[tuple[str, dict[str, object], str]] = [
        ("spec-missing", {"checkpoint_2.md": None}, "checkpoint_2.md"),
        ("spec-not-utf8", {"checkpoint_2.md": b"\xff\xfe spec"}, "UTF-8"),
        ("spec-folder", {"checkpoint_2.md": DIR}, "checkpoint_2.md"),
        ("spec-fifo", {"checkpoint_2.md": FIFO}, "checkpoint_2.md"),
    ]
    run = ["run", "coding", "--problems-dir", "{tmp}/p", "--no-metrics", "--out", "{tmp}/o"]
    check = ["eval", "checkpoint", "--problems-dir", "{tmp}/p", "--problem", "quick",
             "--checkpoint", "checkpoint_1", "--out", "{tmp}/o"]
    probes = [Probe(f"run-{name}", run, _problem(files), fragment)
              for name, files, fragment in cases + spec_cases]
    probes += [Probe(f"eval-checkpoint-{name}", check, _problem(files), fragment)
               for name, files, fragment in cases if name != "checkpoint-name-newline"]
    return probes


def _template_probes() -> list[Probe]:
    run = ["run", "coding", "--problems-dir", "{tmp}/p", "--no-metrics", "--out", "{tmp}/o",
           "--prompt"]
    cases: list[tuple[str, object, str]] = [
        ("syntax", "{% if %}\n", "template"), ("undefined", "{{ no_such_variable }}\n", "template"),
        ("binary", b"\x00\xff\xfe\x00", "UTF-8"), ("folder", DIR, "t.jinja"),
        ("fifo", FIFO, "t.jinja"), ("unknown-filter", "{{ spec | nosuchfilter }}", "template")]
    return [Probe(f"run-prompt-{name}", [*run, "{tmp}/t.jinja"],
                  _problem({}) | {"t.jinja": content}, fragment)
            for name, content, fragment in cases]


def _run_coding_probes() -> list[Probe]:
    base = ["run", "coding", "--problems-dir", "{tmp}/p", "--no-metrics"]
    out = [*base, "--out", "{tmp}/o"]
    prob = _problem({})
    return [
        Probe("run-trials-huge", [*out, "--trials", HUGE_INT], prob, "--trials"),
        Probe("run-trials-zero", [*out, "--trials", "0"], prob, "--trials"),
        Probe("run-trials-negative", [*out, "--trials", "-1"], prob, "--trials"),
        Probe("run-workers-huge", [*out, "--workers", "100000"], prob, "--workers"),
        Probe("run-workers-zero", [*out, "--workers", "0"], prob, "--workers"),
        Probe("run-out-is-file", [*base, "--out", "{tmp}/f"], prob | {"f": "x"}, "--out"),
        Probe("run-out-under-proc", [*base, "--out", "/proc/benchwright-probe"], prob, "--out"),
        Probe("run-out-empty", [*base, "--out", ""], prob, "--out"),
        Probe("run-out-under-file", [*base, "--out", "{tmp}/f/r"], prob | {"f": "x"}, "--out"),
        Probe("run-problems-dir-empty", ["run", "coding", "--problems-dir", "{tmp}/e",
                                         "--no-metrics", "--out", "{tmp}/o"],
              {"e": DIR}, "no problem"),
        Probe("run-problems-dir-file", ["run", "coding", "--problems-dir", "{tmp}/f",
                                        "--no-metrics", "--out", "{tmp}/o"],
              {"f": "x"}, "--problems-dir"),
        Probe("run-problems-dir-empty-string", ["run", "coding", "--problems-dir", "",
                                                "--no-metrics", "--out", "{tmp}/o"],
              {}, "--problems-dir"),
        Probe("run-problem-unknown", [*out, "--problem", "nope"], prob, "nope"),
        Probe("run-start-from-unknown", [*out, "--start-from", "nope"], prob, "--start-from"),
        Probe("run-agent-option-nan", [*out, "-A", "command_timeout_s=nan"], prob,
              "command_timeout_s"),
        Probe("run-agent-option-inf", [*out, "-A", "request_timeout_s=inf"], prob,
              "request_timeout_s"),
        Probe("run-agent-option-huge", [*out, "-A", f"step_limit={HUGE_INT}"], prob,
              "step_limit"),
        Probe("run-agent-option-negative", [*out, "-A", "llm_retries=-1"], prob, "llm_retries"),
        Probe("run-agent-option-bad", [*out, "-A", "nokey"], prob, "nokey"),
        Probe("run-agent-unknown", [*out, "--agent", "nope"], prob, "nope"),
        Probe("run-python-missing", [*out, "--python", "nope9"], prob, "nope9"),
        Probe("run-python-empty", [*out, "--python", ""], prob, "python"),
        Probe("run-command-agent-without-command", [*out, "--agent", "command"], prob,
              "--agent-command"),
        Probe("run-command-agent-blank-command", [*out, "--agent", "command",
                                                  "--agent-command", "  "], prob,
              "--agent-command"),
        Probe("run-agent-option-base-url", [*out, "-A", "base_url=notaurl"], prob, "base_url"),
        Probe("run-resume-missing", ["run", "coding", "--resume", "{tmp}/none"], {},
              "not a run directory"),
        Probe("run-resume-file", ["run", "coding", "--resume", "{tmp}/f"], {"f": "x"},
              "not a run directory"),
    ]


def _eval_checkpoint_probes() -> list[Probe]:
    base = ["eval", "checkpoint", "--problems-dir", "{tmp}/p", "--problem", "quick", "--checkpoint",
            "checkpoint_1"]
    out = [*base, "--out", "{tmp}/o"]
    prob = _problem({})
    bounds = [("wall-clock", "nan"), ("wall-clock", "inf"), ("wall-clock", "0"),
              ("wall-clock", "-1"), ("wall-clock", "1e300"), ("memory-mb", "-5"),
              ("memory-mb", "0"), ("memory-mb", "99999999999999"), ("max-processes", "-1"),
              ("max-processes", "0"), ("max-processes", "1000000000")]
    probes = [Probe(f"eval-checkpoint-{opt}-{value}", [*out, f"--{opt}", value], prob,
                    f"--{opt}") for opt, value in bounds]
    return [*probes,
        Probe("eval-checkpoint-out-is-file", [*base, "--out", "{tmp}/f"], prob | {"f": "x"},
              "--out"),
        Probe("eval-checkpoint-out-under-proc", [*base, "--out", "/proc/benchwright-probe"], prob,
              "--out"),
        Probe("eval-checkpoint-out-empty", [*base, "--out", ""], prob, "--out"),
        Probe("eval-checkpoint-workspace-file", [*out, "--workspace", "{tmp}/f"],
              prob | {"f": "x"}, "workspace"),
        Probe("eval-checkpoint-workspace-missing", [*out, "--workspace", "{tmp}/none"], prob,
              "workspace"),
        Probe("eval-checkpoint-unknown", ["eval", "checkpoint", "--problems-dir", "{tmp}/p",
              "--problem", "quick", "--checkpoint", "nope"], prob, "unknown checkpoint"),
        Probe("eval-checkpoint-newline-name", ["eval", "checkpoint", "--problems-dir",
              "{tmp}/p", "--problem", "quick", "--checkpoint", "checkpoint\n_1"], prob,
              "checkpoint"),
        Probe("eval-checkpoint-problem-traversal", ["eval", "checkpoint", "--problem", "../../..",
              "--checkpoint", "c"], {}, "problem"),
        Probe("eval-checkpoint-problem-not-in-folder", [*out, "--problem", "../p"], prob,
              "no problem named '../p'"),
        Probe("eval-checkpoint-problems-dir-file", ["eval", "checkpoint", "--problems-dir",
              "{tmp}/f", "--problem", "q", "--checkpoint", "c"], {"f": "x"}, "not a folder"),
    ]


def _eval_report_probes() -> list[Probe]:
    return [
        Probe("eval-missing", ["eval", "{tmp}/none"], {}, "none"),
        Probe("eval-file", ["eval", "{tmp}/f"], {"f": "x"}, "not a run directory"),
        Probe("report-missing", ["report", "{tmp}/none"], {}, "not a run directory"),
        Probe("report-file", ["report", "{tmp}/f"], {"f": "x"}, "not a run directory"),
        Probe("report-baseline-missing", ["report", "{tmp}/r", "--baseline", "{tmp}/none"],
              {"r": RUN}, "not a run directory"),
        Probe("report-baseline-not-utf8", ["report", "{tmp}/r", "--baseline", "{tmp}/b"],
              {"r": RUN, "b/manifest.json": b"\xff\xfe"}, "UTF-8"),
        Probe("report-format-bad", ["report", "{tmp}/r", "--format", "pdf"], {"r": RUN},
              "--format"),
        Probe("report-counterfactual-missing", ["report", "{tmp}/r", "--counterfactual",
                                                "{tmp}/none"], {"r": RUN}, "not a run directory"),
        Probe("report-counterfactual-same-start", ["report", "{tmp}/r", "--counterfactual",
                                                   "{tmp}/r"], {"r": RUN}, "both runs start"),
        Probe("report-counterfactual-of-a-web-run", ["report", "{tmp}/w", "--counterfactual",
                                                     "{tmp}/r"],
              {"r": RUN, "w/manifest.json": json.dumps({
                  "format": "benchwright.web-run/1", "track": "web", "created_at": "x",
                  "benchwright_version": "0", "environment": {}})}, "not a coding run"),
        Probe("report-web-manifest-not-utf8", ["report", "{tmp}/w"],
              {"w/manifest.json": b'{"format": "benchwright.web-run/1", "x": "\xff"}'}, "UTF-8"),
        Probe("report-web-manifest-deep", ["report", "{tmp}/w"],
              {"w/manifest.json": '{"format": "benchwright.web-run/1", "x": ' + DEEP_JSON + "}"},
              "manifest.json"),
        Probe("eval-web-manifest-not-utf8", ["eval", "{tmp}/w"],
              {"w/manifest.json": b'{"format": "benchwright.web-run/1", "x": "\xff"}'}, "UTF-8"),
        Probe("eval-web-manifest-folder", ["eval", "{tmp}/w"],
              {"w/manifest.json": DIR, "w/tasks": DIR}, "manifest.json"),
    ]


def _decision_probes() -> list[Probe]:
    """`plan`, `report --fail-if-worse`, `run coding|web --until-decided` (issue 41)."""
    run = ["run", "coding", "--problems-dir", "{tmp}/p", "--out", "{tmp}/o", "--no-metrics"]
    web = ["run", "web", "--out", "{tmp}/o"]
    return [
        Probe("plan-nothing", ["plan", "--difference", "10"], {}, "--pass-rate"),
        Probe("plan-both", ["plan", "--difference", "10", "--baseline", "{tmp}/r", "--pass-rate",
                            "40", "--spread", "10"], {"r": RUN}, "both given"),
        Probe("plan-difference-out", ["plan", "--difference", "150", "--pass-rate", "40",
                                      "--spread", "10"], {}, "outside 0-100"),
        Probe("plan-pass-rate-out", ["plan", "--difference", "10", "--pass-rate", "0",
                                     "--spread", "10"], {}, "out of range"),
        Probe("plan-one-problem", ["plan", "--difference", "10", "--baseline", "{tmp}/r"],
              {"r": RUN}, "at least 2"),
        Probe("plan-baseline-missing", ["plan", "--difference", "10", "--baseline",
                                        "{tmp}/none"], {}, "not found"),
        Probe("gate-no-baseline", ["report", "{tmp}/r", "--fail-if-worse", "5"], {"r": RUN},
              "needs a --baseline"),
        Probe("gate-too-few", ["report", "{tmp}/r", "--baseline", "{tmp}/r", "--fail-if-worse",
                               "5"], {"r": RUN}, "the gate needs at least 6"),
        Probe("gate-out-of-range", ["report", "{tmp}/r", "--baseline", "{tmp}/r",
                                    "--fail-if-worse", "100"], {"r": RUN}, "outside 0-100"),
        Probe("until-decided-no-baseline", [*run, "--until-decided"], {"p/quick": QUICK},
              "needs a --baseline"),
        Probe("baseline-without-until-decided", [*run, "--baseline", "{tmp}/r"],
              {"p/quick": QUICK, "r": RUN}, "only with --until-decided"),
        Probe("until-decided-trials", [*run, "--until-decided", "--baseline", "{tmp}/r",
                                       "--trials", "3"], {"p/quick": QUICK, "r": RUN},
              "--trials is set by --until-decided"),
        Probe("until-decided-web-baseline", [*run, "--until-decided", "--baseline", "{tmp}/w"],
              {"p/quick": QUICK, "w": WEB_RUN}, "a web run has no"),
        Probe("web-until-decided-no-baseline", [*web, "--until-decided"], {},
              "needs a --baseline"),
        Probe("web-max-rounds-without-until-decided", [*web, "--max-rounds", "3"], {},
              "only with --until-decided"),
        Probe("web-until-decided-trials", [*web, "--until-decided", "--baseline", "{tmp}/w",
                                           "--trials", "2"], {"w": WEB_RUN},
              "--trials is set by --until-decided"),
        Probe("web-until-decided-coding-baseline", [*web, "--until-decided", "--baseline",
                                                    "{tmp}/r"], {"r": RUN}, "a coding run has no"),
        Probe("web-sequence-file-not-a-sequence", ["run", "web", "--resume", "{tmp}/w"],
              {"w": WEB_RUN, "w/sequence.json": "{}"}, "not a benchwright sequence"),
        Probe("sequence-file-deep", ["report", "{tmp}/r"],
              {"r": RUN, "r/sequence.json": DEEP_JSON}, "sequence.json"),
        Probe("sequence-file-not-a-sequence", ["run", "coding", "--resume", "{tmp}/r"],
              {"r": RUN, "r/sequence.json": "{}"}, "not a benchwright sequence"),
    ]


def _metrics_probes() -> list[Probe]:
    base = ["metrics", "static", "--workspace", "{tmp}/w"]
    ws = {"w/a.py": "x = 1\n"}
    return [
        Probe("metrics-entry-absolute", [*base, "--entry", "/etc/passwd"], ws, "--entry"),
        Probe("metrics-entry-outside", [*base, "--entry", "../f.py"], ws | {"f.py": "y = 2\n"},
              "--entry"),
        Probe("metrics-entry-folder", [*base, "--entry", "d"], ws | {"w/d": DIR}, "--entry"),
        Probe("metrics-entry-empty", [*base, "--entry", ""], ws, "--entry"),
        # The workspace may be an agent's: a link loop (or a link out) is never followed.
        Probe("metrics-entry-link-loop", [*base, "--entry", "l.py"],
              ws | {"w/l.py": lambda p: p.symlink_to(p.name)}, "symbolic link"),
        Probe("metrics-entry-link-out", [*base, "--entry", "o.py"],
              ws | {"f.py": "y = 2\n", "w/o.py": lambda p: p.symlink_to("../f.py")},
              "symbolic link"),
        Probe("metrics-workspace-file", ["metrics", "static", "--workspace", "{tmp}/f"],
              {"f": "x"}, "workspace"),
        Probe("metrics-workspace-missing", ["metrics", "static", "--workspace", "{tmp}/none"],
              {}, "workspace"),
        Probe("problems-list-extra", ["problems", "list", "extra"], {}, "extra"),
    ]


def _web_probes() -> list[Probe]:
    tasks = ["web", "tasks", "list"]
    status = ["web", "env", "status", "--site", "shopping"]
    probes = [
        Probe("tasks-ids-empty", [*tasks, "--task-ids", ""], {}, "--task-ids"),
        Probe("tasks-ids-commas", [*tasks, "--task-ids", ",,"], {}, "--task-ids"),
        Probe("tasks-ids-huge-range", [*tasks, "--task-ids", "0-100000000000"], {},
              "--task-ids"),
        Probe("tasks-ids-huge", [*tasks, "--task-ids", HUGE_INT], {}, "--task-ids"),
        Probe("tasks-ids-unknown", [*tasks, "--task-ids", "99999"], {}, "99999"),
        Probe("tasks-ids-fullwidth", [*tasks, "--task-ids", "\uff11\uff12"], {}, "--task-ids"),
        Probe("tasks-ids-backwards", [*tasks, "--task-ids", "5-3"], {}, "--task-ids"),
        Probe("tasks-ids-word", [*tasks, "--task-ids", "abc"], {}, "--task-ids"),
        Probe("tasks-ids-negative", [*tasks, "--task-ids", "-5"], {}, "--task-ids"),
        Probe("tasks-ids-space-digit", [*tasks, "--task-ids", "1 2"], {}, "--task-ids"),
        Probe("tasks-sites-unknown", [*tasks, "--sites", "nope"], {}, "--sites"),
        Probe("tasks-sites-empty", [*tasks, "--sites", ""], {}, "--sites"),
        Probe("tasks-template-negative", [*tasks, "--template", "-1"], {}, "--template"),
        Probe("tasks-template-huge", [*tasks, "--template", HUGE_INT], {}, "--template"),
        Probe("tasks-subset-bad", [*tasks, "--subset", "nope"], {}, "--subset"),
        Probe("env-site-unknown", ["web", "env", "status", "--site", "nope"], {}, "--site"),
        Probe("env-stop-site-unknown", ["web", "env", "stop", "--site", "nope"], {}, "--site"),
        Probe("env-start-no-site", ["web", "env", "start"], {}, "no site"),
        Probe("tasks-python-missing", [*tasks, "--python", "nope9"], {}, "nope9"),
        Probe("web-eval-python-missing", ["web", "eval", "{tmp}/o", "--python",
                                          "nope9"], {"o/0/agent_response.json": "{}"}, "nope9"),
    ]
    for command in ("status", "start", "reset"):
        argv = status if command == "status" else ["web", "env", command, "--site", "shopping"]
        for value in ("-1", "nan", "inf", "0", "1e300"):
            probes.append(Probe(f"env-{command}-timeout-{value}", [*argv, "--timeout", value],
                                {}, "--timeout"))
    configs: list[tuple[str, object, str]] = [
        ("not-utf8", b"sites: \xff\n", "UTF-8"), ("folder", DIR, "c.yaml"),
        ("fifo", FIFO, "c.yaml"), ("deep", DEEP_YAML, "nested"),
        ("list", "- a\n", "mapping"), ("missing", None, "c.yaml")]
    for name, content, fragment in configs:
        files = {} if content is None else {"c.yaml": content}
        probes.append(Probe(f"env-status-config-{name}", [*status, "--config", "{tmp}/c.yaml"],
                            files, fragment))
        probes.append(Probe(f"web-eval-config-{name}",
                            ["web", "eval", "{tmp}/o", "--config", "{tmp}/c.yaml"],
                            files | {"o": DIR}, fragment))
    return [*probes,
        Probe("web-eval-output-missing", ["web", "eval", "{tmp}/none"], {}, "none"),
        Probe("web-eval-output-file", ["web", "eval", "{tmp}/f"], {"f": "x"},
              "output"),
        Probe("web-eval-baseline-missing", ["web", "eval", "{tmp}/o", "--baseline",
              "{tmp}/none"], {"o": DIR}, "eval_summary.json"),
        Probe("web-eval-baseline-not-utf8", ["web", "eval", "{tmp}/o",
              "--baseline", "{tmp}/b"], {"o": DIR, "b/eval_summary.json": b"\xff"}, "UTF-8"),
        Probe("web-eval-baseline-fifo", ["web", "eval", "{tmp}/o", "--baseline",
              "{tmp}/b"], {"o": DIR, "b/eval_summary.json": FIFO}, "eval_summary.json"),
        Probe("auth-site-unknown", ["web", "auth", "capture", "--site", "nope", "--out",
              "{tmp}/c.json"], {}, "--site"),
        Probe("auth-config-not-utf8", ["web", "auth", "capture", "--site", "shopping", "--out",
              "{tmp}/c.json", "--config", "{tmp}/c.yaml"], {"c.yaml": b"\xff"}, "UTF-8"),
        Probe("auth-out-folder", ["web", "auth", "capture", "--site", "shopping", "--out",
              "{tmp}/d"], {"d": DIR}, "--out"),
        Probe("auth-out-empty", ["web", "auth", "capture", "--site", "shopping", "--out", ""], {},
              "--out"),
    ]


def _run_web_probes() -> list[Probe]:
    base = ["run", "web", "--out", "{tmp}/o"]
    probes = [
        Probe("run-web-trials-huge", [*base, "--trials", HUGE_INT], {}, "--trials"),
        Probe("run-web-step-limit-huge", [*base, "--step-limit", HUGE_INT], {}, "--step-limit"),
        Probe("run-web-ids-empty", [*base, "--task-ids", ""], {}, "--task-ids"),
        Probe("run-web-ids-huge-range", [*base, "--task-ids", "0-100000000000"], {},
              "--task-ids"),
        Probe("run-web-ids-fullwidth", [*base, "--task-ids", "\uff19\uff10\uff10\uff11"], {},
              "--task-ids"),
        Probe("run-web-ids-unknown", [*base, "--task-ids", "5"], {}, "--task-ids"),
        Probe("run-web-sites-empty", [*base, "--sites", ""], {}, "--sites"),
        Probe("run-web-out-empty", ["run", "web", "--out", ""], {}, "--out"),
        Probe("run-web-out-file", ["run", "web", "--out", "{tmp}/f"], {"f": "x"}, "--out"),
        Probe("run-web-scripts-file", [*base, "--scripts", "{tmp}/f"], {"f": "x"}, "scripts"),
        Probe("run-web-resume-no-dir", ["run", "web", "--resume"], {}, "--resume"),
        Probe("run-web-resume-not-utf8", ["run", "web", "--resume", "{tmp}/w"],
              {"w/manifest.json": b'{"format": "benchwright.web-run/1", "x": "\xff"}'}, "UTF-8"),
        Probe("run-web-resume-deep", ["run", "web", "--resume", "{tmp}/w"],
              {"w/manifest.json": DEEP_JSON}, "manifest.json"),
    ]
    suites: list[tuple[str, object, str]] = [
        ("object", "{}", "list"), ("not-utf8", b"[\xff]", "UTF-8"), ("folder", DIR, "s.json"),
        ("fifo", FIFO, "s.json"), ("deep", DEEP_JSON, "s.json"), ("not-json", "[", "JSON"),
        ("bad-task", '[{"task_id": 1}]', "task")]
    probes += [Probe(f"run-web-suite-{name}", [*base, "--suite", "{tmp}/s.json"],
                     {"s.json": content}, fragment) for name, content, fragment in suites]
    cookies: list[tuple[str, object, str]] = [
        ("not-utf8", b"[\xff]", "UTF-8"), ("folder", DIR, "k.json"), ("fifo", FIFO, "k.json"),
        ("deep", DEEP_JSON, "k.json"), ("missing", None, "k.json"),
        # Each would reach the browser and be dropped or mangled: the trial runs logged out.
        ("number-name", '[{"name": 7, "value": "v", "domain": "h"}]', "name is 7"),
        ("no-value", '[{"name": "sid", "domain": "h"}]', "no value"),
        ("nan-expiry", '[{"name": "sid", "value": "v", "domain": "h", "expires": NaN}]',
         "expiry is nan"),
        ("empty-domain", '[{"name": "sid", "value": "v", "domain": ""}]', "domain is ''")]
    probes += [Probe(f"run-web-cookies-{name}", [*base, "--cookies", "{tmp}/k.json"],
                     {} if content is None else {"k.json": content}, fragment)
               for name, content, fragment in cookies]
    configs: list[tuple[str, object, str]] = [
        ("not-utf8", b"sites: \xff\n", "UTF-8"), ("fifo", FIFO, "c.yaml")]
    return probes + [Probe(f"run-web-config-{name}", [*base, "--suite", "webarena-verified",
                                                      "--config", "{tmp}/c.yaml"],
                           {"c.yaml": content}, fragment) for name, content, fragment in configs]


def _fake_llm_probes() -> list[Probe]:
    argv = ["testing", "fake-llm", "--port", "0", "--script", "{tmp}/s.yaml"]
    cases: list[tuple[str, object, str]] = [
        ("not-utf8", b"turns: \xff\n", "UTF-8"), ("folder", DIR, "s.yaml"),
        ("fifo", FIFO, "s.yaml"), ("deep", DEEP_YAML, "s.yaml"), ("missing", None, "s.yaml"),
        ("alias-bomb", ALIAS_BOMB, "s.yaml"), ("not-yaml", "turns: [\n", "s.yaml")]
    probes = [Probe(f"fake-llm-script-{name}", argv, {} if c is None else {"s.yaml": c}, frag)
              for name, c, frag in cases]
    return [*probes,
        Probe("fake-llm-port-huge", [*argv[:2], "--port", "70000", "--script", "{tmp}/s.yaml"],
              {"s.yaml": "turns: []\n"}, "--port"),
    ]


def _audit_probes() -> list[Probe]:
    """Found by the audit of issues 13-14: bounds, empty paths, URLs, keys and problem files
    that were accepted, hung or crashed, and more of the same kinds across commands."""
    out = ["run", "coding", "--problems-dir", "{tmp}/p", "--no-metrics", "--out", "{tmp}/o"]
    prob = _problem({})

    def config(old: str, new: str) -> dict[str, object]:
        return _problem({"config.yaml": QUICK_CONFIG.replace(old, new)})

    web = ["run", "web", "--out", "{tmp}/o"]
    browser_use = [*web, "--agent", "browser-use", "--model", "m"]
    validate = ["problems", "validate", "{tmp}/p"]
    return [
        Probe("audit-snapshot-mb-inf", [*out, "--max-snapshot-mb", "inf"], prob,
              "--max-snapshot-mb"),
        Probe("audit-snapshot-mb-negative", [*out, "--max-snapshot-mb", "-1"], prob,
              "--max-snapshot-mb"),
        Probe("audit-snapshot-files-huge", [*out, "--max-snapshot-files", HUGE_INT], prob,
              "--max-snapshot-files"),
        Probe("audit-agent-mount-empty", [*out, "--agent", "command", "--agent-command", "true",
                                          "--agent-mount", ""], prob, "--agent-mount"),
        Probe("audit-base-url-newline", [*out, "--base-url", "http://x/\nforged"], prob,
              "base_url"),
        Probe("audit-base-url-no-host", [*out, "--base-url", "http:///v1"], prob, "base_url"),
        Probe("audit-base-url-empty", [*out, "--base-url", ""], prob, "base_url"),
        Probe("audit-mini-no-key", [*out, "--agent", "mini", "--model", "m"], prob, "API key"),
        Probe("audit-mini-no-model", [*out, "--agent", "mini"], prob, "--model"),
        Probe("audit-agent-option-word", [*out, "-A", "step_limit=abc"], prob, "step_limit"),
        Probe("audit-problem-empty", [*out, "--problem", ""], prob, "problem"),
        Probe("audit-replay-from-file", [*out, "--agent", "replay", "--replay-from", "{tmp}/f"],
              prob | {"f": "x"}, "not a run directory"),
        Probe("audit-config-empty", out, _problem({"config.yaml": ""}), "config.yaml"),
        Probe("audit-entry-file-dotdot", out, config("entry_file: calc", "entry_file: ../calc"),
              "entry_file"),
        Probe("audit-timeout-word", out, config("timeout: 10", "timeout: abc"), "timeout"),
        Probe("audit-asset-missing", out, config("timeout: 10", "timeout: 10\n"
              "static_assets: {a: {path: nope.txt}}"), "nope.txt"),
        Probe("audit-asset-save-path-dotdot", out, config("timeout: 10", "timeout: 10\n"
              "static_assets: {a: {path: checkpoint_1.md, save_path: ../../x}}"), "save_path"),
        Probe("audit-eval-checkpoint-empty-name", ["eval", "checkpoint", "--problems-dir",
              "{tmp}/p", "--problem", "quick", "--checkpoint", ""], prob, "checkpoint"),
        Probe("audit-report-manifest-huge-number", ["report", "{tmp}/r"],
              {"r/manifest.json": '{"format": ' + "9" * 5000 + "}"}, "manifest.json"),
        Probe("audit-metrics-workspace-fifo", ["metrics", "static", "--workspace", "{tmp}/f"],
              {"f": FIFO}, "workspace"),
        Probe("audit-validate-repeat-huge", [*validate, "--repeat", HUGE_INT], prob, "--repeat"),
        Probe("audit-validate-repeat-zero", [*validate, "--repeat", "0"], prob, "--repeat"),
        Probe("audit-validate-empty-folder", ["problems", "validate", "{tmp}/e"], {"e": DIR},
              "no problem"),
        Probe("audit-validate-config-not-utf8", validate,
              _problem({"config.yaml": b"name: \xff\n"}), "UTF-8"),
        Probe("audit-new-name-dotdot", ["problems", "new", "../x", "--out", "{tmp}"], {}, "name"),
        Probe("audit-new-out-file", ["problems", "new", "x", "--out", "{tmp}/f"], {"f": "x"},
              "--out"),
        Probe("audit-new-exists", ["problems", "new", "x", "--out", "{tmp}"], {"x/keep": "k"},
              "exists"),
        Probe("audit-package-out-empty", ["web", "package", "{tmp}/d", "--out", ""],
              {"d/1/agent_response.json": "{}"}, "--out"),
        Probe("audit-package-empty-folder", ["web", "package", "{tmp}/d", "--out", "{tmp}/o"],
              {"d": DIR}, "d"),
        # The official packager's trimming reads each entry's request url and header names: a
        # wrong type there was its traceback, exit 3.
        *[Probe(f"audit-package-har-entry-{name}", ["web", "package", "{tmp}/d", "--out",
                                                     "{tmp}/o"],
                {"d/1/agent_response.json": "{}",
                 "d/1/network.har": json.dumps({"log": {"entries": [entry]}})}, fragment)
          for name, entry, fragment in [
              ("number", 5, "HAR entry 1: a int"),
              ("request-list", {"request": [], "response": {}}, "request object"),
              ("url-number", {"request": {"url": 3, "method": "GET"}}, "url string"),
              ("header-number", {"request": {"url": "http://h/", "headers": [7]}},
               "request headers"),
              ("response-string", {"request": {"url": "http://h/"}, "response": "x"},
               "response is not")]],
        Probe("audit-web-eval-response-fifo", ["web", "eval", "{tmp}/o"],
              {"o/7001/agent_response.json": FIFO}, "agent_response.json"),
        Probe("audit-web-eval-response-deep", ["web", "eval", "{tmp}/o"],
              {"o/7001/agent_response.json": DEEP_JSON}, "agent_response.json"),
        Probe("audit-web-eval-har-deep", ["web", "eval", "{tmp}/o"],
              {"o/7001/agent_response.json": "{}", "o/7001/network.har": DEEP_JSON},
              "network.har"),
        Probe("audit-web-eval-dataset-deep", ["web", "eval", "{tmp}/o",
              "--dataset", "{tmp}/d.json"], {"o": DIR, "d.json": DEEP_JSON}, "d.json"),
        Probe("audit-run-web-concurrency-huge", [*web, "--concurrency-per-site", HUGE_INT], {},
              "--concurrency-per-site"),
        Probe("audit-run-web-no-key", browser_use, {}, "OPENAI_API_KEY"),
        Probe("audit-run-web-api-key-env-empty", [*browser_use, "--api-key-env", ""], {},
              "not set"),
        Probe("audit-run-web-base-url-bad", [*browser_use, "--base-url", "notaurl"], {},
              "--base-url"),
        Probe("audit-run-web-resume-coding-run", ["run", "web", "--resume", "{tmp}/r"],
              {"r": RUN}, "coding"),
        *_web_run_probes(),
        Probe("audit-run-coding-resume-web-run", ["run", "coding", "--resume", "{tmp}/w"],
              {"w/manifest.json": '{"format": "benchwright.web-run/1", "track": "web"}'}, "web"),
    ]


def _web_run_probes() -> list[Probe]:
    """`run web --resume`, `eval` and `report` on a web run folder changed by hand."""
    damages: list[tuple[str, dict[str, object], str]] = [
        ("trial-is-file", {"w/tasks/7001/trial_1": "not a folder"}, "trial_1"),
        ("tasks-is-file", {"w/tasks": "not a folder"}, "tasks"),
        ("journal-folder", {"w/journal.jsonl": DIR}, "journal.jsonl"),
        ("journal-fifo", {"w/journal.jsonl": FIFO}, "journal.jsonl"),
        ("manifest-trials-huge", {"w/manifest.json": "trials=10**12"}, "trials")]
    commands = {"resume": ["run", "web", "--resume", "{tmp}/w"],
                "eval": ["eval", "{tmp}/w"], "report": ["report", "{tmp}/w"]}
    return [Probe(f"audit-web-{cmd}-{name}", argv, {"w": WEB_RUN, **files}, fragment)
            for name, files, fragment in damages for cmd, argv in commands.items()
            if not (cmd != "resume" and name == "trial-is-file")]


def _record_probes() -> list[Probe]:
    """Run folders whose records were edited or duplicated (issue 26): each is refused with one
    line naming the file (and the line), never read as a figure."""
    journal = "r/quick/trial_1/journal.jsonl"
    coding: list[tuple[str, dict[str, object], str]] = [
        ("duplicate-line", {journal: repeat_line(1)}, "line 5: repeats"),
        ("negative-count", {journal: edit_line(1, {"counts.Core.passed": -1})}, "line 1"),
        ("passed-over-total", {journal: edit_line(2, {"counts.Core.passed": 99})}, "line 2"),
        ("negative-tokens", {journal: edit_line(1, {"agent.usage.input_tokens": -5})}, "negative"),
        ("nan-cost", {journal: edit_line(1, {"": '{"format": "benchwright.checkpoint/1", '
                                             '"cost": NaN}'})}, "finite"),
        ("other-problem", {journal: edit_line(1, {"problem": "other"})}, "'other'"),
        ("other-trial", {journal: edit_line(1, {"trial": 2})}, "trial 2"),
        ("trial-true", {journal: edit_line(1, {"trial": True})}, "trial"),
        ("newer-format", {journal: edit_line(1, {"format": "benchwright.checkpoint/2"})}, "newer"),
        ("garbage-line", {journal: edit_line(2, {"": "not json"})}, "line 2"),
        ("backwards", {journal: edit_line(2, {"index": 1})}, "line 2"),
        ("manifest-trials-true", {"r/manifest.json": "trials=true"}, "trials"),
        ("manifest-no-problems", {"r/manifest.json": "problems=[]"}, "problems"),
        ("manifest-agent-unknown", {"r/manifest.json": "agent=nope"}, "agent"),
        ("manifest-prompt-unknown", {"r/manifest.json": "prompt=nope"}, "prompt"),
        ("diff-deep", {"r/quick/trial_1/checkpoint_2/diff.json": "[" * 5000 + "]" * 5000},
         "diff.json")]
    commands = {"resume": ["run", "coding", "--resume", "{tmp}/r", "--no-metrics"],
                "eval": ["eval", "{tmp}/r"], "report": ["report", "{tmp}/r"]}
    probes = [Probe(f"records-{cmd}-{name}", argv, {"r": RUN, **files}, fragment)
              for name, files, fragment in coding for cmd, argv in commands.items()
              if not (cmd != "eval" and name == "diff-deep")]  # read by eval's export
    web: list[tuple[str, object, str]] = [
        ("duplicate-line", repeat_line(1), "line 3: repeats"),
        ("unknown-task", edit_line(1, {"task_id": 99999}), "99999"),
        ("unknown-status", edit_line(1, {"status": "nope"}), "status"),
        ("negative-steps", edit_line(1, {"steps": -1}), "negative"),
        ("trial-word", edit_line(1, {"trial": "one"}), "trial"),
        ("trial-unplanned", edit_line(1, {"trial": 7}), "trial"),
        ("newer-format", edit_line(1, {"format": "benchwright.web-trial/2"}), "newer")]
    web_commands = {"resume": ["run", "web", "--resume", "{tmp}/w"],
                    "eval": ["eval", "{tmp}/w"], "report": ["report", "{tmp}/w"]}
    probes += [Probe(f"records-web-{cmd}-{name}", argv,
                     {"w": WEB_RUN, "w/journal.jsonl": edit}, fragment)
               for name, edit, fragment in web for cmd, argv in web_commands.items()]
    nulls = [("suite", ["run", "web", "--out", "{tmp}/o", "--suite", "{tmp}/n.json"], "n.json"),
             ("dataset", ["web", "eval", "{tmp}/o", "--dataset", "{tmp}/n.json"], "n.json"),
             ("cookies", ["run", "web", "--out", "{tmp}/o", "--cookies", "{tmp}/n.json"],
              "n.json")]
    return probes + [Probe(f"records-null-{name}", argv, {"n.json": "null", "o": DIR}
                           if name == "dataset" else {"n.json": "null"}, fragment)
                     for name, argv, fragment in nulls]


PROBE_GROUPS = {
    "coding-run-folders": _coding_run_probes, "problems": _problem_probes,
    "templates": _template_probes, "run-coding": _run_coding_probes,
    "eval-checkpoint": _eval_checkpoint_probes, "eval-report": _eval_report_probes,
    "metrics": _metrics_probes, "web": _web_probes, "run-web": _run_web_probes,
    "fake-llm": _fake_llm_probes, "audit": _audit_probes, "records": _record_probes,
    "decisions": _decision_probes}
"""Each group is one test (each under pytest's own timeout on a loaded machine)."""
PROBES = [probe for group in PROBE_GROUPS.values() for probe in group()]


def _materialise(root: Path, files: dict[str, object], runs: dict[object, Path]) -> None:
    for rel, content in files.items():
        path = root / rel
        if content is RUN or content is QUICK or content is WEB_RUN:
            source = runs[content] if content in runs else FIXTURES / "runs" / "quick"
            shutil.copytree(source, path, dirs_exist_ok=True)
            continue
        if content is None:
            path.unlink()
            continue
        if path.is_dir() and content is not DIR:
            shutil.rmtree(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if content is DIR:
            if path.exists() and not path.is_dir():
                path.unlink()
            path.mkdir(exist_ok=True)
        elif content is FIFO:
            path.unlink(missing_ok=True)
            os.mkfifo(path)
        elif callable(content) or content == "trials=10**12" or (
                isinstance(content, str) and content.split("=")[0] in MANIFEST_EDITS):
            _edit(path, content)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(str(content))


def _edit(path: Path, content: object) -> None:
    """Change a copied file: a callable edits it, "key=value" sets the manifest's config.key."""
    if callable(content):
        content(path)
    elif content == "trials=10**12":
        _manifest(path.parent, {"trials": 10**12})
    else:
        key, _, value = str(content).partition("=")
        _manifest(path.parent, {key: json.loads(value) if value[:1] in "[t" else value})


# a probe still running after this long waits forever (on a loaded machine, with parallel test
# workers, a one-line refusal may take tens of seconds: the limit is wide)
HUNG_S = 300


def _run_probe(probe: Probe, root: Path, runs: dict[object, Path]) -> str | None:
    """None when the probe got its one-line error, else what went wrong."""
    folder = root / probe.name
    folder.mkdir()
    _materialise(folder, probe.files, runs)
    argv = [a.replace("{tmp}", str(folder)) for a in probe.argv]
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    # No key of the user's: a probe that needs one must be refused for want of it.
    env = {k: v for k, v in env.items()
           if not k.startswith("BENCHWRIGHT_WEB_") and not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join([SOURCE_ROOT, *filter(None, [env.get("PYTHONPATH")])])
    try:
        done = run_cli(*argv, env=env, cwd=folder, timeout=HUNG_S)
    except subprocess.TimeoutExpired:
        return f"{probe.name}: hung ({HUNG_S} s)"
    return _verdict(probe, done)


# Session scope, and the runs made once per session (tests/helpers/shared_runs.py): the probe
# groups spread over the xdist workers (a module fixture puts every test of this file on one
# worker, tests/conftest.py `_group`).
@pytest.fixture(scope="session")
def finished_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[object, Path]:
    """A real, finished run of the `quick` fixture problem (oracle agent) and a finished web run
    of two tasks of the tests' own suite (the fake trial runner), keyed as the probes name them."""
    made = shared_probe_runs(tmp_path_factory)
    return {RUN: made[SHARED_RUN], WEB_RUN: made[SHARED_WEB_RUN]}


def test_the_probe_set_is_big_and_named_uniquely() -> None:
    names = [p.name for p in PROBES]
    assert len(names) == len(set(names)) and len(names) >= 150


CHUNK = 20
"""Probes per test at most: a big group is cut in parts that run on different workers."""
PARTS = [(group, start) for group, make in PROBE_GROUPS.items()
         for start in range(0, len(make()), CHUNK)]


@pytest.mark.parametrize(("group", "start"), PARTS,
                         ids=[f"{group}-{start // CHUNK + 1}" for group, start in PARTS])
def test_every_bad_input_gets_one_line_and_exit_2(tmp_path: Path,
                                                  finished_runs: dict[object, Path], group: str,
                                                  start: int) -> None:
    selected = os.environ.get("BENCHWRIGHT_PROBES")  # a substring, to run some while iterating
    probes = [p for p in PROBE_GROUPS[group]()[start:start + CHUNK]
              if not selected or selected in p.name]
    with ThreadPoolExecutor(2) as pool:
        verdicts = list(pool.map(lambda p: _run_probe(p, tmp_path, finished_runs), probes))
    failures = [v for v in verdicts if v is not None]
    assert not failures, f"{len(failures)} of {len(probes)} probes failed:\n" + "\n".join(
        failures)
