"""SCBench's `config.yaml` for a coding run, from its manifest: the keys SCBench's resolved run
configuration has (its loader validates them, unknown keys refused), with our values; what
SCBench has no key for (the checkpoints' start, `--start-from`) goes into the free-form
`environment` mapping. Its dashboard reads `agent.type`, `agent.version`, `model.name`,
`thinking` and `prompt_path`."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from benchwright.coding.agents.chat_client import reasoning_effort
from benchwright.coding.attempts.models import Manifest, RunConfig
from benchwright.coding.problems.prompts import BUILTIN_TEMPLATES, template_text
from benchwright.errors import BenchwrightError

NO_MODEL = "none"
"""config.yaml's model name for agents that call no model (SCBench requires a name)."""


def agent_version(config: RunConfig, benchwright_version: str) -> str | None:
    """The version the run recorded (`--agent-version`, or the CLI's pin), else the agent's
    pinned one (benchwright's own agents: the benchwright that ran the run)."""
    if config.agent_version:
        return config.agent_version
    from benchwright.registry import CODING_AGENTS

    try:
        agent = CODING_AGENTS.get(config.agent)
    except (ImportError, BenchwrightError):  # an optional dependency missing, or a plugin gone
        return None
    pinned = getattr(agent, "pinned_version", None)
    return pinned(benchwright_version) if callable(pinned) else None


def thinking(config: RunConfig) -> str:
    """The preset the run was given (`--thinking`), else SCBench's preset for the budget
    (`--thinking-budget T`): none (the agent's default), disabled (0), else low, medium or
    high as `mini` turns the budget into an effort level."""
    given = config.agent_settings.thinking
    if given is not None:
        return str(given)
    budget = config.agent_settings.thinking_budget
    if budget is None:
        return "none"
    return "disabled" if budget == 0 else str(reasoning_effort(budget))


def thinking_max_tokens(config: RunConfig) -> int | None:
    """The thinking budget in tokens, when the run gives one instead of a preset (SCBench takes
    one or the other)."""
    settings = config.agent_settings
    return None if settings.thinking is not None else settings.thinking_budget or None


def prompt_path(prompt: str) -> Path:
    """The template file: the packaged one for a built-in name."""
    if prompt in BUILTIN_TEMPLATES:
        folder = resources.files("benchwright.coding.problems") / "templates"
        return Path(str(folder / f"{prompt}.jinja"))
    return Path(prompt)


def identity(manifest: Manifest) -> dict[str, Any]:
    """What SCBench's result.json repeats of the configuration."""
    config = manifest.config
    return {"model": config.model or NO_MODEL, "thinking": thinking(config),
            "prompt": prompt_path(config.prompt).stem, "agent_type": config.agent,
            "agent_version": agent_version(config, manifest.benchwright_version)}


def run_config(manifest: Manifest, run_dir: Path) -> dict[str, Any]:
    """config.yaml's content."""
    config = manifest.config
    model = config.model or NO_MODEL
    path = prompt_path(config.prompt)
    try:
        content = template_text(config.prompt)
    except BenchwrightError:  # the template file is gone since the run
        content = ""
    return {
        "agent_config_path": None,
        "agent": {"type": config.agent,
                  "version": agent_version(config, manifest.benchwright_version)},
        "environment_config_path": None,
        # SCBench's loader refuses unknown top-level keys but takes any keys in `environment`
        "environment": {"type": "local", "name": "benchwright",
                        "sandbox": "none" if config.unsafe_no_sandbox else "bubblewrap",
                        "start_from": str(config.start_from)},
        "prompt_path": str(path), "prompt_content": content,
        "model": {"provider": model.partition("/")[0] if "/" in model else "unknown",
                  "name": model},
        "thinking": thinking(config),
        "thinking_max_tokens": thinking_max_tokens(config),
        "pass_policy": str(config.pass_policy), "problems": list(config.problems),
        "save_dir": str(run_dir.parent), "save_template": run_dir.name,
        "output_path": str(run_dir),
    }
