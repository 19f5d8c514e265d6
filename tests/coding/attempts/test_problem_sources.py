"""A problem set as a versioned source, end to end through the CLI: a run records each
problem's origin, commit and content hash in manifest.json and report.md; a problem whose data
was never fetched (a Git LFS pointer) is named by `problems validate` and refused by `run`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers import run_cli
from tests.helpers.git_repos import COMMIT, fake_repo, write_index
from tests.helpers.quick_runs import QUICK

pytestmark = pytest.mark.sandbox

ORIGIN = "https://bob:hunter2222@example.org/scb-problems.git"
POINTER = ("version https://git-lfs.github.com/spec/v1\noid sha256:" + "ab" * 32
           + "\nsize 52428800\n")


def problem_set(root: Path) -> Path:
    """A git checkout (written by hand) holding the `quick` problem, its index listing every
    file of it, its origin URL carrying credentials."""
    fake_repo(root, files={"config": f'[remote "origin"]\n\turl = {ORIGIN}\n'})
    shutil.copytree(QUICK / "quick", root / "quick")
    files = sorted(p.relative_to(root).as_posix() for p in (root / "quick").rglob("*")
                   if p.is_file())
    write_index(root, files)
    return root


def test_a_run_records_origin_commit_and_content_hash(tmp_path: Path) -> None:
    problems = problem_set(tmp_path / "scb")
    out = tmp_path / "run"
    proc = run_cli("run", "coding", "--problems-dir", str(problems), "--agent", "oracle",
                   "--no-metrics", "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    manifest_text = (out / "manifest.json").read_text()
    assert "hunter2222" not in manifest_text and "bob" not in manifest_text
    source = json.loads(manifest_text)["problem_sources"]["quick"]
    redacted = ("https://<redacted:ORIGIN_USER>:<redacted:ORIGIN_PASSWORD>@example.org/"
                "scb-problems.git")
    assert {k: source[k] for k in ("origin", "commit", "ref", "folder", "note")} == {
        "origin": redacted, "commit": COMMIT, "ref": "refs/heads/main", "folder": "quick",
        "note": None}
    assert len(source["content_sha256"]) == 64
    report = (out / "report.md").read_text()
    assert f"- problems from: `{redacted}` commit `{COMMIT}` (main): quick" in report
    assert source["grading"] == "scbench-runner"  # no conversion.toml at the set's root
    assert (f"| quick | {redacted} | {COMMIT[:12]} | quick | {source['content_sha256'][:16]} | "
            "scbench-runner | - |" in report)
    assert "hunter2222" not in report


def test_a_problem_without_its_lfs_data_is_named_and_refused(tmp_path: Path) -> None:
    problems = problem_set(tmp_path / "scb")
    (problems / "quick" / "tests" / "golden.bin").write_text(POINTER)
    validated = run_cli("problems", "validate", str(problems), "--repeat", "1", "--json")
    assert validated.returncode == 1, validated.stderr
    [problem] = json.loads(validated.stdout)["problems"]
    assert problem["checkpoints"] == []  # not graded: every failure would be the data's
    [finding] = problem["findings"]
    assert finding["kind"] == "missing_data"
    assert "tests/golden.bin (a Git LFS pointer" in finding["detail"]
    assert problem["source"]["commit"] == COMMIT

    out = tmp_path / "run"
    refused = run_cli("run", "coding", "--problems-dir", str(problems), "--agent", "oracle",
                      "--no-metrics", "--out", str(out))
    assert refused.returncode == 2, refused.stderr
    assert "quick: tests/golden.bin (a Git LFS pointer" in refused.stderr
    assert "git lfs pull" in refused.stderr
    assert not out.exists()


def test_a_file_git_lists_but_a_copy_left_out_is_refused(tmp_path: Path) -> None:
    problems = problem_set(tmp_path / "scb")
    (problems / "quick" / "tests" / "test_checkpoint_4.py").unlink()
    text = run_cli("problems", "validate", str(problems), "--repeat", "1")
    assert text.returncode == 1
    assert "quick missing_data" in text.stdout
    assert "tests/test_checkpoint_4.py (listed by git, not on disk)" in text.stdout
    assert f"problems from: `https://<redacted:ORIGIN_USER>:<redacted:ORIGIN_PASSWORD>@" \
        f"example.org/scb-problems.git` commit `{COMMIT}` (main): quick" in text.stdout
    refused = run_cli("run", "coding", "--problems-dir", str(problems), "--agent", "oracle",
                      "--no-metrics", "--out", str(tmp_path / "run"))
    assert refused.returncode == 2
    assert "tests/test_checkpoint_4.py (listed by git, not on disk)" in refused.stderr


def test_a_resume_refuses_data_gone_since_and_records_the_folder_as_it_is(
        tmp_path: Path) -> None:
    problems = problem_set(tmp_path / "scb")
    out = tmp_path / "run"
    first = run_cli("run", "coding", "--problems-dir", str(problems), "--agent", "oracle",
                    "--no-metrics", "--out", str(out))
    assert first.returncode == 0, first.stderr
    before = json.loads((out / "manifest.json").read_text())["problem_sources"]["quick"]
    pointer = problems / "quick" / "tests" / "golden.bin"
    pointer.write_text(POINTER)
    refused = run_cli("run", "coding", "--resume", str(out))
    assert refused.returncode == 2
    assert "quick: tests/golden.bin (a Git LFS pointer" in refused.stderr
    pointer.write_text("the data, fetched")
    resumed = run_cli("run", "coding", "--resume", str(out))
    assert resumed.returncode == 0, resumed.stderr
    after = json.loads((out / "manifest.json").read_text())["problem_sources"]["quick"]
    assert after["commit"] == before["commit"] == COMMIT
    assert after["content_sha256"] != before["content_sha256"]
