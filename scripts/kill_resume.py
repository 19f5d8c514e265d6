"""Kill -9 during `run coding --workers 2 --trials 2`, then `--resume`: nothing lost, nothing
duplicated, nothing wrong, nothing left behind (issue 26 point 5).

For each target (the main process, a pool worker, the resource tracker) and each round, a run
of the `quick` fixture problem (oracle agent) is started, the target is SIGKILLed once the run
has journaled a random number of checkpoints, and the run is resumed. Then:

- lost / duplicated / wrong: every attempt's journal against an uninterrupted run's, record by
  record (counts, verdicts, solved flags);
- leftover processes: any process of the run or the resume (seen by polling their process tree,
  never the machine's) still alive at the end;
- temp folders: anything left in the runs' own TMPDIR (where `benchwright-job-*`, the mini
  agent's home, Chromium's profile, env builds and egress proxies would be: every one is owned,
  `benchwright/files/owned_temp.py`, and swept at the next start) or in the run's `.work` (grading);
- semaphores: any POSIX semaphore the runs' processes had mapped (/dev/shm/sem.*) still there;
- tracebacks: any in the killed run's or the resume's output.

    python scripts/kill_resume.py [--rounds 10] [--targets main,worker,tracker] [--keep]

Prints one line per round and a table of figures at the end; exits 1 if any figure is not 0.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "runs" / "quick"
TRIALS, WORKERS, CHECKPOINTS = 2, 2, 4
KEYS = ("counts", "verdicts", "passed", "solved", "iso_solved", "core_solved", "grade_status")


@dataclass
class Watched:
    """The processes of one benchwright invocation, seen by polling its tree."""

    root: int
    seen: dict[int, tuple[int, str]] = field(default_factory=dict)
    """pid -> (start time, command line)."""
    semaphores: set[str] = field(default_factory=set)

    def poll(self) -> None:
        for pid in _tree(self.root):
            start = _start_time(pid)
            if start < 0:
                continue
            if pid not in self.seen:
                self.seen[pid] = (start, _cmdline(pid))
            self.semaphores |= _semaphores(pid)

    def find(self, word: str) -> int | None:
        """A live direct child of the root whose command line holds `word`."""
        for pid in _children(self.root):
            if word in _cmdline(pid):
                return pid
        return None

    def alive(self) -> list[str]:
        return [f"{pid} {cmd[:80]}" for pid, (start, cmd) in self.seen.items()
                if _start_time(pid) == start]


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                found += [int(x) for x in (task / "children").read_text().split()]
    return found


def _tree(root: int) -> list[int]:
    out, stack = [], [root]
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack += _children(pid)
    return out


def _start_time(pid: int) -> int:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return -1
    fields = text.rsplit(")", 1)[-1].split()
    return -1 if fields[0] == "Z" else int(fields[19])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
            errors="replace")
    except OSError:
        return ""


def _semaphores(pid: int) -> set[str]:
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return set()
    return {line.split()[-1] for line in maps.splitlines() if "/dev/shm/sem." in line}


def _journaled(run: Path) -> int:
    total = 0
    for path in run.glob("*/trial_*/journal.jsonl"):
        with contextlib.suppress(OSError):
            total += path.read_bytes().count(b"\n")
    return total


def _start(argv: list[str], env: dict[str, str], log: Path) -> tuple[subprocess.Popen[bytes],
                                                                      Watched]:
    handle = log.open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "benchwright", *argv], env=env,
                            stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    handle.close()
    return proc, Watched(proc.pid)


def _wait(proc: subprocess.Popen[bytes], watched: Watched, timeout: float = 900) -> int:
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        watched.poll()
        time.sleep(0.05)
    if proc.poll() is None:
        proc.kill()
    return proc.wait()


def _settle(watched: Watched, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while watched.alive() and time.monotonic() < deadline:
        time.sleep(0.2)


def _records(run: Path) -> dict[tuple[int, int], list[dict[str, object]]]:
    out: dict[tuple[int, int], list[dict[str, object]]] = {}
    for trial in range(1, TRIALS + 1):
        path = run / "quick" / f"trial_{trial}" / "journal.jsonl"
        lines = path.read_text().splitlines() if path.exists() else []
        for line in lines:
            record = json.loads(line)
            out.setdefault((trial, record["index"]), []).append(record)
    return out


def _compare(run: Path, reference: dict[tuple[int, int], dict[str, object]]
             ) -> tuple[int, int, int]:
    got = _records(run)
    lost = sum(1 for key in reference if key not in got)
    duplicated = sum(len(v) - 1 for v in got.values())
    wrong = sum(1 for key, records in got.items() for r in records
                if key not in reference or any(r[k] != reference[key][k] for k in KEYS))
    return lost, duplicated, wrong


@dataclass
class Round:
    target: str
    killed: bool
    first_exit: int
    resume_exit: int
    tracebacks: int
    lost: int
    duplicated: int
    wrong: int
    processes: list[str]
    temp: list[str]
    semaphores: list[str]


def _one(target: str, n: int, base: Path, env: dict[str, str],
         reference: dict[tuple[int, int], dict[str, object]]) -> Round:
    run = base / "runs" / f"{target}-{n}"
    argv = ["run", "coding", "--problems-dir", str(base / "problems"), "--no-metrics",
            "--workers", str(WORKERS), "--trials", str(TRIALS), "--out", str(run)]
    log = base / "logs" / f"{target}-{n}.log"
    proc, watched = _start(argv, env, log)
    when = random.randint(0, CHECKPOINTS * TRIALS - 2)
    killed = False
    while proc.poll() is None:
        watched.poll()
        victim = {"main": proc.pid, "worker": watched.find("spawn_main"),
                  "tracker": watched.find("resource_tracker")}[target]
        if victim is not None and _journaled(run) >= when:
            with contextlib.suppress(ProcessLookupError):
                os.kill(victim, signal.SIGKILL)
                killed = True
            break
        time.sleep(0.05)
    first = _wait(proc, watched)
    _settle(watched)
    resume_log = base / "logs" / f"{target}-{n}-resume.log"
    # killed before its manifest was written, the run never began: the same command starts it
    again = ["run", "coding", "--resume", str(run), "--workers", str(WORKERS)] \
        if (run / "manifest.json").exists() else argv
    rproc, rwatched = _start(again, env, resume_log)
    resumed = _wait(rproc, rwatched)
    for w in (watched, rwatched):
        _settle(w)
    text = log.read_text(errors="replace") + resume_log.read_text(errors="replace")
    lost, duplicated, wrong = _compare(run, reference)
    # the temp folder (TMPDIR: jobs, the mini agent's home, Chromium, env builds, egress) and
    # the run's own scratch (.work: grading folders), both empty once the resume is done
    work = run / ".work"
    temp = sorted([p.name for p in (base / "tmp").iterdir()]
                  + [f".work/{p.relative_to(work)}" for p in work.rglob("*") if p.is_dir()
                     and p.name.startswith(("grade-", "benchwright-"))])
    sems = sorted(s for s in watched.semaphores | rwatched.semaphores if Path(s).exists())
    return Round(target, killed, first, resumed, text.count("Traceback"), lost, duplicated,
                 wrong, watched.alive() + rwatched.alive(), temp, sems)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--targets", default="main,worker,tracker")
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--keep", action="store_true", help="keep the runs' folder")
    args = parser.parse_args()
    random.seed(args.seed)
    base = Path(tempfile.mkdtemp(prefix="kill-resume-"))
    for name in ("problems", "runs", "logs", "tmp"):
        (base / name).mkdir()
    shutil.copytree(FIXTURE, base / "problems" / "quick")
    env = {**os.environ, "TMPDIR": str(base / "tmp"), "COLUMNS": "120",
           "PYTHONPATH": str(ROOT / "src")}
    ref_run = base / "runs" / "reference"
    proc, watched = _start(["run", "coding", "--problems-dir", str(base / "problems"),
                            "--no-metrics", "--workers", str(WORKERS), "--trials", str(TRIALS),
                            "--out", str(ref_run)], env, base / "logs" / "reference.log")
    assert _wait(proc, watched) == 0, (base / "logs" / "reference.log").read_text()
    reference = {k: v[0] for k, v in _records(ref_run).items()}
    assert len(reference) == TRIALS * CHECKPOINTS
    rounds = []
    for target in args.targets.split(","):
        for n in range(1, args.rounds + 1):
            r = _one(target, n, base, env, reference)
            rounds.append(r)
            print(f"{target:8} {n:2}: killed={r.killed} exit={r.first_exit} "
                  f"resume={r.resume_exit} tracebacks={r.tracebacks} lost={r.lost} "
                  f"dup={r.duplicated} wrong={r.wrong} procs={len(r.processes)} "
                  f"temp={len(r.temp)} sems={len(r.semaphores)}", flush=True)
            for extra in (*r.processes, *r.temp, *r.semaphores):
                print(f"           left: {extra}", flush=True)
    print(f"\n{'target':8} rounds killed resume!=0 tracebacks lost dup wrong procs temp sems")
    bad = 0
    for target in args.targets.split(","):
        rs = [r for r in rounds if r.target == target]
        figures = [sum(r.resume_exit != 0 for r in rs), sum(r.tracebacks for r in rs),
                   sum(r.lost for r in rs), sum(r.duplicated for r in rs),
                   sum(r.wrong for r in rs), sum(len(r.processes) for r in rs),
                   sum(len(r.temp) for r in rs), sum(len(r.semaphores) for r in rs)]
        bad += sum(figures)
        print(f"{target:8} {len(rs):6} {sum(r.killed for r in rs):6} "
              + " ".join(f"{f:>{w}}" for f, w in zip(figures, (9, 10, 4, 3, 5, 5, 4, 4),
                                                     strict=True)))
        print(f"         first exits: {sorted(r.first_exit for r in rs)}")
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    else:
        print(f"kept: {base}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
