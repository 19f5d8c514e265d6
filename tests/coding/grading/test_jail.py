"""What the jail exposes (`coding/grading/jail.py`): the working folder and the paths the arguments
name, never the tests folder beside them, never through a link, never the root or a folder holding
the tests; and the environment the jailed command gets (the solution environment's). The
end-to-end probes are in tests/security/test_jail.py."""

from __future__ import annotations

import os
from pathlib import Path

from benchwright.coding.grading.jail import exposed_paths, jail_command, jail_env


def _layout(tmp_path: Path) -> tuple[dict[str, object], Path, Path]:
    """The grader's layout: the workspace and, beside it, the tests folder."""
    workspace = tmp_path / "grade" / "workspace"
    workspace.mkdir(parents=True)
    case = workspace.parent / ".evaluation_tests" / "data" / "checkpoint_1" / "case"
    case.mkdir(parents=True)
    (case / "input.txt").write_text("in")
    (case / "expected.txt").write_text("out")
    scratch = tmp_path / "pytest" / "test_x0"
    scratch.mkdir(parents=True)
    config = {"bwrap": "/usr/bin/bwrap", "workspace": str(workspace),
              "tests": str(workspace.parent / ".evaluation_tests"), "readonly": ["/opt/python"],
              "solution": "/envs/solution", "system": [], "launcher": []}
    return config, workspace, scratch


def test_a_case_file_is_exposed_alone_and_read_only(tmp_path: Path) -> None:
    config, workspace, _scratch = _layout(tmp_path)
    case = workspace.parent / ".evaluation_tests" / "data" / "checkpoint_1" / "case"
    command = ["python", "main.py", str(case / "input.txt")]
    assert exposed_paths(config, command, str(workspace)) == [str(case / "input.txt")]
    argv = jail_command(config, command, str(workspace))
    at = argv.index(str(case / "input.txt"))
    assert argv[at - 1] == "--ro-bind"
    assert str(case) not in argv


def test_an_output_file_exposes_its_folder_and_options_count(tmp_path: Path) -> None:
    config, workspace, scratch = _layout(tmp_path)
    command = ["python", "main.py", f"--out={scratch / 'result.json'}", "--mode", "fast"]
    assert exposed_paths(config, command, str(workspace)) == [str(scratch)]
    named = ["python", "main.py", "--source", f"b={scratch / 'b.ndjson'}"]
    assert exposed_paths(config, named, str(workspace)) == [str(scratch)]
    assert exposed_paths(config, ["python", "main.py"], str(scratch)) == [str(scratch)]


def test_no_link_root_or_folder_holding_the_tests_is_exposed(tmp_path: Path) -> None:
    config, workspace, scratch = _layout(tmp_path)
    (scratch / "answers").symlink_to(workspace.parent / ".evaluation_tests" / "data")
    command = ["python", "main.py", str(scratch / "answers"), "/", str(workspace.parent), "."]
    found = exposed_paths(config, command, str(workspace))
    assert found == []  # neither the link (nor its target), the root, the scratch, the workspace


def test_pytest_and_harness_variables_are_dropped(tmp_path: Path) -> None:
    config, _workspace, _scratch = _layout(tmp_path)
    env = {"PATH": "/usr/bin", "PYTEST_CURRENT_TEST": "t.py::test[case] (call)",
           "PYTEST_VERSION": "9", "BENCHWRIGHT_VERDICT_FD": "5",
           "SCBENCH_ASSETS_DIR": ".evaluation_tests/assets", "MY_OPTION": "1",
           "PYTHONSAFEPATH": "1", "PYTHONNOUSERSITE": "1"}
    assert jail_env(config, env) == {"PATH": "/envs/solution/bin:/usr/bin", "MY_OPTION": "1",
                                     "VIRTUAL_ENV": "/envs/solution"}
    assert "PYTEST_CURRENT_TEST" not in jail_env(config, os.environ)
