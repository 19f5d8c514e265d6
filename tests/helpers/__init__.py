"""Helpers shared by the tests (the one place for them: a test module never imports from another
test module or from a conftest.py). The common ones are re-exported here:

- `ROOT`, `FIXTURES`: the repository and tests/fixtures/;
- `run_cli(*args)`: `benchwright ARGS` as a subprocess (marks the test `e2e`, see tests/tiers.py);
- `write_problem(root, config, files)` and `CONFTEST`, the conftest.py of a throwaway problem.

Area helpers have their own module: coding_runs (coding run folders written directly),
web_suites (local web task suites), view_runs (the viewer's runs), probes (hostile problems and
runs), evil_package, testsite and cdp_driver (web pages and Chromium), processes (the process tree a
test started), executor_jobs (jobs spawned workers import).
"""

from tests.helpers.cli import run_cli
from tests.helpers.paths import FIXTURES, ROOT
from tests.helpers.problems import CONFTEST, write_problem

__all__ = ["CONFTEST", "FIXTURES", "ROOT", "run_cli", "write_problem"]
