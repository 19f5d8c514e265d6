"""The conditions `problems validate` grades a reference solution under, one per repetition.

Each repetition changes what a correct program must not depend on: the hash seed, the time zone,
the order of the test files, a busy CPU, and a monotonic clock just below a power of two (where
`now + ttl - now` is no longer exactly `ttl`: the kv_server failure seen on a fresh machine whose
uptime was between 903.5 and 1024 s).
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel

from benchwright.protocols import Runtime
from benchwright.sandbox.bwrap import BwrapRuntime, Mount, _Launch

# A time zone with a 45-minute offset that changes with daylight saving: far from UTC.
_ODD_ZONES = ("Pacific/Chatham", "America/St_Johns", "Asia/Kathmandu")
_SEEDS = ("12345", "777", "424242")
# Seconds before the next power of two the clock starts at: the tests run inside that window.
_CLOCK_LEAD_S = 115.0


class Condition(BaseModel):
    """What one repetition varies."""

    label: str
    """A short description, e.g. `hash seed 12345, TZ Pacific/Chatham`."""
    env: dict[str, str] = {}
    """Variables over the grader's (PYTHONHASHSEED, TZ)."""
    reverse_files: bool = False
    """Test files run last to first."""
    cpu_load: bool = False
    """A CPU-burning process runs alongside."""
    clock_near_power_of_two: bool = False
    """The sandbox's monotonic clock starts just below a power of two (needs `unshare --time`)."""


def condition_for(run: int) -> Condition:
    """The condition of repetition `run` (0-based): the first is the grader's usual one."""
    if run == 0:
        return Condition(label="as graded")
    cycle = (run - 1) % 4
    variant = (run - 1) // 4
    env = {"PYTHONHASHSEED": _SEEDS[variant % len(_SEEDS)],
           "TZ": _ODD_ZONES[variant % len(_ODD_ZONES)]}
    return Condition(
        label=_label(env if cycle in (0, 3) else {}, cycle in (1, 3), cycle == 2),
        env=env if cycle in (0, 3) else {}, reverse_files=cycle in (1, 3), cpu_load=cycle == 2,
        clock_near_power_of_two=True)


def _label(env: dict[str, str], reverse: bool, cpu: bool) -> str:
    parts = [f"hash seed {env['PYTHONHASHSEED']}, TZ {env['TZ']}"] if env else []
    parts += ["files reversed"] if reverse else []
    parts += ["CPU loaded"] if cpu else []
    return ", ".join([*parts, "clock near 2^k"])


@contextmanager
def cpu_load(active: bool) -> Iterator[None]:
    """A process spinning on the CPU while the block runs (when `active`)."""
    if not active:
        yield
        return
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        yield
    finally:
        burner.kill()
        burner.wait()


def runtime_for(condition: Condition, runtime: Runtime) -> Runtime:
    """`runtime`, or one whose sandbox has a shifted monotonic clock when the condition asks
    and a time namespace can be made here (bubblewrap only)."""
    if not condition.clock_near_power_of_two or not isinstance(runtime, BwrapRuntime):
        return runtime
    if not clock_shift_available():
        return runtime
    return ShiftedClockRuntime(runtime.bwrap, clock_offset(time.monotonic()))


def clock_offset(now: float) -> int:
    """Seconds to add to the monotonic clock so that it reads `_CLOCK_LEAD_S` before the next
    power of two (at least 2^10: uptimes of a fresh machine)."""
    power = 1 << 10
    while power - _CLOCK_LEAD_S <= now + 1:
        power <<= 1
    return int(power - _CLOCK_LEAD_S - now)


@functools.cache
def clock_shift_available() -> bool:
    """Whether `unshare --time` works here (root, a kernel with time namespaces)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    probe = subprocess.run([unshare, "--time", "--monotonic", "1", "true"],
                           capture_output=True, check=False)
    return probe.returncode == 0


class ShiftedClockRuntime(BwrapRuntime):
    """Bubblewrap started inside a new time namespace whose monotonic clock is offset."""

    def __init__(self, bwrap: str, offset_s: int) -> None:
        super().__init__(bwrap)
        self.offset_s = offset_s

    def _launch(self, argv: list[str], cwd: Path, mounts: Sequence[Mount],
                network: bool) -> _Launch:
        launch = super()._launch(argv, cwd, mounts, network)
        unshare = shutil.which("unshare") or "unshare"
        prefix = [unshare, "--time", "--monotonic", str(self.offset_s),
                  "--boottime", str(self.offset_s)]
        return launch.model_copy(update={"argv": [*prefix, *launch.argv]})
