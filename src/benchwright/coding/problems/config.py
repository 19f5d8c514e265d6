"""The SlopCodeBench problem format: config.yaml, checkpoints, specs, tests and solutions."""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from benchwright.errors import ProblemConfigError
from benchwright.files.names import Name
from benchwright.files.untrusted import read_untrusted_text

ENTRY_FILE_PLACEHOLDER = "%%%ENTRYPOINT:entry_file%%%"
ENTRY_COMMAND_PLACEHOLDER = "%%%ENTRYPOINT:entry_command%%%"
MAX_TEST_TIMEOUT_S = 86_400.0
# Only the leading comment: SCBench's greedy pattern would also eat any later comment in the spec.
_CANARY = re.compile(r"\A\s*<!--[\s\S]*?-->[ \t]*\n?")


class Group(StrEnum):
    """The test groups of SCBench, in report order."""

    CORE = "Core"
    FUNCTIONALITY = "Functionality"
    ERROR = "Error"
    REGRESSION = "Regression"


class StaticAsset(BaseModel):
    """A file or folder of the problem given to the tests (and, in runs, to the agent)."""

    model_config = ConfigDict(extra="forbid")

    path: str
    """Where the asset is, relative to the problem folder."""
    save_path: str | None = None
    """Where the agent finds it, relative to the workspace root; defaults to `path`."""

    @field_validator("path", "save_path")
    @classmethod
    def _relative(cls, value: str | None) -> str | None:
        if value is not None and (Path(value).is_absolute() or ".." in Path(value).parts):
            raise ValueError("must be a relative path inside the problem folder")
        if value is not None and not value.isprintable():  # a NUL byte is no path at all
            raise ValueError("must be a path without control characters")
        return value


class MarkerConfig(BaseModel):
    """A problem-specific pytest marker and the group its tests count in."""

    model_config = ConfigDict(extra="forbid")

    description: str
    """Shown in the generated pytest.ini (one line)."""
    group: Group
    """The group a test with this marker belongs to."""

    @field_validator("description")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if any(ord(c) < 32 and c != "\t" for c in value):  # a newline adds pytest.ini lines
            raise ValueError("must be one line without control characters")
        return value


def _environment(value: dict[str, str]) -> dict[str, str]:
    """Variables a process can be given: the kernel takes no NUL byte, and a name with `=` or
    nothing in it sets another variable or none."""
    for key, item in value.items():
        if not key or "=" in key or "\0" in key:
            raise ValueError(f"{key!r} is not an environment variable name")
        if "\0" in item:
            raise ValueError(f"{key}: the value holds a NUL byte, which no process can be given")
    return value


def _not_a_bool(value: object) -> object:
    """YAML's `true` is not the number 1 (pydantic would read it so)."""
    if isinstance(value, bool):
        raise ValueError("must be a number, not true or false")
    return value


# the fields both config levels share, each checked where it is declared
Version = Annotated[int, BeforeValidator(_not_a_bool)]
TestTimeout = Annotated[
    Annotated[float, Field(gt=0, le=MAX_TEST_TIMEOUT_S, allow_inf_nan=False)] | None,
    BeforeValidator(_not_a_bool)]
Environment = Annotated[dict[str, str], AfterValidator(_environment)]


class CheckpointConfig(BaseModel):
    """One checkpoint of a problem. Unknown keys are rejected, as SCBench does."""

    model_config = ConfigDict(extra="forbid")

    name: Name
    """The checkpoint's key in config.yaml, e.g. `checkpoint_2`; names its spec and test file
    (and folders of a run), so it must be a name (`benchwright.files.names`)."""
    version: Version
    """Version of this checkpoint's tests; bumped when they change."""
    order: Annotated[Version, Field(ge=1)]
    """Position in the problem, from 1; checkpoints run in order (no two share one)."""
    state: Literal["Draft", "Core Tests", "Full Tests", "Verified"] = "Draft"
    """Authoring state of the checkpoint; metadata only."""
    timeout: TestTimeout = None
    """Per-test timeout in seconds, above 0 and at most a day; overrides the problem's."""
    include_prior_tests: bool = True
    """Whether earlier checkpoints' test files run again here (as Regression)."""
    env: Environment = Field(default_factory=dict)
    """Extra environment variables for the tests, over the problem's."""


class ProblemConfig(BaseModel):
    """A problem's config.yaml. Unknown top-level keys are ignored, as SCBench does."""

    model_config = ConfigDict(extra="ignore")

    path: Path
    """The problem folder (set by the loader, not read from YAML)."""
    name: Name
    """The problem's name; by convention its folder's name (a name, `benchwright.files.names`)."""
    version: Version = 1
    """Version of the problem's tests."""
    description: str = ""
    """A short summary of the problem."""
    category: str = "NOT_SET"
    """A free-form category, e.g. `file-systems`."""
    difficulty: Literal["Easy", "Medium", "Hard"] = "Easy"
    """The author's estimate of difficulty."""
    author: str | None = None
    """Who wrote the problem."""
    inspiration: str | None = None
    """Where the idea came from."""
    design_doc: str | None = None
    """A design document beside config.yaml, if any; metadata only."""
    entry_file: str
    """The program's entry module as a bare stem: `backup_scheduler` means `backup_scheduler.py`."""
    timeout: TestTimeout = None
    """Default per-test timeout in seconds (pytest-timeout), above 0 and at most a day."""
    tags: list[str] = Field(default_factory=list)
    """Free-form tags."""
    static_assets: dict[Name, StaticAsset] = Field(default_factory=dict)
    """Named assets; tests find each under `assets/<key>` of their folder (keys are names)."""
    test_dependencies: list[str] = Field(default_factory=list)
    """Extra packages the tests need, installed into the test environment."""
    markers: dict[Name, MarkerConfig] = Field(default_factory=dict)
    """Custom pytest markers beyond error, functionality and regression (keys are names: each
    becomes a line of pytest.ini)."""
    env: Environment = Field(default_factory=dict)
    """Environment variables for the tests of every checkpoint."""
    checkpoints: dict[str, CheckpointConfig]
    """The checkpoints by name."""

    @field_validator("test_dependencies")
    @classmethod
    def _plain_requirements(cls, value: list[str]) -> list[str]:
        for entry in value:
            if ";" in entry:
                raise ValueError(f"{entry!r}: environment markers are not supported (the tests "
                                 "run on one known Python): drop the `; ...` part")
            if not entry.strip() or entry.lstrip().startswith("-") or not entry.isprintable():
                raise ValueError(f"{entry!r} is not a requirement such as `requests>=2`")
        return value

    @model_validator(mode="after")
    def _distinct_orders(self) -> ProblemConfig:
        seen: dict[int, str] = {}
        for checkpoint in self.checkpoints.values():
            if checkpoint.order in seen:
                raise ValueError(f"checkpoints {seen[checkpoint.order]!r} and "
                                 f"{checkpoint.name!r} have the same order "
                                 f"{checkpoint.order}: give each its own")
            seen[checkpoint.order] = checkpoint.name
        return self

    @field_validator("entry_file")
    @classmethod
    def _bare_stem(cls, value: str) -> str:
        if not value or "/" in value or value.endswith(".py") or not value.isprintable() \
                or value in (".", ".."):
            raise ValueError("must be a bare module name such as `backup_scheduler`")
        return value

    @property
    def entry_filename(self) -> str:
        """The entry file's name in the workspace, e.g. `backup_scheduler.py`."""
        return f"{self.entry_file}.py"

    @property
    def tests_dir(self) -> Path:
        """The problem's tests folder."""
        return self.path / "tests"

    def ordered_checkpoints(self) -> list[CheckpointConfig]:
        """The checkpoints in the order they run."""
        return sorted(self.checkpoints.values(), key=lambda c: (c.order, c.name))

    def checkpoints_through(self, name: str) -> list[CheckpointConfig]:
        """The checkpoints up to and including `name`, in order."""
        ordered = self.ordered_checkpoints()
        names = [c.name for c in ordered]
        return ordered[: names.index(name) + 1]

    def timeout_for(self, checkpoint: CheckpointConfig) -> float | None:
        """The per-test timeout in force for a checkpoint."""
        return checkpoint.timeout if checkpoint.timeout is not None else self.timeout

    def env_for(self, checkpoint: CheckpointConfig) -> dict[str, str]:
        """The test environment variables for a checkpoint (checkpoint's over problem's)."""
        return {**self.env, **checkpoint.env}

    def spec_path(self, checkpoint: str) -> Path:
        """Where a checkpoint's spec lives."""
        return self.path / f"{checkpoint}.md"

    def solution_dir(self, checkpoint: str) -> Path:
        """The reference snapshot of a checkpoint, `solutions/<checkpoint>`."""
        return self.path / "solutions" / checkpoint

    def render_spec(self, checkpoint: str) -> str:
        """The spec the agent sees: canary comment stripped, entry-point placeholders filled."""
        text = read_untrusted_text(self.spec_path(checkpoint), what=f"the spec of {checkpoint}",
                                   error=ProblemConfigError,
                                   hint="each checkpoint needs its <checkpoint>.md spec")
        return render_spec_text(text, self)


def render_spec_text(text: str, problem: ProblemConfig) -> str:
    """Strip the leading canary comment and fill the `%%%ENTRYPOINT:...%%%` placeholders."""
    text = _CANARY.sub("", text, count=1)
    text = text.replace(ENTRY_FILE_PLACEHOLDER, problem.entry_filename)
    return text.replace(ENTRY_COMMAND_PLACEHOLDER, f"python {problem.entry_filename}")
