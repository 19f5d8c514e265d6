"""`benchwright web package`: a run (or a folder of logs) as the official submission package.

The package is made by webarena-verified itself, in the evaluator's environment: its
`create-submission-pkg` command for the 812 official tasks (it copies each task's
agent_response.json and writes its network.har trimmed by the same code as its
`trim-network-logs` command: static resources dropped), and, for a dataset of our own such as the
local suite (which that command leaves out as unknown tasks), the library's same submission
handler given the dataset's task ids (`package_worker.py`). benchwright only chooses the trials
and reports what trimming saved.

Which trial of a task goes in (the official layout holds one per task):
- `first`: the lowest-numbered trial that has both files;
- `best`: the lowest-numbered trial among those with the highest score in their
  eval_result.json (a trial not scored counts as 0), so ties go to the earliest.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from benchwright.errors import InfrastructureError, UserInputError
from benchwright.files.owned_temp import OwnedTemp
from benchwright.files.untrusted import read_untrusted_json
from benchwright.web.evaluation.scoring import (
    AGENT_RESPONSE,
    EVAL_RESULT,
    MAX_HAR_BYTES,
    NETWORK_HAR,
    TRIAL_PREFIX,
    check_har,
)

if TYPE_CHECKING:
    from benchwright.sandbox.environments import BuiltEnv

WORKER = Path(__file__).with_name("package_worker.py")
TAR_SUFFIX = ".tar.gz"
PACKAGE_TIMEOUT_S = 1800.0


class TrialChoice(StrEnum):
    """Which trial of a task is packaged."""

    FIRST = "first"
    BEST = "best"


@dataclass(frozen=True)
class PackageResult:
    """What `package` made."""

    path: Path
    """The package: a .tar.gz file or a folder."""
    trials: dict[int, str]
    """Task id -> the trial folder packaged (relative to the tasks folder)."""
    packaged: list[int]
    """Task ids in the package, as the official summary lists them."""
    har_bytes_before: int
    """Size of the chosen HARs as recorded."""
    har_bytes_after: int
    """Size of the trimmed HARs in the package."""

    @property
    def saved_bytes(self) -> int:
        """What trimming saved."""
        return self.har_bytes_before - self.har_bytes_after


def package(source: Path, out: Path, choice: TrialChoice = TrialChoice.FIRST,
            python: str | None = None) -> PackageResult:
    """Package a run directory or a folder in the official layout into `out`."""
    from benchwright.web.evaluation.evaluator import evaluator_env

    tasks_dir, dataset = _source(source)
    if out.exists():
        raise UserInputError("the package already exists", path=out, hint="pick another --out")
    with OwnedTemp("benchwright-package-") as tmp:  # a kill -9: the next start's sweep
        staging = Path(tmp) / "logs"
        trials = stage(tasks_dir, staging, choice)
        if not trials:
            raise UserInputError("no task folder with agent_response.json and network.har",
                                 path=tasks_dir)
        before = sum((staging / str(t) / NETWORK_HAR).stat().st_size for t in trials)
        env = evaluator_env(python)
        made = Path(tmp) / "made"
        made.mkdir()
        packaged = _make(env, staging, made, _name(out), dataset, tar=_is_tar(out))
        built = _built(made, out)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(built), out)
    return PackageResult(path=out, trials=trials, packaged=packaged, har_bytes_before=before,
                         har_bytes_after=har_bytes(out))


def _source(source: Path) -> tuple[Path, Path | None]:
    """The folder of task logs, and the dataset file for tasks that are not the official 812."""
    from benchwright.runs import open_run
    from benchwright.runs.layout import MANIFEST
    from benchwright.web.trials.layout import WebRunLayout

    if not source.is_dir():
        raise UserInputError("no such folder", path=source,
                             hint="pass a run directory or a folder of <task_id>/ logs")
    if not (source / MANIFEST).exists():
        return source, None
    open_run(source, expect="web")  # the manifest's track, never a guess: a coding run is refused
    from benchwright.web.trials.runner import load_web_manifest

    manifest = load_web_manifest(source)
    return WebRunLayout(source).tasks_dir, manifest.dataset_file


def stage(tasks_dir: Path, staging: Path, choice: TrialChoice) -> dict[int, str]:
    """Copy one trial per task into `staging/<task_id>/`; returns the folders chosen."""
    chosen: dict[int, str] = {}
    for folder in sorted(tasks_dir.iterdir(), key=lambda p: p.name):
        if not (folder.is_dir() and folder.name.isdigit()):
            continue
        trial = pick_trial(folder, choice)
        if trial is None:
            continue
        _refuse_bad_har(trial / NETWORK_HAR)
        target = staging / folder.name
        target.mkdir(parents=True)
        for name in (AGENT_RESPONSE, NETWORK_HAR):
            shutil.copyfile(trial / name, target / name, follow_symlinks=False)
        chosen[int(folder.name)] = str(trial.relative_to(tasks_dir))
    return chosen


def _refuse_bad_har(path: Path) -> None:
    """A HAR the packager cannot read (not JSON, `log` not an object) is bad input, named
    here, not the packager's failure (an empty one it packages as it is)."""
    problem = check_har(path)
    if problem is None:
        problem = _bad_entry(path)
    if problem is not None and not problem.endswith("(the evaluator needs at least one)"):
        raise UserInputError(problem.removeprefix(f"{path}: "), path=path,
                             hint="package another trial (--trial), or remove this task's folder")


def _bad_entry(path: Path) -> str | None:
    har = read_untrusted_json(path, what=NETWORK_HAR, max_bytes=MAX_HAR_BYTES)
    for number, entry in enumerate(har["log"]["entries"], start=1):
        if (problem := har_entry_problem(entry)) is not None:
            return f"{path}: HAR entry {number}: {problem}"
    return None


def har_entry_problem(entry: object) -> str | None:
    """What in one HAR entry the packager's trimming would trip on, or None: it reads each
    entry's request URL and the names of its request and response headers."""
    if not isinstance(entry, dict):
        return f"a {type(entry).__name__}, not an object"
    request = entry.get("request")
    if not isinstance(request, dict) or not isinstance(request.get("url"), str):
        return "no request object with a url string"
    for side in ("request", "response"):
        part = entry.get(side)
        if part is None:
            continue
        if not isinstance(part, dict):
            return f"its {side} is not an object"
        headers = part.get("headers", [])
        if not isinstance(headers, list) or not all(
                isinstance(h, dict) and isinstance(h.get("name"), str)
                and isinstance(h.get("value", ""), str) for h in headers):
            return f"its {side} headers are not a list of {{name, value}} strings"
    return None


def pick_trial(task_folder: Path, choice: TrialChoice) -> Path | None:
    """The trial folder packaged for one task (see the module docstring)."""
    trials = sorted((p for p in task_folder.glob(f"{TRIAL_PREFIX}*")
                     if p.is_dir() and p.name.removeprefix(TRIAL_PREFIX).isdigit()),
                    key=lambda p: int(p.name.removeprefix(TRIAL_PREFIX)))
    complete = [p for p in trials or [task_folder] if _has_logs(p)]
    if not complete:
        return None
    if choice is TrialChoice.FIRST:
        return complete[0]
    best = max(_score(p) for p in complete)
    return next(p for p in complete if _score(p) == best)


def _has_logs(folder: Path) -> bool:
    return all((folder / name).is_file() and not (folder / name).is_symlink()
               for name in (AGENT_RESPONSE, NETWORK_HAR))


def _score(folder: Path) -> float:
    try:
        score = json.loads((folder / EVAL_RESULT).read_text(encoding="utf-8")).get("score")
    except (OSError, ValueError, AttributeError, RecursionError):
        return 0.0
    return float(score) if isinstance(score, int | float) else 0.0


def _is_tar(out: Path) -> bool:
    return out.name.endswith(TAR_SUFFIX)


def _name(out: Path) -> str:
    return out.name.removesuffix(TAR_SUFFIX) if _is_tar(out) else out.name


def _make(env: BuiltEnv, staging: Path, made: Path, name: str, dataset: Path | None,
          tar: bool) -> list[int]:
    """Run the official packager; the ids it packaged."""
    from benchwright.web.evaluation.evaluator import official_cli

    if dataset is None:
        command = [str(official_cli(env)), "create-submission-pkg",
                   "--run-output-dir", str(staging), "--output", str(made), "--name", name]
        command += [] if tar else ["--no-tar"]
    else:
        command = [str(env.python), str(WORKER), str(dataset), str(staging),
                   str(made), name, "tar" if tar else "folder"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=PACKAGE_TIMEOUT_S,
                          check=False)
    built = _built(made, made / (name + (TAR_SUFFIX if tar else "")))
    if done.returncode != 0 or not built.exists():
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise InfrastructureError(f"the official packager failed: {' / '.join(tail)}",
                                  hint="run the same command by hand to see its whole output")
    return _packaged_ids(built)


def _built(made: Path, out: Path) -> Path:
    """The packager's output for `out` (the archive when one was asked for, not a work folder
    beside it)."""
    return made / (_name(out) + (TAR_SUFFIX if _is_tar(out) else ""))


def _packaged_ids(built: Path) -> list[int]:
    summary = _read_member(built, "summary.json")
    if summary is None:
        return []
    ids = json.loads(summary).get("packaged_tasks", {}).get("task_ids", [])
    return sorted(int(i) for i in ids)


def _read_member(built: Path, name: str) -> str | None:
    if built.is_dir():
        path = built / name
        return path.read_text(encoding="utf-8") if path.is_file() else None
    with tarfile.open(built) as archive:
        for member in archive.getmembers():
            if member.isfile() and Path(member.name).name == name and \
                    len(Path(member.name).parts) <= 2:
                handle = archive.extractfile(member)
                return handle.read().decode("utf-8") if handle is not None else None
    return None


def har_bytes(built: Path) -> int:
    """Total size of the network.har files in a package (folder or archive)."""
    if built.is_dir():
        return sum(p.stat().st_size for p in built.glob(f"*/{NETWORK_HAR}"))
    with tarfile.open(built) as archive:
        return sum(m.size for m in archive.getmembers()
                   if m.isfile() and Path(m.name).name == NETWORK_HAR)
