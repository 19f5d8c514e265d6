"""The test tiers (tests/helpers/tiers.py, tests/conftest.py): the guard fails a test that starts
bubblewrap, Chromium, Ray, the CLI or a container engine without the tier's marker; what a test
uses marks it; a plain `pytest` runs the fast tier and says how many it left out; the house rules
of tests/ hold."""

from __future__ import annotations

import ast
import sys
from typing import NamedTuple

import pytest

from tests.helpers import ROOT
from tests.helpers.tiers import costliest_first, tier_of_process

pytest_plugins = ["pytester"]

INNER_CONFTEST = "from tests.conftest import *  # noqa: F403 (the suite's hooks and fixtures)\n"
STARTS_BWRAP = '''
import subprocess
import pytest

def _bwrap(tmp_path):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\\nexit 0\\n")
    fake.chmod(0o755)
    subprocess.run([str(fake), "--version"], check=True)

def test_unmarked(tmp_path):
    _bwrap(tmp_path)

@pytest.mark.sandbox
def test_marked(tmp_path):
    _bwrap(tmp_path)

def test_fast():
    pass
'''
STARTS_PODMAN = STARTS_BWRAP.replace('"bwrap"', '"podman"').replace(
    "mark.sandbox", "mark.container")
USES_THE_CLI = '''
from tests.helpers import run_cli

def _helper():
    return run_cli("--version")

def test_through_a_helper():
    assert _helper().returncode == 0

def test_fast():
    pass
'''


@pytest.fixture
def inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makeconftest(INNER_CONFTEST)
    return pytester


@pytest.mark.parametrize(("argv", "tier"), [
    (["bwrap", "--die-with-parent", "true"], "sandbox"),
    (["/usr/bin/bwrap"], "sandbox"),
    (["/usr/bin/chromium", "--headless"], "browser"),
    (["/usr/bin/bwrap", "--", "/usr/bin/setpriv", "--", "/usr/bin/chromium"], "browser"),
    (["/x/playwright/driver/node", "run-driver"], "browser"),
    (["unshare", "-n", "sh", "-c", "ip link set lo up"], "ray"),
    (["/venv/bin/ray", "start", "--head"], "ray"),
    ([sys.executable, "-m", "benchwright", "run", "coding"], "e2e"),
    (["/venv/bin/benchwright", "report"], "e2e"),
    (["/usr/bin/podman", "run", "--rm", "img"], "container"),
    (["docker", "ps"], "container"),
    ([sys.executable, "-m", "pytest"], None),
    (["git", "status"], None),
])
def test_each_slow_process_has_its_tier(argv: list[str], tier: str | None) -> None:
    assert tier_of_process(None, argv) == tier


def test_the_guard_fails_an_unmarked_test_that_starts_bwrap(inner: pytest.Pytester) -> None:
    inner.makepyfile(test_inner=STARTS_BWRAP)
    result = inner.runpytest_subprocess("--all-tiers", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*_ test_unmarked _*",
                                 "*started `*bwrap --version` without @pytest.mark.sandbox*"])


def test_a_plain_run_is_the_fast_tier_and_says_what_it_left_out(inner: pytest.Pytester) -> None:
    inner.makepyfile(test_inner=STARTS_BWRAP)
    result = inner.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1, deselected=1)  # the unmarked one is caught
    result.stdout.fnmatch_lines(["fast tier only: 1 tests of the slower tiers*--all-tiers*"])
    marked = inner.runpytest_subprocess("-p", "no:cacheprovider", "-m", "sandbox")
    marked.assert_outcomes(passed=1, deselected=2)


def test_a_test_calling_the_cli_through_a_helper_is_marked_e2e(inner: pytest.Pytester) -> None:
    inner.makepyfile(test_inner=USES_THE_CLI)
    result = inner.runpytest_subprocess("-p", "no:cacheprovider", "-m", "e2e")
    result.assert_outcomes(passed=1, deselected=1)
    fast = inner.runpytest_subprocess("-p", "no:cacheprovider")
    fast.assert_outcomes(passed=1, deselected=1)


def _test_files() -> list[ast.Module]:
    return [ast.parse(p.read_text(), str(p)) for p in sorted((ROOT / "tests").rglob("*.py"))
            if "fixtures" not in p.relative_to(ROOT / "tests").parts]


def _imported(tree: ast.Module) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_no_test_imports_from_a_test_module_or_a_conftest() -> None:
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if "fixtures" in path.relative_to(ROOT / "tests").parts or path.name == "conftest.py":
            continue
        modules = _imported(ast.parse(path.read_text(), str(path)))
        wrong = {m for m in modules if m.startswith("tests.")
                 and m.split(".")[-1].startswith(("test_", "conftest"))}
        assert not wrong, f"{path}: import shared helpers from tests/helpers, not {wrong}"


def test_the_bwrap_check_is_written_once() -> None:
    needle = "which(" + '"bwrap")'
    written = [p for p in sorted((ROOT / "tests").rglob("*.py"))
               if "fixtures" not in p.relative_to(ROOT / "tests").parts
               and needle in p.read_text() and p.name != "tiers.py"]
    assert written == [], "mark the test @pytest.mark.sandbox (it skips without bwrap)"


def test_tests_mirror_src() -> None:
    """Every test folder but the house's own (helpers, fixtures, security) is a folder of
    src/benchwright."""
    src = ROOT / "src" / "benchwright"
    for folder in sorted(p for p in (ROOT / "tests").rglob("*") if p.is_dir()):
        rel = folder.relative_to(ROOT / "tests")
        if rel.parts[0] in ("helpers", "fixtures", "security") or "__pycache__" in rel.parts:
            continue
        mirrored = (src / rel).is_dir() or (src / rel).with_suffix(".py").is_file()
        assert mirrored, f"tests/{rel} mirrors no folder (or module) of src/benchwright"


def test_the_guard_fails_an_unmarked_test_that_starts_a_container_engine(
        inner: pytest.Pytester) -> None:
    inner.makepyfile(test_inner=STARTS_PODMAN)
    result = inner.runpytest_subprocess("--all-tiers", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*_ test_unmarked _*",
                                 "*started `*podman --version` without @pytest.mark.container*"])


class _Mark(NamedTuple):
    name: str


class _Item:
    def __init__(self, nodeid: str, *tiers_: str) -> None:
        self.nodeid = nodeid
        self.marks = [_Mark(name) for name in tiers_]

    def iter_markers(self) -> list[_Mark]:
        return self.marks


def test_the_costliest_modules_come_first_each_kept_together() -> None:
    items = [_Item("tests/a.py::fast"), _Item("tests/a.py::uses_cli", "e2e"),
             _Item("tests/b.py::one"), _Item("tests/c.py::web", "browser", "e2e"),
             _Item("tests/c.py::plain"), _Item("tests/d.py::cluster", "ray"),
             _Item("tests/e.py::x")]
    order = [item.nodeid for item in costliest_first(items)]
    assert order == ["tests/d.py::cluster", "tests/c.py::web", "tests/c.py::plain",
                     "tests/a.py::fast", "tests/a.py::uses_cli", "tests/b.py::one",
                     "tests/e.py::x"]
