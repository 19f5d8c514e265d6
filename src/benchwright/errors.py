"""One exception tree for benchwright, and the exit codes the CLI maps it to.

Exit codes (documented in docs/cli.md):

- 0: the command did what was asked (a graded checkpoint that fails its tests is still a success,
  and so is an agent that crashed: that is the agent's result, reported at the end);
- 1: a bug in benchwright (a traceback is printed); or `report --fail-if-worse` found the run
  worse than its baseline (one line says by how much: `RegressionFound`, no traceback);
- 2: bad input or a missing prerequisite: one line says what, where and how to fix it (also: the
  run folder is in use by another benchwright process, named by its pid);
- 3: infrastructure failed (an environment could not be built, the grader itself broke, the
  problem's tests could not run);
- 4: a run ended but is incomplete: some attempts broke off with errors (each is named; the result
  files are written; `--resume` runs them again once the cause is fixed);
- 130: interrupted (Ctrl-C); 143: stopped by SIGTERM. Either way the run stops cleanly, finished
  work is kept and `--resume` continues.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from pathlib import Path


class BenchwrightError(Exception):
    """Base of every error benchwright raises on purpose."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None, path: Path | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.path = path

    def __str__(self) -> str:
        return self.one_line()

    def one_line(self) -> str:
        """What went wrong, where, and how to fix it, on one line."""
        where = f"{self.path}: " if self.path is not None else ""
        fix = f" ({self.hint})" if self.hint else ""
        return f"{where}{self.message}{fix}"


class UserInputError(BenchwrightError):
    """The user pointed benchwright at something missing or malformed."""


class ProblemConfigError(UserInputError):
    """A problem folder (config.yaml, specs, tests) is missing or malformed."""


class WorkspaceError(UserInputError):
    """A workspace snapshot is missing or lacks what the problem needs."""


class PrerequisiteError(BenchwrightError):
    """A tool or interpreter benchwright needs is not installed."""


class InfrastructureError(BenchwrightError):
    """The grading machinery failed for a reason that is not the submission's fault."""

    exit_code = 3


class EnvironmentBuildError(InfrastructureError):
    """uv could not build an environment benchwright needs for grading."""


class EnvironmentUnavailable(EnvironmentBuildError):
    """The submission's environment could not be built for a reason outside the submission (its
    package index refused or did not answer, `sandbox.build_faults`): a run records the
    checkpoint as an infrastructure error and `--resume` redoes it."""


class SandboxKilled(InfrastructureError):
    """A sandbox was killed from outside (the OOM killer, an operator), not by the code inside:
    a run records the checkpoint as an infrastructure error and `--resume` redoes it."""


class GradingInfrastructureError(InfrastructureError):
    """pytest could not run the problem's tests (they failed to collect, a data file is missing):
    grading broke, whatever the submission (exit 3)."""


class Interrupted(BenchwrightError):
    """The user stopped a run; what finished is saved."""

    exit_code = 130


class RunInUse(BenchwrightError):
    """Another benchwright process holds the run folder's lock."""


class RunIncomplete(BenchwrightError):
    """A run ended with attempts that broke off with errors; its result files are written."""

    exit_code = 4


class RegressionFound(BenchwrightError):
    """`report --fail-if-worse D`: the paired comparison shows the run worse than its baseline
    by more than D points with the report's confidence (the gate a CI job reads)."""

    exit_code = 1


class WorkersLost(InfrastructureError):
    """Worker processes died (killed, out of memory) while running jobs. Raised once every
    other job has run; `lost` holds each lost job and why, so the caller can mark just those
    (a run: their attempts broke off, `--resume` redoes them)."""

    def __init__(self, message: str, *, lost: list[tuple[object, str]],
                 hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.lost = lost


class ProviderUnavailable(InfrastructureError):
    """The model provider kept failing (429, 5xx, timeouts, broken replies) after retries."""


class ReplayDivergence(InfrastructureError):
    """A replayed run asked the model something the cassette has no recording of
    (`--llm-replay`): the message names the conversation, the request and the first field."""


class PluginError(UserInputError):
    """A plugin (an entry point of another distribution, or a "module:Class" name) could not be
    loaded: the message names it, its distribution and why."""


class SnapshotLimitError(BenchwrightError):
    """The workspace an agent left is past the snapshot limits: that checkpoint fails as the
    agent's error (a run records it; it never ends the run)."""


class DiskError(InfrastructureError):
    """The disk under a run or an output filled up (exit 3), or is mounted read-only (exit 2):
    one line naming the path; what finished is kept, and the run can be resumed."""


class DiskFull(OSError):
    """A write that found its disk full (ENOSPC, EDQUOT), carrying the bytes it needed when its
    writer knew them (a record, a file written whole): `disk_error` puts them in its line."""

    def __init__(self, exc: OSError, needed: int | None, path: Path | str | None = None) -> None:
        named = exc.filename if path is None or exc.filename not in (None, "") else path
        super().__init__(exc.errno, exc.strerror, None if named is None else str(named), None,
                         exc.filename2)
        self.needed = needed


def needing(exc: OSError, needed: int | None, path: Path | str | None = None) -> OSError:
    """`exc` as a `DiskFull` that needed `needed` bytes when it is a full disk (and names
    `path` if it named no file); any other error as it is."""
    if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
        return exc
    return DiskFull(exc, needed, path)


_DISK_ERRNOS = {errno.ENOSPC: ("no space left on the device", 3),
                errno.EDQUOT: ("the disk quota is exceeded", 3),
                errno.EROFS: ("the file system is read-only", 2)}


def is_disk_error(exc: BaseException) -> bool:
    """Whether `exc` is a full or read-only disk (the machine's failure, never an agent's)."""
    return isinstance(exc, OSError) and exc.errno in _DISK_ERRNOS


def disk_error(exc: BaseException, where: Path | None = None, then: str | None = None,
               others: Sequence[Path] = ()) -> DiskError | None:
    """A full or read-only disk as one `DiskError` naming the file, with the space its write
    needed (`DiskFull.needed`, else unknown) and the space left on its file system, and what to
    do (`then`: the command that goes on); None for any other error. A write that names no file
    (a failed flush) is put on the fullest file system of `where` and `others` (the folders the
    command writes: the cache, the temporary folder)."""
    if not isinstance(exc, OSError) or exc.errno not in _DISK_ERRNOS:
        return None
    what, code = _DISK_ERRNOS[exc.errno]
    # a copy names its source first and the destination, the file that could not be written,
    # second
    named = next((p for p in (exc.filename2, exc.filename) if p not in (None, "")), None)
    path = Path(str(named)) if named is not None else _fullest(
        [p for p in (where, *others) if p is not None])
    hint = (f"free some space, then: {then}" if then else "free some space") if code == 3 \
        else "choose a folder on a writable file system"
    if code == 3:
        what = f"{what} ({_space(getattr(exc, 'needed', None), path)})"
    error = DiskError(f"cannot write: {what}", path=path, hint=hint)
    error.exit_code = code
    return error


def _space(needed: int | None, path: Path | None) -> str:
    """The space a full disk's write needed (unknown when its writer could not tell) and what
    is left on the file system of `path`."""
    free = _free_bytes(path) if path is not None else None
    asked = f"needs at least {_size(needed, up=True)}" if needed is not None else \
        "space needed unknown"
    left = f"{_size(free)} free on its file system" if free is not None else \
        "free space unknown"
    return f"{asked}, {left}"


def _fullest(folders: list[Path]) -> Path | None:
    """The folder whose file system has the least space left (the first when none reads)."""
    known = [(free, index) for index, folder in enumerate(folders)
             if (free := _free_bytes(folder)) is not None]
    return folders[min(known)[1]] if known else (folders[0] if folders else None)


def _free_bytes(path: Path) -> int | None:
    """The space left for unprivileged writes on the file system holding `path` (its nearest
    existing folder); None when it cannot be read."""
    for folder in (path, *path.parents):
        try:
            info = os.statvfs(folder)
        except OSError:
            continue
        return info.f_bavail * info.f_frsize
    return None


def _size(count: int, up: bool = False) -> str:
    """`count` bytes for a reader; `up`: rounded up (a need), else down (what is left)."""
    if count < 2**10:
        return f"{count} bytes"
    if count < 2**20:
        return f"{-(-count // 2**10) if up else count // 2**10} KiB"
    unit, name = (2**30, "GiB") if count >= 2**30 else (2**20, "MiB")
    tenths = -(-count * 10 // unit) if up else count * 10 // unit
    return f"{tenths / 10:.1f} {name}"


def install_command(extra: str | None, then: str | None = None,
                    version: str | None = None) -> str:
    """The exact command that installs an optional part of benchwright (None: benchwright
    itself; `then`: a second step the extra cannot express, chained with `&&`; `version`: that
    release of benchwright). Every "pip install" benchwright prints is written here."""
    pinned = f"=={version}" if version else ""
    command = f"pip install 'benchwright{f'[{extra}]' if extra else ''}{pinned}'"
    return f"{command} && {then}" if then else command


def missing_extra(needs: str, extra: str, then: str | None = None) -> PrerequisiteError:
    """The one message for an optional dependency that is not installed: what needs it, and the
    exact command that installs it (every such message is written here)."""
    return PrerequisiteError(needs, hint=f"install it with: {install_command(extra, then)}")
