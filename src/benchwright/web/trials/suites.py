"""Where a web run's tasks and sites come from: a suite, found by name in the registry
(`benchwright.registry.WEB_SUITES`, plugins in the entry-point group `benchwright.web_suites`)
or given as a tasks file. A registered suite is a function (`--config` path or None) -> `Suite`:
its tasks, how its sites are opened (`opener`) and, for a benchmark of its own, how its trials are
scored (`scorer`; default the official WebArena Verified evaluator).

- `local`: the embedded suite (`benchwright.web.local_suite`), served on loopback for the run's
  duration, reset to its seed state in one call, with a reference action script per task.
- `webarena-verified`: the 812 official tasks against sites configured with `--config` or
  `BENCHWRIGHT_WEB_<SITE>_URL`; a reset recreates the site's container
  (`benchwright.web.sites.control`).
- a path to a tasks JSON file in the dataset format: tasks of your own against configured sites
  (no reset: such sites are yours to restore); scripts from `scripts/` beside the file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from benchwright.errors import UserInputError
from benchwright.registry import WEB_SUITES
from benchwright.web.evaluation.tasks import WebDataset, load_env_dataset, load_task_file
from benchwright.web.sites.config import Site, WebEnvConfig, load_web_config

if TYPE_CHECKING:
    from benchwright.web.evaluation.scoring import Scorer

LOCAL = "local"
WEBARENA = "webarena-verified"


class SuiteSession(Protocol):
    """The sites of a suite while a run uses them."""

    site_urls: dict[str, str]
    """Site name -> base URL."""

    def reset_scope(self, sites: frozenset[str]) -> frozenset[str]:
        """The sites a reset of `sites` touches (a suite may only reset everything)."""
        ...

    def reset(self, sites: frozenset[str]) -> frozenset[str]:
        """Put `sites` back in their initial state; returns every site that was reset."""
        ...


@dataclass
class Suite:
    """A suite's tasks, where its scripts are, and how to open its sites."""

    name: str
    """The name it is registered (and opened again) by, or the tasks file's path."""
    dataset: WebDataset
    """Its tasks."""
    dataset_file: Path | None
    """The tasks JSON the evaluator scores against; None for the official 812."""
    starts_clean: bool
    """Opening a session puts every site in its initial state."""
    scripts_dir: Path | None = None
    """Where `<task_id>.yaml` action scripts are."""
    env_config: WebEnvConfig = field(default_factory=WebEnvConfig)
    """Configured sites (suites that benchwright does not serve)."""
    opener: Callable[[], AbstractContextManager[SuiteSession]] | None = None
    """Opens its sites (a suite benchwright serves); None: the configured sites' URLs."""
    resettable: bool = False
    """Configured sites (no `opener`) are reset by recreating their containers (WebArena's)."""
    scorer: Scorer | None = None
    """Scores its trials offline; None: the official WebArena Verified evaluator."""

    def script(self, task_id: int, scripts_dir: Path | None = None) -> Path | None:
        """The task's action script, if there is one (from `scripts_dir` when given)."""
        folder = scripts_dir or self.scripts_dir
        if folder is None:
            return None
        path = folder / f"{task_id}.yaml"
        return path if path.is_file() else None

    @contextlib.contextmanager
    def session(self) -> Iterator[SuiteSession]:
        """The sites, ready for trials."""
        if self.opener is not None:
            with self.opener() as session:
                yield session
        else:
            yield _ConfiguredSession(self.env_config, resettable=self.resettable)


def open_suite(name: str, env_config: Path | None = None) -> Suite:
    """The suite called `name` (a registered suite, or a tasks JSON path)."""
    if name in WEB_SUITES:
        suite: Suite = WEB_SUITES.get(name)(env_config)
        return dataclasses.replace(suite, name=name)  # how a resume or a regrade finds it again
    path = Path(name)
    if not path.is_file():
        raise UserInputError(f"unknown suite {name!r}", hint=f"choose {', '.join(WEB_SUITES)} "
                             "or the path of a tasks JSON file in the WebArena Verified format")
    return Suite(name=str(path.resolve()), dataset=load_task_file(path),
                 dataset_file=path.resolve(), starts_clean=False,
                 env_config=load_web_config(env_config),
                 scripts_dir=path.resolve().parent / "scripts")


def open_webarena(env_config: Path | None = None) -> Suite:
    """WebArena Verified's 812 tasks against the sites `env_config` (and the environment) give."""
    return Suite(name=WEBARENA, dataset=load_env_dataset(), dataset_file=None,
                 starts_clean=False, env_config=load_web_config(env_config), resettable=True)


def _local_module() -> Any:
    return importlib.import_module("benchwright.web.local_suite")


def open_local(env_config: Path | None = None) -> Suite:
    """The embedded suite, served on loopback (`env_config` unused: benchwright serves it)."""
    module = _local_module()
    path = Path(module.dataset_path())
    return Suite(name=LOCAL, dataset=module.load_local_dataset(), dataset_file=path,
                 starts_clean=True, scripts_dir=Path(module.SCRIPTS_DIR), opener=_local_session)


class _LocalSession:
    """The local suite served in this process; its reset restores every site at once."""

    def __init__(self, served: Any) -> None:
        self._served = served
        self.site_urls: dict[str, str] = dict(served.site_urls)

    def reset_scope(self, sites: frozenset[str]) -> frozenset[str]:
        return frozenset(self.site_urls)

    def reset(self, sites: frozenset[str]) -> frozenset[str]:
        self._served.reset()
        return frozenset(self.site_urls)


@contextlib.contextmanager
def _local_session() -> Iterator[SuiteSession]:
    with _local_module().serve_suite() as served:
        yield _LocalSession(served)


class _ConfiguredSession:
    """Sites configured by URL; WebArena's are reset by recreating their containers."""

    def __init__(self, config: WebEnvConfig, resettable: bool) -> None:
        self._config = config
        self._resettable = resettable
        self.site_urls = {str(site): str(config.site(site).url) for site in config.configured()}

    def reset_scope(self, sites: frozenset[str]) -> frozenset[str]:
        return sites if self._resettable else frozenset()

    def reset(self, sites: frozenset[str]) -> frozenset[str]:
        if not self._resettable:
            return frozenset()
        from benchwright.web.sites.control import reset_site

        for name in sorted(sites):
            reset_site(self._config, Site(name))
        return sites


def require_sites(suite: Suite, site_urls: dict[str, str], task_sites: set[str]) -> None:
    """Every site the tasks touch has a URL, or a one-line error saying how to give one."""
    missing = sorted(task_sites - set(site_urls))
    if missing:
        names = ", ".join(f"BENCHWRIGHT_WEB_{m.upper()}_URL" for m in missing)
        raise UserInputError(f"no URL for site(s) {', '.join(missing)} of suite {suite.name}",
                             hint=f"pass --config ENV.yaml or set {names}")
