"""The viewer at scale: 1,000 coding runs x 20 problems, and one run of 10,000 checkpoints.

Writes synthetic runs (the coding track's own models, as `run coding` writes them), starts
`benchwright view` on them in its own process, and times what each page asks the server for,
cold (first request) and warm; with Playwright and /usr/bin/chromium it also times the page in
a browser until its table is drawn and until its charts are. Prints each figure against its
target (open in under 2 s, server memory under 500 MB) as a ratio, and a reference measured in
the same run: reading every manifest and result.json with json.loads, the least any list of
those runs costs. `--bundle` also writes the big run as a static site and opens it from file://.

Usage: python bench/view_scale.py [--runs 1000] [--problems 20] [--big 10000] [--bundle]
       [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from perf_row import print_row

from benchwright.coding.agents.base import AgentResult, Usage
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import CheckpointRecord, Manifest, RunConfig, RunResult
from benchwright.coding.grading.evaluation import (
    CheckpointEvaluation,
    EnvInfo,
    GraderInfo,
    GradeStatus,
    TestCase,
)
from benchwright.coding.grading.policies import GroupCount, PassPolicy
from benchwright.coding.problems.config import Group
from benchwright.metrics.erosion import QualitySummary
from benchwright.protocols import Limits
from benchwright.view.catalog import run_id

TARGET_S = 2.0
TARGET_MB = 500.0
CREATED = "2026-11-01T10:00:00+00:00"
ENV = EnvInfo(key="k", python_version="3.12", packages=[], reused=True)
GRADER = GraderInfo(benchwright_version="0.1.0", runtime="bwrap", limits=Limits(),
                    entrypoint="python main.py", pytest_args=[], test_env=ENV, solution_env=ENV)


# ------------------------------------------------------------------ synthetic runs


def _record(rng: random.Random, problem: str, trial: int, index: int,
            solved: bool, core_rate: float) -> CheckpointRecord:
    core_ok = solved or rng.random() < core_rate
    core = GroupCount(passed=4 if core_ok else rng.randint(0, 3), total=4)
    func = GroupCount(passed=8 if solved else rng.randint(0, 7), total=8)
    loc = 100.0 + 40 * index + rng.random() * 30
    quality = QualitySummary(
        values={"loc": loc, "sloc": loc * 0.8, "lint": float(rng.randint(0, 30)),
                "astgrep": float(rng.randint(0, 8)), "cc_high": float(rng.randint(0, 3)),
                "erosion": rng.random() * 0.4, "verbosity": 0.4 + rng.random() * 0.3,
                "clone_ratio": rng.random() * 0.1, "mi_mean": 40 + rng.random() * 20},
        mass={"complexity": 10 + rng.random() * 20},
        delta={} if index == 1 else {"loc": 40 + rng.random() * 20,
                                     "lint": float(rng.randint(-3, 6)),
                                     "astgrep": float(rng.randint(-1, 3)),
                                     "cc_high": float(rng.randint(0, 1))},
        churn_ratio=0.0 if index == 1 else rng.random())
    usage = Usage(input_tokens=rng.randint(5_000, 60_000), output_tokens=rng.randint(500, 6_000),
                  cost_usd=rng.random() * 0.2, steps=rng.randint(3, 40))
    return CheckpointRecord(
        problem=problem, trial=trial, checkpoint=f"checkpoint_{index}", index=index,
        prompt_sha256="0" * 64, agent=AgentResult(usage=usage, duration_s=rng.random() * 120),
        grade_status=GradeStatus.COMPLETED,
        counts={Group.CORE: core, Group.FUNCTIONALITY: func},
        verdicts={PassPolicy.CORE_CASES: core.passed == core.total}, passed=core.passed == 4,
        solved=solved, iso_solved=solved, core_solved=core.passed == 4, snapshot_files=3,
        grade_duration_s=rng.random() * 5, quality=quality,
        finished_at=f"2026-11-01T11:{index % 60:02d}:{trial % 60:02d}+00:00")


def _attempt(rng: random.Random, problem: str, trial: int, size: int,
             skill: float, core_rate: float) -> list[CheckpointRecord]:
    records = []
    for index in range(1, size + 1):
        solved = rng.random() < skill
        record = _record(rng, problem, trial, index, solved, core_rate)
        records.append(record)
        if not record.passed:
            break
    return records


def _grading(record: CheckpointRecord) -> CheckpointEvaluation:
    tests = [TestCase(id=f"test_{i}", file=f"tests/test_{record.checkpoint}.py",
                      checkpoint=record.checkpoint,
                      group=Group.CORE if i < 4 else Group.FUNCTIONALITY,
                      outcome="passed" if record.solved or i % 3 else "failed",
                      message=None if record.solved or i % 3 else "AssertionError: 1 != 2")
             for i in range(12)]
    return CheckpointEvaluation(
        problem=record.problem, problem_version=1, checkpoint=record.checkpoint,
        checkpoint_version=1, status=GradeStatus.COMPLETED, pytest_exit_code=0,
        pytest_collected=len(tests), counts=record.counts, verdicts=record.verdicts, tests=tests,
        duration_s=1.0, total_duration_s=record.grade_duration_s, grader=GRADER)


def _write_checkpoint(layout: RunLayout, record: CheckpointRecord) -> None:
    folder = layout.checkpoint_dir(record.problem, record.trial, record.checkpoint)
    (folder / "snapshot").mkdir(parents=True)
    # each attempt's code its own (as agents' are), so no page is a copy of another's
    code = f"# {record.problem}, trial {record.trial}\n" + "".join(
        f"def f{i}(x):\n    return x + {i}\n\n" for i in range(record.index * 5))
    (folder / "snapshot" / "main.py").write_text(code)
    (folder / "prompt.txt").write_text(f"Implement {record.checkpoint} of {record.problem}.\n")
    (folder / "grading.json").write_text(_grading(record).model_dump_json())
    (folder / "diff.json").write_text(json.dumps(
        {"format": "benchwright.diff/1", "added": [] if record.index > 1 else ["main.py"],
         "removed": [], "modified": ["main.py"] if record.index > 1 else [],
         "lines_added": 10, "lines_removed": 0, "patches": {}}))


def write_run(run_dir: Path, problems: int, trials: int, checkpoints: int, seed: int,
              folders: bool, core_rate: float = 0.8) -> int:
    """One finished synthetic coding run; `folders` writes every checkpoint's folder too;
    `core_rate` is the chance that an unsolved checkpoint still passes the policy (1.0: every
    attempt reaches its last checkpoint). Returns the checkpoints graded."""
    rng = random.Random(seed)
    names = [f"problem_{i:03d}" for i in range(problems)]
    config = RunConfig(problems_dir=Path("/problems"), problems=names, agent="mini",
                       model=f"model-{seed % 7}", trials=trials)
    manifest = Manifest(created_at=CREATED, benchwright_version="0.1.0", config=config,
                        problem_checksums={p: "0" for p in names},
                        problem_checkpoints={p: [f"checkpoint_{i}"
                                                 for i in range(1, checkpoints + 1)]
                                             for p in names}, environment={})
    layout = RunLayout(run_dir)
    run_dir.mkdir(parents=True)
    layout.manifest.write_text(manifest.model_dump_json())
    skill = 0.5 + rng.random() * 0.45
    every: list[CheckpointRecord] = []
    for problem in names:
        for trial in range(1, trials + 1):
            records = _attempt(rng, problem, trial, checkpoints, skill, core_rate)
            every += records
            layout.chain_dir(problem, trial).mkdir(parents=True)
            layout.journal(problem, trial).write_text(
                "".join(r.model_dump_json() + "\n" for r in records))
            for record in records if folders else []:
                _write_checkpoint(layout, record)
    layout.records_jsonl.write_text("".join(r.model_dump_json() + "\n" for r in every))
    layout.result_json.write_text(_result(run_dir, manifest, every).model_dump_json())
    return len(every)


def _result(run_dir: Path, manifest: Manifest, records: list[CheckpointRecord]) -> RunResult:
    config = manifest.config
    planned = len(config.problems) * config.trials * len(next(iter(
        manifest.problem_checkpoints.values())))
    solved = sum(r.solved for r in records)
    return RunResult(run_dir=run_dir, created_at=CREATED, n_problems=len(config.problems),
                     n_trials=config.trials, n_checkpoints=len(records),
                     n_checkpoints_planned=planned, n_checkpoints_solved=solved,
                     n_checkpoints_passed=sum(r.passed for r in records), n_problems_solved=0,
                     n_problems_partial=0, checkpoint_solve_rate=solved / planned,
                     agent=config.agent, model=config.model, complete=True)


# ------------------------------------------------------------------ measuring


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Viewer:
    """`benchwright view` in its own process."""

    def __init__(self, root: Path) -> None:
        self.port = _free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchwright", "view", str(root), "--no-open", "--port",
             str(self.port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().split()[2]
        self.last_cpu = 0.0

    def get(self, path: str) -> float:
        start, cpu = time.perf_counter(), self.cpu_s()
        with urllib.request.urlopen(self.url.rstrip("/") + path, timeout=600) as answer:
            answer.read()
        self.last_cpu = self.cpu_s() - cpu
        return time.perf_counter() - start

    def cpu_s(self) -> float:
        """CPU seconds the server process has used (user + system): on a shared machine the
        wall time also counts the time other processes held the cores."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def memory_mb(self) -> tuple[float, float]:
        """(resident now, peak resident) of the server process, MB."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        fields = {line.split(":")[0]: line.split()[1] for line in status.splitlines()
                  if line.startswith(("VmRSS", "VmHWM"))}
        return int(fields["VmRSS"]) / 1024, int(fields["VmHWM"]) / 1024

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def _reference(root: Path) -> float:
    """Reading every run's manifest and result.json raw: the floor of any run list."""
    start = time.perf_counter()
    for manifest in root.glob("*/manifest.json"):
        json.loads(manifest.read_bytes())
        json.loads((manifest.parent / "result.json").read_bytes())
    return time.perf_counter() - start


def _browser_times(url: str) -> tuple[float, float] | None:
    """Seconds from navigation until the page's content is drawn and until its charts are
    (the page's own performance marks); None without a browser."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not Path("/usr/bin/chromium").exists():
        return None
    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                       args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto("about:blank")  # the renderer's start is not the page's
        page.goto(url)
        marks = [_mark(page, name) for name in ("bw:rendered", "bw:charts")]
        browser.close()
    return marks[0], marks[1]


def _mark(page: Any, name: str) -> float:
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        found = page.evaluate(f"performance.getEntriesByName({name!r}).map(e => e.startTime)")
        if found:
            return float(found[0]) / 1000
        time.sleep(0.05)
    raise TimeoutError(name)


def _row(name: str, seconds: float, target: float = TARGET_S, cpu: float | None = None) -> None:
    spent = f"   (server CPU {cpu:6.3f} s)" if cpu is not None else ""
    print(f"  {name:<52} {seconds:8.3f} s  {seconds / target:5.2f}x target{spent}")


def _served(viewer: Viewer, name: str, paths: list[str]) -> None:
    """Requests a page makes, timed together, with the server's CPU time they took."""
    cpu = wall = 0.0
    for path in paths:
        wall += viewer.get(path)
        cpu += viewer.last_cpu
    _row(name, wall, cpu=cpu)


def _timed(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _in_browser(viewer: Viewer, url: str, what: str) -> str:
    """The page in Chromium, then the server's memory: printed, and returned for the row."""
    times = _browser_times(url)
    if times:
        _row(f"browser: {what} drawn", times[0])
        _row("browser: every chart drawn", times[1])
    now, peak = viewer.memory_mb()
    print(f"  server memory: {now:.0f} MB now, {peak:.0f} MB peak   "
          f"{peak / TARGET_MB:.2f}x target ({TARGET_MB:.0f} MB)")
    drawn = f"drawn in {times[0]:.2f} s" if times else "drawn in unknown s (no Chromium)"
    return f"{drawn}, server peak {peak:.0f} MB"


def bench_many(root: Path, runs: int, problems: int) -> str:
    print(f"\n{runs} coding runs x {problems} problems x 3 checkpoints")
    made = _timed(lambda: [write_run(root / f"run_{i:04d}", problems, 1, 3, i, False)
                           for i in range(runs)])
    print(f"  (written in {made:.1f} s)")
    _row("reference: every manifest + result.json, json.loads", _reference(root))
    viewer = Viewer(root)
    try:
        rids = [run_id((root / f"run_{i:04d}").resolve()) for i in range(runs)]
        _served(viewer, "run list + overview data, cold (runs.js)", ["/data/runs.js"])
        _served(viewer, "run list + overview data, warm", ["/data/runs.js"])
        _served(viewer, "CIs of the 50 rows on screen (50 x ci.js)",
                [f"/data/run/{r}/ci.js" for r in rids[:50]])
        _served(viewer, "quality distributions of 60 runs (60 x qd.js)",
                [f"/data/run/{r}/qd.js" for r in rids[:60]])
        shown = _in_browser(viewer, viewer.url + "#/", "the runs page, table and text")
    finally:
        viewer.stop()
    return f"{runs:,} runs' page {shown}"


def bench_big(root: Path, checkpoints: int, bundle: bool) -> str:
    problems, trials, size = max(1, checkpoints // 100), 10, 10
    print(f"\none run of {problems} problems x {trials} trials x {size} checkpoints")
    run = root / "big"
    written = write_run(run, problems, trials, size, 7, True, core_rate=1.0)
    print(f"  ({written} checkpoints graded)")
    viewer = Viewer(root)
    try:
        rid = run_id(run.resolve())
        _served(viewer, "run page data, cold (run.js: report + grid)", [f"/data/run/{rid}.js"])
        _served(viewer, "run page data, warm", [f"/data/run/{rid}.js"])
        _served(viewer, "one problem's page (p/problem_000.js)",
                [f"/data/run/{rid}/p/problem_000.js"])
        _served(viewer, "one checkpoint's page",
                [f"/data/run/{rid}/cp/problem_000/1/checkpoint_1.js"])
        shown = _in_browser(viewer, f"{viewer.url}#/run/{rid}", "the run page, grid and text")
    finally:
        viewer.stop()
    if bundle:
        _bench_bundle(root, run)
    return f"a {written:,}-checkpoint run's page {shown}"


def _bench_bundle(root: Path, run: Path) -> None:
    out = root / "bundle"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "benchwright", "view", str(run), "--bundle", str(out)],
                   check=True, capture_output=True)
    took = time.perf_counter() - start
    files = [p for p in out.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files) / 2**20
    print(f"  bundle: {len(files)} files, {size:.0f} MB, written in {took:.1f} s")
    times = _browser_times(f"{(out / 'index.html').as_uri()}#/run/{run_id(run.resolve())}")
    if times:
        _row("bundle over file://: the run page, grid drawn", times[0])
        _row("bundle over file://: the run page, every chart drawn", times[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--problems", type=int, default=20)
    parser.add_argument("--big", type=int, default=10_000)
    parser.add_argument("--bundle", action="store_true")
    parser.add_argument("--keep", type=Path, help="write the runs here and keep them")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bw-view-scale-"))
    try:
        print(f"targets: open in under {TARGET_S} s, server memory under {TARGET_MB:.0f} MB "
              f"({os.cpu_count()} cores)")
        figures = [bench_many(root / "many", args.runs, args.problems),
                   bench_big(root / "one", args.big, args.bundle)]
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    print_row("view_scale.py", f"the viewer on {args.runs:,} runs x {args.problems} problems and "
              f"one run of {args.big:,} checkpoints", "the page budgets", "; ".join(figures),
              f"open < {TARGET_S:g} s, server < {TARGET_MB:.0f} MB")


if __name__ == "__main__":
    main()
