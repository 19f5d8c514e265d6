"""The trial models have one definition, and the web runs import without browser-use."""

import subprocess
import sys

from benchwright.web.browser import trial_models
from benchwright.web.trials import models

BLOCKED = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("browser_use", "websockets", "cdp_use"):
            raise ImportError(name)
sys.meta_path.insert(0, Block())
import benchwright.cli.run_web_cmd
import benchwright.web.trials.runner
import benchwright.web.trials.browser_runner
"""


def test_runs_use_the_browser_models() -> None:
    for name in ("AgentName", "AgentSpec", "TrialOutcome", "TrialRequest", "TrialStatus"):
        assert getattr(models, name) is getattr(trial_models, name)


def test_runs_import_without_browser_use() -> None:
    done = subprocess.run([sys.executable, "-c", BLOCKED], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
