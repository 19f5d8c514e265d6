"""Harbor task folders are hostile input: what benchwright would run differently from Harbor,
and links out of the task, are refused as one clear error before any container starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.errors import UserInputError
from benchwright.harbor.tasks import find_tasks, load_task
from tests.helpers.harbor_tasks import multi_step, single_step


def test_single_and_multi_step_tasks_are_read(tmp_path: Path) -> None:
    single = load_task(single_step(tmp_path, "img"))
    assert (single.name, [s.name for s in single.steps], single.multi_step) == (
        "tests/single", ["main"], False)
    multi = load_task(multi_step(tmp_path, "img", strategy="final", min_reward="0.5"))
    assert [s.name for s in multi.steps] == ["a", "b", "c"]
    assert [s.min_reward for s in multi.steps] == [None, 0.5, None]
    assert multi.strategy == "final"
    assert [t.name for t in find_tasks(tmp_path)] == ["tests/multi", "tests/single"]


@pytest.mark.parametrize("change, message", [
    (lambda t: (t / "environment" / "Dockerfile").unlink(), "no environment/Dockerfile"),
    (lambda t: (t / "steps" / "a" / "setup.sh").write_text("true"), "setup.sh"),
    (lambda t: (t / "tests").mkdir() or (t / "tests" / "Dockerfile").write_text("FROM x"),
     "verifier image"),
    (lambda t: (t / "steps" / "b" / "instruction.md").unlink()
     or (t / "steps" / "b" / "instruction.md").symlink_to("/etc/passwd"), "instruction.md"),
    (lambda t: (t / "task.toml").write_text((t / "task.toml").read_text()
                                            + "[environment.healthcheck]\ncommand = 'true'\n"),
     "healthcheck"),
    (lambda t: (t / "task.toml").write_text("[[steps]]\nname = '../x'\n"), "task.toml"),
])
def test_what_benchwright_cannot_run_as_harbor_does_is_refused(tmp_path: Path, change: object,
                                                               message: str) -> None:
    task = multi_step(tmp_path, "img")
    change(task)  # type: ignore[operator]
    with pytest.raises(UserInputError, match=message):
        load_task(task)
