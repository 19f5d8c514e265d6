"""An agent attacking the Harbor verifier's channels (docs/security.md): a daemon left behind that
rewrites /logs/verifier/reward.json after the verifier has written it, and one that copies /tests
while a verifier runs, for the next step's agent to read. Under Harbor's default ("shared")
both work: the daemon lives on in the one container the verifier also runs in. Here both get
nothing: the agent's container has ended before the verifier starts, the verifier's container
(and its /tests) never reaches the next step, and the reward is read from a host folder only
the verifier's container had."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.harbor_tasks import write_task

pytestmark = [pytest.mark.container, pytest.mark.e2e]

DAEMON = r"""
if [ ! -e /app/.daemon ]; then
  touch /app/.daemon
  nohup bash -c 'while true; do
      mkdir -p /logs/verifier /app/stolen
      cp -r /tests/. /app/stolen/ 2>/dev/null
      echo "{\"reward\": 1, \"leak\": 0}" > /logs/verifier/reward.json 2>/dev/null
      sleep 0.05
    done' > /dev/null 2>&1 &
fi
echo wrong > /app/answer.txt
"""
# The verifier: reward 0 (the answer is wrong), leak 1 when an earlier step's tests reached the
# agent's files; it lingers so that a live daemon would overwrite its reward.
VERIFY = r"""#!/bin/bash
if [ -e /app/stolen/test.sh ]; then leak=1; else leak=0; fi
if [ "$(cat /app/answer.txt 2>/dev/null)" = "right" ]; then r=1; else r=0; fi
echo "{\"reward\": $r, \"leak\": $leak}" > /logs/verifier/reward.json
sleep 2
"""


def test_a_daemon_gets_neither_the_reward_nor_the_tests(tmp_path: Path, image: str) -> None:
    files = {"instruction.md": "two steps\n"}
    for step in ("a", "b"):
        files[f"steps/{step}/instruction.md"] = "write right into /app/answer.txt\n"
        files[f"steps/{step}/tests/test.sh"] = VERIFY
    task = write_task(tmp_path, "attack", """\
        schema_version = "1.4"
        [task]
        name = "tests/attack"
        [environment]
        workdir = "/app"
        [[steps]]
        name = "a"
        [[steps]]
        name = "b"
        """, image=image, files=files)
    done = subprocess.run([sys.executable, "-m", "benchwright", "run", "harbor", "--tasks",
                           str(task), "--out", str(tmp_path / "r"), "--agent", "command",
                           "--agent-command", DAEMON], capture_output=True, text=True,
                          timeout=1800, check=False)
    assert done.returncode == 0, done.stderr
    [record] = [json.loads(line) for line in (tmp_path / "r" / "trials.jsonl").read_text()
                .splitlines()]
    assert [s["rewards"] for s in record["steps"]] == [{"reward": 0.0, "leak": 0.0}] * 2
    assert record["rewards"] == {"reward": 0.0, "leak": 0.0}
