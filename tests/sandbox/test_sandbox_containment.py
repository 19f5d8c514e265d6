"""A submission that tries to escape is contained: its tests fail, the host is untouched, and
no process is left behind. On bubblewrap, podman and docker (tests/helpers/runtimes.py)."""

from __future__ import annotations

import json
import shutil
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from benchwright.coding.grading.evaluation import CheckpointEvaluation, GradeStatus
from benchwright.coding.grading.grader import GradeOptions, grade_checkpoint
from benchwright.coding.problems.loader import load_problem
from benchwright.protocols import Runtime
from benchwright.sandbox.bwrap import Limits
from tests.helpers import FIXTURES
from tests.helpers.runtimes import RUNTIME_PARAMS, runtime_for

pytestmark = pytest.mark.sandbox


class Listener:
    """A TCP server on the host's loopback that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            conn.sendall(b"x")
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


class Hostile:
    def __init__(self, snapshot: Path, token: str, canaries: list[Path], outside: Path,
                 listener: Listener) -> None:
        self.snapshot, self.token, self.canaries = snapshot, token, canaries
        self.outside, self.listener = outside, listener


@contextmanager
def _hostile_snapshot(tmp_path: Path) -> Iterator[Hostile]:
    """A snapshot of the hostile submission, with canaries and a listener to catch escapes."""
    token = f"bwtoken{uuid.uuid4().hex}"
    snapshot = tmp_path / "snapshot"
    shutil.copytree(FIXTURES / "hostile" / "solutions" / "checkpoint_1", snapshot)
    home_canary = Path.home() / f".benchwright-canary-{token}"
    root_canary = Path("/root") / f".benchwright-canary-{token}"
    canaries = [home_canary]
    home_canary.write_text("secret")
    if root_canary != home_canary and Path("/root").is_dir():
        with suppress(PermissionError):
            root_canary.write_text("secret")
            canaries.append(root_canary)
    listener = Listener()
    outside = tmp_path / "outside" / "escaped.txt"
    outside.parent.mkdir()
    (snapshot / "target.json").write_text(json.dumps({
        "token": token, "port": listener.port, "home_canary": str(home_canary),
        "root_canary": str(root_canary), "outside_file": str(outside),
    }))
    try:
        yield Hostile(snapshot, token, canaries, outside, listener)
    finally:
        listener.close()
        for canary in canaries:
            canary.unlink(missing_ok=True)


@pytest.fixture
def hostile(tmp_path: Path) -> Iterator[Hostile]:
    with _hostile_snapshot(tmp_path) as target:
        yield target


def _processes_with(token: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if token.encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


@pytest.fixture(scope="module", params=RUNTIME_PARAMS)
def runtime(request: pytest.FixtureRequest) -> Runtime:
    return runtime_for(request)


def _grade(snapshot: Path, checkpoint: str, limits: Limits,
           runtime: Runtime) -> CheckpointEvaluation:
    problem = load_problem(FIXTURES / "hostile")
    options = GradeOptions(runtime=runtime, limits=limits)
    return grade_checkpoint(problem, problem.checkpoints[checkpoint], snapshot, options).evaluation


Attempts = tuple[CheckpointEvaluation, Hostile]


@pytest.fixture(scope="module")
def escape_attempts(tmp_path_factory: pytest.TempPathFactory,
                    runtime: Runtime) -> Iterator[Attempts]:
    # Graded once for the whole module: every escape case below reads the same evaluation.
    with _hostile_snapshot(tmp_path_factory.mktemp("hostile")) as target:
        # an explicit memory limit: the machine running the tests may be shared and has no swap
        limits = Limits(wall_clock_s=300, memory_mb=2048)
        yield _grade(target.snapshot, "checkpoint_1", limits, runtime), target


ESCAPES = ["network", "read_home", "read_root", "write_outside", "allocate", "sleep", "fork_bomb"]


def test_grading_completes_and_the_honest_test_passes(escape_attempts: Attempts) -> None:
    evaluation, _ = escape_attempts
    assert evaluation.status is GradeStatus.COMPLETED
    outcomes = {case.id: case.outcome for case in evaluation.tests}
    assert outcomes["test_runs"] == "passed"


@pytest.mark.parametrize("action", ESCAPES)
def test_escape_is_contained(escape_attempts: Attempts, action: str) -> None:
    evaluation, _ = escape_attempts
    case = next(c for c in evaluation.tests if c.id == f"test_escape[{action}]")
    assert case.outcome == "failed", case.message
    if action in ("sleep", "fork_bomb"):
        assert "Timeout" in (case.message or "")


def test_host_is_untouched_and_nothing_is_left_running(escape_attempts: Attempts) -> None:
    _, target = escape_attempts
    assert target.listener.accepted == 0
    assert not target.outside.exists()
    assert _processes_with(target.token) == []


def test_wall_clock_kills_a_checkpoint_that_hangs(hostile: Hostile, runtime: Runtime) -> None:
    evaluation = _grade(hostile.snapshot, "checkpoint_2", Limits(wall_clock_s=5), runtime)
    assert evaluation.status is GradeStatus.WALL_CLOCK_TIMEOUT
    assert evaluation.verdicts["any"] is False
    assert "wall-clock" in (evaluation.infrastructure_reason or "")
    assert _processes_with(hostile.token) == []
