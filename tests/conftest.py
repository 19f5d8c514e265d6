"""Test tiers (tests/helpers/tiers.py) and the fixtures every test folder may use: the bundled
problems. Shared helpers (functions, constants) live in tests/helpers/, never here nor in a test
module.

A plain `pytest` runs the fast tier: tests marked (or found to need) sandbox, browser, ray, e2e or
container are deselected, and the summary says how many. `--all-tiers` (or any `-m`) runs them
too; so does scripts/check, the README's test command. While each test runs, a guard fails it if
it starts bubblewrap, Chromium, Ray, the CLI or a container engine without the tier's marker.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.coding.problems.examples import example_problem_dir

# old spellings (`from tests.conftest import run_cli`) for branches begun before tests/helpers
from tests.helpers import CONFTEST, FIXTURES, run_cli, tiers, write_problem  # noqa: F401
from tests.helpers.cli_forks import stop_zygotes

PROCESSES = tiers.ProcessLog()
GROUPED_SESSION_FIXTURES = {"runs"}
"""Session fixtures worth making once: their tests share one xdist worker (tests/view's runs)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--all-tiers", action="store_true",
                     help="run every tier (sandbox, browser, ray, e2e, container), not only the "
                     "fast one")


def pytest_configure(config: pytest.Config) -> None:
    for tier in tiers.TIERS:
        config.addinivalue_line("markers", f"{tier}: {tiers.DESCRIPTIONS[tier]}")
    config.addinivalue_line("markers", "slow: old spelling, kept for branches begun before the "
                            "tiers: say which (sandbox, browser, ray, e2e); out of the fast tier")
    # pytest-xdist declares it too; declared here so that a run without xdist installed (a
    # developer's plain `pytest`) does not stop on --strict-markers
    config.addinivalue_line("markers", "xdist_group(name): tests that run on one xdist worker")
    PROCESSES.install()
    _restore_sigint()


def _restore_sigint() -> None:
    """A suite started in the background of a non-interactive shell (`cmd &`, nohup) inherits
    SIGINT ignored, and so would every CLI a test starts: the Ctrl-C tests would then see a run
    that cannot be interrupted. Tests start from the default, however the suite was started."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _fixture_funcs(item: pytest.Item) -> list[object]:
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else []
    return [d.func for group in defs for d in group]


def _group(item: pytest.Item) -> str | None:
    """Tests sharing a costly module or session fixture of tests/ run on one xdist worker, which
    then makes it once (an xdist worker makes its own copy of every such fixture)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for name, defs in sorted(info.name2fixturedefs.items()):
        own = [d for d in defs if tiers._own(d.func)]
        if own and own[-1].scope == "session" and name in GROUPED_SESSION_FIXTURES:
            return name
    for name, defs in sorted(info.name2fixturedefs.items()):
        own = [d for d in defs if tiers._own(d.func)]
        if own and own[-1].scope == "module" and name != "problems_dir":
            return item.nodeid.split("::")[0]
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    fast: list[pytest.Item] = []
    slow: list[pytest.Item] = []
    for item in items:
        marked = {m.name for m in item.iter_markers()} & set(tiers.TIERS)
        for tier in sorted(tiers.reached_tiers([getattr(item, "function", None),
                                                *_fixture_funcs(item)]) - marked):
            item.add_marker(tier)
        marked = {m.name for m in item.iter_markers()} & set(tiers.TIERS)
        for tier in sorted(marked):
            why = tiers.missing_prerequisite(tier)
            if why:
                item.add_marker(pytest.mark.skip(reason=why))
        group = _group(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
        (slow if marked or item.get_closest_marker("slow") else fast).append(item)
    items[:] = tiers.costliest_first(items)
    if config.getoption("all_tiers") or config.getoption("markexpr") or not slow:
        return
    config.hook.pytest_deselected(items=slow)
    kept = set(fast)
    items[:] = [item for item in items if item in kept]
    config.stash[_DESELECTED] = len(slow)


_DESELECTED = pytest.StashKey[int]()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config
                            ) -> None:
    deselected = config.stash.get(_DESELECTED, 0)
    if deselected:
        terminalreporter.write_line(
            f"fast tier only: {deselected} tests of the slower tiers ({', '.join(tiers.TIERS)}) "
            "were deselected; `pytest --all-tiers` (or scripts/check) runs every tier")


def pytest_sessionfinish(session: pytest.Session) -> None:
    stop_zygotes()  # an xdist worker may end without running atexit


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    PROCESSES.started.clear()
    PROCESSES.recording = True
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    try:
        result = yield
    finally:
        PROCESSES.recording = False
    marked = {m.name for m in item.iter_markers()}
    missing = tiers.missing_tiers(PROCESSES.started, marked)
    if missing:
        pytest.fail("test tiers (tests/helpers/tiers.py): this test " + "; ".join(missing)
                    + ". Mark it (or its module's pytestmark), or start it through a helper "
                    "tagged @starts(...)", pytrace=False)
    return result


@pytest.fixture
def kv_server() -> Path:
    return example_problem_dir("kv_server")


@pytest.fixture
def ledger_cli() -> Path:
    return example_problem_dir("ledger_cli")


@pytest.fixture(scope="module")
def problems_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled ledger_cli, cut to its first checkpoint (agents' end-to-end tests)."""
    import shutil

    import yaml

    root = tmp_path_factory.mktemp("problems")
    target = root / "ledger_cli"
    shutil.copytree(example_problem_dir("ledger_cli"), target)
    config = yaml.safe_load((target / "config.yaml").read_text())
    config["checkpoints"] = {"checkpoint_1": config["checkpoints"]["checkpoint_1"]}
    (target / "config.yaml").write_text(yaml.safe_dump(config))
    return root


@pytest.fixture(scope="session")
def docker_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """podman's Docker API for the session, in this process's environment (DOCKER_HOST): the
    docker CLI, and so `--runtime docker`, drive podman through it."""
    from tests.helpers.docker_api import podman_docker_api

    with podman_docker_api(tmp_path_factory.mktemp("docker-api")) as env:
        saved = {key: os.environ.get(key) for key in env}
        os.environ.update(env)
        try:
            yield env
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
