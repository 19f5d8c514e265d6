"""Load a problem folder into a validated `ProblemConfig`, with errors a person can act on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from benchwright.coding.problems.config import CheckpointConfig, ProblemConfig
from benchwright.errors import ProblemConfigError
from benchwright.files.nofollow import TreeWalk, shown
from benchwright.files.untrusted import read_untrusted_yaml

CONFIG_NAME = "config.yaml"
MAX_CONFIG_BYTES = 2**20


def load_problem(problem_dir: Path) -> ProblemConfig:
    """Read and validate `problem_dir/config.yaml`."""
    config_path = problem_dir / CONFIG_NAME
    if not problem_dir.is_dir():
        raise ProblemConfigError(
            "problem folder not found", path=problem_dir, hint="pass the folder holding config.yaml"
        )
    if not config_path.exists():
        raise ProblemConfigError(
            "no config.yaml here",
            path=problem_dir,
            hint="a problem folder holds config.yaml, checkpoint_N.md and tests/",
        )
    check_links(problem_dir)
    raw = _read_yaml(config_path)
    raw["path"] = problem_dir.resolve()
    raw["checkpoints"] = _normalise_checkpoints(raw.get("checkpoints"), config_path)
    try:
        return ProblemConfig.model_validate(raw)
    except ValidationError as exc:
        raise ProblemConfigError(_describe(exc), path=config_path, hint=_hint(exc)) from None


def require_tests(problem: ProblemConfig) -> None:
    """A problem is graded by the tests in its tests/ folder: without one, no run or grading
    can start (checked before a run folder is made)."""
    if not problem.tests_dir.is_dir():
        what = "is not a folder" if problem.tests_dir.exists() else "is missing"
        raise ProblemConfigError(f"tests/ {what}", path=problem.path,
                                 hint="a problem folder holds config.yaml, checkpoint_N.md and "
                                 "tests/test_checkpoint_N.py")


def get_checkpoint(problem: ProblemConfig, name: str) -> CheckpointConfig:
    """The named checkpoint, or an error that lists the ones there are."""
    if name not in problem.checkpoints:
        choices = ", ".join(c.name for c in problem.ordered_checkpoints())
        raise ProblemConfigError(
            f"unknown checkpoint {name!r}",
            path=problem.path / CONFIG_NAME,
            hint=f"choose one of: {choices}",
        )
    return problem.checkpoints[name]


def _read_yaml(path: Path) -> dict[str, Any]:
    data = read_untrusted_yaml(path, what=CONFIG_NAME, max_bytes=MAX_CONFIG_BYTES,
                               error=ProblemConfigError)
    if not isinstance(data, dict):
        raise ProblemConfigError(
            "must be a YAML mapping", path=path, hint="top-level keys such as name, entry_file"
        )
    return data


def _normalise_checkpoints(raw: object, path: Path) -> dict[str, dict[str, Any]]:
    if not isinstance(raw, dict) or not raw:
        raise ProblemConfigError(
            "`checkpoints` must map checkpoint names to their settings",
            path=path,
            hint="e.g. checkpoints: {checkpoint_1: {version: 1, order: 1}}",
        )
    result: dict[str, dict[str, Any]] = {}
    for index, (name, settings) in enumerate(raw.items(), start=1):
        if settings is None:
            settings = {}
        if not isinstance(settings, dict):
            raise ProblemConfigError(
                f"checkpoint {name!r} must be a mapping", path=path, hint="version, order, ..."
            )
        result[str(name)] = {"order": index, **settings, "name": str(name)}
    return result


def check_links(problem_dir: Path) -> None:
    """Refuse a problem folder holding a link that leads outside it or to a folder that holds
    the link (copying it would never end), a FIFO, socket or device, or a name that is not
    UTF-8. Links inside are fine: copies of the problem's files follow them."""
    root = problem_dir.resolve()
    walk = TreeWalk(root)
    for entry in walk:
        if entry.kind == "link":
            _check_link(root, root / entry.rel)
    if walk.skipped:
        raise ProblemConfigError(f"{walk.skipped[0]}: a problem folder holds only folders, "
                                 "files and links", path=root, hint="remove it")


def _check_link(root: Path, link: Path) -> None:
    rel = shown(link.relative_to(root).as_posix())
    try:
        target = link.resolve(strict=True)
    except FileNotFoundError:
        target = link.resolve()  # a dangling link: where it would lead is what counts
    except (RuntimeError, OSError):  # a loop (`solutions -> solutions`)
        raise ProblemConfigError(f"{rel} is a symlink loop", path=root,
                                 hint="replace the link with the folder or file itself") from None
    if not target.is_relative_to(root):
        raise ProblemConfigError(f"{rel} is a link to {shown(str(target))}, outside the problem "
                                 "folder", path=root, hint="put the file itself in the folder")
    if target.is_dir() and link.parent.is_relative_to(target):
        raise ProblemConfigError(f"{rel} is a link to a folder that holds it", path=root,
                                 hint="remove the link")


def _describe(exc: ValidationError) -> str:
    first = exc.errors()[0]
    location = ".".join(shown(str(part)).encode("unicode_escape").decode("ascii")
                        for part in first["loc"]) or "checkpoints"  # the model's own check
    if first["type"] == "extra_forbidden":
        return f"{location}: unknown key"
    if first["type"] == "missing":
        return f"{location}: required key is missing"
    return f"{location}: {first['msg']}"


def _hint(exc: ValidationError) -> str:
    first = exc.errors()[0]
    if first["type"] == "extra_forbidden" and first["loc"][0] == "checkpoints":
        keys = ", ".join(k for k in CheckpointConfig.model_fields if k != "name")
        return f"checkpoint keys are: {keys}"
    if first["type"] == "missing":
        return "add it to config.yaml"
    return "see docs/problem-format.md"
