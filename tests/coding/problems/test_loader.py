from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.coding.problems.config import Group
from benchwright.coding.problems.loader import get_checkpoint, load_problem
from benchwright.errors import ProblemConfigError
from tests.helpers import write_problem

BASE = """
name: demo
entry_file: demo_tool
timeout: 20
test_dependencies: [pyyaml]
static_assets:
  files: {path: files, save_path: data/files}
markers:
  slow: {description: slow ones, group: Functionality}
some_future_key: ignored
checkpoints:
  checkpoint_2: {version: 1, order: 2, state: Core Tests, timeout: 5, include_prior_tests: false}
  checkpoint_1: {version: 1, order: 1, state: Draft}
"""


def test_loads_every_field_and_orders_checkpoints(tmp_path: Path) -> None:
    problem = load_problem(write_problem(tmp_path / "demo", BASE, {}))
    assert [c.name for c in problem.ordered_checkpoints()] == ["checkpoint_1", "checkpoint_2"]
    assert problem.entry_filename == "demo_tool.py"
    assert problem.static_assets["files"].save_path == "data/files"
    assert problem.markers["slow"].group is Group.FUNCTIONALITY
    assert problem.test_dependencies == ["pyyaml"]
    first, second = problem.ordered_checkpoints()
    assert problem.timeout_for(first) == 20
    assert problem.timeout_for(second) == 5
    assert second.include_prior_tests is False


def test_unknown_checkpoint_key_is_rejected_with_the_key_named(tmp_path: Path) -> None:
    config = BASE.replace("state: Draft}", "state: Draft, colour: red}")
    with pytest.raises(ProblemConfigError) as err:
        load_problem(write_problem(tmp_path / "demo", config, {}))
    assert "checkpoints.checkpoint_1.colour: unknown key" in err.value.one_line()
    assert "config.yaml" in err.value.one_line()


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("name: x\ncheckpoints: {checkpoint_1: {version: 1}}\n", "entry_file: required key"),
        ("name: x\nentry_file: a\n", "`checkpoints` must map"),
        ("name: [x\n", "not valid YAML at line"),
        ("- just a list\n", "must be a YAML mapping"),
        ("name: x\nentry_file: a.py\ncheckpoints: {c: {version: 1}}\n", "bare module name"),
    ],
)
def test_malformed_configs_name_the_problem(tmp_path: Path, config: str, expected: str) -> None:
    with pytest.raises(ProblemConfigError, match=expected):
        load_problem(write_problem(tmp_path / "p", config, {}))


def test_missing_folder_and_missing_config(tmp_path: Path) -> None:
    with pytest.raises(ProblemConfigError, match="problem folder not found"):
        load_problem(tmp_path / "nope")
    with pytest.raises(ProblemConfigError, match=r"no config\.yaml here"):
        load_problem(tmp_path)


def test_unknown_checkpoint_lists_the_choices(tmp_path: Path) -> None:
    problem = load_problem(write_problem(tmp_path / "demo", BASE, {}))
    with pytest.raises(ProblemConfigError, match="checkpoint_1, checkpoint_2"):
        get_checkpoint(problem, "checkpoint_9")


def test_spec_rendering_strips_only_the_leading_canary(tmp_path: Path) -> None:
    spec = (
        "<!-- canary GUID 123\nsecond line -->\n"
        "Write %%%ENTRYPOINT:entry_file%%%; run `%%%ENTRYPOINT:entry_command%%% --help`.\n"
        "<!-- an author's note that stays -->\n"
    )
    problem = load_problem(write_problem(tmp_path / "demo", BASE, {"checkpoint_1.md": spec}))
    rendered = problem.render_spec("checkpoint_1")
    assert rendered.startswith("Write demo_tool.py; run `python demo_tool.py --help`.")
    assert "an author's note that stays" in rendered
    assert "canary" not in rendered


@pytest.mark.parametrize("name", ["kv_server", "ledger_cli"])
def test_bundled_examples_load(name: str, request: pytest.FixtureRequest) -> None:
    problem = load_problem(request.getfixturevalue(name))
    assert len(problem.checkpoints) >= 3
    for checkpoint in problem.ordered_checkpoints():
        assert problem.solution_dir(checkpoint.name).is_dir()
        assert "%%%" not in problem.render_spec(checkpoint.name)
