"""Checks made before a run folder is created or a saved run is continued.

Everything an attempt would otherwise find out on its own (an unknown prompt template, no
bubblewrap, a `replay` agent with nothing to replay) is checked here, so a bad run is refused
with one line and leaves no folder behind. Secrets are refused here too: a setting is saved in
manifest.json and read back on resume, so it must never hold a key's value.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from pathlib import Path

from benchwright.coding.agents.chat_client import api_key, resolve_target
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import RunConfig, runtime_of
from benchwright.coding.grading.workspace import asset_sources
from benchwright.coding.problems.loader import load_problem, require_tests
from benchwright.coding.problems.prompts import check_template, render_prompt, template_text
from benchwright.coding.problems.source import require_data
from benchwright.errors import UserInputError
from benchwright.extras import import_extra
from benchwright.llm.models import TrafficMode
from benchwright.llm.replay_keys import set_placeholder_keys
from benchwright.llm.urls import require_reachable
from benchwright.registry import CODING_AGENTS
from benchwright.runs import open_run
from benchwright.runs.secret_settings import refuse_secrets
from benchwright.sandbox.caches import cache_base
from benchwright.sandbox.interpreters import resolve_python

__all__ = ["check_coding_run", "check_resumable", "node_checks", "prompt_setting",
           "refuse_secrets", "resolved"]


def check_coding_run(config: RunConfig) -> None:
    """Raise the error every attempt of this run would hit, before anything is written."""
    refuse_secrets(config)
    template_text(config.prompt)
    runtime_of(config)
    _refuse_meaningless(config)
    _check_agent(config)
    resolve_python(config.python)
    check_template(config.prompt)  # a template that cannot compile or render: one line
    problems = [load_problem(config.problems_dir / name) for name in config.problems]
    for problem in problems:
        require_tests(problem)
    # data never fetched (Git LFS) or left out of a copy: every test needing it would fail
    # as the agent's failure; all such problems named at once
    require_data(problems)
    for problem in problems:  # a template that cannot render fails every attempt
        asset_sources(problem)  # a missing asset breaks every attempt off at its first grading
        for index, checkpoint in enumerate(problem.ordered_checkpoints()):
            render_prompt(template_text(config.prompt), spec=problem.render_spec(checkpoint.name),
                          is_continuation=index > 0, agent=config.agent, model=config.model)


def check_resumable(config: RunConfig) -> None:
    """Refuse to continue a run whose saved settings still hold a redacted value (a base URL's
    credential whose variable is not set, or an older run that redacted manifest.json in place)
    or that would fail at once."""
    saved = config.model_dump_json()
    if "<redacted:" in saved:
        marks = sorted(set(re.findall(r"<redacted:([^>]*)>", saved)))
        raise UserInputError(
            f"this run's saved settings hold redacted values ({', '.join(marks)}), so it cannot "
            "be continued as it was started",
            hint="set the variables they name in the environment (a base URL's credential), "
            "or start a new run")
    template_text(config.prompt)
    runtime_of(config)
    _check_agent(config)
    require_data([load_problem(config.problems_dir / name) for name in config.problems])


def node_checks(config: RunConfig) -> list[Callable[[], object]]:
    """What every machine that runs an attempt must have: bubblewrap (unless the run is
    unsandboxed), the grading Python, the cache folder, the metric tools (when measured), the
    host paths the agent reads (mounts, a run to replay) and what the agent runs on."""
    checks: list[Callable[[], object]] = [
        functools.partial(runtime_of, config),
        functools.partial(resolve_python, config.python), cache_base]
    if config.metrics:
        from benchwright.metrics.tools import versions

        checks.append(versions)
    paths = [*config.agent_mounts, *([config.replay_from] if config.replay_from else [])]
    checks += [functools.partial(_exists, path) for path in paths]
    return checks + _agent_needs(config)


def _agent_needs(config: RunConfig) -> list[Callable[[], object]]:
    """What the agent runs on: mini its model client and an endpoint that takes connections
    (not minutes of retries per checkpoint), an npm CLI agent Node.js and npm."""
    agent = config.agent
    if agent == "mini":
        replayed = config.llm is not None and config.llm.mode is TrafficMode.REPLAY
        return [functools.partial(import_extra, "openai", "mini", "the mini agent"),
                *([] if replayed else [functools.partial(_model_reachable, config)])]
    tool = getattr(CODING_AGENTS.get(agent), "npm_tool", None)
    if tool is None:
        return []
    from benchwright.coding.agents.toolchain import node_bin

    return [functools.partial(node_bin, tool.min_node or 16)]


def _model_reachable(config: RunConfig) -> None:
    """The mini agent's endpoint takes connections (`--base-url`, the provider's, or the openai
    SDK's own: $OPENAI_BASE_URL, else api.openai.com)."""
    if not config.model:
        return  # the agent says it needs one
    target = resolve_target(config.model, config.agent_settings.base_url)
    url = target.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    require_reachable(url, f"the model endpoint of {config.model!r}",
                      hint="check --base-url (or -A base_url=) and that its server is running")


def _exists(path: Path) -> None:
    if not path.exists():
        raise UserInputError(f"{path} is not there", hint=f"copy {path} to the same path")


def _replay_keys(config: RunConfig) -> None:
    """A replay needs no key: agents get a placeholder. A judge during the run has no
    cassette of its own: `metrics judge --llm-record` records it afterwards."""
    if config.llm is not None and config.judge is not None:
        raise UserInputError("--judge-model cannot be combined with --llm-record/--llm-replay",
                             hint="judge afterwards: benchwright metrics judge RUN_DIR "
                             "--llm-record DIR (or --llm-replay DIR)")
    if config.llm is not None and config.llm.mode is TrafficMode.REPLAY:
        set_placeholder_keys()


def _check_agent(config: RunConfig) -> None:
    CODING_AGENTS.get(config.agent)  # a plugin or module:Class that is no agent: one line
    _replay_keys(config)
    if config.agent == "replay":
        if config.replay_from is None:
            raise UserInputError("the replay agent needs --replay-from RUN_DIR")
        if not RunLayout(config.replay_from).manifest.is_file():
            raise UserInputError("--replay-from is not a run directory (no manifest.json)",
                                 path=config.replay_from,
                                 hint="pass a folder `benchwright run coding` wrote")
        track = open_run(config.replay_from).track.name
        if track != "coding":
            raise UserInputError(f"--replay-from is a {track} run: the replay agent re-applies "
                                 "a coding run's snapshots", path=config.replay_from,
                                 hint="pass a folder `benchwright run coding` wrote")
    if config.agent == "command" and not (config.agent_command or "").strip():
        raise UserInputError("the command agent needs --agent-command 'SHELL COMMAND'",
                             hint="the command gets the prompt on stdin")
    for mount in config.agent_mounts:
        if not mount.exists():
            raise UserInputError("--agent-mount: no such file or folder", path=mount)
    if config.agent == "mini":  # the harness calls its model: a model, a key, a client
        if not config.model:
            raise UserInputError("the mini agent needs a model",
                                 hint="pass --model, e.g. --model openai/gpt-4.1")
        api_key(resolve_target(config.model, config.agent_settings.base_url), os.environ)


def _refuse_meaningless(config: RunConfig) -> None:
    """An option only one agent reads, given with another, is refused (not silently ignored)."""
    if config.agent_command is not None and config.agent != "command":
        raise UserInputError(f"--agent-command is for --agent command, not {config.agent!r}",
                             hint="drop --agent-command, or pass --agent command")
    if config.replay_from is not None and config.agent != "replay":
        raise UserInputError(f"--replay-from is for --agent replay, not {config.agent!r}",
                             hint="drop --replay-from, or pass --agent replay")


def resolved(path: Path | None) -> Path | None:
    """A path as saved in a manifest: absolute, so a resume from elsewhere finds it."""
    return None if path is None else path.expanduser().resolve()


def prompt_setting(prompt: str) -> str:
    """A built-in template's name as is; a template file's path made absolute."""
    from benchwright.coding.problems.prompts import BUILTIN_TEMPLATES

    return prompt if prompt in BUILTIN_TEMPLATES else str(Path(prompt).expanduser().resolve())
