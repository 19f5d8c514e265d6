"""Build the agent a run asks for, by its registered name."""

from __future__ import annotations

from benchwright.coding.problem import ProblemConfig
from benchwright.errors import UserInputError
from benchwright.interpreters import resolve_python
from benchwright.protocols import Agent, Runtime
from benchwright.registry import AGENTS, resolve
from benchwright.runs.models import RunConfig

# Agents built from the model name and `agent_settings` (they call an LLM themselves).
LLM_AGENTS = {
    "claude_code",
    "codex",
    "gemini",
    "opencode",
    "openhands",
    "mini",
}


def build_agent(config: RunConfig, problem: ProblemConfig, runtime: Runtime,
                keep: set[str]) -> Agent:
    """The run's agent for one problem. `keep` are workspace entries agents must not remove."""
    cls = resolve("agent", AGENTS, config.agent)
    if config.agent == "oracle":
        agent: Agent = cls(problem, keep)
    elif config.agent == "replay":
        if config.replay_from is None:
            raise UserInputError("the replay agent needs --replay-from RUN_DIR")
        agent = cls(config.replay_from, keep)
    elif config.agent in LLM_AGENTS:
        agent = cls(config.model, config.agent_settings, runtime, config.agent_limits,
                    resolve_python(config.python), config.agent_network)
    else:
        if not config.agent_command:
            raise UserInputError("the command agent needs --agent-command 'SHELL COMMAND'")
        agent = cls(config.agent_command, runtime, config.agent_limits,
                    resolve_python(config.python), config.agent_network, config.agent_settings,
                    config.agent_mounts)
    return agent
