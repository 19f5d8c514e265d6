"""Harbor task folders read as benchwright runs them: `task.toml` (the subset docs/harbor.md
lists; unknown keys are ignored, as Harbor's loader ignores them), `instruction.md`,
`environment/Dockerfile`, `tests/`, `solution/`, and for a multi-step task `steps/<name>/`.

A task folder is hostile input: its task.toml is read by `untrusted_files` (size, encoding,
special files), every path it leads to must be a real folder or file inside the task (no link),
and a feature benchwright does not run (a compose file, an image to pull, a separate verifier
image, a step's setup.sh or healthcheck) is refused by name rather than run differently.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchwright.errors import UserInputError
from benchwright.files.untrusted import read_untrusted_text
from benchwright.harbor.task_files import check_task_files, check_test_scripts

TASK_TOML = "task.toml"
MinReward = float | dict[str, float] | None


class _Phase(BaseModel):
    model_config = ConfigDict(extra="ignore")

    timeout_sec: float | None = Field(default=None, gt=0)
    """The phase's wall clock (Harbor: agent 600 s unless set; verifier 600 s)."""
    user: str | int | None = None
    """Who the phase runs as inside the container (None: the image's user)."""
    environment_mode: Literal["shared", "separate"] | None = None
    """The verifier's container: the agent's (`shared`) or a fresh one (`separate`)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables the phase gets."""
    environment: dict[str, object] | None = None
    """A separate verifier's own environment (refused: not supported yet)."""


class _Step(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
    """The step's folder under steps/."""
    min_reward: MinReward = None
    """A number gating `reward`, or a table of key thresholds (a missing key is -inf)."""
    agent: _Phase = Field(default_factory=_Phase)
    """The step's agent settings over the task's."""
    verifier: _Phase = Field(default_factory=_Phase)
    """The step's verifier settings over the task's."""
    healthcheck: dict[str, object] | None = None
    """A step's healthcheck (refused: not supported yet)."""


class _Environment(BaseModel):
    model_config = ConfigDict(extra="ignore")

    docker_image: str | None = None
    """A prebuilt image (benchwright uses it only when the engine's store holds it)."""
    workdir: str | None = None
    """The agent's working folder (None: the image's)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables every phase gets."""
    healthcheck: dict[str, object] | None = None
    """The environment's healthcheck (refused: not supported yet)."""


class _TaskToml(BaseModel):
    model_config = ConfigDict(extra="ignore")

    environment: _Environment = Field(default_factory=_Environment)
    agent: _Phase = Field(default_factory=_Phase)
    verifier: _Phase = Field(default_factory=_Phase)
    steps: list[_Step] | None = None
    multi_step_reward_strategy: Literal["mean", "final"] | None = None
    artifacts: list[str | dict[str, object]] = Field(default_factory=list)
    task: dict[str, object] = Field(default_factory=dict)


class StepSpec(BaseModel):
    """One step as benchwright runs it (a single-step task has one, named `main`)."""

    name: str
    """The step's name (`main` for a single-step task)."""
    folder: Path | None
    """steps/<name> (None for a single-step task)."""
    min_reward: MinReward
    """The step's gate (Harbor's rule)."""
    agent_timeout_s: float
    """The agent phase's wall clock."""
    verifier_timeout_s: float
    """The verifier's wall clock."""
    agent_user: str | None
    """Who the agent runs as in the container."""
    verifier_user: str | None
    """Who the verifier runs as."""
    separate: bool
    """The verifier runs in a fresh container from the task's image."""


class HarborTask(BaseModel):
    """A Harbor task folder, checked."""

    path: Path
    """The task folder (absolute)."""
    name: str
    """`[task] name`, else the folder's name."""
    steps: list[StepSpec]
    """Its steps in order."""
    multi_step: bool
    """Declared with [[steps]]."""
    strategy: Literal["mean", "final"]
    """How the trial's reward comes from the steps' (Harbor: mean unless `final`)."""
    workdir: str | None
    """The agent's working folder in the container."""
    env: dict[str, str]
    """Variables every phase gets."""
    artifacts: list[str]
    """Paths a separate verifier gets from the agent's container."""

    def instruction(self, step: StepSpec) -> Path:
        """The step's instruction.md."""
        return (step.folder or self.path) / "instruction.md"

    def test_folders(self, step: StepSpec) -> list[Path]:
        """What is copied to /tests: the task's tests/, then the step's (Harbor's order)."""
        found = [self.path / "tests"]
        if step.folder is not None:
            found.append(step.folder / "tests")
        return [f for f in found if _real_dir(f)]

    def solution(self, step: StepSpec) -> Path | None:
        """The folder the oracle's solve.sh is in: the step's solution/, else the task's."""
        for folder in ([step.folder / "solution"] if step.folder else []) + [
                self.path / "solution"]:
            if _real_dir(folder) and (folder / "solve.sh").is_file():
                return folder
        return None

    def workdir_files(self, step: StepSpec) -> Path | None:
        """steps/<name>/workdir: copied to the working folder before the step's agent."""
        folder = step.folder / "workdir" if step.folder else None
        return folder if folder is not None and _real_dir(folder) else None


def find_tasks(root: Path) -> list[HarborTask]:
    """The task at `root`, or every task folder directly in it (a dataset's folder)."""
    if not _real_dir(root):
        raise UserInputError("--tasks is not a folder", path=root,
                             hint="give a Harbor task folder, or a folder of them")
    if (root / TASK_TOML).exists():
        return [load_task(root)]
    found = [load_task(d) for d in sorted(root.iterdir()) if _real_dir(d)
             and (d / TASK_TOML).exists()]
    if not found:
        raise UserInputError("no Harbor task here (no task.toml)", path=root,
                             hint="a task folder holds task.toml, instruction.md, "
                             "environment/Dockerfile and tests/test.sh")
    return found


def load_task(folder: Path) -> HarborTask:
    """One task folder, checked; an error names the file and what to fix."""
    folder = folder.resolve()
    path = folder / TASK_TOML
    check_task_files(folder)  # no link out, no special or huge file: before reading any of it
    text = read_untrusted_text(path, what="task.toml", error=UserInputError,
                               hint="a Harbor task folder holds task.toml")
    try:
        raw = _TaskToml.model_validate(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        raise UserInputError(f"task.toml is not a task benchwright can run: {_why(exc)}",
                             path=path, hint="check it with `harbor lint`") from None
    _refuse_unsupported(folder, raw)
    steps = _steps(folder, raw)
    check_test_scripts(folder, [s.folder for s in steps], [s.name for s in steps])
    for step in steps:
        instruction = (step.folder or folder) / "instruction.md"
        if instruction.is_symlink() or not instruction.is_file():
            raise UserInputError(f"step {step.name!r} has no instruction.md (or it is a link)",
                                 path=instruction, hint="give every step a plain "
                                 "instruction.md")
    return HarborTask(path=folder, name=str(raw.task.get("name") or folder.name), steps=steps,
                      multi_step=raw.steps is not None, strategy=raw.multi_step_reward_strategy
                      or "mean", workdir=raw.environment.workdir, env=raw.environment.env,
                      artifacts=[a if isinstance(a, str) else str(a.get("source", ""))
                                 for a in raw.artifacts])


def _why(exc: tomllib.TOMLDecodeError | ValidationError) -> str:
    """The first fault, in one line: where in the file and what."""
    if isinstance(exc, tomllib.TOMLDecodeError):
        return f"not TOML ({str(exc).splitlines()[0]})"
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "the top level"
    return f"{where}: {error['msg']}"


def _steps(folder: Path, raw: _TaskToml) -> list[StepSpec]:
    if raw.steps is None:
        only = _Step(name="main")
        return [_spec(raw, only, None)]
    specs = [_spec(raw, step, folder / "steps" / step.name) for step in raw.steps]
    for spec in specs:
        if spec.folder is None or not _real_dir(spec.folder):
            raise UserInputError(f"step {spec.name!r} has no folder", path=spec.folder,
                                 hint="each [[steps]] entry needs steps/<name>/instruction.md")
    return specs


def _spec(raw: _TaskToml, step: _Step, folder: Path | None) -> StepSpec:
    mode = step.verifier.environment_mode or raw.verifier.environment_mode or "shared"
    return StepSpec(
        name=step.name, folder=folder, min_reward=step.min_reward,
        agent_timeout_s=step.agent.timeout_sec or raw.agent.timeout_sec or 600.0,
        verifier_timeout_s=step.verifier.timeout_sec or raw.verifier.timeout_sec or 600.0,
        agent_user=_user(step.agent.user, raw.agent.user),
        verifier_user=_user(step.verifier.user, raw.verifier.user), separate=mode == "separate")


def _user(step: str | int | None, task: str | int | None) -> str | None:
    chosen = step if step is not None else task
    return None if chosen is None else str(chosen)


def _refuse_unsupported(folder: Path, raw: _TaskToml) -> None:
    env = folder / "environment"
    if not (env / "Dockerfile").is_file() or (env / "Dockerfile").is_symlink():
        what = ("a compose file" if any((env / n).exists() for n in (
            "docker-compose.yaml", "docker-compose.yml", "compose.yaml")) else
            "no environment/Dockerfile")
        raise UserInputError(f"the task has {what}: benchwright builds a task's image from "
                             "environment/Dockerfile only", path=folder,
                             hint="docs/harbor.md lists what is not supported yet")
    for name in ("steps", "tests", "solution", "instruction.md"):
        if (folder / name).is_symlink():
            raise UserInputError(f"{name} is a link", path=folder / name,
                                 hint="a task's folders must be real folders inside it")
    _refuse_features(folder, raw)


def _refuse_features(folder: Path, raw: _TaskToml) -> None:
    """What benchwright would otherwise run differently from Harbor: refused by name."""
    steps = raw.steps or []
    found = [("a healthcheck", raw.environment.healthcheck is not None
              or any(s.healthcheck is not None for s in steps)),
             ("a verifier environment of its own", raw.verifier.environment is not None
              or any(s.verifier.environment is not None for s in steps)),
             ("a verifier image (tests/Dockerfile)", (folder / "tests" / "Dockerfile").exists()
              or any((folder / "steps" / s.name / "tests" / "Dockerfile").exists()
                     for s in steps)),
             ("a step's setup.sh", any((folder / "steps" / s.name / "setup.sh").exists()
                                       for s in steps))]
    for what, present in found:
        if present:
            raise UserInputError(f"the task has {what}, which benchwright does not run yet",
                                 path=folder, hint="docs/harbor.md lists what is not "
                                 "supported yet")


def _real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()
