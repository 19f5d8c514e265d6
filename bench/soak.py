"""A month of use in one process: does anything pile up? (issue 42 point 5)

Through the Python API, in this one process: coding runs of the bundled problems (the oracle,
and the `mini` agent answered by the fake LLM server, several trials each) until `--checkpoints`
checkpoints are graded; web runs of the local suite (the scripted agent) until `--web` attempts
are made; then the viewer, served from this process, answers `--requests` requests over every
run made. After each run (and each 500 requests) it samples this process: resident memory, open
files, threads and live child processes (descendants). It prints, per phase, the first and last
sample and the least-squares slope per 100 checkpoints, 100 attempts and 1,000 requests, over
the whole phase and over its second half (the first runs import modules and build the
environments: warm-up, not a leak). Target: flat.

Then the bytes left outside the run folders: new entries of the temporary folder (this process
gets a private one, so other processes' files do not count) and what each cache kind grew by
(a private cache folder unless `--cache-dir`: the environments built here count, other users'
do not). Target: 0 beyond the bounded caches (envs, tools, images, collections).

Usage: python bench/soak.py [--checkpoints 500] [--web 200] [--requests 10000] [--trials 2]
       [--metrics] [--cache-dir DIR] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from perf_row import print_row

from benchwright.coding.problems.examples import examples_dir
from benchwright.testing import FakeLLMServer, Script

KEY = "sk-bench-soak-0000000000"
SCRIPT = {"rules": [{"match": ["bash"], "replies": [
    {"text": "Looking.", "tool_calls": [{"name": "bash", "arguments": {"command": "ls -la"}}],
     "usage": {"input_tokens": 900, "output_tokens": 40}},
    {"text": "Done.", "usage": {"input_tokens": 950, "output_tokens": 5}}]}],
    "untooled": {"text": "ok"}}
"""The fake agent's model: one `ls`, then "Done." on every later call (the last reply
repeats), so each trial's first checkpoint fails and ends the trial: a real agent loop, cheap."""
WEB_TASKS = "9002-9004"
SAMPLE_EVERY = 500
"""Viewer requests between samples."""


# ------------------------------------------------------------------ what the process holds


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return -1


def _descendants(pid: int) -> int:
    count, todo = 0, [pid]
    while todo:
        current = todo.pop()
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except OSError:
                continue
            count += len(kids)
            todo += kids
    return count


def sample() -> dict[str, float]:
    """This process now: resident MiB, open descriptors, threads, live descendants."""
    return {"rss_mib": _status("VmRSS") / 1024,
            "open_files": sum(1 for _ in Path("/proc/self/fd").iterdir()),
            "threads": _status("Threads"), "children": _descendants(os.getpid())}


def slope(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of ys over xs; None with fewer than 3 points (not measured)."""
    if len(xs) < 3:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var if var else None


def report(phase: str, unit: str, per: float, points: list[tuple[float, dict[str, float]]]) -> str:
    """First, last and slopes (whole phase, second half) of each figure, per `per` units;
    returns the resident memory's second-half slope for the row."""
    print(f"\n{phase}: {len(points)} samples over {points[-1][0]:.0f} {unit}"
          if points else f"\n{phase}: no samples")
    if not points:
        return f"{phase} not run"
    print(f"  {'figure':12} {'first':>9} {'last':>9} {'slope/' + f'{per:g} ' + unit:>22} "
          f"{'2nd half':>10}")
    half = points[len(points) // 2:]
    for name in points[0][1]:
        whole = slope([x for x, _ in points], [s[name] for _, s in points])
        late = slope([x for x, _ in half], [s[name] for _, s in half])
        print(f"  {name:12} {points[0][1][name]:9.1f} {points[-1][1][name]:9.1f} "
              f"{_per(whole, per):>22} {_per(late, per):>10}")
    late_rss = slope([x for x, _ in half], [s["rss_mib"] for _, s in half])
    return f"{phase} {_per(late_rss, per)} MiB a {per:g} {unit}"


def _per(value: float | None, per: float) -> str:
    return "unknown" if value is None else f"{value * per:+.2f}"


# ------------------------------------------------------------------ the phases


def _journaled(run_dir: Path) -> int:
    return sum(p.read_text().count("\n") for p in run_dir.glob("*/trial_*/journal.jsonl"))


def coding_phase(root: Path, target: int, trials: int, metrics: bool,
                 base_url: str) -> list[tuple[float, dict[str, float]]]:
    """Oracle and fake-LLM `mini` runs in turn until `target` checkpoints are graded."""
    from benchwright import run_coding

    done, points, number = 0, [], 0
    agents: list[dict[str, Any]] = [
        {"agent": "oracle"},
        {"agent": "mini", "model": "gpt-5", "base_url": f"{base_url}/v1", "step_limit": 5}]
    while done < target:
        options = agents[number % len(agents)]
        out = root / f"coding-{number:04d}-{options['agent']}"
        run_coding(examples_dir(), out=out, trials=trials, metrics=metrics, **options)
        done += _journaled(out)
        number += 1
        points.append((float(done), sample()))
        print(f"  coding run {number} ({options['agent']}): {done} checkpoints", flush=True)
    return points


def web_phase(root: Path, target: int, trials: int) -> list[tuple[float, dict[str, float]]]:
    """Scripted runs of three local-suite tasks until `target` attempts are made."""
    from benchwright import run_web

    done, points, number = 0, [], 0
    while done < target:
        out = root / f"web-{number:04d}"
        result = run_web("local", out=out, task_ids=WEB_TASKS, trials=trials, agent="scripted")
        done += result.n_trials
        number += 1
        points.append((float(done), sample()))
        print(f"  web run {number}: {done} attempts", flush=True)
    return points


def view_phase(root: Path, requests: int) -> list[tuple[float, dict[str, float]]]:
    """The viewer over every run made, served in a thread of this process; `requests` GETs
    cycling over the run list, each run's page, report data and problem/checkpoint pages."""
    from benchwright.view.server import serve_in_thread, start

    server = start([root])
    stop = serve_in_thread(server)
    try:
        paths = _view_paths(server)
        points = []
        for number in range(1, requests + 1):
            with urllib.request.urlopen(server.url.rstrip("/") + paths[number % len(paths)],
                                        timeout=600) as answer:
                answer.read()
            if number % SAMPLE_EVERY == 0 or number == requests:
                points.append((float(number), sample()))
        return points
    finally:
        stop()


def _view_paths(server: Any) -> list[str]:
    paths = ["/", "/data/runs.js"]
    for ref in server.model.scan():
        paths += [f"/data/run/{ref.rid}.js", f"/data/run/{ref.rid}/ci.js"]
        for journal in sorted(ref.path.glob("*/trial_*/journal.jsonl")):
            problem, trial = journal.parent.parent.name, journal.parent.name.split("_")[-1]
            paths += [f"/data/run/{ref.rid}/p/{problem}.js",
                      f"/data/run/{ref.rid}/cp/{problem}/{trial}/checkpoint_1.js"]
    return paths


# ------------------------------------------------------------------ what stays on disk


def _tree_bytes(path: Path) -> int:
    from benchwright.files.nofollow import usage

    return usage([path]).bytes


@contextmanager
def left_on_disk(temp: Path, cache: Path) -> Iterator[Callable[[], None]]:
    """Yields the function that prints what the process left outside its run folders since."""
    from benchwright.sandbox.caches import KINDS, entries

    temp_before = {p.name for p in temp.iterdir()}
    cache_before = {(e.kind, e.name): e.bytes for e in entries(cache)}

    def show() -> None:
        print("\nleft on disk outside the run folders")
        new = [p for p in temp.iterdir() if p.name not in temp_before]
        print(f"  temporary folder: {len(new)} new entries, "
              f"{sum(_tree_bytes(p) for p in new)} bytes {[p.name for p in new][:10]}")
        after = entries(cache)
        for kind in KINDS:
            grown = sum(e.bytes - cache_before.get((e.kind, e.name), 0)
                        for e in after if e.kind == kind)
            count = sum(1 for e in after if e.kind == kind and (kind, e.name) not in cache_before)
            bounded = kind in ("envs", "tools", "images", "collections")
            print(f"  cache {kind:17} {'(bounded)' if bounded else '(must stay 0)':14} "
                  f"{count:4} new entries, {grown:+,} bytes")

    yield show


# ------------------------------------------------------------------ main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", type=int, default=500)
    parser.add_argument("--web", type=int, default=200, help="web attempts")
    parser.add_argument("--requests", type=int, default=10000, help="viewer requests")
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--metrics", action="store_true", help="measure code quality too")
    parser.add_argument("--cache-dir", type=Path, help="default: a private one (built here)")
    parser.add_argument("--keep", type=Path, help="write the runs here and keep them")
    options = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="soak-"))
    temp = scratch / "tmp"
    temp.mkdir()
    os.environ["TMPDIR"] = str(temp)  # this process's and its children's temporary folder
    tempfile.tempdir = str(temp)
    cache = options.cache_dir or scratch / "cache"
    os.environ["BENCHWRIGHT_CACHE_DIR"] = str(cache)
    os.environ["OPENAI_API_KEY"] = KEY
    root = options.keep or scratch / "runs"
    root.mkdir(parents=True, exist_ok=True)
    try:
        _soak(options, root, temp, cache)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _soak(options: argparse.Namespace, root: Path, temp: Path, cache: Path) -> None:
    print(f"soak: {options.checkpoints} checkpoints, {options.web} web attempts, "
          f"{options.requests} viewer requests; runs in {root}; pid {os.getpid()}")
    start = time.monotonic()
    before = sample()
    with left_on_disk(temp, cache) as show, FakeLLMServer(Script.model_validate(SCRIPT)) as llm:
        coding = coding_phase(root, options.checkpoints, options.trials, options.metrics,
                              llm.base_url) if options.checkpoints else []
        web = web_phase(root, options.web, options.trials) if options.web else []
        viewer = view_phase(root, options.requests) if options.requests else []
        print(f"\nbefore anything: {before}")
        figures = [report("coding", "checkpoints", 100, coding),
                   report("web", "attempts", 100, web),
                   report("viewer", "requests", 1000, viewer)]
        show()
    print(f"\n{time.monotonic() - start:.0f} s in all (python {sys.version.split()[0]})")
    print_row("soak.py", f"a month of use in one process: {options.checkpoints} checkpoints, "
              f"{options.web} web attempts, {options.requests} viewer requests", "flat: the "
              "first samples (warm-up)", "resident memory's slope over the second half: "
              + "; ".join(figures), "flat; 0 bytes left beyond the bounded caches")


if __name__ == "__main__":
    main()
