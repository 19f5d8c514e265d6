"""A grader killed with SIGKILL in the middle of grading leaves no hidden test where anyone else
could read it, and the next start removes what it left. Needs bubblewrap."""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from benchwright.coding.grading.scratch import new_scratch, private_root, sweep_leftovers
from benchwright.errors import WorkspaceError
from tests.helpers import FIXTURES, run_cli
from tests.helpers.processes import Process, ProcessTree, wait_for

pytestmark = pytest.mark.sandbox
HIDDEN = "test_checkpoint_3.py"
LINGER = "main.py\0linger"  # the command line of the forger's lingering test


@pytest.fixture
def marked_problem(tmp_path: Path) -> tuple[Path, str]:
    """The forger problem, its checkpoint_3 hidden test marked with a token we can look for."""
    token = f"hidden{uuid.uuid4().hex}"
    problem = tmp_path / "forger"
    shutil.copytree(FIXTURES / "forger", problem)
    with (problem / "tests" / HIDDEN).open("a") as hidden:
        hidden.write(f"# {token}\n")
    return problem, token


def _copies_of(token: str, roots: list[Path]) -> Iterator[Path]:
    """The marked hidden test's copies in grading scratch folders (<scratch>/.evaluation_tests/)."""
    for root in roots:
        for path in root.glob(f"*/.evaluation_tests/{HIDDEN}"):
            try:
                if token in path.read_text():
                    yield path
            except OSError:
                continue


def _lingering(tree: ProcessTree) -> list[Process]:
    """The lingering test's processes among those the grader started."""
    tree.refresh()
    return [p for p in tree.running() if LINGER in "\0".join(p.argv)]


def _kill_during_grading(problem: Path, out: Path) -> None:
    _kill_when([sys.executable, "-m", "benchwright", "eval", "checkpoint", "--problems-dir",
                str(problem.parent), "--problem", problem.name, "--checkpoint", "checkpoint_3",
                "--workspace", str(problem / "solutions" / "checkpoint_1"), "--out", str(out)],
               lambda tree: bool(_lingering(tree)))


def _kill_when(argv: list[str], condition: Callable[[ProcessTree], bool]) -> None:
    """Start `argv`, SIGKILL it once `condition` holds of the processes it started, and wait for
    the lingering test among them to end."""
    grader = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tree = ProcessTree(grader.pid)
    with tree.watch():
        try:
            wait_for(lambda: condition(tree), what="the grader to reach the lingering test")
        finally:
            grader.send_signal(signal.SIGKILL)
            grader.wait()
        wait_for(lambda: not _lingering(tree), 120, what="the lingering test to end")


def _readable_by_another_user(path: Path) -> bool:
    probe = subprocess.run(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                            "--clear-groups", "cat", str(path)], capture_output=True, check=False)
    return probe.returncode == 0


def test_sigkill_during_grading_leaves_no_readable_hidden_test(
    marked_problem: tuple[Path, str], tmp_path: Path
) -> None:
    problem, token = marked_problem
    _kill_during_grading(problem, tmp_path / "out")
    assert list(_copies_of(token, [Path(tempfile.gettempdir())])) == []
    left = list(_copies_of(token, [private_root()]))
    if os.geteuid() == 0:
        assert [p for p in left if _readable_by_another_user(p)] == []
    for path in left:
        folder = path.parents[1]  # <scratch>/.evaluation_tests/<file>
        assert folder.parent.stat().st_mode & 0o077 == 0


def test_the_next_start_removes_the_leftovers(
    marked_problem: tuple[Path, str], tmp_path: Path
) -> None:
    problem, token = marked_problem
    _kill_during_grading(problem, tmp_path / "killed")
    roots = [Path(tempfile.gettempdir()), private_root()]
    assert list(_copies_of(token, roots)), "the killed grader left nothing to clean"
    run_cli("eval", "checkpoint", "--problems-dir", str(problem.parent), "--problem", problem.name,
            "--checkpoint", "checkpoint_2",
            "--workspace", str(problem / "solutions" / "checkpoint_1"),
            "--out", str(tmp_path / "next"))
    assert list(_copies_of(token, roots)) == []


def test_a_run_grades_in_a_private_folder_and_dead_graders_are_swept(tmp_path: Path) -> None:
    root = tmp_path / "run" / ".work" / ".grading"
    mine = new_scratch(root)
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    dead = root / "grade-999999999-1-abcdefgh"  # no such process
    (dead / "workspace").mkdir(parents=True)
    (dead / "workspace" / HIDDEN).write_text("hidden")
    (dead / "workspace").chmod(0)  # what a submission may do to its own folder
    assert sweep_leftovers(root) == [dead]
    assert not dead.exists()
    assert mine.is_dir()


def test_a_planted_scratch_root_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "grading").symlink_to(elsewhere)
    with pytest.raises(WorkspaceError):
        new_scratch(tmp_path / "grading")


def test_a_killed_run_keeps_its_hidden_tests_in_its_own_folder_until_it_resumes(
    marked_problem: tuple[Path, str], tmp_path: Path
) -> None:
    problem, token = marked_problem
    problems = tmp_path / "problems"
    problems.mkdir()
    shutil.move(problem, problems / "forger")
    problem = problems / "forger"
    # One checkpoint, graded by the lingering test (the oracle agent copies the solution in).
    (problem / "config.yaml").write_text(
        "name: forger\ndescription: linger\nentry_file: main\n"
        "checkpoints:\n  checkpoint_1: {version: 1, order: 1}\n")
    shutil.copy(problem / "tests" / HIDDEN, problem / "tests" / "test_checkpoint_1.py")
    (problem / "checkpoint_1.md").write_text("Take your time.\n")
    run = tmp_path / "run"
    base = [sys.executable, "-m", "benchwright", "run", "coding", "--no-metrics"]
    _kill_when([*base, "--problems-dir", str(problems), "--out", str(run)],
               lambda tree: bool(_lingering(tree)))
    own = run / ".work" / ".grading"
    left = list(own.glob("*/.evaluation_tests/test_checkpoint_1.py"))
    assert left and all(token in p.read_text() for p in left)
    assert stat.S_IMODE(own.stat().st_mode) == 0o700
    assert list(_copies_of(token, [Path(tempfile.gettempdir()), private_root()])) == []
    old = {p.parents[1] for p in left}
    _kill_when([*base, "--resume", str(run)], lambda _: not any(p.exists() for p in old))


def test_a_killed_remote_attempts_job_folder_is_swept_and_no_one_elses(tmp_path: Path) -> None:
    """`/tmp/benchwright-job-*` of an attempt on a machine without the run folder: named for its
    owner, so the next attempt removes the one a kill -9 left, never a live one or a folder
    whose name is not ours (issue 26 point 5)."""
    from benchwright.coding.attempts.remote import JOB_PREFIX
    from benchwright.coding.grading.scratch import owned_prefix

    gone = subprocess.run([sys.executable, "-c", "from benchwright.coding.grading.scratch import "
                           f"owned_prefix; print(owned_prefix({JOB_PREFIX!r}))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (tmp_path / f"{gone}left").mkdir()
    live = tmp_path / f"{owned_prefix(JOB_PREFIX)}live"
    live.mkdir()
    other = tmp_path / f"{JOB_PREFIX}someone-elses"
    other.mkdir()
    assert [p.name for p in sweep_leftovers(tmp_path, JOB_PREFIX)] == [f"{gone}left"]
    assert sorted(tmp_path.iterdir()) == sorted([live, other])


def test_a_job_folder_in_use_in_another_pid_namespace_is_left_alone(tmp_path: Path) -> None:
    """A Ray node (or container) sharing this /tmp in a PID namespace of its own: its pid means
    nothing here, so the folder's lock says whether its owner lives. Seen in CI: one node swept
    another's job folder in use, and the attempt lost its problem's tests."""
    from benchwright.coding.attempts.remote import JOB_PREFIX
    from benchwright.coding.grading.scratch import owned_folder

    elsewhere = f"{JOB_PREFIX}999999999-1-"  # a pid this namespace does not have
    with owned_folder(tmp_path, JOB_PREFIX) as mine:
        held = mine.rename(tmp_path / f"{elsewhere}in-use")  # the same inode: still locked
        (tmp_path / f"{elsewhere}left").mkdir()
        assert [p.name for p in sweep_leftovers(tmp_path, JOB_PREFIX)] == [f"{elsewhere}left"]
        assert held.is_dir()
        held.rename(mine)
    assert not mine.exists()


@pytest.mark.container
@pytest.mark.e2e
def test_a_container_left_by_a_killed_grader_is_removed_by_the_next_start(
    marked_problem: tuple[Path, str], tmp_path: Path
) -> None:
    """kill -9 of the harness while its container runs the lingering test: the container
    outlives it (conmon keeps it) until the next benchwright that starts a container runtime."""
    from benchwright.sandbox.container import owner_prefix
    from benchwright.sandbox.images.engines import find_engine

    problem, _token = marked_problem
    engine = find_engine("podman")
    argv = [sys.executable, "-m", "benchwright", "eval", "checkpoint", "--runtime", "podman",
            "--problems-dir", str(problem.parent), "--problem", problem.name,
            "--checkpoint", "checkpoint_3", "--workspace",
            str(problem / "solutions" / "checkpoint_1"), "--out", str(tmp_path / "killed")]
    grader = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def containers() -> list[str]:
        listed = engine.text(["ps", "--all", "--filter", "label=benchwright.runtime",
                              "--format", "{{.Names}}"]) or ""
        return [n for n in listed.split() if n.startswith(owner_prefix(grader.pid))]

    def lingering() -> bool:
        return any("linger" in (engine.text(["top", name, "args"]) or "")
                   for name in containers())

    try:
        wait_for(lingering, what="the grader's container to reach the lingering test")
    finally:
        grader.send_signal(signal.SIGKILL)
        grader.wait()
    assert containers(), "the container outlives its killed harness"
    run_cli("eval", "checkpoint", "--runtime", "podman", "--problems-dir", str(problem.parent),
            "--problem", problem.name, "--checkpoint", "checkpoint_1",
            "--workspace", str(problem / "solutions" / "checkpoint_1"),
            "--out", str(tmp_path / "next"))
    assert containers() == []
