"""Checks made before a run folder is created or a saved run is continued.

Everything an attempt would otherwise find out on its own (an unknown prompt template, no
bubblewrap, a `replay` agent with nothing to replay) is checked here, so a bad run is refused
with one line and leaves no folder behind. Secrets are refused here too: a setting is saved in
manifest.json and read back on resume, so it must never hold a key's value.
"""

from __future__ import annotations

from pathlib import Path

from benchwright.coding.loader import load_problem
from benchwright.coding.prompts import render_prompt, template_text
from benchwright.errors import UserInputError
from benchwright.interpreters import resolve_python
from benchwright.runs.layout import RunLayout
from benchwright.runs.models import RunConfig
from benchwright.runs.secret_settings import refuse_secrets
from benchwright.sandbox import get_runtime

__all__ = ["check_coding_run", "check_resumable", "prompt_setting", "refuse_secrets", "resolved"]


def check_coding_run(config: RunConfig) -> None:
    """Raise the error every attempt of this run would hit, before anything is written."""
    refuse_secrets(config)
    template_text(config.prompt)
    get_runtime(config.unsafe_no_sandbox)
    _check_agent(config)
    resolve_python(config.python)
    for name in config.problems:  # a template that cannot render fails every attempt
        problem = load_problem(config.problems_dir / name)
        for index, checkpoint in enumerate(problem.ordered_checkpoints()):
            render_prompt(template_text(config.prompt), spec=problem.render_spec(checkpoint.name),
                          is_continuation=index > 0, agent=config.agent, model=config.model)


def check_resumable(config: RunConfig) -> None:
    """Refuse to continue a run whose saved settings lost a value to redaction (older runs
    redacted manifest.json in place) or that would fail at once."""
    if "<redacted:" in config.model_dump_json():
        raise UserInputError("this run's saved settings hold a redacted key, so it cannot be "
                             "continued as it was started", hint="start a new run; keys "
                             "stay in the environment")
    template_text(config.prompt)
    get_runtime(config.unsafe_no_sandbox)
    _check_agent(config)


def _check_agent(config: RunConfig) -> None:
    if config.agent == "replay":
        if config.replay_from is None:
            raise UserInputError("the replay agent needs --replay-from RUN_DIR")
        if not RunLayout(config.replay_from).manifest.is_file():
            raise UserInputError("--replay-from is not a run directory (no manifest.json)",
                                 path=config.replay_from,
                                 hint="pass a folder `benchwright run coding` wrote")
    if config.agent == "command" and not config.agent_command:
        raise UserInputError("the command agent needs --agent-command 'SHELL COMMAND'")
    for mount in config.agent_mounts:
        if not mount.exists():
            raise UserInputError("--agent-mount: no such file or folder", path=mount)


def resolved(path: Path | None) -> Path | None:
    """A path as saved in a manifest: absolute, so a resume from elsewhere finds it."""
    return None if path is None else path.expanduser().resolve()


def prompt_setting(prompt: str) -> str:
    """A built-in template's name as is; a template file's path made absolute."""
    from benchwright.coding.prompts import BUILTIN_TEMPLATES

    return prompt if prompt in BUILTIN_TEMPLATES else str(Path(prompt).expanduser().resolve())
