"""`run_web`: the web track as a function. `benchwright run web` parses its options and calls it.
With no options: the local suite, served on loopback, with the scripted agent."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Unpack

from pydantic import ValidationError

from benchwright.api.options import refuse_unknown
from benchwright.api.placement import Placement, make_executor, take_placement
from benchwright.errors import UserInputError
from benchwright.llm.cassette import require_local, traffic_setting
from benchwright.registry import TRIAL_RUNNERS, WEB_AGENTS
from benchwright.runs.clock import folder_stamp
from benchwright.runs.secret_settings import refuse_secrets
from benchwright.web.browser.prompts import PROMPT_KINDS, STRUCTURED, check_prompt_file
from benchwright.web.evaluation.tasks import (
    TaskFilter,
    parse_sites,
    parse_task_ids,
    require_known_ids,
    select,
)
from benchwright.web.sites.config import load_web_config
from benchwright.web.trials.extraction import ExtractorConfig
from benchwright.web.trials.models import AgentSpec, WebRunConfig, WebRunResult
from benchwright.web.trials.runner import RunHooks
from benchwright.web.trials.suites import LOCAL, Suite, open_suite

log = logging.getLogger(__name__)
# Selects another registered trial runner (tests use `fake`); deliberately not an option.
RUNNER_ENV = "BENCHWRIGHT_WEB_TRIAL_RUNNER"


class WebOptions(Placement, total=False):
    """What a new web run may be told; every key is optional (its CLI option in brackets).
    Where its trials run (`Placement`'s keys) may also be given with `resume`."""

    task_ids: str
    """Ids and ranges, e.g. "0-50,77" [--task-ids]; default: every task of the suite."""
    sites: str
    """Only tasks touching any of these sites, e.g. "shopping,reddit" [--sites]."""
    agent: str
    """scripted, browser-use, a plugin's or "module:Class" [--agent]; default scripted."""
    model: str
    """The model (browser-use) [--model]."""
    base_url: str
    """The model's OpenAI-compatible endpoint [--base-url, BENCHWRIGHT_LLM_BASE_URL]."""
    api_key_env: str
    """The variable holding the API key [--api-key-env]; default OPENAI_API_KEY."""
    trials: int
    """Attempts per task [--trials]; default 1."""
    step_limit: int
    """Agent steps per trial [--step-limit]; default 30."""
    trial_timeout: float
    """Wall-clock seconds per trial [--trial-timeout]; default 1800."""
    scripts: Path | str
    """Folder of <task_id>.yaml action scripts (scripted agent) [--scripts]."""
    extract_model: str
    """A model that reads ambiguous answers into retrieved_data [--extract-model]."""
    config: Path | str
    """Site URLs (YAML) for suites not served by benchwright [--config]."""
    keep_browser_files: bool
    """Keep each trial's browser profile and downloads [--keep-browser-files]."""
    cookies: Sequence[Path | str]
    """Cookie files from `benchwright web auth capture` [--cookies]."""
    prompt: str
    """structured, plain, or a template file [--prompt]; default structured."""
    concurrency_per_site: int
    """Read-only trials of a site run this many at a time [--concurrency-per-site]."""
    llm_record: Path | str
    """Record every model call of the agent into this cassette folder [--llm-record]."""
    llm_replay: Path | str
    """Answer every model call from this cassette, with no network and no key
    [--llm-replay]."""


def run_web(suite: str | Path = LOCAL, *, out: Path | str | None = None,
            resume: Path | str | None = None, hooks: RunHooks | None = None,
            **options: Unpack[WebOptions]) -> WebRunResult:
    """Run a browser agent through a suite's tasks (N trials each), score every trial with the
    official evaluator, write result.json and report.md into `out`, and return the result.

    `suite`: `local` (served on loopback by benchwright), `webarena-verified`, or a tasks JSON
    file. `resume=RUN_DIR` finishes an interrupted run with its saved configuration. With
    `executor="ray"`, each site worker's trials run on a cluster node (docs/scale-out.md)."""
    from benchwright.runs import new_or_resumed, start
    from benchwright.web.track import TRACK

    where = take_placement(options)
    given = [*options, *(["suite"] if suite != LOCAL else []), *(["out"] if out else [])]
    run_dir, config = new_or_resumed(resume, given, lambda: _new(str(suite), out, options))
    require_local(config.llm if config else None, where.get("executor"))
    # trials run where the executor puts them (one hosted runner per site worker)
    executor = make_executor(where, workers=1)
    return start(TRACK, run_dir, config, executor=executor, hooks=hooks or RunHooks())


def new_web_run(suite: str, out: Path | str | None,
                options: WebOptions) -> tuple[Path, Suite, WebRunConfig]:
    """The folder, suite and configuration of a new run (no key among its settings)."""
    refuse_unknown(options, WebOptions)
    config = _path(options.get("config"))
    if config is not None:  # read at scoring whatever the suite: a broken one is refused now
        load_web_config(config)
    opened = open_suite(suite, config)
    agent = options.get("agent", "scripted")
    WEB_AGENTS.check(agent)
    TRIAL_RUNNERS.check(os.environ.get(RUNNER_ENV) or "browser")
    base_url = options.get("base_url")
    key_env = options.get("api_key_env", "OPENAI_API_KEY")
    try:
        run_config = WebRunConfig(
            suite=opened.name,
            task_ids=_task_ids(opened, options.get("task_ids"), options.get("sites")),
            agent=AgentSpec(name=agent, model=options.get("model"), base_url=base_url,
                            api_key_env=key_env, prompt=prompt(options.get("prompt", STRUCTURED))),
            scripts_dir=_scripts(_path(options.get("scripts"))),
            trials=options.get("trials", 1), max_steps=options.get("step_limit", 30),
            trial_timeout_s=options.get("trial_timeout", 1800.0),
            env_config=config.resolve() if config else None,
            runner=os.environ.get(RUNNER_ENV) or "browser",
            extractor=_extractor(options.get("extract_model"), base_url, key_env),
            keep_browser_files=options.get("keep_browser_files", False),
            cookie_files=_cookie_files([Path(c) for c in options.get("cookies", ())]),
            concurrency_per_site=options.get("concurrency_per_site", 1),
            llm=traffic_setting(options.get("llm_record"), options.get("llm_replay")))
    except ValidationError as exc:
        error = exc.errors()[0]
        raise UserInputError(f"{'.'.join(map(str, error['loc']))}: {error['msg']}") from None
    refuse_secrets(run_config)
    run_dir = absolute(Path(out) if out is not None else _default_out(agent))
    return run_dir, opened, run_config


def _new(suite: str, out: Path | str | None, options: WebOptions) -> tuple[Path, WebRunConfig]:
    run_dir, _opened, config = new_web_run(suite, out, options)
    return run_dir, config


def prompt(value: str) -> str:
    """A prompt kind as it is, a template file as its absolute path."""
    if value in PROMPT_KINDS:
        return value
    path = absolute(Path(value))
    if not path.is_file():
        raise UserInputError("--prompt: no such prompt file", path=path,
                             hint=f"pass {' or '.join(PROMPT_KINDS)}, or a template file")
    check_prompt_file(path)  # a broken or hostile template: one line, before any run folder
    return str(path)


def absolute(path: Path) -> Path:
    """A path as a run saves it."""
    return path.expanduser().resolve()


def _path(value: Path | str | None) -> Path | None:
    return None if value is None else Path(value)


def _extractor(model: str | None, base_url: str | None,
               api_key_env: str) -> ExtractorConfig | None:
    if model is None:
        return None
    if base_url is None:
        raise UserInputError("--extract-model needs --base-url",
                             hint="the OpenAI-compatible endpoint, e.g. https://api.openai.com/v1")
    return ExtractorConfig(model=model, base_url=base_url, api_key_env=api_key_env)


def _cookie_files(paths: list[Path]) -> list[Path]:
    from benchwright.web.browser.cookies import load_cookies

    for path in paths:
        load_cookies(path)  # a missing or malformed file stops the run before it starts
    return [path.resolve() for path in paths]


def _scripts(folder: Path | None) -> Path | None:
    if folder is None:
        return None
    if not folder.is_dir():
        raise UserInputError("scripts folder not found", path=folder,
                             hint="pass a folder of <task_id>.yaml action scripts")
    return folder.resolve()


def _task_ids(suite: Suite, ids: str | None, sites: str | None) -> list[int]:
    task_filter = TaskFilter(task_ids=parse_task_ids(ids) if ids is not None else None,
                             sites=parse_sites(sites) if sites is not None else None)
    require_known_ids(suite.dataset, task_filter.task_ids, suite.name)
    chosen = [t.task_id for t in select(suite.dataset, task_filter)]
    if not chosen:
        raise UserInputError("no task matches --task-ids/--sites", hint=f"suite {suite.name} "
                             f"has ids {_id_range(suite)}")
    return chosen


def _id_range(suite: Suite) -> str:
    ids = sorted(suite.dataset.tasks)
    return f"{ids[0]}-{ids[-1]}" if ids else "(none)"


def _default_out(agent: str) -> Path:
    slug = re.sub(r"[^\w.-]+", "_", agent)  # "pkg.mod:Class" names a folder too
    return Path("benchwright-out") / "runs" / f"web-{slug}-{folder_stamp()}"
