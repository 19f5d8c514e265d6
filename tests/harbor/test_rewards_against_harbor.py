"""Our reward rules against Harbor's own code (harbor 0.25, in the test's environment): the same
reward files, gates and steps give the same rewards, failures and trial rewards."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchwright.harbor.rewards import (
    VerifierFailed,
    min_reward_failure,
    read_rewards,
    trial_rewards,
)

pytestmark = pytest.mark.sandbox

FILES = ['{"reward": 1, "a": 0.5}', '{"reward": true}', '{"reward": "1"}', "{}", "[1]", "",
         '{"reward": NaN}', "1e999", "not json", '{"a": -2}', "1"]
GATES: list[tuple[dict[str, float] | None, float | dict[str, float]]] = [
    ({"reward": 1.0}, 1.0), ({"reward": 0.5}, 1.0), ({"a": 1.0}, 0.0), (None, 0.0),
    ({"a": 1.0, "b": 0.2}, {"a": 1.0, "b": 0.3}), ({"a": 1.0}, {"a": 1.0, "b": 0.0})]
STEPS: list[list[dict[str, float] | None]] = [
    [{"reward": 1.0}, {"reward": 0.0, "x": 2.0}], [None, {"reward": 1.0}], [None], [],
    [{"a": 1.0}, None, {"b": 3.0}], [{}]]
HARBOR = """
import json, sys, types
from pathlib import Path
from harbor.verifier.verifier import Verifier
from harbor.trial.multi_step import MultiStepTrial
from harbor.trial.trial import Trial
from harbor.models.verifier.result import VerifierResult
cases = json.load(sys.stdin)
files = []
for i, text in enumerate(cases["files"]):
    path = Path(cases["dir"]) / f"{i}.json"
    path.write_text(text)
    fake = types.SimpleNamespace(trial_paths=types.SimpleNamespace(reward_json_path=path))
    try:
        files.append({k: float(v) for k, v in Verifier._parse_reward_json(fake).items()})
    except Exception as exc:
        files.append(None)
gates = [MultiStepTrial._min_reward_failure(r, g) for r, g in cases["gates"]]
means = []
for steps in cases["steps"]:
    results = [types.SimpleNamespace(verifier_result=None if s is None else
               VerifierResult(rewards=s)) for s in steps]
    fake = types.SimpleNamespace(result=types.SimpleNamespace(step_results=results))
    found = Trial._aggregate_step_rewards(fake)
    means.append(None if found is None else found.rewards)
print(json.dumps({"files": files, "gates": gates, "means": means}))
"""


def ours(tmp_path: Path) -> dict[str, object]:
    files: list[dict[str, float] | None] = []
    for text in FILES:
        (tmp_path / "reward.json").write_text(text)
        try:
            files.append(read_rewards(tmp_path))
        except VerifierFailed:
            files.append(None)
    return {"files": files, "gates": [min_reward_failure(r, g) for r, g in GATES],
            "means": [trial_rewards(s, "mean") for s in STEPS]}


def test_the_same_rewards_as_harbors_own_code(tmp_path: Path, harbor_python: Path) -> None:
    cases = {"dir": str(tmp_path), "files": FILES, "gates": GATES, "steps": STEPS}
    done = subprocess.run([str(harbor_python), "-c", HARBOR], input=json.dumps(cases),
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    theirs = json.loads(done.stdout)
    (tmp_path / "ours").mkdir()
    assert ours(tmp_path / "ours") == theirs
