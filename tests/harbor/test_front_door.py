"""`benchwright.run_harbor` is the one front door of harbor runs (the CLI parses and calls it):
a resumed run takes nothing but `jobs`; a new run's options are checked before any folder or
engine, each refusal one `UserInputError`."""

from __future__ import annotations

from pathlib import Path

import pytest

import benchwright
from benchwright.errors import UserInputError
from tests.helpers.harbor_tasks import single_step


@pytest.mark.parametrize("options, message", [
    ({"trials": 2}, "drop trials"),
    ({"agent": "mini", "tasks": "x"}, "drop agent, tasks"),
])
def test_a_resumed_run_takes_only_jobs(tmp_path: Path, options: dict[str, object],
                                       message: str) -> None:
    with pytest.raises(UserInputError, match=message):
        benchwright.run_harbor(resume=tmp_path, jobs=2, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("options, message", [
    ({"agent": "claude"}, "unsupported --agent 'claude'"),
    ({"runtime": "bwrap"}, "unsupported --runtime 'bwrap'"),
    ({"trials": 0}, "trials: Input should be greater than or equal to 1"),
    ({"max_cost": 1.0}, "--max-cost applies to the mini agent only"),
    ({"agent": "mini", "model": "no-such-model", "max_cost": 1.0}, "no known price"),
    ({"llm_record": "cassette"}, "records the mini agent's model calls"),
    ({"color": "blue"}, "unknown option 'color'"),
])
def test_a_new_runs_options_are_checked_before_anything_is_made(
        tmp_path: Path, options: dict[str, object], message: str) -> None:
    task = single_step(tmp_path, "img")
    with pytest.raises(UserInputError, match=message):
        benchwright.run_harbor(task, out=tmp_path / "o", **options)  # type: ignore[arg-type]
    assert not (tmp_path / "o").exists()


def test_jobs_out_of_range_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="jobs must be 1 to 64"):
        benchwright.run_harbor(tmp_path, jobs=0)
