"""The `command` agent: any shell command, run in the workspace inside the sandbox.

The rendered prompt is on the command's standard input and in the file named by
$BENCHWRIGHT_PROMPT_FILE (outside the workspace, so it never lands in a snapshot). The command
sees the workspace (writable) and nothing else of the host, except the paths given with
`--agent-mount` (read-only, at the same path). With `--agent-network` it reaches the `--base-url`
endpoint (and, with `-A package_indexes=true`, the package indexes) through the egress proxy, and
nothing else. A command that exits non-zero, or cannot start (126, 127: its file is not in the
sandbox), is an agent error.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from benchwright.coding.agents.base import AgentContext, AgentResult, AgentStatus, sandbox_env
from benchwright.coding.agents.network import agent_allowlist, run_with_egress
from benchwright.coding.agents.settings import AgentSettings
from benchwright.errors import UserInputError
from benchwright.files.nofollow import read_regular
from benchwright.protocols import Runtime
from benchwright.sandbox.bwrap import ExecResult, Limits, Mount
from benchwright.sandbox.interpreters import Interpreter

if TYPE_CHECKING:
    from benchwright.coding.agents.setup import AgentSetup


class CommandAgent:
    """Runs `bash -c COMMAND` with the prompt on stdin."""

    name = "command"

    @classmethod
    def from_setup(cls, setup: AgentSetup) -> CommandAgent:
        """Runs `--agent-command` in the sandbox."""
        if not setup.command:
            raise UserInputError("the command agent needs --agent-command 'SHELL COMMAND'")
        return cls(setup.command, setup.runtime, setup.limits, setup.interpreter, setup.network,
                   setup.settings, setup.mounts)

    def __init__(self, command: str, runtime: Runtime, limits: Limits, interpreter: Interpreter,
                 network: bool = False, settings: AgentSettings | None = None,
                 extra_mounts: Sequence[Path] = ()) -> None:
        self.command = command
        self.extra_mounts = [Mount(path=p) for p in extra_mounts]
        self.runtime = runtime
        self.limits = limits
        self.interpreter = interpreter
        self.network = network
        settings = settings or AgentSettings()
        self.allow = agent_allowlist([settings.base_url],
                                     package_indexes=settings.package_indexes)

    def act(self, ctx: AgentContext) -> AgentResult:
        env = {**sandbox_env(self.interpreter, ctx.artifacts_dir),
               "BENCHWRIGHT_PROMPT_FILE": str(ctx.prompt_file),
               "BENCHWRIGHT_CHECKPOINT": ctx.checkpoint,
               "BENCHWRIGHT_ARTIFACTS_DIR": str(ctx.artifacts_dir)}
        mounts = [Mount(path=self.interpreter.prefix), Mount(path=ctx.prompt_file),
                  Mount(path=ctx.workspace, writable=True),
                  Mount(path=ctx.artifacts_dir, writable=True), *self.extra_mounts]
        with (ctx.artifacts_dir / "stdout.txt").open("wb") as out, \
                (ctx.artifacts_dir / "stderr.txt").open("wb") as err:
            result = self._run(ctx, env, mounts, out, err)
        return AgentResult(status=_status(result.exit_code, result.timed_out),
                           duration_s=result.duration_s, exit_code=result.exit_code,
                           error=_error(result, ctx.artifacts_dir))

    def _run(self, ctx: AgentContext, env: dict[str, str], mounts: list[Mount],
             out: IO[bytes], err: IO[bytes]) -> ExecResult:
        argv = ["/bin/bash", "-c", self.command]
        if not self.network:
            return self.runtime.run(argv, cwd=ctx.workspace, env=env, mounts=mounts,
                                    limits=self.limits, stdin=ctx.prompt.encode(),
                                    stdout=out, stderr=err)
        return run_with_egress(self.runtime, argv, allow=self.allow,
                               python=self.interpreter.executable, cwd=ctx.workspace, env=env,
                               mounts=mounts, limits=self.limits, stdin=ctx.prompt.encode(),
                               stdout=out, stderr=err)

    def cleanup(self) -> None:
        """Nothing to release: the sandbox is gone when `act` returns."""


def _status(exit_code: int, timed_out: bool) -> AgentStatus:
    if timed_out:
        return AgentStatus.TIMEOUT
    return AgentStatus.COMPLETED if exit_code == 0 else AgentStatus.ERROR


def _error(result: ExecResult, artifacts: Path) -> str | None:
    exit_code = result.exit_code
    if result.timed_out:
        return "the agent command ran past its wall-clock limit"
    if exit_code == 0:
        return None
    if result.memory_exceeded:
        return f"the agent command went over the sandbox's memory limit and was killed " \
            f"(exit {exit_code})"
    # The command can write its artifacts folder: a stderr.txt it swapped for a link is not read.
    # Its last 64 KiB: the command may have written a GiB there.
    text = (read_regular(artifacts, "stderr.txt", 64 * 1024, last=True) or b"").decode(
        errors="replace")
    tail = text.strip().splitlines()[-3:]
    message = f"the agent command exited with {exit_code}: {' | '.join(tail)}"
    if exit_code in (126, 127):  # bash could not find or run the command
        message += (" (it could not start: a file it runs must be inside the sandbox; "
                    "bind it with --agent-mount PATH)")
    return message
