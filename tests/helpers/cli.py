"""The CLI as a user runs it: a process of its own (forked from a pre-imported CLI when one serves
the environment given, else a new interpreter: tests/helpers/cli_forks.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.cli_forks import run_forked
from tests.helpers.tiers import starts


@starts("e2e")
def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run `benchwright ARGS` as a user would (stdin empty), and capture everything."""
    env = env or dict(os.environ)
    return run_forked(list(args), env, cwd, timeout) or subprocess.run(
        [sys.executable, "-m", "benchwright", *args], capture_output=True, text=True, env=env,
        cwd=cwd, timeout=timeout, stdin=subprocess.DEVNULL)


@starts("e2e")
def run_real_web_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`benchwright ARGS` with the web track's real trial runner (whatever the environment says)."""
    env = {k: v for k, v in os.environ.items() if k != "BENCHWRIGHT_WEB_TRIAL_RUNNER"}
    return run_cli(*args, env=env, timeout=timeout)
