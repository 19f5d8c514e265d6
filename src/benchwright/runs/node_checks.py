"""Every machine of a cluster checked before a run starts: what its jobs need there.

A track gives a list of checks (callables that raise a `BenchwrightError` when something is
missing); they run once on every node that can take a job (`Executor.each_node`), and whatever
is missing anywhere is one error naming each node, what it lacks and how to install it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from benchwright.errors import BenchwrightError, PrerequisiteError
from benchwright.protocols import Executor

Check = Callable[[], object]


def missing_here(checks: Sequence[Check]) -> list[tuple[str, str]]:
    """On a node: (what is missing, how to install it) for each check that fails."""
    found = []
    for check in checks:
        try:
            check()
        except BenchwrightError as exc:
            found.append((exc.message, exc.hint or ""))
    return found


def require_on_every_node(executor: Executor, checks: Sequence[Check]) -> None:
    """Raise one error naming every node that lacks something; on an executor that runs jobs
    where the run is, this machine is the one node (its first failing check is the error, as
    its own words: one line with the install command)."""
    if executor.shares_filesystem:
        for check in checks:
            check()
        return
    report = executor.each_node(functools.partial(missing_here, list(checks)))
    missing = [(node, what, fix) for node, found in sorted(report.items())
               for what, fix in found]
    if missing:
        fixes = sorted({fix for _node, _what, fix in missing if fix})
        raise PrerequisiteError(
            "; ".join(f"node {node}: {what}" for node, what, _fix in missing),
            hint=f"on each node named: {'; '.join(fixes)}" if fixes else None)
