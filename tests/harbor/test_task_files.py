"""A Harbor task folder is walked before anything of it is read, built or copied: a link out
of the task (absolute, or climbing past its root), a special file, a huge file or a step with
no test.sh is refused by name; links that stay inside are a task's own business. The images a
Dockerfile starts FROM are read as Docker reads them (stages, ARG defaults, flags)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchwright.errors import UserInputError
from benchwright.harbor.tasks import load_task
from tests.helpers.harbor_tasks import multi_step, single_step


@pytest.mark.parametrize("where, target", [
    ("tests/secret", "/etc/shadow"),
    ("environment/up", "../.."),
    ("steps/a/workdir/deep", "../../../../outside"),
    ("solution/x", "a/../../../.."),
])
def test_a_link_out_of_the_task_is_refused(tmp_path: Path, where: str, target: str) -> None:
    task = multi_step(tmp_path, "img")
    (task / where).parent.mkdir(parents=True, exist_ok=True)
    (task / where).symlink_to(target)
    with pytest.raises(UserInputError, match=f"{where} is a link out of the task"):
        load_task(task)


def test_links_that_stay_inside_the_task_are_kept(tmp_path: Path) -> None:
    task = multi_step(tmp_path, "img")
    (task / "steps" / "b" / "tests" / "same.sh").symlink_to("../../a/tests/test.sh")
    (task / "alias").symlink_to("steps")
    assert [s.name for s in load_task(task).steps] == ["a", "b", "c"]


def test_a_special_or_huge_file_is_refused(tmp_path: Path) -> None:
    from benchwright.harbor.task_files import MAX_FILE_BYTES

    fifo = single_step(tmp_path / "f", "img")
    os.mkfifo(fifo / "tests" / "pipe")
    with pytest.raises(UserInputError, match="tests/pipe: FIFO"):
        load_task(fifo)
    huge = single_step(tmp_path / "h", "img")
    with (huge / "environment" / "model.bin").open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk spent
    with pytest.raises(UserInputError, match=r"environment/model\.bin is 512 MiB, over"):
        load_task(huge)


def test_a_step_without_test_sh_is_refused_unless_the_task_has_one(tmp_path: Path) -> None:
    task = multi_step(tmp_path, "img")
    (task / "steps" / "b" / "tests" / "test.sh").unlink()
    with pytest.raises(UserInputError, match=r"step 'b' has no tests/test\.sh"):
        load_task(task)
    (task / "tests").mkdir()
    (task / "tests" / "test.sh").write_text("true\n")  # Harbor's fallback: the task's own
    assert len(load_task(task).steps) == 3


def test_a_type_error_in_task_toml_names_its_key(tmp_path: Path) -> None:
    task = single_step(tmp_path, "img")
    (task / "task.toml").write_text("[verifier]\ntimeout_sec = 'later'\n")
    with pytest.raises(UserInputError, match=r"verifier\.timeout_sec: Input should be"):
        load_task(task)


def test_from_lines_are_read_as_docker_reads_them(tmp_path: Path) -> None:
    from benchwright.harbor.base_images import from_images

    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(
        "# syntax=docker/dockerfile:1\nARG PY=3.12\nARG BASE\n"
        "FROM --platform=linux/amd64 python:${PY}-slim AS build\nRUN true\n"
        "from build AS again\nFROM \\\n  localhost/base:1\nFROM scratch\nFROM $BASE\n"
        "FROM python:3.12-slim\n")
    assert from_images(dockerfile) == ["python:3.12-slim", "localhost/base:1", "$BASE"]


def test_a_link_through_a_link_is_resolved_as_the_kernel_would(tmp_path: Path) -> None:
    task = single_step(tmp_path, "img")
    (task / "tests" / "here").symlink_to(".")
    # read as text, tests/here/here/../../.. is the task's root; taken physically, here/here
    # is tests/ itself, so the three .. climb two levels above the task
    (task / "tests" / "sneaky").symlink_to("here/here/../../..")
    with pytest.raises(UserInputError, match="tests/sneaky is a link out of the task"):
        load_task(task)
