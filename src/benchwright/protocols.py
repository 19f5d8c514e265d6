"""The core interfaces of benchwright and the values they pass, on one screen.

- A `Runtime` runs a command somewhere (a bubblewrap sandbox, or the host when asked), with
  `Limits` and `Mount`s, and returns an `ExecResult`.
- An `Executor` runs independent jobs (one problem x trial each) and reports as they finish;
  one that shares no filesystem with the run (Ray) streams each job's files back as items.
- A `Track` (coding, web) owns its run folders: the steps `benchwright.runs.start` takes for
  every run (create or resume, execute, finish), regrade, report, read.

Each track's own interfaces live with it: a coding `Agent` in `benchwright.coding.agents.base`,
a web `TrialRunner` in `benchwright.web.trials.trial_runner`. Implementations are registered by
name in `benchwright.registry`. This module imports nothing of benchwright.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, Field


class Limits(BaseModel):
    """Resource limits for one sandboxed command."""

    wall_clock_s: float = 1800.0
    """The whole command is killed after this many seconds."""
    memory_mb: int | None = None
    """Resident memory (RAM) the sandbox's processes may use together, in MiB; None: half of the
    machine's memory. Where no memory cgroup can be made, an address-space limit per process."""
    address_space_mb: int | None = None
    """The address-space limit per process used instead where no memory cgroup can be made;
    None: memory_mb. (Node reserves tens of GiB it never touches: the CLI agents raise it.)"""
    max_processes: int = 256
    """Processes and threads the sandbox may have at once."""
    max_file_mb: int = 1024
    """Largest file a process may write, in MiB."""
    max_output_mb: int = 8
    """Of each output stream the harness reads back (stdout, stderr), MiB kept: the first and last
    halves; the middle is cut (streamed past, never held) and the cut recorded."""
    max_message_kb: int = 16
    """Longest text of a test's report (an assertion message, a traceback) pytest sends the
    harness, KiB; a longer one keeps its head and tail, and the cut is recorded."""
    max_report_mb: int = 32
    """The verdict channel and pytest's report file: the harness reads no more than this (past
    it, grading is an infrastructure failure that names this limit)."""
    max_write_mb: int = 1024
    """Grading: disk space the tests and the submission may add, together, to the sandbox's
    writable folders (the workspace copy, /tmp, pytest's output folder), MiB; counted once
    pytest has ended. Past it, or past `max_write_files`, the checkpoint fails
    (rule cap_exceeded)."""
    max_write_files: int = 100_000
    """Grading: folders, files and links they may add there, likewise."""


class Mount(BaseModel):
    """A host path made visible inside the sandbox."""

    path: Path
    """The host path (file or folder)."""
    writable: bool = False
    """Whether the sandbox may write to it."""
    target: Path | None = None
    """Where it appears inside the sandbox; the same path when None."""
    nosymfollow: bool = False
    """Links in it are never followed by the sandbox's processes (opening through one fails
    with ELOOP; readlink and lstat still work): the folders untrusted code can write, as
    trusted code inside the sandbox sees them. Only the bubblewrap runtime applies it."""

    @property
    def inside(self) -> Path:
        """The path inside the sandbox."""
        return self.target or self.path


class ExecResult(BaseModel):
    """What a sandboxed command did."""

    argv: list[str]
    """The command as run inside the sandbox."""
    exit_code: int
    """Its exit status; negative for a signal, as subprocess reports it."""
    duration_s: float
    """Wall-clock seconds from start to end."""
    timed_out: bool = False
    """Whether the wall-clock limit killed it."""
    stdout_path: Path | None = None
    """Where its standard output was written, if to a file."""
    stderr_path: Path | None = None
    """Where its standard error was written, if to a file."""
    runtime: str = Field(default="bwrap")
    """Which runtime ran it."""
    memory_exceeded: bool = False
    """The memory limit made the kernel kill a process of the command."""
    sandbox_killed_by: int | None = None
    """The signal that killed the sandbox itself (bubblewrap, the harness's own child, out of
    reach of the code inside) when the harness did not send it: the OOM killer or an operator.
    None otherwise, and always None for the unsandboxed runtime (its child is the command)."""


JobT = TypeVar("JobT")
ItemT = TypeVar("ItemT")
SetupT = TypeVar("SetupT", contravariant=True)
BuiltT = TypeVar("BuiltT", covariant=True)
ResultT = TypeVar("ResultT")


class Runtime(Protocol):
    """Runs one command with limits, and leaves no process behind."""

    name: str

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        mounts: Sequence[Mount],
        limits: Limits,
        network: bool = False,
        stdin: bytes | None = None,
        stdout: IO[bytes] | int | None = None,
        stderr: IO[bytes] | int | None = None,
        pass_fds: Sequence[int] = (),
    ) -> ExecResult:
        """Run `argv` in `cwd` with exactly `env`; `mounts` are all it may see of the host;
        `pass_fds` are inherited by the command under the same numbers."""
        ...


class Executor(Protocol):
    """Runs independent jobs, possibly in parallel, yielding results as they finish."""

    shares_filesystem: bool
    """True: jobs run where the run directory is and write it themselves (the local executor).
    False: they run on other machines, get what they need as arguments and send their files
    back as items, which the caller alone writes (Ray)."""

    def run(
        self, fn: Callable[[JobT], ResultT], jobs: Sequence[JobT]
    ) -> Iterator[ResultT]:
        """Apply `fn` to every job; `fn` and the jobs must be picklable."""
        ...

    def stream(
        self, fn: Callable[[JobT], Iterator[ItemT]], jobs: Sequence[JobT]
    ) -> Iterator[ItemT]:
        """Every item each job yields, as it arrives (one job's items in order). A job that
        has a `ready()` method is submitted as what it returns (None: nothing left to do), called
        just before it starts, and again when it is started anew after its machine was lost (its
        state as the caller kept it)."""
        ...

    def each_node(self, fn: Callable[[], ResultT]) -> dict[str, ResultT]:
        """`fn()` run once on every machine jobs may run on, by the machine's name."""
        ...

    def host(self, factory: Callable[..., object], *args: object) -> Hosted:
        """`factory(*args)` made where jobs run, kept for calls until closed."""
        ...


class Hosted(Protocol):
    """An object an executor keeps where its jobs run (a Ray actor, or in this process)."""

    def call(self, method: str, *args: object) -> Any:
        """`method(*args)` on the object; where its machine was lost, on a new one."""
        ...

    def close(self) -> None:
        """Call the object's `close()` and let it go."""
        ...


class FromSetup(Protocol[SetupT, BuiltT]):
    """A registered class built from its track's one settings object, every entry alike."""

    def from_setup(self, setup: SetupT, /) -> BuiltT:
        """The part, built from `setup` (a classmethod of the registered class)."""
        ...


ConfigT = TypeVar("ConfigT", bound=BaseModel)
ManifestT = TypeVar("ManifestT", bound=BaseModel, covariant=True)
TrackResultT = TypeVar("TrackResultT", bound=BaseModel, covariant=True)
ReportT = TypeVar("ReportT", bound=BaseModel)


@dataclass(frozen=True)
class ClusterCounts:
    """A run's successes and attempts per cluster (a problem, a task template), for one
    figure: what paired comparisons of two runs resample."""

    metric: str
    """The figure ("problems solved", "pass rate")."""
    unit: str
    """What a cluster is ("problems", "templates")."""
    counts: dict[str, tuple[float, float]]
    """Per cluster: successes (numerator) and attempts (denominator)."""


@dataclass(frozen=True)
class StartedRun(Generic[ConfigT]):
    """What a track's `execute` is handed by `benchwright.runs.start` (the lock held)."""

    run_dir: Path
    """The run folder (absolute)."""
    config: ConfigT
    """The run's configuration: as given for a new run, as saved (with what the manifest does
    not keep restored) for a resumed one."""
    executor: Executor
    """Where its jobs run."""
    hooks: Any
    """What the caller hears as the run goes on (the track's own hooks type), or None."""
    resuming: bool
    """The folder was made by an earlier process."""


class Track(Protocol[ConfigT, ManifestT, TrackResultT, ReportT]):
    """A benchmark track (coding, web): it owns the run folders whose manifest names it; generic
    in its configuration, manifest, result and report models.

    `benchwright.runs.start` drives every run through the same steps and calls the track's
    (`node_checks`, `create` or `resumed` + `refresh`, `sweep`, `execute`, `outcome`);
    `benchwright.runs.open_run` reads a folder's manifest header and hands back its track, for the
    readers (`read`, `report`, `render`) and `regrade` (`benchwright.runs.regrade`).
    """

    name: str
    """The name in `manifest.json`'s `track` field."""
    noun: str
    """What its run folders are called in messages ("web run")."""
    command: str
    """The command that makes its runs ("benchwright run web")."""

    def node_checks(self, config: ConfigT) -> Sequence[Callable[[], object]]:
        """What every machine that takes a job must have (`runs.node_checks`)."""
        ...

    def create(self, run_dir: Path, config: ConfigT) -> ManifestT:
        """Make a new run folder from the track's configuration model; return its manifest."""
        ...

    def resumed(self, run_dir: Path) -> ConfigT:
        """The saved configuration of a run to continue, checked that it can go on (what the
        manifest does not keep, such as credentials, restored from the environment)."""
        ...

    def refresh(self, run_dir: Path) -> ManifestT:
        """On resume, the lock held: the manifest brought up to date with the inputs as they
        are now, or an error when the folder cannot go on."""
        ...

    def sweep(self, run_dir: Path) -> None:
        """Remove what a killed predecessor left behind (scratch folders, stale files)."""
        ...

    def execute(self, run: StartedRun[ConfigT]) -> TrackResultT:
        """Run every unit not yet finished, then `finish`; an interrupt is raised as it is."""
        ...

    def outcome(self, run_dir: Path, result: Any) -> str:
        """One line on what a finished run did and where to look next."""
        ...

    def read(self, run_dir: Path) -> ManifestT:
        """The run's manifest (the track's model); a folder of another track is an error."""
        ...

    def finish(self, run_dir: Path) -> TrackResultT:
        """Score what is journaled, write result.json and report.md; return the result."""
        ...

    def regrade(self, run_dir: Path, settings: RegradeSettings) -> BaseModel:
        """Grade every saved unit again offline, then `finish`; return what changed."""
        ...

    def report(self, run_dir: Path, baseline: Path | None) -> ReportT:
        """`benchwright report`'s figures of the run (against a baseline run or folder)."""
        ...

    def render(self, report: ReportT) -> str:
        """The markdown of a report made by `report`."""
        ...

    def resume_command(self, run_dir: Path) -> str:
        """The command that continues the run."""
        ...

    def clusters(self, run_dir: Path, metric: str | None) -> ClusterCounts:
        """Its runs' headline figure per cluster (`plan`, `report --fail-if-worse`,
        `--until-decided`): `metric` one of its figures, None its default; another is the
        user's error."""
        ...

    def export_atif(self, run_dir: Path, out: Path, redactor: Any) -> BaseModel:
        """`export atif`: every agent trajectory of the run written as ATIF under `out`; what
        was written and what skipped (`atif_format.Export`). `redactor`: a
        `redaction.Redactor`."""
        ...

    def interrupted(self, run_dir: Path) -> str:
        """What an interrupted run says it kept ("interrupted; finished trials are kept")."""
        ...


AnyTrack = Track[Any, Any, Any, Any]
"""A track of any models (what `open_run` and the registry hand back)."""


@dataclass(frozen=True)
class ExecutorSetup:
    """What every registered executor is built from (`from_setup`), one object for all."""

    workers: int = 1
    """At most this many jobs at once."""
    on_event: Callable[[Any], None] | None = None
    """Called in this process with each progress event a job reports (`executors.local.emit`)."""
    address: str = "auto"
    """The cluster to join (Ray: auto, HOST:PORT or ray://HOST:PORT)."""
    job_cpus: float = 1.0
    """CPUs each job asks the cluster for."""
    job_memory_mb: int = 2048
    """Memory each job asks the cluster for, MiB."""


EXECUTOR_DEFAULTS = ExecutorSetup()
"""The one place of the executor settings' defaults (cluster address, CPUs and memory per job): the
CLI's options, the Python API's placement and the Ray executor read them here."""


@dataclass(frozen=True)
class RegradeSettings:
    """What `eval RUN_DIR` may change about grading a saved run."""

    config: Path | None = None
    """Web runs: site URLs (YAML) to score against instead of the manifest's."""
    progress: Callable[[str], None] | None = None
    """Called with a short line as each unit is graded (a status display), or None."""
    executor: Executor | None = None
    """Where the grading jobs run (None: one after another in this process)."""
    repeat: int = 1
    """Gradings of every unit (`eval --repeat N`); above 1 the grader's noise is measured
    and saved (report_parts/grading_noise.py)."""
