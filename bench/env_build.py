"""The cost of building an environment in the sandbox, against building it on the host.

Builds the grader's test environment (the pinned pytest set) from an empty environment cache,
three ways, and times each: on the host as before (`sandboxed=False`) with uv's cache already
warm, on the host with an empty uv cache, and in the sandbox (which always starts from a private,
empty uv cache, behind the egress proxy). Then times reusing a built environment (no sandbox, no
proxy), which is what every grading after the first pays. Prints medians and ratios.

Usage: python bench/env_build.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from perf_row import print_row

from benchwright.coding.grading.grader import TEST_ENV_BASE
from benchwright.sandbox.environments import ensure_env
from benchwright.sandbox.interpreters import resolve_python


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _build(sandboxed: bool, uv_cache: Path | None) -> float:
    """One cold build (a fresh environment cache); `uv_cache` None: uv's default."""
    with tempfile.TemporaryDirectory() as cache:
        os.environ["BENCHWRIGHT_CACHE_DIR"] = cache
        if uv_cache is not None:
            os.environ["UV_CACHE_DIR"] = str(uv_cache)
        try:
            return _timed(lambda: ensure_env("tests", resolve_python(None), TEST_ENV_BASE,
                                             sandboxed=sandboxed))
        finally:
            os.environ.pop("UV_CACHE_DIR", None)


def _reuse() -> float:
    with tempfile.TemporaryDirectory() as cache:
        os.environ["BENCHWRIGHT_CACHE_DIR"] = cache
        ensure_env("tests", resolve_python(None), TEST_ENV_BASE, sandboxed=True)
        return _timed(lambda: ensure_env("tests", resolve_python(None), TEST_ENV_BASE,
                                         sandboxed=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    repeat = parser.parse_args().repeat
    _build(False, None)  # warms uv's own cache for the first row
    variants: dict[str, Callable[[], float]] = {
        "host, warm uv cache (before)": lambda: _build(False, None),
        "host, empty uv cache": lambda: _build(False, Path(tempfile.mkdtemp())),
        "sandbox + proxy, private cache (now)": lambda: _build(True, None),
        "reuse of a built environment": _reuse,
    }
    rows: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeat):  # interleaved, so a busy moment of the machine hits every row
        for name, variant in variants.items():
            rows[name].append(variant())
    base = statistics.median(rows["host, warm uv cache (before)"])
    for name, times in rows.items():
        times = [round(t, 3) for t in times]
        median = statistics.median(times)
        print(f"{name:40s} median {median:7.3f} s   x{median / base:5.2f}   {times}")
    sandbox = statistics.median(rows["sandbox + proxy, private cache (now)"])
    reuse = statistics.median(rows["reuse of a built environment"])
    print_row("env_build.py", "building the grader's test environment in the sandbox (private "
              f"uv cache, egress proxy), median of {repeat}", "building it on the host, warm uv "
              "cache", f"{sandbox / base:.2f}x ({sandbox:.1f} s against {base:.1f} s; reusing a "
              f"built one {reuse:.2f} s)", "-")


if __name__ == "__main__":
    main()
