"""The `mini` agent (benchwright's bash-tool loop, `coding.agents.mini`) in a Harbor step: its
loop and its model calls run in the harness; each bash command runs in the step's container,
which stays up (an idle init) for the phase and is killed, with everything the commands left
running, before its files are kept. `ContainerExec` is the `protocols.Runtime` the loop is
given: `ENGINE exec` in that container, in the task's working folder."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING

from benchwright.protocols import ExecResult, Limits, Mount
from benchwright.sandbox.images.engines import Engine

if TYPE_CHECKING:
    from benchwright.coding.agents.base import AgentResult
    from benchwright.coding.agents.settings import AgentSettings
    from benchwright.errors import ReplayDivergence
    from benchwright.llm.models import LlmTraffic

OPENAI_URL = "https://api.openai.com/v1"
"""Where mini's calls go without --base-url when its model names no provider of its own."""


class ContainerExec:
    """Runs each command in one running container (the host paths mini names are not used)."""

    name = "harbor-container"

    def __init__(self, engine: Engine, container: str, workdir: str | None) -> None:
        self.engine, self.container, self.workdir = engine, container, workdir

    def run(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
            mounts: Sequence[Mount], limits: Limits, network: bool = False,
            stdin: bytes | None = None, stdout: IO[bytes] | int | None = None,
            stderr: IO[bytes] | int | None = None, pass_fds: Sequence[int] = ()) -> ExecResult:
        """`argv` in the container (its own environment, TERM=dumb), for `limits.wall_clock_s`
        at most; a command past it is killed with the container at the phase's end."""
        where = ["--workdir", self.workdir] if self.workdir else []
        command = self.engine.command("exec", "--env", "TERM=dumb", *where, self.container,
                                      *argv)
        start = time.monotonic()
        proc = subprocess.Popen(command, stdout=stdout, stderr=stderr,
                                stdin=subprocess.DEVNULL)
        try:
            code = proc.wait(timeout=limits.wall_clock_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            proc.kill()
            code, timed_out = proc.wait(), True
        return ExecResult(argv=list(argv), exit_code=code, timed_out=timed_out,
                          duration_s=round(time.monotonic() - start, 3), runtime=self.name)


@contextmanager
def mini_traffic(llm: LlmTraffic | None, model: str, settings: AgentSettings, key: str
                 ) -> Iterator[tuple[AgentSettings, list[ReplayDivergence]]]:
    """The settings whose endpoint records into or replays from the run's cassette (as they
    are without one), for conversation `key`; the list holds a replay's divergence once the
    block ends."""
    if llm is None:
        yield settings, []
        return
    from benchwright.coding.agents.chat_client import resolve_target
    from benchwright.llm.models import TrafficMode
    from benchwright.llm.proxy import LlmProxy
    from benchwright.llm.replay_keys import set_placeholder_keys

    upstream = settings.base_url or resolve_target(model, None).base_url or OPENAI_URL
    recording = llm.mode is TrafficMode.RECORD
    if not recording:
        set_placeholder_keys()  # a replay needs no key; the client wants one set
    with LlmProxy(llm, upstream if recording else None, "mini", model) as proxy, \
            proxy.session(key, {}) as diverged:
        yield settings.model_copy(update={"base_url": proxy.url_for(upstream)}), diverged


def run_mini(engine: Engine, container: str, workdir: str | None, instruction: str,
             folder: Path, step: str, model: str, settings: AgentSettings, *,
             continuation: bool) -> AgentResult:
    """The mini agent's turn on `instruction` (its endpoint, cost limit and prices in
    `settings`): how it ended and what it spent. Its trajectory is kept in `folder`."""
    from benchwright.coding.agents.base import AgentContext
    from benchwright.coding.agents.mini import MiniAgent
    from benchwright.sandbox.interpreters import resolve_python

    agent = MiniAgent(model, settings, ContainerExec(engine, container, workdir),
                      Limits(), resolve_python(None))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "instruction.md").write_text(instruction)
    ctx = AgentContext(problem="harbor", problem_dir=folder, checkpoint=step, trial=1,
                       workspace=folder, prompt=instruction,
                       prompt_file=folder / "instruction.md", is_continuation=continuation,
                       artifacts_dir=folder)
    return agent.act(ctx)
