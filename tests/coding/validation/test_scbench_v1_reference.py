"""scripts/scbench_v1_reference.py: what it reads from an scb-problems problem and conversion.toml,
the pytest command it builds, and how it groups a pytest-json-report report (SCBench's Harbor
conversion's rules), on a tiny problem of our own (tests/fixtures/scbench_v1_tiny)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.helpers import FIXTURES, ROOT

SCB = FIXTURES / "scbench_v1_tiny"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("scbench_v1_reference",
                                                  ROOT / "scripts" / "scbench_v1_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_checkpoints_in_order_with_their_timeouts_and_prior_tests() -> None:
    problem = _script().load_problem(SCB, "tiny")
    assert [(c.name, c.include_prior_tests, c.timeout) for c in problem.checkpoints] == [
        ("checkpoint_1", True, 20.0), ("checkpoint_2", True, 20.0),
        ("checkpoint_3", False, 5.0)]
    assert problem.entry_file == "count"
    assert problem.static_assets == {"words": SCB / "tiny" / "assets"}


def test_dependencies_are_the_configs_then_the_known_imports_then_pyyaml_once() -> None:
    # numpy is imported only under tests/data, which the conversion does not read
    assert _script().load_problem(SCB, "tiny").dependencies == ["HTTPX", "beautifulsoup4",
                                                                "pyyaml"]


def test_conversion_overrides_give_snippets_per_checkpoint_and_the_verifier_timeout() -> None:
    problem = _script().load_problem(SCB, "tiny")
    assert problem.snippets == {"checkpoint_1": ["ulimit -v 4194304"],
                                "checkpoint_2": ["ulimit -v 4194304", "echo second"],
                                "checkpoint_3": ["ulimit -v 4194304"]}
    assert problem.verifier_timeout == 900.0
    # without an override: 30 times the problem's timeout, at least 600 s, at most 7200 s
    assert _script().verifier_timeout({}, 20) == 600.0
    assert _script().verifier_timeout({}, 60) == 1800.0
    assert _script().verifier_timeout({}, 300) == 7200.0


def test_the_command_adds_earlier_tests_only_when_the_checkpoint_includes_them() -> None:
    script = _script()
    problem = script.load_problem(SCB, "tiny")
    setup = script.Setup(Path("/w"), "scbref", Path("/py/bin"), "/bin/uv")
    box = Path("/w/boxes/tiny/cp")
    second = script.pytest_command(problem, problem.checkpoints[1], box, setup)
    files = [a for a in second if a.endswith(".py") and a.startswith("/w/")]
    assert files == [f"{box}/tests/test_checkpoint_1.py", f"{box}/tests/test_checkpoint_2.py"]
    start = second.index("pytest") + 1
    assert second[start:start + 2] == ["--timeout=20.0", "--timeout-method=signal"]
    assert second[second.index("--entrypoint") + 1] == f"uv run --project {box}/app count.py"
    assert second[second.index("--checkpoint") + 1] == "checkpoint_2"
    assert "pytest==9.0.3" in second and "beautifulsoup4" in second
    third = script.pytest_command(problem, problem.checkpoints[2], box, setup)
    assert [a for a in third if a.endswith(".py") and a.startswith("/w/")] == [
        f"{box}/tests/test_checkpoint_3.py"]


def _test(nodeid: str, outcome: str, *keywords: str) -> dict[str, Any]:
    return {"nodeid": nodeid, "outcome": outcome,
            "keywords": [nodeid.rsplit("::", 1)[-1], *keywords, "tests"]}


def test_groups_follow_the_reward_shims_rules_and_skips_are_not_counted() -> None:
    report = {"summary": {"collected": 8}, "tests": [
        _test("tests/test_checkpoint_2.py::test_a", "passed"),
        _test("tests/test_checkpoint_2.py::test_b", "failed", "functionality"),
        # error is looked at before functionality; the keyword may be a parametrize id
        _test("tests/test_checkpoint_2.py::test_c[Error]", "passed", "Error", "functionality"),
        # another checkpoint's file is Regression whatever its markers
        _test("../tests/test_checkpoint_1.py::test_d", "error", "error"),
        _test("tests/test_checkpoint_2.py::test_e", "skipped"),
        _test("tests/test_checkpoint_2.py::test_f", "xfailed"),
        _test("tests/test_checkpoint_2.py::test_g", "xpassed", "regression"),
        _test("tests/test_checkpoint_2.py::test_h", "passed", "parametrize", "pytestmark"),
    ]}
    summary = _script().summarize(report, "checkpoint_2")
    assert summary == {"collected": 8, "failed": ["test_checkpoint_2.py::test_b",
                                                  "test_checkpoint_1.py::test_d"],
                       "groups": {"Core": "2/2", "Functionality": "0/1", "Error": "1/1",
                                  "Regression": "1/2"}}


def test_an_empty_report_counts_nothing_and_collected_is_unknown() -> None:
    summary = _script().summarize({}, "checkpoint_1")
    assert summary == {"collected": None, "failed": [],
                       "groups": dict.fromkeys(("Core", "Functionality", "Error", "Regression"),
                                               "")}
