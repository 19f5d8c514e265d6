"""`benchwright web`: score WebArena Verified logs offline, list its tasks, control its sites."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchwright.cli.entry import run_app
from benchwright.cli.option_checks import (
    MAX_HEALTH_TIMEOUT_S,
    MAX_START_TIMEOUT_S,
    MAX_TEMPLATE_ID,
    new_dir,
    seconds,
)
from benchwright.cli.option_values import WEBARENA_SUITE, SubsetChoice
from benchwright.cli.verbosity import notes_console
from benchwright.cli.web_auth_cmd import app as auth_app
from benchwright.cli.web_package_cmd import package_cmd
from benchwright.errors import UserInputError

# The track and rich are imported inside the commands: `--help` and a bad option load neither
# (bench/cli_startup.py, tests/cli/test_startup.py).
if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console
    from rich.table import Table

    from benchwright.web.evaluation.scoring import WebEvalSummary
    from benchwright.web.evaluation.tasks import WebTask
    from benchwright.web.scorecard.figures import WebReport
    from benchwright.web.sites.config import Site, WebEnvConfig
    from benchwright.web.sites.control import SiteHealth

REPORT_MD = "eval_report.md"
REPORT_JSON = "eval_report.json"

app = typer.Typer(help="The web track (WebArena Verified): score agent logs offline, list tasks, "
                  "control the sites.", no_args_is_help=True)
env_app = typer.Typer(help="The WebArena sites: health checks, and containers (Docker, or "
                       "podman's Docker API).",
                      no_args_is_help=True)
tasks_app = typer.Typer(help="The 812 WebArena Verified tasks.", no_args_is_help=True)
app.add_typer(env_app, name="env")
app.add_typer(tasks_app, name="tasks")
app.add_typer(auth_app, name="auth")
app.command("package")(package_cmd)

ConfigOpt = Annotated[Path | None, typer.Option(
    "--config", help="Site URLs, credentials and headers (YAML); BENCHWRIGHT_WEB_<SITE>_URL "
    "variables override it.")]
EVAL_FOLDER = Path("benchwright-out") / "web-eval"
"""Where `web eval --run` scores a copy of the logs without --out (relative to the working
folder)."""
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
PythonOpt = Annotated[str | None, typer.Option(
    metavar="VERSION|PATH", help="Python version or path for the evaluator's environment.")]


@app.command("eval")
def eval_cmd(
    logs_dir: Annotated[Path, typer.Argument(
        help="Agent logs: LOGS_DIR/<task_id>/{agent_response.json,network.har} (or "
        "<task_id>/trial_<n>/...).")],
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    baseline: Annotated[Path | None, typer.Option(
        help="A folder scored before (its eval_summary.json): paired comparison.")] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Re-evaluate every task, even those whose files did not change.")]
    = False,
    python: PythonOpt = None,
    dataset: Annotated[Path | None, typer.Option(
        help="A tasks JSON file (dataset format) for tasks that are not the official 812, "
        "e.g. the local suite's.")] = None,
    run: Annotated[Path | None, typer.Option(
        metavar="RUN_DIR", help="The web run the logs come from (e.g. its package): the URLs "
        "its browser used and its dataset, so no --config or --dataset needs writing.")] = None,
    out: Annotated[Path | None, typer.Option(
        parser=new_dir, metavar="DIR", help="Score a copy of the logs in this new folder (the "
        "verdicts and reports go there); default: in LOGS_DIR, or with --run a new folder "
        f"{EVAL_FOLDER}/<run>-<time>, never inside the run.")] = None,
) -> None:
    """Score every task folder with the official evaluator; per-site table and macro average."""
    from rich.console import Console

    from benchwright.files.atomic import write_text_atomic
    from benchwright.web.evaluation.scoring import load_summary, score_output_dir
    from benchwright.web.evaluation.tasks import load_task_file
    from benchwright.web.scorecard.figures import build_report, render_markdown

    env_config, dataset = _scoring_inputs(config, dataset, run)
    logs_dir = _scored_copy(logs_dir, out, run)
    before = load_summary(baseline) if baseline is not None else None
    err = notes_console()
    with err.status("scoring") as status:
        summary = score_output_dir(logs_dir, env_config, python=python, reuse=not force,
                                   dataset=load_task_file(dataset) if dataset else None,
                                   progress=lambda msg: status.update(f"scoring {msg}"))
    report = build_report(summary, before)
    write_text_atomic(logs_dir / REPORT_MD, render_markdown(report))
    write_text_atomic(logs_dir / REPORT_JSON, report.model_dump_json(indent=2) + "\n")
    if as_json:
        typer.echo(json.dumps(eval_json(summary, report), indent=2))
        return
    print_report(Console(), summary, report)
    err.print(f"[dim]wrote {logs_dir}/eval_summary.json, {REPORT_MD}, {REPORT_JSON} and "
              "eval_result.json per task[/]")


def _scored_copy(logs_dir: Path, out: Path | None, run: Path | None) -> Path:
    """The folder to score: LOGS_DIR itself, or (with --out, or --run: a run folder is never
    written by a re-scoring) a copy of it, links kept as links and never followed."""
    from benchwright.files.nofollow import copy_tree
    from benchwright.runs.clock import folder_stamp

    if out is None and run is None:
        return logs_dir
    if not logs_dir.is_dir():
        raise UserInputError("the logs to score: no such folder", path=logs_dir)
    target = out or EVAL_FOLDER / f"{run.resolve().name if run else 'logs'}-{folder_stamp()}"
    if target.exists() and any(target.iterdir()):
        raise UserInputError("--out must be a new or empty folder", path=target)
    if target.exists():
        target.rmdir()
    target.parent.mkdir(parents=True, exist_ok=True)
    copy_tree(logs_dir, target)
    return target


def _scoring_inputs(config: Path | None, dataset: Path | None,
                    run: Path | None) -> tuple[WebEnvConfig, Path | None]:
    """The sites' settings and the dataset: from --config and --dataset, or from --run's
    manifest (two sources of the same settings are refused)."""
    from benchwright.web.sites.config import load_web_config

    if run is None:
        return load_web_config(config), dataset
    given = [name for name, value in (("--config", config), ("--dataset", dataset)) if value]
    if given:
        raise UserInputError(f"--run gives the sites' URLs and the dataset; drop "
                             f"{' and '.join(given)}",
                             hint="or drop --run and write them with --config and --dataset")
    from benchwright.runs import open_run
    from benchwright.web.trials.runner import load_web_manifest, scoring_config

    open_run(run, expect="web")  # the manifest's track, never a guess: a coding run is refused
    manifest = load_web_manifest(run)
    return scoring_config(manifest), manifest.dataset_file


def eval_json(summary: WebEvalSummary, report: WebReport) -> dict[str, Any]:
    """What `--json` prints for a scored folder: per-attempt results, totals, the report."""
    return {
        "output_dir": summary.output_dir,
        "evaluator": summary.evaluator.model_dump(),
        "tasks": [{"task_id": r.task_id, "trial": r.trial, "score": r.score,
                   "status": str(r.status)} for r in summary.tasks],
        "totals": summary.totals.model_dump(),
        "report": report.model_dump(mode="json"),
    }


def print_report(console: Console, summary: WebEvalSummary, report: WebReport,
                 title: str | None = None) -> None:
    """The scored folder's tables (per site, failure modes, totals) under TITLE (default: the
    folder scored)."""
    from rich.table import Table

    from benchwright.llm.pricing import format_cost
    from benchwright.web.scorecard.figures import pct

    table = Table(title=title or f"WebArena Verified  {summary.output_dir}",
                  title_justify="left", show_edge=False)
    for name in ("site", "tasks", "pass rate [95% CI]", "steps", "tokens", "cost $", "time s"):
        table.add_column(name, justify="left" if name == "site" else "right", no_wrap=True)
    for row in report.per_site:
        table.add_row(row.site, str(row.n_tasks), pct(row.pass_rate), _num(row.avg_steps),
                      _num(row.avg_tokens, 0), format_cost(row.avg_cost_usd, dollar=False),
                      _num(row.avg_duration_s))
    table.add_row("all", str(report.n_tasks), pct(report.overall), "", "", "", "",
                  end_section=True)
    console.print(table)
    console.print(_footer(summary, report), soft_wrap=True)


def _footer(summary: WebEvalSummary, report: WebReport) -> str:
    from benchwright.stats.estimates import verdict_text
    from benchwright.web.scorecard.figures import pct

    totals, view, ev = summary.totals, report.unpassable, summary.evaluator
    lines = [
        f"template macro average: {pct(report.macro)} over {report.macro.n_clusters} templates",
        f"without unpassable tasks ({len(view.flagged)} flagged): pass rate "
        f"{pct(view.pass_rate_excluding)}, macro {pct(view.macro_excluding)}",
        f"{totals.n_success} success, {totals.n_failure} failure, {totals.n_error} error "
        f"over {totals.n_attempts} attempts   agent statuses: "
        + ", ".join(f"{k} {v}" for k, v in report.failure_modes.agent_status.items()),
        f"[dim]webarena-verified {ev.version}  code {ev.evaluator_checksum[:12]}  "
        f"data {ev.data_checksum[:12]}[/]"]
    comp = report.comparison
    if comp is not None:
        lines.append(f"against {comp.baseline_dir} ({comp.n_paired} tasks paired): "
                     f"{100 * comp.difference.value:+.1f} points [{100 * comp.difference.low:+.1f}"
                     f", {100 * comp.difference.high:+.1f}] -> [bold]"
                     f"{verdict_text(comp.verdict, comp.n_paired, 'tasks', comp.difference)}[/]")
    return "\n".join(lines)


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _site(name: str | None) -> Site | None:
    from benchwright.web.sites.config import Site

    if name is None:
        return None
    site = Site.parse(name)
    if site is None:
        raise UserInputError(f"--site: unknown site {name!r}",
                             hint=f"known sites: {', '.join(s.value for s in Site)}")
    return site


def _control_targets(config: WebEnvConfig, name: str | None) -> list[Site]:
    """--site, else every configured site."""
    chosen = _site(name)
    sites = [chosen] if chosen is not None else config.configured()
    if not sites:
        raise UserInputError("no site to act on", hint="pass --site S, or configure sites with "
                             "--config ENV.yaml or BENCHWRIGHT_WEB_<SITE>_URL")
    return sites


SiteOpt = Annotated[str | None, typer.Option(
    "--site", help="shopping, shopping_admin, reddit, gitlab, wikipedia or map (default: every "
    "configured site).")]
TimeoutOpt = Annotated[float, typer.Option(callback=seconds(MAX_START_TIMEOUT_S),
                                            help="Seconds to wait for a site to be ready.")]


@env_app.command("status")
def env_status_cmd(
    site: Annotated[str | None, typer.Option(
        "--site", help="Only this site (default: the configured ones, else all).")] = None,
    config: ConfigOpt = None,
    timeout: Annotated[float, typer.Option(callback=seconds(MAX_HEALTH_TIMEOUT_S),
                                           help="HTTP timeout per site, seconds.")] = 3.0,
    as_json: JsonOpt = False,
) -> None:
    """Health-check each site over HTTP: up or down, status code, latency."""
    from benchwright.web.sites.config import load_web_config
    from benchwright.web.sites.control import site_status

    chosen = _site(site)
    _print_health(site_status(load_web_config(config), [chosen] if chosen else None, timeout),
                  as_json)


def _health_table(results: list[SiteHealth]) -> Table:
    from rich.table import Table

    from benchwright.web.sites.control import SiteState

    table = Table(show_edge=False)
    for name in ("site", "url", "state", "http", "latency ms", "detail"):
        table.add_column(name)
    for r in results:
        state = f"[green]{r.state}[/]" if r.state is SiteState.UP else f"[red]{r.state}[/]"
        table.add_row(r.site, r.url, state, str(r.http_status or "-"),
                      _num(r.latency_ms), r.detail or "")
    return table


@env_app.command("start")
def env_start_cmd(site: SiteOpt = None, config: ConfigOpt = None,
                  timeout: TimeoutOpt = 120.0, as_json: JsonOpt = False) -> None:
    """Start the site's container (unless it runs) and wait until it answers (Docker or podman)."""
    from benchwright.web.sites.control import start_site

    _wait_for_each(start_site, site, config, timeout, as_json)


@env_app.command("stop")
def env_stop_cmd(site: SiteOpt = None, config: ConfigOpt = None,
                 as_json: JsonOpt = False) -> None:
    """Remove the site's container (Docker or podman)."""
    from benchwright.web.sites.config import load_web_config
    from benchwright.web.sites.control import stop_site

    env_config = load_web_config(config)
    stopped = []
    for target in _control_targets(env_config, site):
        stop_site(env_config, target)
        stopped.append(str(target))
        if not as_json:
            typer.echo(f"stopped {target}")
    if as_json:
        typer.echo(json.dumps({"stopped": stopped}, indent=2))


@env_app.command("reset")
def env_reset_cmd(site: SiteOpt = None, config: ConfigOpt = None,
                  timeout: TimeoutOpt = 120.0, as_json: JsonOpt = False) -> None:
    """Recreate the site's container in its initial state and wait for it (Docker or podman)."""
    from benchwright.web.sites.control import reset_site

    _wait_for_each(reset_site, site, config, timeout, as_json)


def _wait_for_each(act: Callable[[WebEnvConfig, Site, float], SiteHealth], site: str | None,
                   config: Path | None, timeout: float, as_json: bool) -> None:
    """`act` on --site (else every configured site), each waited for; their health shown."""
    from benchwright.web.sites.config import load_web_config

    env_config = load_web_config(config)
    _print_health([act(env_config, s, timeout) for s in _control_targets(env_config, site)],
                  as_json)


def _print_health(results: list[SiteHealth], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json") for r in results], indent=2))
    else:
        from rich.console import Console

        Console().print(_health_table(results))


@tasks_app.command("list")
def tasks_list_cmd(
    task_ids: Annotated[str | None, typer.Option(help="Ids and ranges: 0-50,77.")] = None,
    sites: Annotated[str | None, typer.Option(help="Tasks touching any of: shopping,reddit.")]
    = None,
    template: Annotated[int | None, typer.Option(
        min=0, max=MAX_TEMPLATE_ID, help="Only this intent template id.")] = None,
    subset: Annotated[SubsetChoice | None, typer.Option(help="hard or non-hard.")] = None,
    suite: Annotated[str, typer.Option(
        metavar="NAME|FILE", help="webarena-verified, local, or a tasks JSON file in the "
        "WebArena Verified format (as `run web --suite`).")] = WEBARENA_SUITE,
    as_json: JsonOpt = False,
    python: PythonOpt = None,
) -> None:
    """List a suite's tasks, filtered; known-unpassable ones are flagged."""
    from rich.console import Console

    from benchwright.web.evaluation.tasks import (
        Subset,
        TaskFilter,
        load_env_dataset,
        parse_sites,
        parse_task_ids,
        require_known_ids,
        select,
    )
    from benchwright.web.trials.suites import WEBARENA, open_suite

    task_filter = TaskFilter(task_ids=parse_task_ids(task_ids) if task_ids is not None else None,
                             sites=parse_sites(sites) if sites is not None else None,
                             template_id=template,
                             subset=None if subset is None else Subset(subset.value))
    dataset = load_env_dataset(python) if suite == WEBARENA else open_suite(suite).dataset
    if subset is not None and not any(dataset.subsets.values()):
        raise UserInputError(f"the suite {suite} has no subsets",
                             hint="--subset is for webarena-verified's tasks")
    require_known_ids(dataset, task_filter.task_ids)
    chosen = select(dataset, task_filter)
    hard = dataset.subsets.get(Subset.HARD, frozenset())
    if as_json:
        typer.echo(json.dumps([_task_json(t, t.task_id in hard) for t in chosen], indent=2))
        return
    Console().print(_tasks_table(chosen, hard))


def _task_json(task: WebTask, hard: bool) -> dict[str, Any]:
    return {"task_id": task.task_id, "sites": [str(s) for s in task.sites],
            "intent_template_id": task.intent_template_id, "task_type": str(task.task_type),
            "expected_status": task.expected_status, "hard": hard,
            "unpassable": task.unpassable, "start_urls": list(task.start_urls),
            "intent": task.intent}


def _tasks_table(tasks: list[WebTask], hard: frozenset[int]) -> Table:
    from rich.table import Table

    table = Table(title=f"{len(tasks)} tasks", title_justify="left", show_edge=False)
    for name in ("id", "sites", "template", "type", "hard", "unpassable", "intent"):
        table.add_column(name, justify="right" if name in ("id", "template") else "left")
    for t in tasks:
        intent = t.intent if len(t.intent) <= 60 else t.intent[:57] + "..."
        table.add_row(str(t.task_id), ",".join(t.sites), str(t.intent_template_id),
                      str(t.task_type), "hard" if t.task_id in hard else "",
                      str(t.unpassable or ""), intent)
    return table


def main() -> None:
    """Run this app alone (`python -m benchwright.cli.web_cmd`)."""
    run_app(app, prefix=("web",))


__all__ = ["app", "main"]

if __name__ == "__main__":
    main()
