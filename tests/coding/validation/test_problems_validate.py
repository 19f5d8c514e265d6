"""`benchwright problems validate`: reference solutions graded under varied conditions.

The fixture problems are written here, small, each with one defect a real problem had: a test
that depends on the time zone, one that depends on the order of the test files, a data file that
is missing, a spec placeholder left in, and the next checkpoint's tests handed to the agent.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import textwrap
import time
from pathlib import Path

import pytest

from benchwright.coding.problems.examples import example_problem_dir, examples_dir
from tests.helpers import run_cli

pytestmark = pytest.mark.sandbox

CONFTEST = '''
import shlex
import subprocess

import pytest


def pytest_addoption(parser):
    parser.addoption("--entrypoint", action="store", required=True)
    parser.addoption("--checkpoint", action="store", required=True)


@pytest.fixture(scope="session")
def run(request):
    argv = shlex.split(request.config.getoption("--entrypoint"))
    return lambda *args: subprocess.run(argv + list(args), capture_output=True, text=True,
                                        timeout=20).stdout.strip()
'''

# The reference prints midnight of 1 January 1970 UTC in local time: right only where TZ is UTC.
LOCAL_TIME = "import time\nprint(time.strftime('%H:%M', time.localtime(0)))\n"


def write_problem(root: Path, name: str, files: dict[str, str], timeout: int = 20) -> Path:
    folder = root / name
    config = (f"name: {name}\nentry_file: tool\ntimeout: {timeout}\ncheckpoints:\n"
              "  checkpoint_1: {version: 1}\n  checkpoint_2: {version: 1}\n")
    for rel, text in {"config.yaml": config, "checkpoint_1.md": "# one\n",
                      "checkpoint_2.md": "# two\n", "tests/conftest.py": CONFTEST,
                      **files}.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def flaky_problem(root: Path) -> Path:
    """Checkpoint 1's test needs TZ=UTC; checkpoint 2's needs checkpoint 1's file to run first."""
    return write_problem(root, "flaky", {
        "solutions/checkpoint_1/tool.py": LOCAL_TIME,
        "solutions/checkpoint_2/tool.py": LOCAL_TIME,
        "tests/test_checkpoint_1.py": """
            from pathlib import Path

            def test_epoch_in_local_time(run):
                Path("/tmp/first-ran").write_text("yes")
                assert run() == "00:00"
            """,
        "tests/test_checkpoint_2.py": """
            from pathlib import Path

            def test_after_first_file():
                assert Path("/tmp/first-ran").exists()
            """,
    })


def leaky_problem(root: Path) -> Path:
    """A missing data file, a placeholder in a spec, checkpoint 2's tests in checkpoint 1's
    reference."""
    test_2 = """
        def test_two(run):
            assert run() == "ok"
        """
    return write_problem(root, "leaky", {
        "checkpoint_2.md": "# two\nRun it as {{ entry_command }}.\n",
        "solutions/checkpoint_1/tool.py": "print('ok')\n",
        "solutions/checkpoint_1/test_checkpoint_2.py": test_2,
        "solutions/checkpoint_2/tool.py": "print('ok')\n",
        "tests/test_checkpoint_1.py": """
            import json
            from pathlib import Path

            def test_cases_from_data(run):
                cases = json.loads((Path(__file__).parent / "data" / "cases.json").read_text())
                assert run() == cases["expected"]
            """,
        "tests/test_checkpoint_2.py": test_2,
    })


def findings(document: dict, problem: str, checkpoint: str) -> list[dict]:
    [found] = [c["findings"] for p in document["problems"] if p["problem"] == problem
               for c in p["checkpoints"] if c["checkpoint"] == checkpoint]
    return found


def test_bundled_problems_validate_clean() -> None:
    proc = run_cli("problems", "validate", str(examples_dir()), "--repeat", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "clean" in proc.stdout and "2/2" in proc.stdout  # repeats: 2 prove it as 3 did


def test_flaky_tests_are_flagged_and_named(tmp_path: Path) -> None:
    flaky_problem(tmp_path)
    proc = run_cli("problems", "validate", str(tmp_path), "--repeat", "3", "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    document = json.loads(proc.stdout)
    assert document["format"] == "benchwright.problems-validate/1"
    [tz] = findings(document, "flaky", "checkpoint_1")
    assert (tz["kind"], tz["test"]) == ("flaky", "test_checkpoint_1.py::test_epoch_in_local_time")
    assert "TZ" in tz["detail"] and "== '00:00'" in tz["detail"]  # the run and its message
    order = [f for f in findings(document, "flaky", "checkpoint_2")
             if f["test"] == "test_checkpoint_2.py::test_after_first_file"]
    assert [f["kind"] for f in order] == ["flaky"]
    assert "files reversed" in order[0]["detail"]


def test_the_table_names_the_flaky_test(tmp_path: Path) -> None:
    flaky_problem(tmp_path)
    proc = run_cli("problems", "validate", str(tmp_path / "flaky"), "--repeat", "2",
                   env={**os.environ, "COLUMNS": "80"})
    assert proc.returncode == 1
    # piped at 80 columns: each finding on a line of its own, progress, a one-line summary
    lines = [ln for ln in proc.stdout.splitlines() if "test_epoch_in_local_time" in ln]
    assert lines[0].startswith("flaky/checkpoint_1 flaky test_checkpoint_1.py::test_epoch")
    assert len([ln for ln in proc.stdout.splitlines() if ln.strip()]) < 20, proc.stdout
    assert "[1/4] flaky/checkpoint_1" in proc.stderr and "[4/4] " in proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("1 problem(s), 2 checkpoint(s) graded 2x: ")


def test_missing_data_placeholders_and_early_tests_are_flagged(tmp_path: Path) -> None:
    leaky_problem(tmp_path)
    proc = run_cli("problems", "validate", str(tmp_path), "--repeat", "2", "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    document = json.loads(proc.stdout)
    first = {f["kind"]: f for f in findings(document, "leaky", "checkpoint_1")}
    assert first["missing_data"]["detail"].endswith("data/cases.json is missing")
    assert first["missing_data"]["test"] == "test_checkpoint_1.py::test_cases_from_data"
    assert "reference_fails" in first
    second = {f["kind"]: f for f in findings(document, "leaky", "checkpoint_2")}
    assert "{{ entry_command }}" in second["placeholder"]["detail"]
    assert second["tests_visible_early"]["detail"].startswith(
        "solutions/checkpoint_1/test_checkpoint_2.py")


def needy_problem(root: Path) -> Path:
    """Checkpoint 1: a test near its 2 s timeout, one that needs the network, and a reference
    whose requirements.txt names a package that does not exist."""
    return write_problem(root, "needy", {
        "solutions/checkpoint_1/tool.py": "print('ok')\n",
        "solutions/checkpoint_1/requirements.txt": "benchwright-no-such-package-xyz==0.0.1\n",
        "solutions/checkpoint_2/tool.py": "print('ok')\n",
        "tests/test_checkpoint_1.py": """
            import time
            import urllib.request

            def test_slow(run):
                time.sleep(1.1)
                assert run() == "ok"

            def test_fetches_a_page():
                urllib.request.urlopen("http://example.com/", timeout=5)
            """,
        "tests/test_checkpoint_2.py": """
            def test_two(run):
                assert run() == "ok"
            """,
    }, timeout=2)


def test_slow_tests_network_needs_and_bad_requirements_are_flagged(tmp_path: Path) -> None:
    needy_problem(tmp_path)
    proc = run_cli("problems", "validate", str(tmp_path), "--repeat", "1", "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    first = findings(json.loads(proc.stdout), "needy", "checkpoint_1")
    kinds = {(f["kind"], f["test"]) for f in first}
    assert ("near_timeout", "test_checkpoint_1.py::test_slow") in kinds
    [slow] = [f for f in first if f["kind"] == "near_timeout"]
    assert slow["detail"].endswith("of a 2 s timeout")
    [network] = [f for f in first if f["kind"] == "network"]
    assert network["test"] == "test_checkpoint_1.py::test_fetches_a_page"
    assert "name resolution" in network["detail"] or "not known" in network["detail"]
    [requirements] = [f for f in first if f["kind"] == "requirements"]
    assert "benchwright-no-such-package-xyz" in requirements["detail"]
    assert not any(f["kind"] == "requirements"
                   for f in findings(json.loads(proc.stdout), "needy", "checkpoint_2"))


def kv_checkpoint_2(root: Path, name: str, old: bool) -> Path:
    """The bundled kv_server cut to its checkpoint 2, whose `test_expires_in` runs 40 times:
    with `old`, that test as it was before the fix (`<= 120.5`, no slack for rounding)."""
    folder = root / name
    shutil.copytree(example_problem_dir("kv_server"), folder)
    config = (folder / "config.yaml").read_text()
    config = config.replace("name: kv_server", f"name: {name}")
    (folder / "config.yaml").write_text(
        config[:config.index("checkpoints:")] + "checkpoints:\n  checkpoint_2: {version: 2}\n")
    tests = folder / "tests" / "test_checkpoint_2.py"
    text = tests.read_text().replace(
        "def test_expires_in(api, new_key):",
        "@pytest.mark.parametrize('attempt', range(40))\n"
        "def test_expires_in(api, new_key, attempt):")
    tests.write_text(text.replace(" + ROUNDING", "") if old else text)
    return folder


def test_kv_servers_old_float_test_is_flaky_under_the_shifted_clock(tmp_path: Path) -> None:
    """The failure seen in one run of nine (`120.50000000000011 <= 120.5`): `now + ttl - now`
    exceeds `ttl` when `now + ttl` crosses a power of two and rounds up, which happens to about
    one call in four there. Run 40 times per grading, the old test fails under the clock near
    2^k with certainty (0.77^40 < 1e-4); the fixed one (with its 1e-6 slack) never does."""
    from benchwright.coding.validation.conditions import clock_shift_available

    if not clock_shift_available():
        pytest.skip("no time namespaces here (unshare --time)")
    kv_checkpoint_2(tmp_path, "kv_old", old=True)
    kv_checkpoint_2(tmp_path, "kv_fixed", old=False)
    proc = run_cli("problems", "validate", str(tmp_path), "--repeat", "2", "--json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    document = json.loads(proc.stdout)
    assert findings(document, "kv_fixed", "checkpoint_2") == []
    old = [f for f in findings(document, "kv_old", "checkpoint_2")
           if f["test"].startswith("test_checkpoint_2.py::test_expires_in[")]
    assert old and {f["kind"] for f in old} <= {"flaky", "reference_fails"}
    # Under the shifted clock as a rule; under the usual one too when the machine's own uptime
    # lies within 120.5 s below a power of two (as on the fresh machine where it was first seen).
    assert all("<= 120.5" in f["detail"] for f in old)


@pytest.mark.parametrize("args", [
    ["/nonexistent/problems"],
    [str(examples_dir()), "--problem", "no_such_problem"],
    [str(examples_dir()), "--repeat", "0"],
])
def test_bad_input_exits_2(args: list[str]) -> None:
    proc = run_cli("problems", "validate", *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_shifted_clock_reads_just_below_a_power_of_two(tmp_path: Path) -> None:
    from benchwright.coding.validation.conditions import (
        ShiftedClockRuntime,
        clock_offset,
        clock_shift_available,
    )
    from benchwright.sandbox.bwrap import Limits, require_bwrap

    if not clock_shift_available():
        pytest.skip("no time namespaces here (unshare --time)")
    runtime = ShiftedClockRuntime(require_bwrap(), clock_offset(time.monotonic()))
    out = tmp_path / "out.txt"
    with out.open("wb") as stdout:
        result = runtime.run(["/usr/bin/python3", "-c", "import time; print(time.monotonic())"],
                             cwd=Path("/"), env={}, mounts=[], limits=Limits(), stdout=stdout)
    assert result.exit_code == 0
    seen = float(out.read_text())
    power = 1 << math.ceil(math.log2(seen))
    assert power - 120.5 <= seen < power  # where `now + 120.5 - now` may round past 120.5
