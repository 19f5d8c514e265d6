"""The `command` agent: any shell command, run in the workspace inside the sandbox.

The rendered prompt is on the command's standard input and in the file named by
$BENCHWRIGHT_PROMPT_FILE (outside the workspace, so it never lands in a snapshot). The command
sees the workspace (writable) and nothing else of the host; it has the network only when asked.
"""

from __future__ import annotations

from pathlib import Path

from benchwright.coding.agents.base import AgentContext, AgentResult, AgentStatus, sandbox_env
from benchwright.interpreters import Interpreter
from benchwright.nofollow import read_regular
from benchwright.protocols import Runtime
from benchwright.sandbox import Limits, Mount


class CommandAgent:
    """Runs `bash -c COMMAND` with the prompt on stdin."""

    name = "command"

    def __init__(self, command: str, runtime: Runtime, limits: Limits, interpreter: Interpreter,
                 network: bool = False) -> None:
        self.command = command
        self.runtime = runtime
        self.limits = limits
        self.interpreter = interpreter
        self.network = network

    def act(self, ctx: AgentContext) -> AgentResult:
        env = {**sandbox_env(self.interpreter, ctx.artifacts_dir),
               "BENCHWRIGHT_PROMPT_FILE": str(ctx.prompt_file),
               "BENCHWRIGHT_CHECKPOINT": ctx.checkpoint,
               "BENCHWRIGHT_ARTIFACTS_DIR": str(ctx.artifacts_dir)}
        mounts = [Mount(path=self.interpreter.prefix), Mount(path=ctx.prompt_file),
                  Mount(path=ctx.workspace, writable=True),
                  Mount(path=ctx.artifacts_dir, writable=True)]
        with (ctx.artifacts_dir / "stdout.txt").open("wb") as out, \
                (ctx.artifacts_dir / "stderr.txt").open("wb") as err:
            result = self.runtime.run(["/bin/bash", "-c", self.command], cwd=ctx.workspace,
                                      env=env, mounts=mounts, limits=self.limits,
                                      network=self.network, stdin=ctx.prompt.encode(),
                                      stdout=out, stderr=err)
        return AgentResult(status=_status(result.exit_code, result.timed_out),
                           duration_s=result.duration_s,
                           error=_error(result.exit_code, result.timed_out, ctx.artifacts_dir))

    def cleanup(self) -> None:
        """Nothing to release: the sandbox is gone when `act` returns."""


def _status(exit_code: int, timed_out: bool) -> AgentStatus:
    if timed_out:
        return AgentStatus.TIMEOUT
    return AgentStatus.COMPLETED if exit_code == 0 else AgentStatus.ERROR


def _error(exit_code: int, timed_out: bool, artifacts: Path) -> str | None:
    if timed_out:
        return "the agent command ran past its wall-clock limit"
    if exit_code == 0:
        return None
    # The command can write its artifacts folder: a stderr.txt it swapped for a link is not read.
    text = (read_regular(artifacts, "stderr.txt") or b"").decode(errors="replace")
    tail = text.strip().splitlines()[-3:]
    return f"the agent command exited with {exit_code}: {' | '.join(tail)}"
