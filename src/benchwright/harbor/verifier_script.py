"""benchwright's grading as a Harbor verifier: copied into every exported step's `tests/` and
run there by `test.sh`, inside the task's container, with the verifier environment's Python
(pytest, pytest-json-report and pytest-timeout at benchwright's pins). Never imported by
benchwright: it uses the standard library only, and reads its settings from
`/tests/benchwright.json` (written by the export).

It grades as benchwright's coding track does: pytest from the submission's folder (`/app`)
with the tests, their config and their root outside it, every test put in SCBench's groups by
the same rules (a test of an earlier checkpoint is Regression; then the `error`, `regression`,
custom and `functionality` markers; else Core); an infrastructure failure (pytest's exit code
2-5, or no test collected) writes no reward at all, which Harbor records as an error, never a
0. Otherwise `/logs/verifier/reward.json` gets the keys docs/harbor.md lists.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

TESTS = Path("/tests")
LOGS = Path("/logs/verifier")
WORKSPACE = Path("/app")
INFRA_EXIT_CODES = frozenset({2, 3, 4, 5})
GROUPS = ("Core", "Functionality", "Error", "Regression")
_BUILTIN = {"error": "Error", "functionality": "Functionality", "regression": "Regression"}
_CHECKPOINT_FILE = re.compile(r"test_([^/]+)\.py")


def pytest_argv(settings: dict[str, Any], report: Path) -> list[str]:
    """pytest as benchwright's grader starts it: only our config, the tests' folder as the
    root, no conftest.py of the workspace."""
    timeout = settings.get("timeout")
    return [sys.executable, "-P", "-m", "pytest", "-c", str(TESTS / "pytest.ini"),
            f"--rootdir={TESTS}", f"--confcutdir={TESTS}",
            *([f"--timeout={int(timeout)}"] if timeout else []),
            f"--entrypoint=python {settings['entry_file']}",
            f"--checkpoint={settings['checkpoint']}",
            "--json-report", f"--json-report-file={report}", "--json-report-omit=streams",
            "--json-report-omit=log", "-p", "no:cacheprovider", "-vv", str(TESTS)]


def test_env(settings: dict[str, Any]) -> dict[str, str]:
    """The tests' variables: the image's, the problem's and checkpoint's, the assets'."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIRTUAL_ENV")}
    env.update(settings.get("env") or {})
    assets = TESTS / "assets"
    if assets.is_dir():
        env["SCBENCH_ASSETS_DIR"] = str(assets)
        for entry in sorted(assets.iterdir()):
            env[f"SCBENCH_ASSET_{entry.name.upper()}"] = str(entry)
    return env


def group_of(nodeid: str, keywords: list[str], current: str, custom: dict[str, str]) -> str:
    """The test's group; the first rule that applies wins (benchwright's `group_of`)."""
    match = _CHECKPOINT_FILE.search(nodeid.partition("::")[0])
    if match and match.group(1) != current:
        return "Regression"
    marks = set(keywords)
    if "error" in marks:
        return "Error"
    if "regression" in marks:
        return "Regression"
    for mark in keywords:
        if mark in custom:
            return custom[mark]
    return "Functionality" if "functionality" in marks else "Core"


def counts(report: dict[str, Any], current: str, custom: dict[str, str]) -> dict[str, list[int]]:
    """[passed, total] per group that has tests."""
    known = set(_BUILTIN) | set(custom)
    found: dict[str, list[int]] = {}
    for entry in report.get("tests") or []:
        keywords = [k for k in entry.get("keywords") or [] if k in known]
        group = group_of(str(entry.get("nodeid", "")), keywords, current, custom)
        tally = found.setdefault(group, [0, 0])
        tally[0] += int(entry.get("outcome") in ("passed", "xpassed"))
        tally[1] += 1
    return found


def rewards(found: dict[str, list[int]]) -> dict[str, float]:
    """The reward keys: `reward` (every Core test passed: benchwright's default pass policy,
    `core-cases`), `solved` (every test passed), `pass_rate`, and a pass rate per group that
    has tests (a group without tests has no key: unknown is not 0)."""
    passed = sum(p for p, _ in found.values())
    total = sum(t for _, t in found.values())
    core = found.get("Core", [0, 0])
    values = {"reward": float(core[1] > 0 and core[0] == core[1]),
              "solved": float(total > 0 and passed == total),
              "pass_rate": passed / total if total else 0.0,
              "tests_passed": float(passed), "tests_total": float(total)}
    for group in GROUPS:
        if group in found:
            values[f"{group.lower()}_pass_rate"] = found[group][0] / found[group][1]
    return values


def main() -> int:
    """Grade, write reward.json (or, on an infrastructure failure, say why and write none)."""
    settings = json.loads((TESTS / "benchwright.json").read_text(encoding="utf-8"))
    LOGS.mkdir(parents=True, exist_ok=True)
    report_path = LOGS / "pytest-report.json"
    done = subprocess.run(pytest_argv(settings, report_path), cwd=WORKSPACE,
                          env=test_env(settings), check=False)
    report = (json.loads(report_path.read_text(encoding="utf-8"))
              if report_path.is_file() else {})
    collected = int((report.get("summary") or {}).get("collected") or 0)
    if done.returncode in INFRA_EXIT_CODES or collected == 0:
        print(f"benchwright: infrastructure failure (pytest exit {done.returncode}, "
              f"{collected} collected): no reward written", file=sys.stderr)
        return 1
    values = rewards(counts(report, settings["checkpoint"], settings.get("markers") or {}))
    (LOGS / "reward.json").write_text(json.dumps(values, sort_keys=True), encoding="utf-8")
    print(f"benchwright: {json.dumps(values, sort_keys=True)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
