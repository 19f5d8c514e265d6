"""`run_harbor`: the Harbor track as a function. `benchwright run harbor` parses its options and
calls it; a new run or a resumed one goes through the kernel's `runs.new_or_resumed` and
`runs.start`, as the coding and web tracks do."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypedDict, Unpack, cast, get_args

from pydantic import ValidationError

from benchwright.api.options import refuse_unknown
from benchwright.errors import UserInputError
from benchwright.llm.cassette import traffic_setting
from benchwright.protocols import ExecutorSetup
from benchwright.registry import EXECUTORS
from benchwright.runs.clock import folder_stamp

if TYPE_CHECKING:
    from benchwright.harbor.runner import HarborRunConfig, HarborRunResult

MAX_JOBS = 64
"""Trials at once: each holds containers, so a few per core at most."""


class HarborOptions(TypedDict, total=False):
    """What a new Harbor run may be told; every key is optional (its CLI option in brackets)."""

    agent: str
    """oracle (each step's solution/solve.sh), command or mini [--agent]; default oracle."""
    agent_command: str
    """The command agent's shell command [--agent-command]."""
    model: str
    """The mini agent's model [--model]."""
    base_url: str
    """The mini agent's OpenAI-compatible endpoint [--base-url] (key: OPENAI_API_KEY)."""
    runtime: str
    """podman or docker [--runtime]; default podman."""
    trials: int
    """Trials per task [--trials]; default 1."""
    max_cost: float
    """The mini agent's spend allowed per step, US dollars [--max-cost]; default 3, 0: none;
    refused up front when the model has no known price and none is given."""
    price_in: float
    """US dollars per million prompt tokens, for a model benchwright has no price for
    [--price-in]."""
    price_out: float
    """US dollars per million generated tokens [--price-out]."""
    llm_record: Path | str
    """Record every model call of the mini agent into this cassette folder [--llm-record]."""
    llm_replay: Path | str
    """Answer every model call from this cassette, with no network and no key
    [--llm-replay]."""


def run_harbor(tasks: Path | str | None = None, *, out: Path | str | None = None,
               resume: Path | str | None = None, jobs: int = 1,
               **options: Unpack[HarborOptions]) -> HarborRunResult:
    """Run an agent through Harbor tasks (a task folder or a folder of them) in containers,
    `trials` times each, write result.json and report.md into `out`, and return the result.

    `resume=RUN_DIR` finishes an interrupted run with its saved configuration (nothing else may
    be given with it but `jobs`); `jobs` trials run at once, each in containers of its own."""
    from benchwright.harbor.track import TRACK
    from benchwright.runs import new_or_resumed, start

    if not 1 <= jobs <= MAX_JOBS:
        raise UserInputError(f"jobs must be 1 to {MAX_JOBS}, not {jobs}",
                             hint="trials run at once, each in containers of its own")
    given = [*options, *(["tasks"] if tasks is not None else []),
             *(["out"] if out is not None else [])]
    run_dir, config = new_or_resumed(resume, given, lambda: new_harbor_run(tasks, out, options))
    executor = EXECUTORS.get("local").from_setup(ExecutorSetup(workers=jobs))
    return start(TRACK, run_dir, config, executor=executor)


def new_harbor_run(tasks: Path | str | None, out: Path | str | None,
                   options: HarborOptions) -> tuple[Path, HarborRunConfig]:
    """The folder and configuration of a new run, or the caller's error in one line."""
    from benchwright.harbor.runner import HarborRunConfig

    refuse_unknown(options, HarborOptions)
    if tasks is None:
        raise UserInputError("give --tasks (or --resume RUN_DIR)",
                             hint="--tasks names a Harbor task folder or a folder of them")
    _choice("agent", options.get("agent", "oracle"))
    _choice("runtime", options.get("runtime", "podman"))
    traffic = traffic_setting(options.get("llm_record"), options.get("llm_replay"))
    if traffic is not None and options.get("agent") != "mini":
        raise UserInputError(f"--llm-{traffic.mode.value} records the mini agent's model calls",
                             hint="give --agent mini, or drop the cassette")
    fields = {k: v for k, v in options.items() if k not in ("llm_record", "llm_replay")}
    try:
        config = HarborRunConfig.model_validate(
            {**fields, "llm": traffic, "tasks": Path(tasks).expanduser().resolve()})
    except ValidationError as exc:
        error = exc.errors()[0]
        raise UserInputError(f"{'.'.join(map(str, error['loc']))}: {error['msg']}") from None
    _check_cost_limit(config, options)
    run_dir = Path(out) if out is not None else Path("runs") / f"harbor-{folder_stamp()}"
    return run_dir.expanduser().resolve(), config


def _check_cost_limit(config: HarborRunConfig, options: HarborOptions) -> None:
    """A cost limit or price given must be one the run enforces: the mini agent's, with the
    model's price known (the table's, or price_in and price_out)."""
    from benchwright.llm.pricing import run_price

    given = [key for key in ("max_cost", "price_in", "price_out") if key in options]
    if given and config.agent != "mini":
        raise UserInputError(f"--{given[0].replace('_', '-')} applies to the mini agent only",
                             hint="the oracle and the command agent call no model here")
    if "max_cost" in options and config.max_cost and run_price(
            config.model, config.price_in, config.price_out) is None:
        raise UserInputError(
            f"--max-cost {config.max_cost:g} cannot be enforced: model {config.model!r} has no "
            "known price", hint="give its price with --price-in and --price-out (US dollars "
            "per million tokens), or leave --max-cost out")


def _choice(name: Literal["agent", "runtime"], value: str) -> None:
    from benchwright.harbor.runner import HarborRunConfig

    allowed = cast(tuple[str, ...], get_args(HarborRunConfig.model_fields[name].annotation))
    if value not in allowed:
        raise UserInputError(f"unsupported --{name} {value!r}",
                             hint=f"--{name} {'|'.join(allowed)}")
