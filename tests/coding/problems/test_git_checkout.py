"""Reading a git checkout's HEAD, refs, origin and index without running git: the layouts git
writes (branch, packed ref, detached HEAD, linked worktree, submodule) and what a hostile
checkout may hold instead (links out, huge files, FIFOs, garbage, ref names that climb out)."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from benchwright.coding.problems.git_checkout import (
    Checkout,
    GitReadError,
    config_values,
    find_checkout,
    head,
    index_paths,
)
from tests.helpers.git_repos import COMMIT, OTHER, fake_repo, index_entry, index_file


def checkout_of(folder: Path) -> Checkout:
    found = find_checkout(folder)
    assert found is not None
    return found


def test_a_branch_ref_gives_its_commit_and_name(tmp_path: Path) -> None:
    root = fake_repo(tmp_path)
    checkout = checkout_of(root / "problem")
    assert checkout.worktree == root
    assert head(checkout) == (COMMIT, "refs/heads/main")


def test_a_packed_ref_is_found_when_there_is_no_loose_one(tmp_path: Path) -> None:
    root = fake_repo(tmp_path, files={"packed-refs": (
        "# pack-refs with: peeled fully-peeled sorted\n"
        f"{OTHER} refs/heads/dev\n^{COMMIT}\n{COMMIT} refs/heads/release\n")})
    (root / ".git/refs/heads/main").unlink()
    (root / ".git/HEAD").write_text("ref: refs/heads/release\n")
    assert head(checkout_of(root / "problem")) == (COMMIT, "refs/heads/release")


def test_a_detached_head_is_its_commit(tmp_path: Path) -> None:
    root = fake_repo(tmp_path, head_text=OTHER + "\n")
    assert head(checkout_of(root / "problem")) == (OTHER, None)


def test_a_symbolic_ref_is_followed_to_its_commit(tmp_path: Path) -> None:
    root = fake_repo(tmp_path, head_text="ref: refs/heads/alias\n",
                     files={"refs/heads/alias": "ref: refs/heads/main\n"})
    assert head(checkout_of(root)) == (COMMIT, "refs/heads/alias")


def test_a_linked_worktree_reads_head_of_its_own_and_refs_of_the_repository(
        tmp_path: Path) -> None:
    main = fake_repo(tmp_path / "main", files={
        "worktrees/wt/HEAD": "ref: refs/heads/feature\n", "worktrees/wt/commondir": "../..\n",
        "refs/heads/feature": OTHER + "\n"})
    tree = tmp_path / "wt"
    (tree / "problem").mkdir(parents=True)
    (tree / ".git").write_text(f"gitdir: {main / '.git/worktrees/wt'}\n")
    checkout = checkout_of(tree / "problem")
    assert checkout.worktree == tree
    assert head(checkout) == (OTHER, "refs/heads/feature")
    assert config_values(checkout)[("remote", "origin", "url")] == \
        "https://example.org/set.git"


def test_a_submodule_gitdir_is_relative_to_its_folder(tmp_path: Path) -> None:
    outer = fake_repo(tmp_path, files={"modules/sets/HEAD": OTHER + "\n"})
    sub = outer / "sets"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../.git/modules/sets\n")
    checkout = checkout_of(sub)
    assert checkout.worktree == sub and head(checkout) == (OTHER, None)


def test_no_checkout_is_none(tmp_path: Path) -> None:
    if find_checkout(tmp_path) is not None:
        pytest.skip("the temporary folder lies inside a git checkout")
    assert find_checkout(tmp_path / "x") is None


def test_config_values_as_git_reads_them(tmp_path: Path) -> None:
    root = fake_repo(tmp_path, files={"config": (
        '[Remote "upstream"]\n\turl = https://example.org/up.git\n'
        '[remote "origin"] \n\tURL = "https://example.org/a b.git" ; the set\n'
        '\turl = https://example.org/second.git\n[extensions]\n\tobjectFormat = sha256\n')})
    values = config_values(checkout_of(root))
    assert values[("remote", "origin", "url")] == "https://example.org/a b.git"
    assert values[("extensions", None, "objectformat")] == "sha256"


# --- hostile checkouts ------------------------------------------------------------------------


def test_a_git_link_out_of_the_folder_is_not_followed(tmp_path: Path) -> None:
    elsewhere = fake_repo(tmp_path / "elsewhere")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".git").symlink_to(elsewhere / ".git")
    with pytest.raises(GitReadError, match="link"):
        find_checkout(tree)


@pytest.mark.parametrize("rel", ["HEAD", "refs/heads/main", "refs", "config"])
def test_links_inside_the_git_folder_are_not_followed(tmp_path: Path, rel: str) -> None:
    secret = fake_repo(tmp_path / "secret", head_text=OTHER + "\n",
                       files={"refs/heads/main": OTHER + "\n", "config":
                              '[remote "origin"]\n\turl = https://secret.example/x.git\n'})
    root = fake_repo(tmp_path / "root")
    target = root / ".git" / rel
    shutil.rmtree(target) if target.is_dir() else target.unlink()
    target.symlink_to(secret / ".git" / rel)
    checkout = checkout_of(root)
    if rel == "config":
        assert config_values(checkout) == {}
        return
    with pytest.raises(GitReadError):
        head(checkout)


@pytest.mark.parametrize("text", [
    "ref: refs/heads/../../../../etc/passwd\n", "ref: ../config\n", "ref: refs//heads\n",
    "ref: /etc/hostname\n", "ref: refs/heads/.hidden\n", "ref:\n", "not a ref\n",
    "0123\n", COMMIT.upper() + "\n"])
def test_garbage_in_head_is_refused(tmp_path: Path, text: str) -> None:
    root = fake_repo(tmp_path, head_text=text)
    with pytest.raises(GitReadError):
        head(checkout_of(root))


def test_binary_head_is_refused(tmp_path: Path) -> None:
    root = fake_repo(tmp_path)
    (root / ".git/HEAD").write_bytes(b"ref: refs/heads/\xff\x00main\n")
    with pytest.raises(GitReadError, match="NUL"):
        head(checkout_of(root))


def test_huge_files_are_refused_unread(tmp_path: Path) -> None:
    root = fake_repo(tmp_path)
    for rel in ("HEAD", "config"):
        with (root / ".git" / rel).open("r+b") as handle:
            handle.truncate(1 << 30)  # sparse: a GiB the reader must not take in
    checkout = checkout_of(root)
    with pytest.raises(GitReadError, match="HEAD is larger"):
        head(checkout)
    with pytest.raises(GitReadError, match="config is larger"):
        config_values(checkout)


def test_a_fifo_for_head_does_not_hang(tmp_path: Path) -> None:
    root = fake_repo(tmp_path)
    (root / ".git/HEAD").unlink()
    os.mkfifo(root / ".git/HEAD")
    with pytest.raises(GitReadError, match="not a regular file"):
        head(checkout_of(root))


def test_a_symbolic_ref_loop_ends(tmp_path: Path) -> None:
    root = fake_repo(tmp_path, files={"refs/heads/main": "ref: refs/heads/other\n",
                                      "refs/heads/other": "ref: refs/heads/main\n"})
    with pytest.raises(GitReadError, match="too deeply"):
        head(checkout_of(root))


def test_a_gitdir_file_without_gitdir_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".git").write_text("nothing here\n")
    with pytest.raises(GitReadError, match="gitdir"):
        find_checkout(tmp_path)


# --- the index --------------------------------------------------------------------------------


def _write_index(root: Path, entries: list[bytes], version: int = 2,
                 count: int | None = None, tail: bytes = b"") -> Checkout:
    (root / ".git/index").write_bytes(index_file(entries, version, count, tail))
    return checkout_of(root)


def test_an_index_written_by_hand_lists_its_paths(tmp_path: Path) -> None:
    root = fake_repo(tmp_path)
    checkout = _write_index(root, [
        index_entry(b"a.txt"), index_entry(b"problem/tests/data.bin"),
        index_entry(b"sub", mode=0o160000), index_entry(b"sparse/", 0o040000)])
    assert index_paths(checkout) == ["a.txt", "problem/tests/data.bin", "sparse/"]


@pytest.mark.parametrize(("entries", "version", "count", "tail", "match"), [
    ([], 5, None, b"", "version 5"),
    ([index_entry(b"a")], 2, 10**9, b"", "more entries"),
    ([index_entry(b"a")[:40]], 2, 1, b"", "ends inside"),
    ([index_entry(b"a")], 2, None, b"link" + struct.pack(">I", 0), "split"),
])
def test_a_garbled_index_is_refused(tmp_path: Path, entries: list[bytes], version: int,
                                    count: int | None, tail: bytes, match: str) -> None:
    checkout = _write_index(fake_repo(tmp_path), entries, version, count, tail)
    with pytest.raises(GitReadError, match=match):
        index_paths(checkout)


def test_an_index_that_is_not_one_is_refused(tmp_path: Path) -> None:
    root = fake_repo(tmp_path)
    (root / ".git/index").write_bytes(b"PK\x03\x04 a zip, say")
    with pytest.raises(GitReadError, match="DIRC"):
        index_paths(checkout_of(root))


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to write indexes")
@pytest.mark.parametrize("version", [2, 3, 4])
def test_indexes_git_writes_read_as_git_lists_them(tmp_path: Path, version: int) -> None:
    """Our own folder, so running git in it is safe: git writes the index, we read it."""
    names = ["a.txt", "dir/b.txt", "dir/deeper/c with space.txt", "dir/deeper/d.bin",
             "é.txt", f"{'y' * 200}/{'z' * 200}"]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    git = ["git", "-C", str(tmp_path), "-c", "core.quotepath=false"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "update-index", "--index-version", str(version)], check=True)
    listed = subprocess.run([*git, "ls-files", "-z"], check=True, capture_output=True,
                            text=True).stdout.split("\0")[:-1]
    assert index_paths(checkout_of(tmp_path)) == listed == sorted(names)
