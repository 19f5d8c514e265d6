"""What a checkpoint has, known apart from the submission, and the grade's check of what ran.

A collect-only pass of pytest, with the harness's own arguments, over the checkpoint's tests laid
out beside an empty workspace (no file of the submission, no solution environment, none of the
grading's extra variables), reports every test id and its keywords over the verdict channel. It
runs in the grading sandbox once per machine: the result is cached in a 0700 folder of
benchwright's cache, keyed by the laid-out tests' content (read without following links), the
test environment, the checkpoint, its variables and the arguments that shape collection.

The grade then compares (`reconcile`): a test the checkpoint has that did not run (deselected,
missing) or was skipped from outside the problem's tests counts as failed, and the record says
so (`GradingRule.NOT_RUN`). A test that ran but is not the checkpoint's is left out of the
counts, and the same record names it: what is graded is what the checkpoint has.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from benchwright.coding.grading import pytest_report as pr
from benchwright.coding.grading import verdict_channel as vc
from benchwright.coding.grading.evaluation import GradingRule, RuleFired, TestCase
from benchwright.coding.problems.config import Group
from benchwright.errors import WorkspaceError
from benchwright.files.atomic import write_text_atomic
from benchwright.files.nofollow import TreeWalk, open_regular, read_regular, sha256_fd
from benchwright.sandbox.caches import cache_base

# Bump when what is cached, or how it is collected, changes.
EXPECT_FORMAT = 1
# How many ids a rule's record names.
SHOWN_ITEMS = 5
NOT_RUN_MESSAGE = "not run: deselected or missing from the run"


class ExpectedItem(BaseModel):
    """One test the checkpoint has."""

    nodeid: str
    """pytest's node id, as the grading run names it."""
    keywords: list[str] = Field(default_factory=list)
    """pytest's keywords of the item (markers among them), as pytest-json-report gives them."""


class Expected(BaseModel):
    """The outcome of the collection pass."""

    items: list[ExpectedItem] = Field(default_factory=list)
    """Every test collected, in collection order."""
    error: str | None = None
    """Why the pass did not give the checkpoint's tests (then `items` is empty and not used)."""


def cache_folder() -> Path:
    """`cache_base()/collections`, a 0700 folder of this user's."""
    folder = cache_base() / "collections"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise WorkspaceError("the collections cache is not a folder of this user's", path=folder,
                             hint="remove it; benchwright recreates it")
    if stat.S_IMODE(info.st_mode) != 0o700:
        folder.chmod(0o700)
    return folder


def cache_key(tests_dir: Path, shaping: Sequence[object]) -> str:
    """A hash of the laid-out tests (names, file contents, link targets; never followed) and of
    `shaping`: what else decides what pytest collects."""
    digest = hashlib.sha256(json.dumps([EXPECT_FORMAT, *shaping], default=str).encode())
    for entry in TreeWalk(tests_dir):
        digest.update(f"\0{entry.kind}\0{entry.rel}\0".encode(errors="surrogateescape"))
        if entry.kind == "link":
            digest.update(os.fsencode(os.readlink(entry.name, dir_fd=entry.dir_fd)))
        elif entry.kind == "file":
            fd = open_regular(entry)
            digest.update(b"gone" if fd is None else _file_digest(fd).encode())
    return digest.hexdigest()[:32]


def _file_digest(fd: int) -> str:
    try:
        return sha256_fd(fd)
    finally:
        os.close(fd)


def load(key: str) -> Expected | None:
    """The cached collection for `key`, or None (never cached, or unreadable)."""
    data = read_regular(cache_folder(), f"{key}.json", limit=64 << 20)
    if data is None:
        return None
    try:
        return Expected.model_validate_json(data)
    except ValidationError:
        return None


def store(key: str, expected: Expected) -> None:
    """Cache `expected` under `key` (written whole, then renamed into place)."""
    write_text_atomic(cache_folder() / f"{key}.json", expected.model_dump_json(), durable=False)


def collect_args(graded: Sequence[str], jail_plugin: str = vc.JAIL_PLUGIN) -> list[str]:
    """The grading run's pytest arguments for a collect-only pass: the jail's plugin left out
    (it only rewrites how tests start the submission, which a collection never does)."""
    args: list[str] = []
    skip = False
    for index, arg in enumerate(graded):
        if skip:
            skip = False
            continue
        if arg == "-p" and index + 1 < len(graded) and graded[index + 1] == jail_plugin:
            skip = True
            continue
        args.append(arg)
    return [*args, "--collect-only", "-q"]


def from_pipe(pipe: vc.PipeReport, exit_code: int) -> Expected:
    """What the collection pass reported, or why it cannot be used."""
    if pipe.collect_failures:
        return Expected(error="tests failed to collect: " + ", ".join(pipe.collect_failures[:3]))
    if pipe.collected_items is None or exit_code != 0:
        return Expected(error=f"pytest exited with code {exit_code} without listing its tests")
    items = [ExpectedItem(nodeid=str(i.get("nodeid")),
                          keywords=[str(k) for k in i.get("keywords") or []])
             for i in pipe.collected_items]
    return Expected(items=items) if items else Expected(error="no test was collected")


class Reconciled(BaseModel):
    """The graded cases after the comparison, and the rule that fired (if one did)."""

    cases: list[TestCase]
    """What the counts and pass policies see."""
    rules: list[RuleFired] = Field(default_factory=list)
    """`not_run` when the run differs from what the checkpoint has."""


def reconcile(expected: Expected, report: Mapping[str, Any], current: str,
              custom: Mapping[str, Group], tests_root: Path, cwd: Path) -> Reconciled:
    """The run's cases (`pytest_report.test_cases`) checked against `expected`: tests that did
    not run, or were skipped from outside `tests_root` (the problem's laid-out tests; `cwd`
    resolves relative paths), count as failed; tests the checkpoint does not have are left out."""
    cases = pr.test_cases(report, current, custom)
    if expected.error is not None:
        return Reconciled(cases=cases, rules=[RuleFired(
            rule=GradingRule.NOT_RUN, detail="the checkpoint's own collection failed "
            f"({expected.error}); graded what the run collected, unchecked")])
    wanted = {item.nodeid for item in expected.items}
    graded: list[TestCase] = []
    outside: list[str] = []
    extra: list[str] = []
    seen: set[str] = set()
    for entry, case in zip(report.get("tests") or [], cases, strict=True):
        nodeid = str(entry.get("nodeid", ""))
        if nodeid in seen:  # run twice (`--keep-duplicates`, a test path given twice): once
            continue
        if nodeid not in wanted:
            extra.append(nodeid)
            continue
        seen.add(nodeid)
        if case.outcome == "skipped" and not _skipped_within(entry, tests_root, cwd):
            outside.append(nodeid)
            case = _not_run(case)
        graded.append(case)
    missing = [item for item in expected.items if item.nodeid not in seen]
    graded += _missing_cases(missing, current, custom)
    return Reconciled(cases=graded, rules=_rules([i.nodeid for i in missing], outside, extra))


def _not_run(case: TestCase) -> TestCase:
    return case.model_copy(update={"outcome": "failed", "message": (
        f"not run: skipped from outside the problem's tests ({case.message or 'no reason'})")})


def _missing_cases(missing: Sequence[ExpectedItem], current: str,
                   custom: Mapping[str, Group]) -> list[TestCase]:
    """Failed cases for tests that never ran, their file and group derived as for a run's."""
    entries = [{"nodeid": i.nodeid, "keywords": i.keywords, "outcome": "failed"} for i in missing]
    cases = pr.test_cases({"tests": entries}, current, custom)
    return [c.model_copy(update={"message": NOT_RUN_MESSAGE}) for c in cases]


def _skipped_within(entry: Mapping[str, Any], tests_root: Path, cwd: Path) -> bool:
    """Whether pytest placed the skip in the problem's tests: a skip mark, `pytest.skip` in a
    test or a fixture of theirs. pytest-json-report writes a skip's `longrepr` as the text of
    the tuple (path, line, reason)."""
    for phase in ("setup", "call", "teardown"):
        value = entry.get(phase)
        if not isinstance(value, Mapping) or value.get("outcome") != "skipped":
            continue
        try:
            where = ast.literal_eval(str(value.get("longrepr")))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return False
        if not isinstance(where, tuple) or not where or not isinstance(where[0], str):
            return False
        return Path(os.path.normpath(cwd / where[0])).is_relative_to(tests_root)
    return False


def _rules(missing: Sequence[str], outside: Sequence[str], extra: Sequence[str]) -> list[RuleFired]:
    if not (missing or outside or extra):
        return []
    said = [f"{len(missing)} of the checkpoint's tests did not run (deselected or missing)"
            if missing else "",
            f"{len(outside)} were skipped from outside the problem's tests" if outside else "",
            f"{len(extra)} that ran are not the checkpoint's and were left out" if extra else ""]
    counted = "; the tests not run count as failed" if missing or outside else ""
    detail = "; ".join(s for s in said if s) + counted
    items = [*missing, *outside, *extra][:SHOWN_ITEMS]
    return [RuleFired(rule=GradingRule.NOT_RUN, detail=detail, items=list(items))]
