"""Inside pytest: refuse, when it happens, any run of the submission's code in pytest's process.

Loaded by `verdict_plugin` (itself loaded with `-p` before any conftest or test module), from
the plugin tree; standard library only. The harness names the submission's folders (its
workspace copy, the sandbox's /tmp, its environment) in $BENCHWRIGHT_SUBMISSION_ROOTS, and the
folders inside them that are the harness's own (the tests). From then on:

- an audit hook sees every `exec` of a code object (by the file it was compiled from: what
  importlib, runpy's `run_path` and `exec(compile(source, path, "exec"))` run) and every
  `ctypes.dlopen` (a `.so` loaded by hand);
- a finder first on `sys.meta_path` sees every module the import system finds (a `.py`, a
  sourceless `.pyc`, an extension module), by the file it would load.

When the file is under a submission folder, the guard first sends a record to the harness over
the verdict channel (so the harness has it before that code could run), then raises, so the code
does not run. The check is a string prefix test: nothing is resolved, opened or stat'ed.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

ROOTS_ENV = "BENCHWRIGHT_SUBMISSION_ROOTS"
# Not `compile`: compiling runs nothing (pytest itself parses source to show a traceback, and a
# test may parse the submission's code to inspect it); what runs the result is an `exec`.
_WATCHED = frozenset({"exec", "ctypes.dlopen"})
Report = Callable[[str, str], None]


class SubmissionCodeRefused(ImportError):
    """The tests tried to run a file of the submission inside pytest."""


class _Guard:
    """What is the submission's, and whom to tell."""

    def __init__(self, roots: Sequence[str], trusted: Sequence[str], report: Report) -> None:
        self.roots = tuple(_folder(r) for r in roots)
        self.trusted = tuple(_folder(t) for t in trusted)
        self.report = report
        self.refused: set[str] = set()

    def owns(self, filename: object) -> str | None:
        """The absolute path of `filename` when it is the submission's; else None."""
        if isinstance(filename, bytes):
            filename = os.fsdecode(filename)
        if not isinstance(filename, str) or not filename or filename[0] == "<":
            return None
        if filename[0] != "/":
            filename = os.path.abspath(filename)  # noqa: PTH100 - strings only, no stat
        elif "/." in filename:
            filename = os.path.normpath(filename)
        if filename.startswith(self.roots) and not filename.startswith(self.trusted):
            return filename
        return None

    def refuse(self, path: str, how: str) -> None:
        if path not in self.refused:
            self.refused.add(path)
            self.report(path, how)
        raise SubmissionCodeRefused(
            f"benchwright: the tests ran the submission's file {path} inside pytest ({how}); "
            "tests start the submission only through its entry point")

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event not in _WATCHED:
            return
        filename = getattr(args[0], "co_filename", None) if event == "exec" else args[0]
        path = self.owns(filename)
        if path is not None:
            self.refuse(path, event)


class _Finder:
    """First on `sys.meta_path`: finds a module as the finders after it would, and refuses it
    when its file is the submission's (an extension module runs code as it loads)."""

    def __init__(self, guard: _Guard) -> None:
        self.guard = guard

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec: importlib.machinery.ModuleSpec | None = finder.find_spec(fullname, path, target)
            if spec is None:
                continue
            owned = self.guard.owns(spec.origin) if spec.has_location else None
            if owned is not None:
                self.guard.refuse(owned, f"import {fullname}")
            return spec
        return None


def _folder(path: str) -> str:
    return os.path.normpath(path).rstrip("/") + "/"


def install(report: Report) -> None:
    """Read (and take out of the environment) the folders to guard, and start guarding; nothing
    when the harness named none."""
    raw = os.environ.pop(ROOTS_ENV, "")
    if not raw:
        return
    named = json.loads(raw)
    guard = _Guard(named.get("roots", []), named.get("trusted", []), report)
    sys.meta_path.insert(0, _Finder(guard))
    sys.addaudithook(guard.audit)
