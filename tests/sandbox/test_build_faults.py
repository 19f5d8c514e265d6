"""A submission's environment that cannot be built because of the machine, not the submission
(issue 42 point 4): its package index refuses every request or does not answer. Grading stops
with `EnvironmentUnavailable` (a run records the checkpoint as an infrastructure error and
`--resume` redoes it) instead of grading the submission without its requirements. A requirement
that does not exist, on an index that answers, stays the submission's: graded without it, the
build's error recorded. Real builds: uv in the sandbox, through the egress proxy, to a server on
loopback (the refusing one) or to the configured index (PyPI here). A full cache disk fails the
build too: the run stops on a full disk (exit 3, `--resume` once there is space), as on any other
write."""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.coding.grading.evaluation import CheckpointEvaluation
from benchwright.coding.grading.grader import GradeOptions, grade_checkpoint
from benchwright.coding.problems.loader import load_problem
from benchwright.errors import EnvironmentUnavailable, disk_error
from benchwright.sandbox.bwrap import BwrapRuntime, Limits
from tests.helpers import FIXTURES
from tests.helpers.cli import run_cli
from tests.helpers.tmpfs import tmpfs as _tmpfs

pytestmark = pytest.mark.sandbox
QUICK = FIXTURES / "runs" / "quick"
# Spelled as no other test spells it: its environment is never in the shared cache already.
REQUIREMENT = "six!=0.0.42"


class _Refuse(http.server.BaseHTTPRequestHandler):
    """An index that refuses everyone (a registry answering 403: a lapsed token, a block)."""

    def do_GET(self) -> None:
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_args: object) -> None:
        pass


@contextlib.contextmanager
def _index(kind: str) -> Iterator[str]:
    """The URL of an index on loopback that refuses (403) or is down (nothing listens)."""
    if kind == "down":
        with socket.create_server(("127.0.0.1", 0)) as probe:
            port = probe.getsockname()[1]  # free once closed: connections are refused
        yield f"http://127.0.0.1:{port}/simple"
        return
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        server.shutdown()
        server.server_close()


def _grade(tmp_path: Path, requirements: str | None) -> CheckpointEvaluation:
    problem = load_problem(QUICK)
    snapshot = tmp_path / "snapshot"
    shutil.rmtree(snapshot, ignore_errors=True)
    shutil.copytree(QUICK / "solutions" / "checkpoint_1", snapshot)
    if requirements is not None:
        (snapshot / "requirements.txt").write_text(requirements + "\n")
    options = GradeOptions(runtime=BwrapRuntime(), limits=Limits(wall_clock_s=300),
                           scratch_root=tmp_path / "scratch")
    return grade_checkpoint(problem, problem.checkpoints["checkpoint_1"], snapshot,
                            options).evaluation


@pytest.fixture(scope="module")
def tests_env_ready(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The problem's test environment built (or reused) with the configured index, so that
    only the submission's build meets the broken one."""
    _grade(tmp_path_factory.mktemp("warm"), None)


@pytest.mark.parametrize("kind", ["refused", "down"])
def test_an_index_that_refuses_or_is_down_is_not_the_submissions_fault(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tests_env_ready: None,
        kind: str) -> None:
    with _index(kind) as url:
        monkeypatch.setenv("UV_DEFAULT_INDEX", url)
        with pytest.raises(EnvironmentUnavailable) as raised:
            _grade(tmp_path, REQUIREMENT)
    line = raised.value.one_line()
    assert f"the package index {url}" in line, line
    assert ("refused the request (HTTP 403)" if kind == "refused" else "does not answer") \
        in line, line
    assert raised.value.exit_code == 3


def test_a_requirement_the_index_does_not_have_stays_the_submissions(
        tmp_path: Path, tests_env_ready: None) -> None:
    evaluation = _grade(tmp_path, "benchwright-no-such-project-4242==1.0")
    solution = evaluation.grader.solution_env
    assert solution.error is not None and "benchwright-no-such-project-4242" in solution.error
    assert evaluation.counts  # graded, without the requirement


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")
def test_a_full_cache_disk_stops_grading_instead_of_charging_the_submission(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with _tmpfs(tmp_path / "cache", "300m") as cache:
        monkeypatch.setenv("BENCHWRIGHT_CACHE_DIR", str(cache))
        # the tests' environment and the bare one a submission falls back to, built on this
        # disk: without the cache disk, grading would go on without the requirements
        _grade(tmp_path, "benchwright-no-such-project-4242==1.0")
        with (cache / "filler").open("wb") as filler, contextlib.suppress(OSError):
            filler.write(b"\0" * (os.statvfs(cache).f_bavail * os.statvfs(cache).f_frsize))
        with pytest.raises(OSError) as raised:
            _grade(tmp_path, REQUIREMENT)
        error = disk_error(raised.value)
        assert error is not None and error.exit_code == 3, raised.value
        assert str(cache) in error.one_line(), error.one_line()


def _checkpoints(run: Path) -> list[str]:
    journal = run / "quick" / "trial_1" / "journal.jsonl"
    return [json.loads(line)["checkpoint"] for line in journal.read_text().splitlines()]


@pytest.mark.e2e
def test_a_run_records_the_refused_build_as_infrastructure_and_resume_redoes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The oracle's checkpoint 2 names a requirement; its index refuses: the checkpoint is an
    infrastructure error (not journaled, not scored), and `--resume` with the index back
    grades it and finishes every checkpoint exactly once."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("BENCHWRIGHT_CACHE_DIR", str(cache))
    _grade(tmp_path, None)  # the tests' environment, in this run's cache
    problems = tmp_path / "problems"
    shutil.copytree(QUICK, problems / "quick")
    (problems / "quick" / "solutions" / "checkpoint_2" / "requirements.txt").write_text(
        REQUIREMENT + "\n")
    run = tmp_path / "run"
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    with _index("refused") as url:
        done = run_cli("run", "coding", "--problems-dir", str(problems), "--no-metrics",
                       "--out", str(run), env={**env, "UV_DEFAULT_INDEX": url})
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-3000:]
    assert _checkpoints(run) == ["checkpoint_1"]  # the refused one is not scored
    infra = json.loads((run / "quick" / "trial_1" / "infra_error.json").read_text())
    assert infra["checkpoint"] == "checkpoint_2", infra
    assert "refused the request (HTTP 403)" in infra["grader_error"], infra

    resumed = run_cli("run", "coding", "--resume", str(run), "--no-metrics", env=env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "4/4 checkpoints solved" in resumed.stdout
    assert _checkpoints(run) == [f"checkpoint_{n}" for n in (1, 2, 3, 4)]
    assert not (run / "quick" / "trial_1" / "infra_error.json").exists()
