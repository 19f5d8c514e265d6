"""The exception tree's names match their exit codes (errors.py): an infrastructure error exits 3,
bad input 2, and one error has one family."""

from __future__ import annotations

import errno
import inspect
from pathlib import Path

import pytest

from benchwright import errors
from benchwright.errors import BenchwrightError, InfrastructureError, UserInputError

TREE = [cls for _, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, BenchwrightError)]


@pytest.mark.parametrize("cls", TREE, ids=lambda cls: cls.__name__)
def test_a_name_says_its_family_and_its_exit_code(cls: type[BenchwrightError]) -> None:
    if "Infrastructure" in cls.__name__ or issubclass(cls, InfrastructureError):
        assert issubclass(cls, InfrastructureError) and cls.exit_code == 3
    if issubclass(cls, UserInputError):
        assert cls.exit_code == 2 and "Infrastructure" not in cls.__name__


def test_tests_that_cannot_run_are_grading_infrastructure_exit_3() -> None:
    error = errors.GradingInfrastructureError("tests failed to collect")
    assert isinstance(error, InfrastructureError) and not isinstance(error, UserInputError)
    assert error.exit_code == 3


def test_the_executor_defaults_have_one_place() -> None:
    """The CLI's options, the API's placement and the Ray executor read protocols' defaults."""
    from benchwright.api.placement import make_executor
    from benchwright.cli import eval_cmd, run_cmd, run_web_cmd
    from benchwright.executors.ray_cluster import JobResources, RayExecutor
    from benchwright.protocols import EXECUTOR_DEFAULTS

    ray = make_executor({"executor": "ray"}, workers=1)
    assert isinstance(ray, RayExecutor) and ray.address == EXECUTOR_DEFAULTS.address
    assert ray.resources == JobResources() == JobResources(
        cpus=EXECUTOR_DEFAULTS.job_cpus, memory_mb=EXECUTOR_DEFAULTS.job_memory_mb)
    expected = {"ray_address": EXECUTOR_DEFAULTS.address, "job_cpus": EXECUTOR_DEFAULTS.job_cpus,
                "job_memory_mb": EXECUTOR_DEFAULTS.job_memory_mb}
    commands = {f for module in (run_cmd, run_web_cmd, eval_cmd)
                for _, f in inspect.getmembers(module, inspect.isfunction)
                if "ray_address" in inspect.signature(f).parameters}
    assert len(commands) == 3
    for command in commands:
        defaults = {name: p.default for name, p in inspect.signature(command).parameters.items()
                    if name in expected}
        assert defaults == expected, command.__name__


def test_a_full_disk_line_gives_the_space_needed_rounded_up_and_unknown_when_unknown(
        tmp_path: Path) -> None:
    full = OSError(errno.ENOSPC, "No space left on device")
    known = errors.disk_error(errors.needing(full, 5000, tmp_path / "record"))
    assert known is not None and known.exit_code == 3 and known.path == tmp_path / "record"
    assert "(needs at least 5 KiB, " in known.one_line()
    assert " free on its file system)" in known.one_line()
    unknown = errors.disk_error(OSError(errno.ENOSPC, "No space left on device", str(tmp_path)))
    assert unknown is not None and "(space needed unknown, " in unknown.one_line()
    read_only = errors.needing(OSError(errno.EROFS, "Read-only file system"), 10)
    assert not isinstance(read_only, errors.DiskFull)  # a read-only disk needs no space
