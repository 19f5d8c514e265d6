"""The CLI as a user runs it: a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.tiers import starts


@starts("e2e")
def run_cli(*args: str, env: dict[str, str] | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run `benchwright ARGS` as a user would, and capture everything."""
    return subprocess.run([sys.executable, "-m", "benchwright", *args], capture_output=True,
                          text=True, env=env or dict(os.environ), cwd=cwd, timeout=600)


@starts("e2e")
def run_real_web_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`benchwright ARGS` with the web track's real trial runner (whatever the environment says)."""
    env = {k: v for k, v in os.environ.items() if k != "BENCHWRIGHT_WEB_TRIAL_RUNNER"}
    return subprocess.run([sys.executable, "-m", "benchwright", *args], capture_output=True,
                          text=True, timeout=timeout, env=env)
