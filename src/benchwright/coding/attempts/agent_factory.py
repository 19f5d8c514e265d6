"""Build the agent a run asks for, by its registered name: every agent the same way."""

from __future__ import annotations

from benchwright import registry
from benchwright.coding.agents.base import Agent
from benchwright.coding.agents.setup import AgentSetup
from benchwright.coding.attempts.models import RunConfig
from benchwright.coding.problems.config import ProblemConfig
from benchwright.protocols import FromSetup, Runtime


def build_agent(config: RunConfig, problem: ProblemConfig, runtime: Runtime,
                keep: set[str]) -> Agent:
    """The run's agent for one problem. `keep` are workspace entries agents must not remove."""
    cls: FromSetup[AgentSetup, Agent] = registry.CODING_AGENTS.get(config.agent)
    return cls.from_setup(AgentSetup(
        problem=problem, runtime=runtime, keep=frozenset(keep), model=config.model,
        settings=config.agent_settings, limits=config.agent_limits,
        network=config.agent_network, python=config.python, command=config.agent_command,
        replay_from=config.replay_from, mounts=tuple(config.agent_mounts),
        agent_version=config.agent_version))
