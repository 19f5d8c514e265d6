"""Test tiers by cost: which tests start bubblewrap, Chromium, Ray or the CLI (tests/conftest.py
applies the markers, deselects the slower tiers from a plain `pytest` and guards the rest).

- `sandbox`: runs code in bubblewrap (skipped where bwrap is missing);
- `browser`: starts Chromium (skipped without /usr/bin/chromium);
- `ray`: starts a Ray cluster in a private network namespace (skipped unless root with unshare);
- `e2e`: runs the CLI as a subprocess;
- `container`: starts podman or docker (skipped where podman is missing).

A test gets a tier from its own marker (or its module's `pytestmark`), or from what it uses: a
helper or fixture tagged with `@starts(...)` or a library entry point in STARTERS, followed
through the test's fixtures and through the functions of tests/ it calls. While a test runs, an
audit hook sees every process it starts; `missing_tiers` names the ones its markers lack (the
guard).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import types
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

TIERS = ("sandbox", "browser", "ray", "e2e", "container")
"""The slower tiers; a test with none of these markers is in the fast tier."""

DESCRIPTIONS = {
    "sandbox": "runs code in a bubblewrap sandbox (seconds each)",
    "browser": "starts Chromium (headless, the system's)",
    "ray": "starts a real Ray cluster in a private network namespace (needs root)",
    "e2e": "runs the benchwright CLI as a subprocess",
    "container": "starts podman or docker (containers, images; seconds each)",
}

STARTERS: dict[str, dict[str, tuple[str, ...]]] = {
    # library entry points that start such processes in the test's own process, by top package and
    # name (so a module moved inside its package still counts)
    "benchwright": {"BwrapRuntime": ("sandbox",), "grade_checkpoint": ("sandbox",),
                    "RayLab": ("ray",), "SharedBrowser": ("browser",),
                    "ContainerRuntime": ("container",), "ensure_image": ("container",),
                    "default_image": ("container",), "find_engine": ("container",),
                    "site_image": ("container",)},
    "playwright": {"sync_playwright": ("browser",), "async_playwright": ("browser",)},
}

F = TypeVar("F", bound=Callable[..., Any])


def starts(*tiers: str) -> Callable[[F], F]:
    """Tag a helper (function or class) with the tiers of what it starts."""
    unknown = set(tiers) - set(TIERS)
    assert not unknown, f"unknown tiers {unknown}: use {TIERS}"

    def tag(helper: F) -> F:
        helper.__benchwright_tiers__ = tuple(tiers)  # type: ignore[attr-defined]
        return helper

    return tag


# --- what a test uses --------------------------------------------------------------------------

def _module(obj: Any) -> str:
    try:
        return str(getattr(obj, "__module__", "") or "")
    except Exception:  # an object whose attributes do anything at all (a mock, a proxy)
        return ""


def _own(obj: Any, modules: Collection[str] = ()) -> bool:
    """Written in tests/ or in one of these modules (so worth reading through)."""
    module = _module(obj)
    return module != __name__ and (module.startswith("tests") or module in modules)


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _used(func: Any) -> Iterator[Any]:
    """The globals a function of tests/ names (and names' attributes on modules it imported)."""
    code = getattr(func, "__code__", None)
    namespace = getattr(func, "__globals__", {})
    if code is None:
        return
    names = {name for c in _codes(code) for name in c.co_names}
    for name in names:
        # a name the function imports itself is a module's name in co_names (`import a.b`)
        value = namespace.get(name, sys.modules.get(name) if "." in name else None)
        if isinstance(value, types.ModuleType):
            yield from (getattr(value, attr) for attr in names if hasattr(value, attr))
        elif value is not None:
            yield value


def _members(cls: type) -> Iterator[Any]:
    for value in vars(cls).values():
        if isinstance(value, staticmethod | classmethod):
            value = value.__func__
        elif isinstance(value, property):
            value = value.fget
        if callable(value):
            yield value


def _direct(obj: Any) -> set[str]:
    try:
        tags = set(getattr(obj, "__benchwright_tiers__", ()))
        package = str(getattr(obj, "__module__", "") or "").split(".")[0]
        name = str(getattr(obj, "__qualname__", ""))
    except Exception:  # an object whose attributes do anything at all (a mock, a proxy)
        return set()
    return tags | set(STARTERS.get(package, {}).get(name, ()))


def reached_tiers(roots: Iterable[Any]) -> set[str]:
    """The tiers of what these functions use, followed through the functions of tests/."""
    found: set[str] = set()
    seen: set[int] = set()
    todo = [root for root in roots if root is not None]
    modules = {_module(root) for root in todo}
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        found |= _direct(obj)
        if not _own(obj, modules):
            continue
        if isinstance(obj, type):
            todo.extend(_members(obj))
        else:
            todo.extend(_used(getattr(obj, "__wrapped__", obj)))
            found |= _written_starters(getattr(obj, "__wrapped__", obj))
    return found


def _written_starters(func: Any) -> set[str]:
    """The tiers a function's own code shows: STARTERS it imports itself (`from benchwright.x
    import RayLab` inside it), read from its names without importing anything, and a command line
    `[sys.executable, "-m", "benchwright", ...]` written out."""
    code = getattr(func, "__code__", None)
    if code is None:
        return set()
    codes = list(_codes(code))
    names = {name for c in codes for name in c.co_names}
    packages = {name.split(".")[0] for name in names} & set(STARTERS)
    found = {tier for package in packages for name in names
             for tier in STARTERS[package].get(name, ())}
    constants = {const for c in codes for const in c.co_consts if isinstance(const, str)}
    if {"-m", "benchwright"} <= constants:
        found.add("e2e")
    return found


# --- in what order (the costliest first) ------------------------------------------------------

COST_ORDER = ("ray", "browser", "container", "sandbox", "e2e")
"""The tiers from the costliest test: a test's rank is its costliest tier's place here."""


def _rank(item: Any) -> int:
    marked = {m.name for m in item.iter_markers()}
    return min((COST_ORDER.index(t) for t in marked if t in COST_ORDER), default=len(COST_ORDER))


def costliest_first(items: Sequence[Any]) -> list[Any]:
    """The test modules ordered by their costliest test (Ray first, the fast tier last), each
    module's tests kept together and in order (its module fixtures are made once). xdist hands
    out work in this order (scripts/check: --no-loadscope-reorder), so the long tests start
    early and short ones fill the end, instead of a long test ending the run alone."""
    modules: dict[str, list[Any]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    ranked = sorted(modules.values(), key=lambda tests: min(map(_rank, tests)))
    return [item for tests in ranked for item in tests]


# --- what a test starts (the guard) ------------------------------------------------------------

CHROMIUM_NAMES = {"chromium", "chromium-browser", "chrome", "google-chrome", "headless_shell"}
RAY_NAMES = {"ray", "raylet", "gcs_server"}
ENGINE_NAMES = {"podman", "docker"}


def _argv(args: Any) -> list[str]:
    if isinstance(args, str | bytes | os.PathLike):
        args = [args]
    return [os.fsdecode(a) if isinstance(a, bytes | os.PathLike) else str(a) for a in args or []]


def tier_of_process(executable: Any, args: Any) -> str | None:
    """The tier of starting this process, None for any other process."""
    argv = _argv(args)
    names = [Path(a).name for a in [*_argv(executable), *argv[:1]]]
    if "bwrap" in names:  # the trial browser runs in bubblewrap (web/browser/confinement.py)
        return "browser" if CHROMIUM_NAMES & {Path(a).name for a in argv} else "sandbox"
    if ENGINE_NAMES & set(names):
        return "container"
    if CHROMIUM_NAMES & set(names) or "run-driver" in argv[1:2]:  # Chromium, Playwright's driver
        return "browser"
    if RAY_NAMES & set(names) or (names[-1:] == ["unshare"] and "-n" in argv):
        return "ray"
    if "benchwright" in names or argv[1:3] == ["-m", "benchwright"]:
        return "e2e"
    return None


class ProcessLog:
    """The slow processes started in this process while a test runs (an audit hook, installed once:
    audit hooks cannot be removed)."""

    def __init__(self) -> None:
        self.started: list[tuple[str, str]] = []
        self.recording = False

    def install(self) -> None:
        sys.addaudithook(self._hook)

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.recording:
            return
        if event not in ("subprocess.Popen", "os.posix_spawn", "os.exec"):
            return
        executable, argv = args[0], args[1]
        tier = tier_of_process(executable, argv)
        if tier is not None:
            self.started.append((tier, " ".join(_argv(argv))[:200]))


def missing_tiers(started: Sequence[tuple[str, str]], marked: set[str]) -> list[str]:
    """One line per process started by a test whose tier its markers lack."""
    return [f"started `{command}` without @pytest.mark.{tier}"
            for tier, command in started if tier not in marked]


# --- what a tier needs -------------------------------------------------------------------------

def missing_prerequisite(tier: str) -> str | None:
    """Why this machine cannot run a tier's tests (None when it can)."""
    if tier == "sandbox" and shutil.which("bwrap") is None:
        return "bubblewrap is not installed (apt-get install bubblewrap)"
    if tier == "container" and shutil.which("podman") is None:
        return "podman is not installed (apt-get install podman runc)"
    if tier == "browser" and not Path("/usr/bin/chromium").exists():
        return "needs Debian's chromium (/usr/bin/chromium)"
    if tier == "browser" and shutil.which("bwrap") is None:  # the trial browser's confinement
        return "bubblewrap is not installed (apt-get install bubblewrap)"
    if tier == "ray":
        if os.geteuid() != 0 or shutil.which("unshare") is None:
            return "needs root and unshare (a private network namespace)"
        if importlib.util.find_spec("ray") is None:
            return "needs ray: pip install 'benchwright[ray]'"
    return None
