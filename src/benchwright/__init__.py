"""benchwright: run AI agents through checkpointed benchmarks and grade them offline.

The public Python API is exactly the names in `__all__` (docs/api.md walks through them); every
other module is internal and may change between releases. Each name is imported on first use, so
`import benchwright` loads nothing else (no pandas, no browser-use, no track).

    >>> import benchwright
    >>> result = benchwright.run_coding(problems=["kv_server"], out="runs/first")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from benchwright.version import __version__

# name -> "module:attribute", imported when first asked for (as the registry does)
_PUBLIC: dict[str, str] = {
    # running and grading
    "run_coding": "benchwright.api.coding:run_coding",
    "run_web": "benchwright.api.web:run_web",
    "run_harbor": "benchwright.api.harbor:run_harbor",
    "grade_checkpoint": "benchwright.api.grading:grade_checkpoint",
    "CodingOptions": "benchwright.api.coding:CodingOptions",
    "CodingHooks": "benchwright.api.coding:CodingHooks",
    "WebOptions": "benchwright.api.web:WebOptions",
    "HarborOptions": "benchwright.api.harbor:HarborOptions",
    "WebHooks": "benchwright.web.trials.runner:RunHooks",
    # reading runs
    "load_run": "benchwright.api.runs:load_run",
    "CodingRun": "benchwright.api.runs:CodingRun",
    "WebRun": "benchwright.api.runs:WebRun",
    "runs_frame": "benchwright.api.frames:runs_frame",
    "checkpoints_frame": "benchwright.api.frames:checkpoints_frame",
    "trials_frame": "benchwright.api.frames:trials_frame",
    "frontier": "benchwright.api.frontier:frontier",
    "load_atif": "benchwright.api.trajectories:load_atif",
    # what runs and gradings give back
    "RunResult": "benchwright.coding.attempts.models:RunResult",
    "CheckpointRecord": "benchwright.coding.attempts.models:CheckpointRecord",
    "CheckpointEvaluation": "benchwright.coding.grading.evaluation:CheckpointEvaluation",
    "WebRunResult": "benchwright.web.trials.models:WebRunResult",
    "TrialRecord": "benchwright.web.trials.models:TrialRecord",
    # writing a plugin (docs/write-an-agent.md)
    "Agent": "benchwright.coding.agents.base:Agent",
    "AgentSetup": "benchwright.coding.agents.setup:AgentSetup",
    "AgentContext": "benchwright.coding.agents.base:AgentContext",
    "AgentResult": "benchwright.coding.agents.base:AgentResult",
    "AgentStatus": "benchwright.coding.agents.base:AgentStatus",
    "Usage": "benchwright.coding.agents.base:Usage",
    "WebAgent": "benchwright.web.browser.web_agents:WebAgent",
    "WebAgentSpec": "benchwright.web.browser.trial_models:AgentSpec",
    "Runtime": "benchwright.protocols:Runtime",
    "Limits": "benchwright.protocols:Limits",
    "Mount": "benchwright.protocols:Mount",
    "ExecResult": "benchwright.protocols:ExecResult",
    # errors
    "BenchwrightError": "benchwright.errors:BenchwrightError",
    "UserInputError": "benchwright.errors:UserInputError",
    "PrerequisiteError": "benchwright.errors:PrerequisiteError",
    "PluginError": "benchwright.errors:PluginError",
}

__all__ = [
    "Agent",
    "AgentContext",
    "AgentResult",
    "AgentSetup",
    "AgentStatus",
    "BenchwrightError",
    "CheckpointEvaluation",
    "CheckpointRecord",
    "CodingHooks",
    "CodingOptions",
    "CodingRun",
    "ExecResult",
    "HarborOptions",
    "Limits",
    "Mount",
    "PluginError",
    "PrerequisiteError",
    "RunResult",
    "Runtime",
    "TrialRecord",
    "Usage",
    "UserInputError",
    "WebAgent",
    "WebAgentSpec",
    "WebHooks",
    "WebOptions",
    "WebRun",
    "WebRunResult",
    "__version__",
    "checkpoints_frame",
    "frontier",
    "grade_checkpoint",
    "load_atif",
    "load_run",
    "run_coding",
    "run_harbor",
    "run_web",
    "runs_frame",
    "trials_frame",
]


def __getattr__(name: str) -> Any:
    target = _PUBLIC.get(name)
    if target is None:
        raise AttributeError(f"module 'benchwright' has no attribute {name!r}")
    module, _, attribute = target.partition(":")
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # what type checkers and editors see; nothing of this is imported at run time
    from benchwright.api.coding import CodingHooks, CodingOptions, run_coding
    from benchwright.api.frames import checkpoints_frame, runs_frame, trials_frame
    from benchwright.api.frontier import frontier
    from benchwright.api.grading import grade_checkpoint
    from benchwright.api.runs import CodingRun, WebRun, load_run
    from benchwright.api.trajectories import load_atif
    from benchwright.api.web import WebOptions, run_web
    from benchwright.coding.agents.base import (
        Agent,
        AgentContext,
        AgentResult,
        AgentStatus,
        Usage,
    )
    from benchwright.coding.agents.setup import AgentSetup
    from benchwright.coding.attempts.models import CheckpointRecord, RunResult
    from benchwright.coding.grading.evaluation import CheckpointEvaluation
    from benchwright.errors import BenchwrightError, PluginError, PrerequisiteError, UserInputError
    from benchwright.protocols import ExecResult, Limits, Mount, Runtime
    from benchwright.web.browser.trial_models import AgentSpec as WebAgentSpec
    from benchwright.web.browser.web_agents import WebAgent
    from benchwright.web.trials.models import TrialRecord, WebRunResult
    from benchwright.web.trials.runner import RunHooks as WebHooks
