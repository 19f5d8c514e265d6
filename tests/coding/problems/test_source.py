"""A problem folder as a versioned source (origin, commit, content hash) and the data files it
lacks (Git LFS pointers, absent static assets, files git lists that are not on disk)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.coding.problems.config import ProblemConfig
from benchwright.coding.problems.git_checkout import find_checkout
from benchwright.coding.problems.loader import load_problem
from benchwright.coding.problems.source import (
    LFS_POINTER,
    missing_files,
    problem_source,
    require_data,
)
from benchwright.errors import ProblemConfigError
from tests.helpers import write_problem
from tests.helpers.git_repos import COMMIT, fake_repo, write_index

CONFIG = """
name: {name}
entry_file: tool
checkpoints:
  checkpoint_1: {{version: 1}}
{extra}"""
POINTER = LFS_POINTER.decode() + "\noid sha256:" + "ab" * 32 + "\nsize 123456\n"


def problem_in(root: Path, name: str = "demo", extra: str = "",
               files: dict[str, str] | None = None) -> ProblemConfig:
    """A problem folder `root/name`, loaded."""
    folder = write_problem(root / name, CONFIG.format(name=name, extra=extra),
                           {"checkpoint_1.md": "# one\n", "tests/test_checkpoint_1.py": "",
                            **(files or {})})
    return load_problem(folder)


def outside_any_checkout(tmp_path: Path) -> Path:
    if find_checkout(tmp_path) is not None:
        pytest.skip("the temporary folder lies inside a git checkout")
    return tmp_path


def test_a_checkout_records_origin_commit_branch_folder_and_hash(tmp_path: Path) -> None:
    root = fake_repo(tmp_path)
    problem = problem_in(root, "demo")
    source = problem_source(problem.path)
    assert (source.origin, source.commit, source.ref, source.folder) == (
        "https://example.org/set.git", COMMIT, "refs/heads/main", "demo")
    assert source.content_sha256 and len(source.content_sha256) == 64 and source.note is None


def test_a_folder_the_checkout_does_not_track_gets_no_commit(tmp_path: Path) -> None:
    root = fake_repo(tmp_path)
    problem = problem_in(root, "demo")
    write_index(root, ["README.md", "demo/config.yaml"])
    assert problem_source(problem.path).commit == COMMIT
    write_index(root, ["README.md", "other/config.yaml"])  # e.g. a home folder's dotfiles
    source = problem_source(problem.path)
    assert (source.commit, source.origin, source.folder) == (None, None, None)
    assert source.note == f"in the git checkout {root}, which does not track it"
    assert source.content_sha256


def test_credentials_in_the_origin_are_redacted(tmp_path: Path) -> None:
    root = fake_repo(tmp_path, files={"config": '[remote "origin"]\n\turl = '
                                      "https://bob:hunter2@example.org/set.git?token=abc\n"})
    origin = problem_source(problem_in(root).path).origin
    assert origin is not None and "hunter2" not in origin and "bob" not in origin
    assert "abc" not in origin and origin.startswith("https://<redacted:ORIGIN_USER>:")


def test_outside_a_checkout_only_the_content_hash(tmp_path: Path) -> None:
    source = problem_source(problem_in(outside_any_checkout(tmp_path)).path)
    assert source.commit is None and source.origin is None and source.content_sha256


def test_an_unreadable_checkout_is_a_note_not_an_error(tmp_path: Path) -> None:
    root = fake_repo(tmp_path, head_text="ref: refs/heads/../../x\n")
    source = problem_source(problem_in(root).path)
    assert source.commit is None and source.content_sha256
    assert source.note is not None and "not a valid ref name" in source.note


def test_the_content_hash_follows_names_bytes_and_links_as_links(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("one")
    problem = problem_in(outside_any_checkout(tmp_path / "set"), files={"data.txt": "x"})
    (problem.path / "link").symlink_to(outside)

    def digest() -> str | None:
        return problem_source(problem.path).content_sha256

    first = digest()
    (problem.path / "__pycache__").mkdir()
    (problem.path / "__pycache__" / "x.pyc").write_bytes(b"cache")
    outside.write_text("two")  # a link is hashed as its target's name, never read
    assert digest() == first
    (problem.path / "data.txt").write_text("y")
    changed = digest()
    assert changed != first
    (problem.path / "link").unlink()
    (problem.path / "link").symlink_to(tmp_path / "elsewhere")
    assert digest() != changed


def test_nothing_missing_in_a_complete_folder(tmp_path: Path) -> None:
    assert missing_files(problem_in(outside_any_checkout(tmp_path))).files == []


def test_lfs_pointers_and_absent_assets_are_named(tmp_path: Path) -> None:
    problem = problem_in(outside_any_checkout(tmp_path),
                         extra="static_assets:\n  db: {path: data/db.sqlite}\n"
                               "  here: {path: tests/test_checkpoint_1.py}\n",
                         files={"tests/data/big.csv": POINTER, "tests/small.txt": "version 1"})
    assert missing_files(problem).files == [
        "tests/data/big.csv (a Git LFS pointer: its content was never fetched)",
        "data/db.sqlite (static asset 'db': not there)"]


def test_files_git_lists_that_are_absent_are_named(tmp_path: Path) -> None:
    root = fake_repo(tmp_path)
    problem = problem_in(root, "demo")
    write_index(root, [
        "README.md", "demo/checkpoint_1.md", "demo/config.yaml", "demo/sde/map.csv.bz2",
        "demo/tests/test_checkpoint_1.py", "demolition/x.bin", "other/absent.bin"])
    assert missing_files(problem).files == ["sde/map.csv.bz2 (listed by git, not on disk)"]


def test_an_unreadable_index_is_said_not_guessed(tmp_path: Path) -> None:
    root = fake_repo(tmp_path)
    problem = problem_in(root)
    (root / ".git/index").write_bytes(b"garbage")
    found = missing_files(problem)
    assert found.files == [] and found.notes == [
        "files git lists not checked: the index has no DIRC header"]


def test_require_data_names_every_problem_its_files_and_the_fix(tmp_path: Path) -> None:
    root = outside_any_checkout(tmp_path)
    lacking = problem_in(root, "lacking", files={"tests/a.bin": POINTER, "tests/b.bin": POINTER})
    fine = problem_in(root, "fine")
    require_data([fine])
    with pytest.raises(ProblemConfigError) as caught:
        require_data([fine, lacking])
    message = str(caught.value)
    assert "problem lacking lacks data files" in message and "lacking: tests/a.bin" in message
    assert "tests/b.bin" in message and "fine" not in message
    assert caught.value.hint is not None and "git lfs pull" in caught.value.hint
