"""What the jail costs per call: starting `python -c pass` in the grading sandbox, directly and
through the jail (`coding/grading/jail.py`: one nested bubblewrap), in the same run.

Prints the median of each, the added milliseconds per call and their ratio. A checkpoint pays
this once per process its tests start from the entry point (file_backup/checkpoint_1: 32).

Usage: python bench/jail_cost.py [--calls N]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from perf_row import print_row

from benchwright.coding.grading import jail
from benchwright.sandbox.bwrap import BwrapRuntime, Limits, Mount, require_bwrap
from benchwright.sandbox.interpreters import resolve_python

# Inside the sandbox, as the grader's pytest does: the jail's command is built there per call
# (it binds paths by descriptors opened there, handed to bubblewrap), then started.
_TIMER = """
import importlib.util, json, os, statistics, subprocess, sys, time
calls, config, plain = int(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
spec = importlib.util.spec_from_file_location("jail", sys.argv[4])
jail = importlib.util.module_from_spec(spec)
spec.loader.exec_module(jail)
def jailed():
    start = time.perf_counter()
    full = jail.jail_command(config, plain, os.getcwd())
    try:
        subprocess.run(full.argv, check=True, pass_fds=full.fds)
    finally:
        full.close()
    return time.perf_counter() - start
def direct():
    start = time.perf_counter()
    subprocess.run(plain, check=True)
    return time.perf_counter() - start
a, b = [], []
for _ in range(calls):
    a.append(jailed())
    b.append(direct())
print(json.dumps([statistics.median(a), statistics.median(b)]))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40)
    args = parser.parse_args()
    python = resolve_python(None)
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "workspace"
        workspace.mkdir()
        (Path(tmp) / ".evaluation_tests").mkdir()  # beside the workspace, as the grader has it
        (workspace / "timer.py").write_text(_TIMER)
        config = {"bwrap": require_bwrap(), "workspace": str(workspace),
                  "tests": str(Path(tmp) / ".evaluation_tests"),
                  "readonly": [str(python.prefix)], "system": jail.system_args()}
        plain = [str(python.executable), "-c", "pass"]
        jail_py = Path(jail.__file__)
        out = Path(tmp) / "out.json"
        with out.open("wb") as sink:
            BwrapRuntime().run(
                [str(python.executable), "timer.py", str(args.calls), json.dumps(config),
                 json.dumps(plain), str(jail_py)], cwd=workspace, env={"PATH": "/usr/bin:/bin"},
                mounts=[Mount(path=python.prefix), Mount(path=workspace, writable=True),
                        Mount(path=jail_py.parent)],
                limits=Limits(), stdout=sink)
        with_jail, without = json.loads(out.read_text())
    print(f"python -c pass in the grading sandbox, {args.calls} calls each")
    print(f"through the jail: median {with_jail * 1000:.1f} ms")
    print(f"directly:         median {without * 1000:.1f} ms")
    print(f"the jail adds {(with_jail - without) * 1000:.1f} ms per call "
          f"(ratio {with_jail / without:.2f})")
    print_row("jail_cost.py", f"`python -c pass` started by a test inside the grading sandbox "
              f"through the jail, median of {args.calls}", "the same without the jail",
              f"the jail adds {(with_jail - without) * 1000:.1f} ms a call "
              f"({with_jail * 1000:.1f} ms against {without * 1000:.1f} ms)", "-")


if __name__ == "__main__":
    main()
