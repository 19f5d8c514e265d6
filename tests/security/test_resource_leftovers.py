"""Nothing a submission leaves can crash, hang or fill the harness (issue 36, point 7).

Written as an attacker would: a submission of the `quick` problem that, when its tests run it
(grading) and when it is the agent (agent work), builds folders 1,500 and 3,000 levels deep, a
folder of many files, a folder it made unreadable and a file of a few MiB, in its working folder,
in /tmp and in its home. Removing a 1,500-deep folder recursed (RecursionError): `eval
checkpoint`, `run coding` and `--resume` then crashed every time after. Now they complete, the
scratch folders are gone, and past the per-attempt caps on what grading writes the checkpoint
fails with the rule `cap_exceeded`. Needs bubblewrap.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.coding.grading.evaluation import CheckpointEvaluation, GradeStatus, GradingRule
from benchwright.coding.grading.grader import GradeOptions, grade_checkpoint
from benchwright.coding.grading.scratch import private_root
from benchwright.coding.problems.loader import load_problem
from benchwright.sandbox.bwrap import BwrapRuntime, Limits
from tests.helpers import FIXTURES, run_cli

pytestmark = [pytest.mark.sandbox, pytest.mark.e2e]
QUICK = FIXTURES / "runs" / "quick"
FILES = 20_000

# calc.py: the quick problem's checkpoint 1, plus the mess, made once per folder.
SUBMISSION = '''
import os, sys, tempfile

TOKEN = "{token}"


def deep(base, depth):
    here = os.getcwd()
    os.chdir(base)
    os.mkdir(f"{{TOKEN}}-deep{{depth}}")
    os.chdir(f"{{TOKEN}}-deep{{depth}}")
    for _ in range(depth):
        os.mkdir("d")
        os.chdir("d")
    open("bottom", "w").close()
    os.chdir(here)


def mess(base):
    many = os.path.join(base, f"{{TOKEN}}-many")
    if os.path.exists(many):
        return
    deep(base, 1500)
    deep(base, 3000)
    os.mkdir(many)
    for i in range(FILES):
        open(os.path.join(many, str(i)), "w").close()
    with open(os.path.join(base, f"{{TOKEN}}-blob"), "wb") as blob:
        blob.write(os.urandom(3 << 20))
    locked = os.path.join(base, f"{{TOKEN}}-locked")
    os.makedirs(os.path.join(locked, "inner"))
    open(os.path.join(locked, "inner", "f"), "w").close()
    os.chmod(os.path.join(locked, "inner"), 0)
    os.chmod(locked, 0)


FILES = {files}
if sys.argv[1:] == ["mess"]:  # the agent
    mess(os.getcwd())
    mess(os.environ["HOME"])
    sys.exit(0)
mess(os.getcwd())
mess(tempfile.gettempdir())
op, a, b = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if op != "add":
    sys.exit(f"unknown operation {{op}}")
print(a + b)
'''


@pytest.fixture(autouse=True)
def _no_mess_left(tmp_path: Path) -> Iterator[None]:
    """The run folder keeps what the agent left in its home: removed here, or pytest's own
    cleanup of old temporary folders (shutil.rmtree) would meet it in a later session."""
    yield
    from benchwright.files.nofollow import remove_tree

    remove_tree(tmp_path, ignore_errors=True)


def _problems(root: Path) -> Path:
    """A folder holding the quick problem, with room for the mess on a busy machine: a test's
    timeout (10 s) that cut it short would leave less than the caps."""
    problems = root / "problems"
    shutil.copytree(QUICK, problems / "quick")
    config = problems / "quick" / "config.yaml"
    config.write_text(config.read_text().replace("timeout: 10", "timeout: 600"))
    return problems


def _submission(folder: Path, token: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "calc.py").write_text(SUBMISSION.format(token=token, files=FILES))
    return folder


def _left(token: str, roots: list[Path]) -> list[Path]:
    """What of the mess is still anywhere under `roots` (two levels down at most)."""
    return [p for root in roots if root.is_dir()
            for p in [*root.glob(f"*/{token}-*"), *root.glob(f"*/*/{token}-*")]]


def test_eval_checkpoint_completes_and_removes_the_mess(tmp_path: Path) -> None:
    token = f"mess{uuid.uuid4().hex}"
    snapshot, problems = _submission(tmp_path / "snapshot", token), _problems(tmp_path)
    for attempt in range(2):  # the second start sweeps what the first left: it crashed too
        done = run_cli("eval", "checkpoint", "--problems-dir", str(problems), "--problem",
                       "quick", "--checkpoint", "checkpoint_1", "--workspace", str(snapshot),
                       "--out", str(tmp_path / f"out{attempt}"), "--json", timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        evaluation = json.loads(done.stdout)
        assert evaluation["status"] == "completed", evaluation.get("infrastructure_reason")
        assert evaluation["rules_fired"] == []
        assert all(t["outcome"] == "passed" for t in evaluation["tests"])
    assert not _left(token, [private_root()])
    capped = run_cli("eval", "checkpoint", "--problems-dir", str(problems), "--problem",
                     "quick", "--checkpoint", "checkpoint_1", "--workspace", str(snapshot),
                     "--out", str(tmp_path / "capped"), "--json",
                     "--max-write-files", str(FILES // 2), timeout=900)
    evaluation = json.loads(capped.stdout)
    assert [r["rule"] for r in evaluation["rules_fired"]] == ["cap_exceeded"], capped.stderr
    assert not any(evaluation["verdicts"].values())
    assert not _left(token, [private_root()])


@pytest.mark.parametrize(("caps", "what"), [({"max_write_files": FILES // 2}, "max_write_files"),
                                            ({"max_write_mb": 2}, "max_write_mb")])
def test_past_the_cap_the_checkpoint_fails_and_says_why(tmp_path: Path, caps: dict[str, int],
                                                        what: str) -> None:
    token = f"mess{uuid.uuid4().hex}"
    problem = load_problem(_problems(tmp_path) / "quick")
    options = GradeOptions(runtime=BwrapRuntime(), scratch_root=tmp_path / "scratch",
                           limits=Limits(wall_clock_s=600, **caps))
    evaluation: CheckpointEvaluation = grade_checkpoint(
        problem, problem.checkpoints["checkpoint_1"], _submission(tmp_path / "snap", token),
        options).evaluation
    assert evaluation.status is GradeStatus.TAMPERED
    assert what in (evaluation.tampering_reason or "")
    assert not any(evaluation.verdicts.values())
    assert [r.rule for r in evaluation.rules_fired] == [GradingRule.CAP_EXCEEDED]
    assert not _left(token, [tmp_path / "scratch"])


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    source = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": source, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "benchwright", *argv], env=env, text=True,
                          capture_output=True, timeout=1800)


def test_run_coding_and_resume_complete_after_an_agent_that_leaves_a_mess(
        tmp_path: Path) -> None:
    token = f"mess{uuid.uuid4().hex}"
    problems, run = _problems(tmp_path), tmp_path / "run"
    script = SUBMISSION.format(token=token, files=FILES)
    command = f"cat > calc.py <<'PY'\n{script}\nPY\npython calc.py mess"
    first = _run(["run", "coding", "--problems-dir", str(problems), "--no-metrics",
                  "--agent", "command", "--agent-command", command, "--out", str(run)])
    assert first.returncode == 0, first.stderr[-3000:]
    resumed = _run(["run", "coding", "--resume", str(run), "--no-metrics"])
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    journal = run / "quick" / "trial_1" / "journal.jsonl"
    records = [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]
    assert records and records[0]["checkpoint"] == "checkpoint_1"
    assert not (run / ".work").exists()


def _deep_tree(root: Path, depth: int, secret: str) -> None:
    """`root/d/d/.../d` `depth` levels down, a file holding `secret` at the bottom (made through
    descriptors: the path is longer than PATH_MAX)."""
    root.mkdir()
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        sub = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = sub
    with os.fdopen(os.open("log.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as log:
        log.write(f"key={secret}\n")
    os.close(fd)


def test_every_walker_survives_a_tree_2000_levels_deep(tmp_path: Path) -> None:
    from benchwright.coding.attempts.snapshots import diff_snapshots, take_snapshot
    from benchwright.files.nofollow import remove_tree, usage
    from benchwright.files.redaction import Redactor
    from benchwright.metrics.static import analyze_snapshot

    secret = f"sk-{uuid.uuid4().hex}"
    work = tmp_path / "work"
    _deep_tree(work, 2000, secret)
    (work / "main.py").write_text("print(1)\n")
    snapshot = take_snapshot(work, tmp_path / "snapshot", set())  # deeper than 128: skipped
    assert snapshot.files == 1 and snapshot.skipped
    assert diff_snapshots(None, tmp_path / "snapshot")["added"]
    analyze_snapshot(tmp_path / "snapshot", entry="main.py", scbench=False)
    assert usage([work]).entries == 2000 + 2  # the folders, the log, main.py
    assert Redactor({"KEY": secret}).tree(work) == 1  # the agent's log at the bottom: swept
    remove_tree(work)
    assert not work.exists()
