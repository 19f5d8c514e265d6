"""What each runtime costs: grading one checkpoint with bwrap, podman and docker against plain
pytest, and one empty step (`true`) in each, in one run.

Every grading uses the same cached environments (built once, per runtime, before timing) and
the same snapshot; plain pytest runs in a workspace laid out once, with no sandbox. Prints the
median of each, the ratio of each runtime's grading to plain pytest (target for the containers:
<= 1.5) and the cost of a step that does nothing. docker runs through podman's Docker API
(`podman system service` on a private socket) when DOCKER_HOST is not set and a docker CLI exists.

Usage: python bench/runtime_cost.py [--problem-dir DIR] [--checkpoint NAME] [--repeat N]
       [--runtime bwrap --runtime podman ...]
Without --problem-dir it uses the bundled kv_server problem.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from grade_overhead import _plain_pytest_command  # bench/ is this script's folder
from perf_row import print_row

from benchwright.coding.grading.grader import GradeOptions, grade_checkpoint
from benchwright.coding.problems.examples import example_problem_dir
from benchwright.coding.problems.loader import get_checkpoint, load_problem
from benchwright.protocols import Limits, Runtime
from benchwright.sandbox.bwrap import get_runtime
from benchwright.sandbox.images.resolve import image_for_runtime

CONF = ('[containers]\ndefault_ulimits = []\n\n'
        '[engine]\ncgroup_manager = "cgroupfs"\nruntime = "runc"\n')


def _median(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


@contextlib.contextmanager
def _docker_api(folder: Path) -> Iterator[None]:
    """podman's Docker API for the docker CLI, unless DOCKER_HOST already names an engine."""
    if os.environ.get("DOCKER_HOST") or shutil.which("podman") is None:
        yield
        return
    (folder / "containers.conf").write_text(CONF)
    socket = folder / "podman.sock"
    env = {"DOCKER_HOST": f"unix://{socket}", "CONTAINERS_CONF": str(folder / "containers.conf")}
    service = subprocess.Popen(["podman", "system", "service", "--time=0", env["DOCKER_HOST"]],
                               env={**os.environ, **env}, cwd=folder, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not socket.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    os.environ.update(env)
    try:
        yield
    finally:
        service.terminate()
        service.wait(timeout=60)
        for key in env:
            os.environ.pop(key, None)


def _runtime(name: str) -> Runtime:
    return get_runtime(False, name, image_for_runtime(name, None))


def _measure(name: str, args: argparse.Namespace, scratch: Path) -> tuple[float, float]:
    """(grading one checkpoint, one empty step), medians in seconds."""
    runtime = _runtime(name)
    problem = load_problem(args.problem_dir)
    config = get_checkpoint(problem, args.checkpoint)
    options = GradeOptions(runtime=runtime, limits=Limits(wall_clock_s=600),
                           scratch_root=scratch)

    def grade() -> None:
        grade_checkpoint(problem, config, problem.solution_dir(args.checkpoint), options)

    def step() -> None:
        runtime.run(["true"], cwd=Path("/"), env={"PATH": "/usr/bin:/bin"}, mounts=[],
                    limits=Limits(wall_clock_s=60))

    grade()  # warm: the environments this runtime builds, once
    return _median(grade, args.repeat), _median(step, args.repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem-dir", type=Path, default=example_problem_dir("kv_server"))
    parser.add_argument("--checkpoint", default="checkpoint_3")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--runtime", action="append", default=[])
    args = parser.parse_args()
    names = args.runtime or ["bwrap", "podman", "docker"]
    with tempfile.TemporaryDirectory() as tmp, _docker_api(Path(tmp)):
        plain, env, workspace = _plain_pytest_command(args.problem_dir, args.checkpoint,
                                                      Path(tmp))
        pytest_s = _median(lambda: subprocess.run(plain, cwd=workspace, env=env, check=False,
                                                  capture_output=True), args.repeat)
        rows = {}
        for name in names:
            if name == "docker" and shutil.which("docker") is None:
                print("docker: no docker CLI here, skipped", file=sys.stderr)
                continue
            rows[name] = _measure(name, args, Path(tmp))
    print(f"problem {args.problem_dir.name}/{args.checkpoint}, median of {args.repeat} each")
    print(f"plain pytest, prebuilt environments, no sandbox: {pytest_s:.2f} s")
    for name, (grade_s, step_s) in rows.items():
        print(f"{name:6}: grading {grade_s:.2f} s = {grade_s / pytest_s:.2f}x plain pytest; "
              f"an empty step {step_s * 1000:.0f} ms")
    print("target: containers within 1.5x of plain pytest")
    print_row("runtime_cost.py", f"grading {args.problem_dir.name}/{args.checkpoint} with "
              f"{', '.join(rows)}, median of {args.repeat}", "plain pytest, no sandbox",
              "; ".join(f"{name} {grade_s / pytest_s:.2f}x, an empty step "
                        f"{step_s * 1000:.0f} ms" for name, (grade_s, step_s) in rows.items())
              + f" (plain pytest {pytest_s:.2f} s)", "containers <= 1.5x")


if __name__ == "__main__":
    main()
