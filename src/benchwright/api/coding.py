"""`run_coding`: the coding track's runs as a function. `benchwright run coding` parses its options
and calls it (grading one checkpoint is `api/grading.py`)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from pydantic import ValidationError

from benchwright.api.options import refuse_unknown
from benchwright.api.placement import Placement, make_executor, take_placement
from benchwright.coding.agents.settings import AgentSettings, Thinking
from benchwright.coding.attempts.models import RunConfig, RunResult, StartFrom
from benchwright.coding.attempts.preflight import check_coding_run, prompt_setting, resolved
from benchwright.coding.attempts.scbench.run_name import run_name, unused
from benchwright.coding.grading.policies import PassPolicy
from benchwright.coding.problems.examples import examples_dir
from benchwright.coding.problems.loader import load_problem
from benchwright.coding.track import TRACK, check_judge, require_metric_tools
from benchwright.coding.track import CodingHooks as CodingHooks  # the API's name for it
from benchwright.errors import UserInputError
from benchwright.judge.models import JudgeSettings
from benchwright.llm.cassette import require_local, traffic_setting
from benchwright.llm.pricing import run_price
from benchwright.registry import CODING_AGENTS, RUNTIMES
from benchwright.sandbox.images.resolve import image_for_runtime
from benchwright.version import __version__

if TYPE_CHECKING:
    pass

RUNS_FOLDER = Path("benchwright-out") / "runs"
"""Where a coding run goes without `out`: <model>/<agent>-<version>_<prompt>_<thinking>_<stamp>
(SCBench's run name)."""
log = logging.getLogger(__name__)
# `AgentSettings` fields that are options of their own (the rest go in `agent_options`)
NAMED_AGENT_SETTINGS = ("base_url", "step_limit", "thinking", "thinking_budget")
# options named for people, and the `AgentSettings` field each sets
PRICE_OPTIONS = {"max_cost": "cost_limit_usd", "price_in": "input_price_per_mtok",
                 "price_out": "output_price_per_mtok"}
# agents whose cost benchwright computes from a price (the others report their own)
TABLE_PRICED_AGENTS = ("mini", "codex", "gemini")


class CodingOptions(Placement, total=False):
    """What a new coding run may be told; every key is optional (its CLI option in brackets).
    Where its jobs run (`Placement`'s keys) may also be given with `resume`."""

    problems: Sequence[str]
    """Problems to run, by folder name [--problem]; default: every problem in the folder."""
    agent: str
    """A registered agent, a plugin's, or "module:Class" [--agent]; default `oracle`."""
    agent_version: str
    """The version of a CLI agent to install and run [--agent-version]; default: the pinned."""
    model: str
    """The model the agent uses [--model]."""
    thinking: Thinking | str
    """SCBench's preset: none, disabled, low, medium, high [--thinking]."""
    thinking_budget: int
    """Reasoning tokens per model call, instead of a preset [--thinking-budget]."""
    step_limit: int
    """Model calls per checkpoint, 0: none [--step-limit]; default 100."""
    base_url: str
    """The model provider's base URL [--base-url, BENCHWRIGHT_LLM_BASE_URL]."""
    max_cost: float
    """Spend allowed per checkpoint, US dollars [--max-cost] (`cost_limit_usd`); refused up
    front when the model has no known price and none is given (`price_in`, `price_out`)."""
    price_in: float
    """US dollars per million prompt tokens, for a model benchwright has no price for
    [--price-in] (`input_price_per_mtok`)."""
    price_out: float
    """US dollars per million generated tokens [--price-out] (`output_price_per_mtok`)."""
    agent_options: Mapping[str, Any]
    """Any other `AgentSettings` field, e.g. cost_limit_usd [-A KEY=VALUE]."""
    prompt: str
    """just-solve, plan-first or a .jinja file [--prompt]."""
    trials: int
    """Attempts per problem [--trials]; default 1."""
    pass_policy: PassPolicy | str
    """A checkpoint failing it ends the attempt [--pass-policy]; default core-cases."""
    start_from: StartFrom | str
    """What checkpoints 2+ start from: chain (the agent's own code, the default) or reference
    (the previous checkpoint's reference solution) [--start-from]."""
    agent_command: str
    """The `command` agent's shell command [--agent-command]."""
    agent_mounts: Sequence[Path | str]
    """Host paths bound read-only into the `command` agent's sandbox [--agent-mount]."""
    replay_from: Path | str
    """The run the `replay` agent re-applies [--replay-from]."""
    python: str
    """The Python of grading environments [--python]."""
    agent_network: bool
    """Give the agent's sandbox the network [--agent-network]."""
    unsafe_no_sandbox: bool
    """Run agents and tests without bubblewrap [--unsafe-no-sandbox]."""
    runtime: str
    """Where sandboxed steps run: bwrap (default), podman or docker [--runtime]."""
    image: str
    """The container image (podman/docker): a reference in the engine's store, or an SCBench
    environment file; default: the grading image, built if missing [--image]."""
    metrics: bool
    """Measure code quality at every checkpoint [--metrics/--no-metrics]; default True."""
    max_snapshot_mb: float
    """Cap on one checkpoint's snapshot, MiB [--max-snapshot-mb]."""
    max_snapshot_files: int
    """Cap on the files of one checkpoint's snapshot [--max-snapshot-files]."""
    judge_model: str
    """Judge each checkpoint's code with this LLM as it finishes [--judge-model]."""
    judge_rubric: Path | str
    """The judge's rubric (JSONL, SCBench's format) [--judge-rubric]; default: benchwright's."""
    judge_options: Mapping[str, Any]
    """Any other `JudgeSettings` field, e.g. base_url, protocol, samples [-J KEY=VALUE]."""
    llm_record: Path | str
    """Record every model call of the agent into this cassette folder [--llm-record]."""
    llm_replay: Path | str
    """Answer every model call from this cassette, with no network and no key
    [--llm-replay]."""


def run_coding(problems_dir: Path | str | None = None, *, out: Path | str | None = None,
               resume: Path | str | None = None, workers: int = 1,
               hooks: CodingHooks | None = None, **options: Unpack[CodingOptions]) -> RunResult:
    """Run an agent through every checkpoint of each problem (the bundled examples by default),
    grade each, write result.json and report.md into `out`, and return the result.

    `resume=RUN_DIR` finishes an interrupted run with its saved configuration (no other option
    may be given with it but `workers` and where jobs run). A run that is already complete is
    finished again (its result files rewritten) without running anything.
    """
    from benchwright.runs import new_or_resumed, start

    where = take_placement(options)
    given = [*options, *(["problems_dir"] if problems_dir is not None else []),
             *(["out"] if out is not None else [])]
    run_dir, config = new_or_resumed(resume, given,
                                     lambda: new_coding_run(problems_dir, out, options))
    require_local(config.llm if config else None, where.get("executor"))
    hooks = hooks or CodingHooks()
    executor = make_executor(where, workers, on_event=hooks.on_event)
    return start(TRACK, run_dir, config, executor=executor, hooks=hooks)


def new_coding_run(problems_dir: Path | str | None, out: Path | str | None,
                   options: CodingOptions) -> tuple[Path, RunConfig]:
    """The folder and configuration of a new run, checked before the folder exists (a run that
    every attempt would fail is refused and leaves nothing behind)."""
    config = coding_config(problems_dir, options)
    run_dir = _new_run_dir(Path(out) if out is not None
                           else unused(RUNS_FOLDER / run_name(config)))
    if config.metrics:
        require_metric_tools()
    check_coding_run(config)
    _check_cost_limit(config, options)
    check_judge(config.judge)
    return run_dir, config


def _check_cost_limit(config: RunConfig, options: CodingOptions) -> None:
    """A cost limit the run asks for must be enforceable: an agent whose cost benchwright
    computes needs the model's price (the table's, or --price-in and --price-out)."""
    given = {**(options.get("agent_options") or {}), **options}
    s = config.agent_settings
    if ("max_cost" not in given and "cost_limit_usd" not in given) or not s.cost_limit_usd \
            or config.agent not in TABLE_PRICED_AGENTS:
        return
    if run_price(config.model, s.input_price_per_mtok, s.output_price_per_mtok) is None:
        raise UserInputError(
            f"{'--max-cost' if 'max_cost' in given else 'cost_limit_usd'} "
            f"{s.cost_limit_usd:g} cannot be enforced: model {config.model!r} has no "
            "known price", hint="give its price with --price-in and --price-out (US dollars "
            "per million tokens), or leave --max-cost out")


def coding_config(problems_dir: Path | str | None, options: CodingOptions) -> RunConfig:
    """The `RunConfig` the options describe (problems found and their specs readable)."""
    refuse_unknown(options, CodingOptions)
    folder = Path(problems_dir) if problems_dir is not None else examples_dir()
    agent = options.get("agent", "oracle")
    CODING_AGENTS.check(agent)
    fields = {k: v for k, v in options.items() if k in RunConfig.model_fields}
    try:
        config = RunConfig.model_validate({
            **fields, "problems_dir": folder.expanduser().resolve(),
            "problems": problem_names(folder, list(options.get("problems", ()))),
            "agent": agent, "agent_version": agent_version(agent, options.get("agent_version")),
            "agent_mounts": [resolved(Path(m)) for m in options.get("agent_mounts", ())],
            "replay_from": resolved(_path(options.get("replay_from"))),
            "prompt": prompt_setting(options.get("prompt", "just-solve")),
            "agent_settings": agent_settings(options),
            "llm": traffic_setting(options.get("llm_record"), options.get("llm_replay")),
            "judge": judge_settings(options.get("judge_model"), options.get("judge_rubric"),
                                    options.get("judge_options") or {})})
    except ValidationError as exc:
        raise _option_error(exc) from None
    return _with_image(config)


def _with_image(config: RunConfig) -> RunConfig:
    """The run's container image resolved now, once (a missing engine or image: one line)."""
    if config.runtime not in RUNTIMES or config.runtime == "unsafe-local":
        raise UserInputError(f"unknown runtime {config.runtime!r}",
                             hint="use bwrap, podman or docker (docs/runtimes.md)")
    image_id = image_for_runtime(config.runtime, config.image, config.unsafe_no_sandbox)
    return config.model_copy(update={"image_id": image_id})


def agent_settings(options: CodingOptions) -> AgentSettings:
    """The LLM-agent settings among the options (`agent_options` and the named ones)."""
    given: dict[str, Any] = dict(options)
    named = {key: given[key] for key in NAMED_AGENT_SETTINGS if key in given}
    named |= {field: given[key] for key, field in PRICE_OPTIONS.items() if key in given}
    values: dict[str, Any] = {**(given.get("agent_options") or {}), **named}
    unknown = sorted(set(values) - set(AgentSettings.model_fields))
    if unknown:
        raise UserInputError(f"unknown agent option {unknown[0]!r}",
                             hint=f"keys: {', '.join(AgentSettings.model_fields)}")
    try:
        return AgentSettings.model_validate(values)
    except ValidationError as exc:
        raise _option_error(exc, "agent option ") from None


def judge_settings(model: str | None, rubric: Path | str | None,
                   options: Mapping[str, Any]) -> JudgeSettings | None:
    """The judge a run asks for (`judge_model`, `judge_rubric`, `judge_options`), or None."""
    if model is None:
        if rubric is not None or options:
            raise UserInputError("--judge-rubric and --judge-option need --judge-model")
        return None
    keys = [k for k in JudgeSettings.model_fields if k not in ("model", "rubric")]
    unknown = sorted(set(options) - set(keys))
    if unknown:
        raise UserInputError(f"unknown judge option {unknown[0]!r}",
                             hint=f"keys: {', '.join(keys)}")
    return judge_settings_of({**options, "model": model, "rubric": rubric})


def judge_settings_of(values: Mapping[str, Any]) -> JudgeSettings:
    """Validated judge settings; its template and rubric files must exist (absolute paths)."""
    values = dict(values)
    for name in ("rubric", "prefix_template", "criteria_template"):
        path = values.get(name)
        if isinstance(path, str | Path):
            path = Path(path).expanduser()
            if not path.is_file():
                raise UserInputError(f"the judge's {name.replace('_', ' ')}: no such file",
                                     path=path)
            values[name] = path.resolve()
    try:
        return JudgeSettings.model_validate(values)
    except ValidationError as exc:
        raise _option_error(exc, "judge setting ") from None


def _option_error(exc: ValidationError, prefix: str = "") -> UserInputError:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return UserInputError(f"{prefix}{where}: {error['msg']}")


def agent_version(agent: str, wanted: str | None) -> str | None:
    """The version of a CLI agent a run installs: `wanted`, else its pinned one; an agent that
    installs no version of its own (oracle, replay, command, mini) records none."""
    installs = getattr(CODING_AGENTS.get(agent), "installs_version", False)
    if wanted is None:
        return pinned_version(agent) if installs else None
    if not installs:
        versioned = [name for name in CODING_AGENTS.table
                     if getattr(CODING_AGENTS.get(name), "installs_version", False)]
        raise UserInputError(f"--agent-version: the {agent} agent is not an installed CLI",
                             hint=f"built-in agents that take a version: {', '.join(versioned)}")
    return wanted


def pinned_version(agent: str) -> str | None:
    """The version a coding agent runs at by default (its `pinned_version`: a CLI's pin, or
    the benchwright version for benchwright's own agents; None when it does not say)."""
    pinned = getattr(CODING_AGENTS.get(agent), "pinned_version", None)
    version = pinned(__version__) if callable(pinned) else None
    return version if isinstance(version, str) else None


def problem_names(folder: Path, wanted: list[str]) -> list[str]:
    """The problems to run (`wanted`, else every problem in `folder`), each readable."""
    if not folder.is_dir():
        raise UserInputError("problems folder not found", path=folder,
                             hint="pass the folder that holds one folder per problem")
    # a config.yaml that is not a file still marks a problem: load_problem then says what is wrong
    available = sorted(p.name for p in folder.iterdir() if (p / "config.yaml").exists())
    if not available:
        raise UserInputError("no problem here (no folder holding a config.yaml)", path=folder,
                             hint="pass the folder that holds one folder per problem")
    for name in wanted:
        if name not in available:
            raise UserInputError(f"no problem named {name!r}", path=folder,
                                 hint=f"choose from: {', '.join(available) or 'none here'}")
    names = wanted or available
    for name in names:
        problem = load_problem(folder / name)
        for checkpoint in problem.ordered_checkpoints():
            problem.render_spec(checkpoint.name)  # a missing or unreadable spec stops us here
    return names


def _path(value: Path | str | None) -> Path | None:
    return None if value is None else Path(value)


def _new_run_dir(out: Path) -> Path:
    if out.exists() and not out.is_dir():
        raise UserInputError("--out is not a folder", path=out, hint="pass a new folder's path")
    return out.expanduser().resolve()
