"""tests/helpers/shared_runs.py: a folder is built once per session whoever asks (processes
racing for it included), each caller gets its own copy, and a failed build fails every caller."""

from __future__ import annotations

import multiprocessing
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import shared_runs
from tests.helpers.shared_runs import shared_folder


def _name() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"  # the session root is shared: a name of its own


def _counting(calls: list[Path]) -> Callable[[Path], object]:
    def build(folder: Path) -> object:
        calls.append(folder)
        (folder / "made.txt").write_text("made")
        (folder / "link").symlink_to("made.txt")
        return {"n": 6}
    return build


def test_built_once_and_each_caller_gets_its_own_copy(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    calls: list[Path] = []
    name = _name()
    first, value = shared_folder(tmp_path_factory, name, _counting(calls))
    (first / "made.txt").write_text("changed by the first caller")
    second, again = shared_folder(tmp_path_factory, name, _counting(calls))
    assert len(calls) == 1 and value == again == {"n": 6}
    assert first != second and (second / "made.txt").read_text() == "made"
    assert (second / "link").is_symlink()  # links copied as links


def test_a_failed_build_fails_every_caller(tmp_path_factory: pytest.TempPathFactory) -> None:
    name = _name()

    def broken(folder: Path) -> object:
        (folder / "half.txt").write_text("half")
        raise RuntimeError("the CLI crashed")

    with pytest.raises(RuntimeError, match="the CLI crashed"):
        shared_folder(tmp_path_factory, name, broken)
    calls: list[Path] = []
    with pytest.raises(pytest.fail.Exception, match="failed in another test:\nRuntimeError: "
                       "the CLI crashed"):
        shared_folder(tmp_path_factory, name, _counting(calls))
    assert calls == []


def test_a_build_cut_off_by_a_crash_is_made_again(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    name = _name()
    left = shared_runs.session_root(tmp_path_factory) / name / "folder"
    left.mkdir(parents=True)
    (left / "half.txt").write_text("a worker died here")
    calls: list[Path] = []
    copy, _value = shared_folder(tmp_path_factory, name, _counting(calls))
    assert len(calls) == 1 and not (copy / "half.txt").exists()


def _race(place: Path, lock: Path) -> None:
    def build(folder: Path) -> object:
        with (place.parent / "builds.txt").open("a") as log:
            log.write("built\n")
        (folder / "made.txt").write_text("made")
        return 1

    with shared_runs._locked(lock):
        shared_runs._build_once(place, build)


def test_processes_racing_for_one_build_build_it_once(tmp_path: Path) -> None:
    fork = multiprocessing.get_context("fork")
    racers = [fork.Process(target=_race, args=(tmp_path / "run", tmp_path / "run.lock"))
              for _ in range(4)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(60)
    assert [r.exitcode for r in racers] == [0] * 4
    assert (tmp_path / "builds.txt").read_text() == "built\n"
