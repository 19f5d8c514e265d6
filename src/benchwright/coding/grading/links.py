"""The links a submission left where the tests read, after pytest: the `link_refused` record.

In the grading sandbox the submission's folders are `nosymfollow` (grader.py, `_mounts`): a
test that opens a file through a link the submission made gets ELOOP, whatever the link names.
This reports when that guard mattered, from two signs that cost little: a test whose message
carries ELOOP's text, and a link in those folders whose target is somewhere the submission
cannot read itself (the tests folder, or outside every folder the jail shows it). Links are
read, never followed (`benchwright.files.nofollow.TreeWalk`); the walk stops after `MAX_ENTRIES`.
"""

# Targets are sandbox paths, compared lexically: nothing here is resolved on the host.
# ruff: noqa: PTH118, PTH120

from __future__ import annotations

import errno
import itertools
import os
from collections.abc import Sequence
from pathlib import Path

from benchwright.coding.grading.evaluation import GradingRule, RuleFired, TestCase
from benchwright.files.nofollow import TreeWalk, shown

ELOOP_TEXT = os.strerror(errno.ELOOP)
"""What a test's message says when it opened a path through a refused link."""
MAX_ENTRIES = 200_000
"""Entries walked in all before the search stops (a link past them goes unnamed)."""
MAX_ITEMS = 8
"""Links and tests named in the record."""
SYSTEM = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/dev")
"""What every jail shows, read-only (`jail.system_args`)."""


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def outside_links(folders: Sequence[tuple[Path, str]], readable: Sequence[str],
                  tests: str) -> list[str]:
    """`path -> target` for each link under `folders` (each a host folder and where the
    sandbox shows it) whose target is in `tests` or under none of `readable` (sandbox paths)."""
    found: list[str] = []
    entries = itertools.chain.from_iterable(
        ((inside, entry) for entry in TreeWalk(host)) for host, inside in folders)
    for inside, entry in itertools.islice(entries, MAX_ENTRIES):
        if entry.kind != "link":
            continue
        target = os.readlink(entry.name, dir_fd=entry.dir_fd)
        where = os.path.join(inside, entry.rel)
        resolved = os.path.normpath(os.path.join(os.path.dirname(where), target))
        if _within(resolved, tests) or not any(_within(resolved, r) for r in readable):
            found.append(f"{shown(where)} -> {shown(target)}")
    return found


def rule(links: Sequence[str], cases: Sequence[TestCase]) -> RuleFired | None:
    """The record of the guard, when a test met ELOOP or such a link was left; else None."""
    looped = [case.id for case in cases if case.message and ELOOP_TEXT in case.message]
    if not links and not looped:
        return None
    detail = (f"{len(links)} link(s) the submission made point where it cannot read (the tests "
              f"folder, or outside its folders) and {len(looped)} test(s) met ELOOP: the tests "
              "never follow a link in the submission's folders")
    return RuleFired(rule=GradingRule.LINK_REFUSED, detail=detail,
                     items=[*links[:MAX_ITEMS], *looped[:MAX_ITEMS]])
