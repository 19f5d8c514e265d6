"""What the jail exposes (`coding/grading/jail.py`): the working folder and the paths the arguments
name, never the tests folder beside them, never through a link, never the root or a folder holding
the tests; and the environment the jailed command gets (the solution environment's). The
end-to-end probes are in tests/security/test_jail.py."""

from __future__ import annotations

import os
from pathlib import Path

from benchwright.coding.grading.jail import exposed_paths, jail_command, jail_env, open_nofollow


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
    (tmp_path / "python").mkdir()
    config = {"bwrap": "/usr/bin/bwrap", "workspace": str(workspace),
              "tests": str(workspace.parent / ".evaluation_tests"),
              "readonly": [str(tmp_path / "python")], "solution": "/envs/solution",
              "system": [], "launcher": []}
    return config, workspace, scratch


def test_a_case_file_is_exposed_alone_and_read_only(tmp_path: Path) -> None:
    config, workspace, _scratch = _layout(tmp_path)
    case = workspace.parent / ".evaluation_tests" / "data" / "checkpoint_1" / "case"
    command = ["python", "main.py", str(case / "input.txt")]
    assert exposed_paths(config, command, str(workspace)) == [str(case / "input.txt")]
    jailed = jail_command(config, command, str(workspace))
    jailed.close()
    argv = jailed.argv
    at = argv.index(str(case / "input.txt"))
    assert argv[at - 2] == "--ro-bind-fd"
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
    config["env"] = {"SCBENCH_ASSETS_DIR": ".evaluation_tests/assets"}  # as pytest started
    env = {"PATH": "/usr/bin", "PYTEST_CURRENT_TEST": "t.py::test[case] (call)",
           "PYTEST_VERSION": "9", "BENCHWRIGHT_VERDICT_FD": "5",
           "SCBENCH_ASSETS_DIR": ".evaluation_tests/assets", "MY_OPTION": "1",
           "PYTHONSAFEPATH": "1", "PYTHONNOUSERSITE": "1"}
    assert jail_env(config, env) == {"PATH": "/envs/solution/bin:/usr/bin", "MY_OPTION": "1",
                                     "VIRTUAL_ENV": "/envs/solution"}
    assert "PYTEST_CURRENT_TEST" not in jail_env(config, os.environ)


def test_a_variable_the_test_sets_under_scbenchs_prefix_is_kept(tmp_path: Path) -> None:
    # pwd_manager's tests hand their fake clipboard's file over in SCBENCH_FAKE_CLIPBOARD; the
    # harness's own SCBENCH_ASSETS_DIR, as pytest started with it, stays hidden.
    config, workspace, scratch = _layout(tmp_path)
    config["env"] = {"PATH": "/usr/bin", "SCBENCH_ASSETS_DIR": ".evaluation_tests/assets"}
    clipboard = str(scratch / "clipboard.txt")
    env = {"PATH": "/usr/bin", "SCBENCH_ASSETS_DIR": ".evaluation_tests/assets",
           "SCBENCH_FAKE_CLIPBOARD": clipboard, "BENCHWRIGHT_VERDICT_FD": "5"}
    assert jail_env(config, env) == {"PATH": "/envs/solution/bin:/usr/bin",
                                     "SCBENCH_FAKE_CLIPBOARD": clipboard,
                                     "VIRTUAL_ENV": "/envs/solution"}
    assert exposed_paths(config, ["python", "main.py"], str(workspace), env) == [str(scratch)]


def _target(fd: int) -> str:
    try:
        return str(Path(f"/proc/self/fd/{fd}").readlink())
    finally:
        os.close(fd)


def test_the_walk_opens_real_paths_and_refuses_a_link_at_every_component(tmp_path: Path) -> None:
    real = tmp_path / "a" / "b" / "c"
    real.mkdir(parents=True)
    (real / "f.txt").write_text("x")
    for path in (real, real / "f.txt", tmp_path / "a" / "." / "b"):
        fd = open_nofollow(str(path))
        assert fd is not None
        assert _target(fd) == os.path.normpath(path)
    (tmp_path / "link").symlink_to(tmp_path / "a")
    (real / "last").symlink_to(real / "f.txt")
    (real / "dangling").symlink_to(tmp_path / "nowhere")
    refused = [tmp_path / "link", tmp_path / "link" / "b" / "c", real / "last", real / "dangling",
               real / "f.txt" / "below", tmp_path / "missing", tmp_path / "missing" / "x"]
    assert [open_nofollow(str(p)) for p in refused] == [None] * len(refused)


def test_the_walk_refuses_dotdot_and_relative_paths(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert open_nofollow(f"{tmp_path}/a/../a") is None
    assert open_nofollow("relative/path") is None
    fd = open_nofollow("/")
    assert fd is not None
    assert _target(fd) == "/"


def test_a_link_named_is_not_exposed_nor_its_folder(tmp_path: Path) -> None:
    config, workspace, scratch = _layout(tmp_path)
    (scratch / "out.txt").symlink_to(workspace.parent / ".evaluation_tests" / "data")
    (scratch / "sub").mkdir()
    (scratch / "sub" / "up").symlink_to("..")
    command = ["python", "main.py", str(scratch / "out.txt"), str(scratch / "sub" / "up" / "x")]
    assert exposed_paths(config, command, str(workspace)) == []
    (scratch / "new.txt").write_text("")
    assert exposed_paths(config, [*command, str(scratch / "new.txt")], str(workspace)) == [
        str(scratch)]


def test_every_bind_is_by_descriptor_and_the_descriptors_are_the_paths(tmp_path: Path) -> None:
    config, workspace, scratch = _layout(tmp_path)
    case = workspace.parent / ".evaluation_tests" / "data" / "checkpoint_1" / "case" / "input.txt"
    jailed = jail_command(config, ["python", "main.py", str(case), str(scratch / "o")],
                          str(workspace))
    try:
        argv = jailed.argv
        assert "--bind" not in argv
        assert [a for a in argv if a.startswith("--ro-bind")] == ["--ro-bind-fd"] * 2
        binds = {argv[i + 2]: int(argv[i + 1]) for i, a in enumerate(argv)
                 if a in ("--bind-fd", "--ro-bind-fd")}
        assert sorted(binds.values()) == sorted(jailed.fds)
        for path, fd in binds.items():
            assert str(Path(f"/proc/self/fd/{fd}").readlink()) == path
    finally:
        jailed.close()
