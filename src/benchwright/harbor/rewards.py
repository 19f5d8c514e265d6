"""Rewards as Harbor 0.25 computes them: read from the verifier's folder (`reward.json`, a flat
object of finite numbers, preferred; else `reward.txt`, one number; none, an empty or a bad file
is the verifier's failure), a step's `min_reward` gate (a number gates the key `reward`; a table
gates each key; a missing key or reward counts as -inf), and the trial's reward from its steps
(`mean`: per key over the steps that have rewards, a key a step lacks counting 0; `final`: the
last step's, verbatim).

The folder is the host folder mounted as the verifier's `/logs/verifier` and nothing else: read
without following a link (`nofollow.read_regular`), bounded in size.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from benchwright.files.nofollow import read_regular

MAX_REWARD_BYTES = 1 << 20
Rewards = dict[str, float]


class VerifierFailed(Exception):
    """The verifier left no usable reward (Harbor: the step's exception, no verifier result)."""


def read_rewards(folder: Path) -> Rewards:
    """The rewards the verifier wrote into `folder`, or VerifierFailed saying why not."""
    data = read_regular(folder, "reward.json", MAX_REWARD_BYTES + 1)
    if data is not None:
        return _parse_json(data)
    text = read_regular(folder, "reward.txt", MAX_REWARD_BYTES + 1)
    if text is not None:
        return _parse_text(text)
    raise VerifierFailed("the verifier wrote no reward (no regular reward.json or reward.txt)")


def _parse_json(data: bytes) -> Rewards:
    if not data:
        raise VerifierFailed("reward.json is empty")
    if len(data) > MAX_REWARD_BYTES:
        raise VerifierFailed("reward.json is larger than 1 MiB")
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        raise VerifierFailed("reward.json is not JSON") from None
    if not isinstance(value, dict):  # Harbor's result model takes an object only
        raise VerifierFailed("reward.json is not an object of numbers")
    rewards: Rewards = {}
    for key, number in value.items():
        if not isinstance(number, int | float):  # as Harbor: true and false are numbers
            raise VerifierFailed(f"reward.json: {str(key)[:80]!r} is not a number")
        if not math.isfinite(number):
            raise VerifierFailed(f"reward.json: {str(key)[:80]!r} is not finite")
        rewards[str(key)] = float(number)
    return rewards


def _parse_text(data: bytes) -> Rewards:
    if not data:
        raise VerifierFailed("reward.txt is empty")
    try:
        value = float(data.decode("utf-8", errors="strict").strip())
    except (UnicodeDecodeError, ValueError):
        raise VerifierFailed("reward.txt does not hold one number") from None
    if not math.isfinite(value):
        raise VerifierFailed("reward.txt is not finite")
    return {"reward": value}


def min_reward_failure(rewards: Mapping[str, float] | None,
                       min_reward: float | Mapping[str, float] | None) -> str | None:
    """Why a step's rewards stop the trial, or None when they pass (or there is no gate)."""
    if min_reward is None:
        return None
    thresholds = ({"reward": min_reward} if isinstance(min_reward, int | float)
                  else min_reward)
    for key, threshold in thresholds.items():
        actual = rewards.get(key, -math.inf) if rewards else -math.inf
        if actual < threshold:
            return f"{key}={actual} below min_reward {threshold}"
    return None


def trial_rewards(steps: Sequence[Rewards | None], strategy: str) -> Rewards | None:
    """The trial's rewards from its steps' (None for a step without a verifier result)."""
    if strategy == "final":
        return dict(steps[-1]) if steps and steps[-1] is not None else None
    verified = [s for s in steps if s is not None]
    keys = sorted({key for rewards in verified for key in rewards})
    if not keys:
        return None
    return {key: sum(r.get(key, 0.0) for r in verified) / len(verified) for key in keys}
