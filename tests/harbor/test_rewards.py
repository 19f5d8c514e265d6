"""Rewards, min_reward gates and the multi-step reward, by Harbor 0.25's rules (its Verifier,
MultiStepTrial._min_reward_failure and Trial._aggregate_step_rewards), and the reward files as a
hostile verifier may leave them."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from benchwright.harbor.rewards import (
    VerifierFailed,
    min_reward_failure,
    read_rewards,
    trial_rewards,
)


def test_reward_json_is_preferred_to_reward_txt(tmp_path: Path) -> None:
    (tmp_path / "reward.json").write_text('{"reward": 1, "pass_rate": 0.5, "ok": true}')
    (tmp_path / "reward.txt").write_text("0")
    assert read_rewards(tmp_path) == {"reward": 1.0, "pass_rate": 0.5, "ok": 1.0}


def test_reward_txt_is_the_reward_key(tmp_path: Path) -> None:
    (tmp_path / "reward.txt").write_text(" 0.25\n")
    assert read_rewards(tmp_path) == {"reward": 0.25}


@pytest.mark.parametrize("name, text", [
    ("reward.json", ""), ("reward.json", "{"), ("reward.json", '{"reward": "1"}'),
    ("reward.json", '{"reward": NaN}'), ("reward.json", "1e999"), ("reward.json", "[1]"),
    ("reward.json", "1"), ("reward.txt", ""), ("reward.txt", "one"), ("reward.txt", "inf"),
])
def test_a_bad_reward_file_is_the_verifiers_failure(tmp_path: Path, name: str, text: str
                                                    ) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(VerifierFailed):
        read_rewards(tmp_path)


def test_no_reward_is_the_verifiers_failure(tmp_path: Path) -> None:
    with pytest.raises(VerifierFailed, match="no reward"):
        read_rewards(tmp_path)


def test_a_reward_file_that_is_a_link_or_a_fifo_is_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('{"reward": 1}')
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "reward.json").symlink_to(outside)
    os.mkfifo(logs / "reward.txt")
    with pytest.raises(VerifierFailed, match="no reward"):
        read_rewards(logs)


def test_min_reward_a_number_gates_the_reward_key() -> None:
    assert min_reward_failure({"reward": 0.5}, 0.5) is None
    assert min_reward_failure({"reward": 0.4}, 0.5) == "reward=0.4 below min_reward 0.5"
    assert min_reward_failure({"other": 1.0}, 0.5) == "reward=-inf below min_reward 0.5"
    assert min_reward_failure(None, 0.0) == "reward=-inf below min_reward 0.0"
    assert min_reward_failure({"reward": 0.0}, None) is None


def test_min_reward_a_table_gates_each_key_a_missing_one_is_minus_infinity() -> None:
    table = {"a": 0.5, "b": 1.0}
    assert min_reward_failure({"a": 0.5, "b": 1.0}, table) is None
    assert min_reward_failure({"a": 0.5}, table) == "b=-inf below min_reward 1.0"


def test_mean_is_per_key_over_verified_steps_a_missing_key_counting_zero() -> None:
    steps = [{"reward": 1.0, "a": 1.0}, None, {"reward": 0.0, "b": 1.0}]
    assert trial_rewards(steps, "mean") == {"reward": 0.5, "a": 0.5, "b": 0.5}


def test_final_is_the_last_steps_rewards_verbatim() -> None:
    assert trial_rewards([{"reward": 1.0}, {"reward": 0.0, "x": 2.0}], "final") == {
        "reward": 0.0, "x": 2.0}
    assert trial_rewards([{"reward": 1.0}, None], "final") is None


def test_no_verified_step_is_no_reward_never_zero() -> None:
    assert trial_rewards([None, None], "mean") is None
    assert trial_rewards([], "mean") is None
    assert not math.isnan(trial_rewards([{"r": 0.0}], "mean")["r"])  # type: ignore[index]
