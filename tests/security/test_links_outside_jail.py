"""Links the submission makes are never followed outside the jail (issue 36, points 3 and 4).

Written as an attacker would: a submission that implements nothing makes its output file a
link to the case's expected output (the test, outside the jail, would read the answer through
it), and a jailed server that keeps running swaps the folder the next call names for a link into
the tests between the jail's check and bubblewrap's bind. Neither gets anything; the record says
which guard fired. On bubblewrap, podman and the docker CLI (the grading sandbox, bubblewrap's or
the container, remounts the submission's folders nosymfollow), as root.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from benchwright.coding.grading.evaluation import CheckpointEvaluation, GradingRule
from benchwright.coding.grading.grader import GradeOptions, grade_checkpoint
from benchwright.coding.problems.loader import load_problem
from benchwright.protocols import Mount, Runtime
from benchwright.sandbox.bwrap import Limits
from tests.helpers import FIXTURES
from tests.helpers.runtimes import RUNTIME_PARAMS, runtime_for

pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(os.geteuid() != 0, reason="nosymfollow needs a root harness")]
CHEATERS = FIXTURES / "cheaters"
CASEFILES = FIXTURES / "casefiles"


@pytest.fixture(params=RUNTIME_PARAMS)
def runtime(request: pytest.FixtureRequest) -> Runtime:
    return runtime_for(request)


def _grade(problem_dir: Path, checkpoint: str, main: Path, tmp: Path,
           runtime: Runtime) -> CheckpointEvaluation:
    problem = load_problem(problem_dir)
    snapshot = tmp / "snapshot"
    snapshot.mkdir()
    shutil.copyfile(main, snapshot / f"{problem.entry_file}.py")
    options = GradeOptions(runtime=runtime, limits=Limits(wall_clock_s=300),
                           scratch_root=tmp / "scratch")
    return grade_checkpoint(problem, problem.checkpoints[checkpoint], snapshot,
                            options).evaluation


def _passed(evaluation: CheckpointEvaluation) -> list[str]:
    return [case.id for case in evaluation.tests if case.passed]


def test_an_output_that_links_to_the_expected_file_scores_nothing(
        tmp_path: Path, runtime: Runtime) -> None:
    evaluation = _grade(CASEFILES, "checkpoint_1", CHEATERS / "link_answer.py", tmp_path,
                        runtime)
    assert evaluation.pytest_collected > 0
    assert _passed(evaluation) == []
    fired = [r for r in evaluation.rules_fired if r.rule is GradingRule.LINK_REFUSED]
    assert len(fired) == 1, evaluation.rules_fired
    assert any("expected.txt" in item for item in fired[0].items), fired[0]
    assert any("to_file" in item for item in fired[0].items), fired[0]


def test_the_reference_writing_a_file_passes_and_fires_nothing(
        tmp_path: Path, runtime: Runtime) -> None:
    evaluation = _grade(CASEFILES, "checkpoint_1",
                        CASEFILES / "solutions" / "checkpoint_1" / "main.py", tmp_path, runtime)
    assert "to_file" in " ".join(_passed(evaluation))
    assert len(_passed(evaluation)) == evaluation.pytest_collected
    assert evaluation.rules_fired == []


def test_a_server_swapping_a_folder_for_a_link_never_exposes_the_tests(
        tmp_path: Path, runtime: Runtime) -> None:
    # The server swaps `box` and a link to the tests' data back and forth without pause while
    # the tests name `box` in 60 calls; on b468e42 some of them got the secret (the realpath
    # check saw the folder, bubblewrap's bind by name then met the link). Whether a swap lands
    # between check and bind is luck; that nothing is ever exposed is not.
    evaluation = _grade(FIXTURES / "racer", "checkpoint_1", CHEATERS / "swapper.py", tmp_path,
                        runtime)
    assert evaluation.pytest_collected == 60
    assert _passed(evaluation) == []
    # the link the server left, named (one of the two names holds it when the tests end)
    fired = [r for r in evaluation.rules_fired if r.rule is GradingRule.LINK_REFUSED]
    assert any("/box" in item and ".evaluation_tests" in item for item in fired[0].items), fired


def test_inside_the_jail_the_submission_follows_its_own_links(
        tmp_path: Path, runtime: Runtime) -> None:
    # nosymfollow is pytest's view only: the jail's bubblewrap binds the same folders without
    # it, so a submission whose code sits behind a link of its own runs as under SCBench.
    problem = load_problem(CASEFILES)
    snapshot = tmp_path / "snapshot"
    (snapshot / "real").mkdir(parents=True)
    shutil.copyfile(CASEFILES / "solutions" / "checkpoint_1" / "main.py",
                    snapshot / "real" / "impl.py")
    (snapshot / "code").symlink_to("real")
    (snapshot / "main.py").write_text(
        "from pathlib import Path\n"
        "exec((Path(__file__).parent / 'code' / 'impl.py').read_text())\n")
    options = GradeOptions(runtime=runtime, limits=Limits(wall_clock_s=300),
                           scratch_root=tmp_path / "scratch")
    evaluation = grade_checkpoint(problem, problem.checkpoints["checkpoint_1"], snapshot,
                                  options).evaluation
    assert len(_passed(evaluation)) == evaluation.pytest_collected > 0, [
        case.message for case in evaluation.tests]
    assert evaluation.rules_fired == []


def test_the_command_never_holds_the_capability_that_set_nosymfollow(
        tmp_path: Path, runtime: Runtime) -> None:
    # The remount needs CAP_SYS_ADMIN: only the harness's first step has it, and the command
    # (pytest, in grading) starts with none (an empty bounding set too: a container started
    # with the capabilities added), in a mount it can read links in but not follow.
    folder = tmp_path / "w"
    folder.mkdir()
    (folder / "secret").write_text("SECRET")
    (folder / "link").symlink_to("secret")  # even a link to a file beside it
    out = tmp_path / "out.txt"
    script = ("grep -E '^Cap(Prm|Eff|Bnd|Amb)' /proc/self/status; readlink link; cat link; "
              "mount -o remount,bind link . 2>&1 | head -1; true")
    with out.open("wb") as sink:
        runtime.run(["/bin/sh", "-c", script], cwd=folder, env={"PATH": "/usr/bin:/bin"},
                           mounts=[Mount(path=folder, writable=True, nosymfollow=True)],
                           limits=Limits(wall_clock_s=60), stdout=sink, stderr=sink)
    text = out.read_text()
    assert text.count("0000000000000000") == 4, text
    assert "\nsecret\n" in text  # readlink works
    assert "Too many levels of symbolic links" in text
    assert "SECRET" not in text
