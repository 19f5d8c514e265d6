"""The caches on a machine: listed with size, last use and holders; pruned by age and size; the
environments' cap evicts the least recently used one no process holds, never one in use."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from benchwright.errors import UserInputError
from benchwright.sandbox import caches
from tests.helpers.cli import run_cli

DAY = 86400


def _env(base: Path, name: str, size: int, days_old: float) -> Path:
    """A finished environment as `ensure_env` leaves it: a folder with its marker and lock."""
    folder = base / "envs" / name
    folder.mkdir(parents=True)
    (folder / "lib.bin").write_bytes(os.urandom(size))
    (folder / caches.ENV_MARKER).write_text("{}")
    (base / "envs" / f"{name}.lock").touch()
    stamp = time.time() - days_old * DAY
    for path in (folder, folder / caches.ENV_MARKER):
        os.utime(path, (stamp, stamp))
    return folder


@pytest.fixture
def base(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "cache"
    caches.release_all()


class Holder:
    """Another process holding an environment the way a grading does (`caches.hold`), for the
    run `run` when given (as a run's pool worker inherits it)."""

    def __init__(self, folder: Path, run: Path | None = None) -> None:
        code = ("import sys, pathlib; from benchwright.sandbox import caches; "
                "caches.hold(pathlib.Path(sys.argv[1])); print('held', flush=True); "
                "sys.stdin.read()")
        env = {k: v for k, v in os.environ.items() if k != caches.RUN_VARIABLE}
        if run is not None:
            env[caches.RUN_VARIABLE] = str(run)
        self.process = subprocess.Popen([sys.executable, "-c", code, str(folder)], env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None and self.process.stdout.readline() == "held\n"

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def test_entries_list_size_last_use_and_holders(base: Path) -> None:
    old = _env(base, "tests-aaa", 40_000, days_old=10)
    new = _env(base, "solution-bbb", 10_000, days_old=0)
    holder = Holder(new)
    try:
        found = {e.name: e for e in caches.entries(base, ["envs"])}
    finally:
        holder.stop()
    assert set(found) == {"tests-aaa", "solution-bbb"}  # lock files are not entries
    assert found["tests-aaa"].bytes >= 40_000 and not found["tests-aaa"].in_use
    assert found["solution-bbb"].in_use
    assert [e.path for e in caches.entries(base, ["envs"])] == [old, new]  # oldest use first


def test_an_environment_names_the_runs_that_used_it(base: Path, tmp_path: Path) -> None:
    env = _env(base, "tests-aaa", 1000, days_old=1)
    other = _env(base, "tests-bbb", 1000, days_old=1)
    for run in ("run-1", "run-2", "run-1"):  # a run used again moves to the end, once
        Holder(env, tmp_path / run).stop()
    Holder(other).stop()  # a process outside any run notes nothing
    with caches.using_run(tmp_path / "run-3"):
        caches.hold(other)
    found = {e.name: e for e in caches.entries(base, ["envs"])}
    assert found["tests-aaa"].runs == [str(tmp_path / "run-2"), str(tmp_path / "run-1")]
    assert found["tests-bbb"].runs == [str(tmp_path / "run-3")]
    assert set(found) == {"tests-aaa", "tests-bbb"}  # the notes are not entries
    caches.release_all()
    caches.prune(base, max_bytes=0, kinds=["envs"])
    assert not list((base / "envs").glob("*.runs"))  # a note goes with its entry


def test_the_runs_noted_are_bounded_and_never_read_through_a_link(base: Path,
                                                                  tmp_path: Path) -> None:
    env = _env(base, "tests-aaa", 1000, days_old=1)
    for number in range(caches.MAX_RUNS_NOTED + 5):
        with caches.using_run(tmp_path / f"run-{number}"):
            caches.hold(env)
    runs = caches.runs_of(env)
    assert len(runs) == caches.MAX_RUNS_NOTED and runs[-1].endswith(
        f"run-{caches.MAX_RUNS_NOTED + 4}")
    secret = tmp_path / "secret"
    secret.write_text("/root/private-run\n")
    note = base / "envs" / "tests-aaa.runs"
    note.unlink()
    note.symlink_to(secret)  # planted: the listing must not read through it
    assert caches.runs_of(env) == []


def test_prune_by_age_keeps_what_a_process_holds(base: Path) -> None:
    stale = _env(base, "tests-old", 1000, days_old=40)
    held = _env(base, "tests-held", 1000, days_old=40)
    fresh = _env(base, "tests-new", 1000, days_old=1)
    holder = Holder(held)  # holding is a use: the marker says now
    stamp = time.time() - 40 * DAY  # a process that has held it since 40 days
    os.utime(held / caches.ENV_MARKER, (stamp, stamp))
    try:
        result = caches.prune(base, older_than=timedelta(days=30), kinds=["envs"])
    finally:
        holder.stop()
    assert [e.name for e in result.removed] == ["tests-old"]
    assert [e.name for e in result.kept_in_use] == ["tests-held"]
    assert not stale.exists() and held.exists() and fresh.exists()


def test_the_cap_evicts_the_least_recently_used_unheld_environment(
        base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    oldest_held = _env(base, "tests-1", 300_000, days_old=3)
    older = _env(base, "tests-2", 300_000, days_old=2)
    newest = _env(base, "tests-3", 300_000, days_old=1)
    monkeypatch.setenv(caches.MAX_GB_VARIABLE, str(700_000 / 2**30))
    holder = Holder(oldest_held)
    try:
        result = caches.enforce_env_cap(base)
    finally:
        holder.stop()
    assert [e.name for e in result.removed] == ["tests-2"]
    assert oldest_held.exists() and not older.exists() and newest.exists()


def test_a_dry_run_removes_nothing_and_a_link_is_never_an_entry(base: Path) -> None:
    _env(base, "tests-old", 1000, days_old=40)
    victim = base / "victim"
    victim.mkdir(parents=True)
    (base / "envs" / "tests-link").symlink_to(victim)  # planted: pruning must not follow it
    result = caches.prune(base, older_than=timedelta(days=1), kinds=["envs"], dry_run=True)
    assert [e.name for e in result.removed] == ["tests-old"]
    assert (base / "envs" / "tests-old").exists()
    caches.prune(base, max_bytes=0, kinds=["envs"])
    assert victim.is_dir() and (base / "envs" / "tests-link").is_symlink()


@pytest.mark.parametrize(("text", "seconds"), [("30d", 30 * DAY), ("12h", 12 * 3600),
                                               ("90m", 5400), ("1.5s", 1.5)])
def test_ages(text: str, seconds: float) -> None:
    assert caches.age(text).total_seconds() == seconds


@pytest.mark.parametrize(("text", "count"), [("10G", 10 * 2**30), ("500M", 500 * 2**20),
                                             ("2.5GiB", int(2.5 * 2**30)), ("4096", 4096)])
def test_sizes(text: str, count: int) -> None:
    assert caches.size(text) == count


@pytest.mark.parametrize("bad", ["", "x", "-1d", "10", "nand", "1e99d"])
def test_bad_ages_are_refused(bad: str) -> None:
    with pytest.raises(UserInputError):
        caches.age(bad)


def test_a_bad_cap_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    for bad in ("0", "-2", "inf", "nan", "lots"):
        monkeypatch.setenv(caches.MAX_GB_VARIABLE, bad)
        with pytest.raises(UserInputError, match=caches.MAX_GB_VARIABLE):
            caches.max_env_bytes()


def test_cache_list_and_prune_through_the_cli(base: Path) -> None:
    _env(base, "tests-old", 5000, days_old=40)
    _env(base, "tests-new", 5000, days_old=0)
    env = {**os.environ, "BENCHWRIGHT_CACHE_DIR": str(base)}
    listed = run_cli("cache", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    names = {e["name"] for e in json.loads(listed.stdout)["entries"] if e["kind"] == "envs"}
    assert names == {"tests-old", "tests-new"}
    assert all(e["runs"] == [] for e in json.loads(listed.stdout)["entries"])
    shown = run_cli("cache", env=env)
    assert shown.returncode == 0 and "envs" in shown.stdout and "browser-profiles" in shown.stdout
    pruned = run_cli("cache", "prune", "--older-than", "30d", env=env)
    assert pruned.returncode == 0, pruned.stderr
    assert "removed envs/tests-old" in pruned.stdout and "1 entries" in pruned.stdout
    assert not (base / "envs" / "tests-old").exists() and (base / "envs" / "tests-new").exists()
    bad = run_cli("cache", "prune", "--max-size", "lots", env=env)
    assert bad.returncode == 2 and "not a size" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.e2e
@pytest.mark.sandbox
def test_a_run_is_noted_by_the_environments_its_workers_used(tmp_path: Path) -> None:
    from benchwright.sandbox.caches import cache_base
    from tests.helpers import FIXTURES

    shutil.copytree(FIXTURES / "runs" / "quick", tmp_path / "problems" / "quick")
    run = (tmp_path / "run").resolve()
    done = run_cli("run", "coding", "--problems-dir", str(tmp_path / "problems"), "--no-metrics",
                   "--workers", "2", "--out", str(run), timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    used = [e for e in caches.entries(cache_base(), ["envs"]) if str(run) in e.runs]
    # once each (other tests' runs may share these environments at the same time, so which
    # run is the newest is not this test's to say; the order is tested on a cache of its own)
    assert used and all(e.runs.count(str(run)) == 1 for e in used)
