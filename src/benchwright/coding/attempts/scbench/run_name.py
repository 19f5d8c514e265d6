"""A coding run's default folder, named as SCBench names its runs:
`<model>/<agent>-<version>_<prompt>_<thinking>_<YYYYMMDDTHHMM>` (the `-<version>` left out when
there is none), so SCBench's dashboard reads the run's date from it. The minute is UTC."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from benchwright.coding.attempts.models import RunConfig
from benchwright.coding.attempts.scbench.run_config import (
    NO_MODEL,
    agent_version,
    prompt_path,
    thinking,
)
from benchwright.runs.clock import minute_stamp
from benchwright.version import __version__

_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def _part(text: str) -> str:
    """One path component: nothing that could climb out of the folder or hide in it."""
    cleaned = _UNSAFE.sub("-", text).strip(".-")
    return cleaned or "-"


def run_name(config: RunConfig, now: datetime | None = None) -> Path:
    """The run's folder, relative to where runs are kept."""
    stamp = minute_stamp(now)
    version = agent_version(config, __version__)
    agent = config.agent if version is None else f"{config.agent}-{version}"
    name = f"{agent}_{prompt_path(config.prompt).stem}_{thinking(config)}_{stamp}"
    return Path(_part((config.model or NO_MODEL).replace("/", "-"))) / _part(name)


def unused(folder: Path) -> Path:
    """`folder`, or `folder-2`, `folder-3`... when a run started in the same minute has it."""
    candidate, n = folder, 1
    while candidate.exists():
        n += 1
        candidate = folder.with_name(f"{folder.name}-{n}")
    return candidate
