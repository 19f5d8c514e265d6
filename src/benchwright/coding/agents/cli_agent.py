"""What the CLI agents (claude_code, codex, gemini, opencode, openhands) share: one invocation.

An adapter says how to launch its CLI (`Launch`) and how to read its native log (`parse`); an
npm CLI's adapter names it in `npm_tool`, and this module installs it (on the agent's first
checkpoint: later ones reuse it), mounts its folder and the Node.js it runs on, and puts that
Node first on PATH. The CLI runs in the sandbox with the workspace as the working directory, an
isolated HOME under the checkpoint's artifacts (so the agent's config, caches and telemetry never
touch the real HOME) and credentials passed through from the environment only (the run loop
redacts them from the checkpoint folder afterwards, logs included); `trajectory.json` is written
beside the raw log. Provider failures that outlast the agent's own retries (429, 5xx,
timeouts, an unreachable endpoint) end as `AgentStatus.INFRA_ERROR`, not as the agent's failure.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from pydantic import BaseModel, Field

from benchwright.coding.agents.base import (
    AgentContext,
    AgentResult,
    AgentStatus,
    Usage,
    sandbox_env,
)
from benchwright.coding.agents.network import (
    agent_allowlist,
    provider_endpoints,
    run_with_egress,
)
from benchwright.coding.agents.settings import AgentSettings
from benchwright.coding.agents.toolchain import InstalledTool, NpmTool, ensure_npm_tool
from benchwright.coding.agents.trajectory import CostSource, Step, Trajectory
from benchwright.errors import PrerequisiteError
from benchwright.files.nofollow import read_regular, remove_tree
from benchwright.llm.pricing import cost_of, run_price
from benchwright.protocols import Runtime
from benchwright.sandbox.bwrap import ExecResult, Limits, Mount
from benchwright.sandbox.egress.proxy import Endpoint
from benchwright.sandbox.interpreters import Interpreter

if TYPE_CHECKING:
    from benchwright.coding.agents.setup import AgentSetup

RAW_LOG = "agent.jsonl"
STDERR_LOG = "agent.stderr.txt"
# Node's WebAssembly reserves tens of GiB of address space (not memory) per instance, so where
# the sandbox falls back to RLIMIT_AS (no memory cgroup) it must leave room: gemini fails below
# 64 GiB. Under a memory cgroup only resident memory counts and this is unused.
NODE_ADDRESS_SPACE_MB = 256 * 1024
_PASSTHROUGH = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
                "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS")
PROVIDER_ERROR = re.compile(
    r"\b(429|500|502|503|504|529)\b|rate.?limit|too many requests|overloaded|resource.?exhausted"
    r"|internal server error|service unavailable|bad gateway|timed? ?out|timeout"
    r"|stream disconnected|connection (?:refused|reset|error)|econnrefused|econnreset"
    r"|fetch failed|network error|retry limit|max retries",
    re.IGNORECASE)


class Launch(BaseModel):
    """How an adapter starts its CLI for one checkpoint."""

    argv: list[str]
    """The command; the prompt is part of it (as SCBench passes it)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Settings for the agent on top of the common environment (never credentials)."""
    files: dict[str, str] = Field(default_factory=dict)
    """Config files to write first, by path relative to the isolated HOME."""
    mounts: list[Mount] = Field(default_factory=list)
    """What the sandbox must see besides the workspace, the HOME, the interpreter and the npm
    tool."""
    address_space_mb: int = 64 * 1024
    """The least address-space limit the CLI starts under, where the sandbox limits address
    space (no memory cgroup); the resident-memory limit is the run's."""


class Parsed(BaseModel):
    """What an adapter read from its agent's native log."""

    steps: list[Step] = Field(default_factory=list)
    """The conversation."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens and model turns; `cost_usd` only when the agent reported it."""
    cost_reported: bool = False
    """Whether the agent reported its cost (else the price table is used)."""
    finished: bool = False
    """Whether the agent said it ended normally."""
    errors: list[str] = Field(default_factory=list)
    """Error messages of the agent's own error events, in order."""


class CliAgent:
    """The shared `act`; subclasses set `name`, `credentials` and (npm CLIs) `npm_tool`, and
    define the hooks."""

    name = ""
    credentials: tuple[str, ...] = ()
    """Environment variables passed through to the CLI; one of them must be set."""
    npm_tool: NpmTool | None = None
    """The pinned npm CLI that the default `install` installs (None: the adapter installs)."""
    installed: InstalledTool | None = None
    """The npm CLI's folder once installed: mounted, and its Node.js put first on PATH."""
    version: str | None = None
    """What `install` returned; None until it has succeeded once."""
    wanted_version: str | None = None
    """The version `install` installs (the run's `agent_version`); None: the pinned one."""
    installs_version = True
    """A run may ask for another version of the CLI (`--agent-version`)."""

    @classmethod
    def from_setup(cls, setup: AgentSetup) -> Self:
        """Built from the run's model and agent settings (it calls an LLM itself)."""
        agent = cls(setup.model, setup.settings, setup.runtime, setup.limits, setup.interpreter,
                    setup.network)
        agent.wanted_version = setup.agent_version
        return agent

    @classmethod
    def pinned_version(cls, benchwright_version: str) -> str | None:
        """The version `install` installs unless a run asks for another (`--agent-version`);
        recorded in the run's configuration and SCBench's config.yaml."""
        return cls.npm_tool.version if cls.npm_tool is not None else None

    def __init__(self, model: str | None, settings: AgentSettings, runtime: Runtime,
                 limits: Limits, interpreter: Interpreter, network: bool = True) -> None:
        self.model, self.settings = model, settings
        self.runtime, self.limits, self.interpreter = runtime, limits, interpreter
        # An LLM agent cannot work without reaching its provider, so the network is always on:
        # its endpoint (recorded by `base_url`, else its provider's API host) and nothing else.
        self.network = True
        self.endpoints: list[str] = []
        self.secrets = {k: os.environ[k] for k in self.credentials if os.environ.get(k)}
        if not self.secrets and not settings.base_url:
            raise PrerequisiteError(
                f"the {self.name} agent needs an API key in the environment",
                hint=f"set one of {', '.join(self.credentials)}")

    # Hooks ---------------------------------------------------------------------------------
    def install(self) -> str:
        """Make the CLI available; returns its version. By default installs `npm_tool` (at
        `wanted_version` when a run asks for one)."""
        if self.npm_tool is None:
            raise NotImplementedError
        tool = self.npm_tool.model_copy(
            update={"version": self.wanted_version or self.npm_tool.version})
        self.installed = ensure_npm_tool(tool)
        return tool.version

    def launch(self, ctx: AgentContext, home: Path) -> Launch:
        """The command, environment and config files for this checkpoint."""
        raise NotImplementedError

    def parse(self, lines: list[str]) -> Parsed:
        """The native log (stdout lines) as steps, usage and errors."""
        raise NotImplementedError

    # The shared run ------------------------------------------------------------------------
    def act(self, ctx: AgentContext) -> AgentResult:
        start = time.monotonic()
        version = self._install_once()
        home = ctx.artifacts_dir / "home"
        launch = self.launch(ctx, _fresh_home(home))
        for rel, text in launch.files.items():
            (home / rel).parent.mkdir(parents=True, exist_ok=True)
            (home / rel).write_text(text)
        result = self._run(ctx, home, launch)
        parsed = self.parse(_lines(ctx.artifacts_dir / RAW_LOG))
        status, error = classify(result, parsed, ctx.artifacts_dir / STDERR_LOG)
        usage, source = self._costed(parsed)
        Trajectory(agent=self.name, agent_version=version, model=self.model, steps=parsed.steps,
                   usage=usage, cost_source=source, exit_status=status,
                   exit_code=result.exit_code, error=error, raw_log=RAW_LOG
                   ).write(ctx.artifacts_dir)
        _prune_home(home)
        return AgentResult(status=status, usage=usage, error=error, exit_code=result.exit_code,
                           duration_s=round(time.monotonic() - start, 3))

    def cleanup(self) -> None:
        """Nothing to release: the sandbox is gone when `act` returns."""

    def _install_once(self) -> str:
        """`install` on the first checkpoint; later ones reuse the tool (an install and a Node
        check per candidate each time is pure overhead within one chain)."""
        if self.version is None:
            self.version = self.install()
        return self.version

    @property
    def executable(self) -> str:
        """The installed npm CLI's entry point, for the adapter's argv."""
        assert self.installed is not None, "install() first"
        return str(self.installed.executable)

    def base_url(self, env_name: str, with_v1: bool) -> str | None:
        """The provider endpoint: `--base-url` if given, else `$env_name`, else None; with or
        without the `/v1` the agent's client expects."""
        url = self.settings.base_url or os.environ.get(env_name)
        if not url:
            return None
        url = url.rstrip("/").removesuffix("/v1")
        self.endpoints.append(url)
        return f"{url}/v1" if with_v1 else url

    def _run(self, ctx: AgentContext, home: Path, launch: Launch) -> ExecResult:
        env = self._environment(home) | launch.env
        mounts = [Mount(path=self.interpreter.prefix), Mount(path=ctx.workspace, writable=True),
                  Mount(path=ctx.artifacts_dir, writable=True), *launch.mounts,
                  *self._tool_mounts()]
        floor = max(self.limits.address_space_mb or 0, self.limits.memory_mb or 0)
        limits = self.limits.model_copy(
            update={"address_space_mb": max(floor, launch.address_space_mb)})
        with (ctx.artifacts_dir / RAW_LOG).open("wb") as out, \
                (ctx.artifacts_dir / STDERR_LOG).open("wb") as err:
            return run_with_egress(self.runtime, launch.argv, allow=self.allowlist(),
                                   python=self.interpreter.executable, cwd=ctx.workspace,
                                   env=env, mounts=mounts, limits=limits, stdout=out, stderr=err)

    def allowlist(self) -> list[Endpoint]:
        """What the CLI may reach: its endpoint, else its provider's API host; the package
        indexes too with `-A package_indexes=true`."""
        return agent_allowlist(self.endpoints, provider_endpoints(self.secrets),
                               package_indexes=self.settings.package_indexes)

    def _environment(self, home: Path) -> dict[str, str]:
        env = {**sandbox_env(self.interpreter, home), "TMPDIR": str(home / "tmp"),
               "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
               "XDG_DATA_HOME": str(home / ".local/share"),
               "XDG_STATE_HOME": str(home / ".local/state"),
               "DO_NOT_TRACK": "1", "NO_UPDATE_NOTIFIER": "1", "CI": "1", "TERM": "dumb"}
        env |= {k: os.environ[k] for k in _PASSTHROUGH if k in os.environ}
        if (node := self._node_bin()) is not None:
            env["PATH"] = f"{node}:{env['PATH']}"
        return env | self.secrets

    def _node_bin(self) -> Path | None:
        return self.installed.node_bin if self.installed is not None else None

    def _tool_mounts(self) -> list[Mount]:
        """The npm CLI's folder, and the Node.js install it runs on (lib/ sits beside bin/)."""
        if self.installed is None:
            return []
        node = self._node_bin()
        return [Mount(path=self.installed.path), *([Mount(path=node.parent)] if node else [])]

    def _costed(self, parsed: Parsed) -> tuple[Usage, CostSource]:
        usage = parsed.usage
        if parsed.cost_reported:
            return usage, CostSource.AGENT
        price = run_price(self.model, self.settings.input_price_per_mtok,
                          self.settings.output_price_per_mtok)
        if price is None:
            return usage.model_copy(update={"cost_usd": cost_of(
                None, usage.input_tokens, usage.output_tokens)}), CostSource.UNKNOWN
        cost = round(price.cost(usage.input_tokens, usage.output_tokens), 6)
        return usage.model_copy(update={"cost_usd": cost}), CostSource.PRICE_TABLE


def json_events(lines: list[str]) -> Iterator[dict[str, Any]]:
    """The JSON objects among a log's lines (agents mix in plain-text lines)."""
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event


def classify(result: ExecResult, parsed: Parsed, stderr: Path) -> tuple[AgentStatus, str | None]:
    """How the turn ended, and why when it did not end well."""
    if parsed.finished and result.exit_code == 0 and not result.timed_out:
        return AgentStatus.COMPLETED, None
    messages = parsed.errors or _tail(stderr)
    provider = next((m for m in reversed(messages) if PROVIDER_ERROR.search(m)), None)
    if provider is not None:
        return AgentStatus.INFRA_ERROR, f"the model provider failed: {_short(provider)}"
    if result.timed_out:
        return AgentStatus.TIMEOUT, "the agent ran past its wall-clock limit"
    if result.memory_exceeded:
        return AgentStatus.ERROR, "the agent went over the sandbox's memory limit and was killed"
    last = _short(messages[-1]) if messages else "no error message"
    return AgentStatus.ERROR, f"the agent exited with {result.exit_code}: {last}"


def _fresh_home(home: Path) -> Path:
    remove_tree(home, ignore_errors=True)
    (home / "tmp").mkdir(parents=True)
    return home


def _prune_home(home: Path) -> None:
    """Drop what only makes the run directory heavy: temporary files and package caches."""
    for name in ("tmp", ".cache", ".npm", ".bun"):
        remove_tree(home / name, ignore_errors=True)


def _lines(path: Path) -> list[str]:
    # The agent can write its artifacts folder: a log it swapped for a link is not read.
    data = read_regular(path.parent, path.name) or b""
    return [line for line in data.decode(errors="replace").splitlines() if line.strip()]


def _tail(path: Path, n: int = 5) -> list[str]:
    # from its last 64 KiB: an agent may have written a GiB of stderr
    data = read_regular(path.parent, path.name, 64 * 1024, last=True) or b""
    return [ln for ln in data.decode(errors="replace").splitlines() if ln.strip()][-n:]


def _short(message: str, limit: int = 300) -> str:
    one = " ".join(message.split())
    return one if len(one) <= limit else one[: limit - 3] + "..."
