"""Scoring speed: `benchwright web eval` against the official `webarena-verified eval-tasks`.

Builds FOLDERS copies of a synthetic batch (benchwright.web.evaluation.synthetic: right and wrong
answers over every site and task type), pads every HAR with static-asset entries to about HAR_KB
kilobytes (the evaluator drops those, as it drops a real browser's scripts and images; 800 KB is a
typical real trace), then scores each folder as a user would, one command per folder:
- official: `webarena-verified eval-tasks --output-dir F --config CFG`;
- benchwright, first scoring: `python -m benchwright.cli.web_cmd eval F --json`;
- benchwright, re-scoring the same folders (unchanged verdicts are reused).
Both sides are pinned to one core (`taskset -c CORE`, default 0): the per-core ratios, wall and
CPU (user + sys of the command and its children), are the target's. The official CLI scores on
one core only; benchwright then scores fresh copies again on every core (it forks one evaluator
worker per core), for the all-core wall ratio. CPU figures hold on a busy machine, wall figures
only on an idle one: the load is printed. Checks that the verdicts agree on every attempt.
With --keep DIR, a batch already built there (DIR/template) is reused as it is.

Usage: python bench/web_eval_speed.py [--folders N] [--per-group K] [--har-kb KB] [--keep DIR]
       [--core N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from perf_row import print_row

from benchwright.web.evaluation.evaluator import evaluator_env, official_cli
from benchwright.web.evaluation.synthetic import build_batch, har_entry, local_config
from benchwright.web.evaluation.tasks import load_env_dataset

PAD_ENTRY_BYTES = 4000


def _pad(root: Path, har_kb: int) -> None:
    count = max(0, har_kb * 1000 // (PAD_ENTRY_BYTES + 600))
    for path in root.glob("*/network.har"):
        data = json.loads(path.read_text())
        pad = [har_entry("GET", f"http://127.0.0.1:7770/static/b{i}.js") for i in range(count)]
        for entry in pad:
            entry["response"]["content"] = {"size": PAD_ENTRY_BYTES, "text": "x" * PAD_ENTRY_BYTES,
                                            "mimeType": "application/javascript"}
        data["log"]["entries"] = pad + data["log"]["entries"]
        path.write_text(json.dumps(data))


class Cost:
    """Wall and CPU seconds of the commands run so far (children's user + sys)."""

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0

    def run(self, argv: list[str]) -> None:
        before, start = _children_cpu(), time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        self.wall += time.perf_counter() - start
        self.cpu += _children_cpu() - before


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cost(argv: list[str], folders: list[Path]) -> Cost:
    cost = Cost()
    for folder in folders:
        cost.run([*argv, str(folder)])
    return cost


def _scores(root: Path) -> dict[str, float]:
    return {f"{p.parent.parent.name}/{p.parent.name}": json.loads(p.read_text())["score"]
            for p in root.glob("*/*/eval_result.json")}


def _write_configs(work: Path) -> tuple[Path, Path]:
    config = local_config()
    official = work / "config.json"
    official.write_text(json.dumps({"environments": config.evaluator_environments()}))
    ours = work / "env.yaml"
    ours.write_text("sites:\n" + "".join(f"  {s}: {{url: '{config.site(s).url}'}}\n"
                                         for s in config.configured()))
    return official, ours


def _batch(args: argparse.Namespace, work: Path) -> int:
    """Build (or reuse) the template batch and fresh copies of it per side; its task count."""
    if not (work / "template").is_dir():
        build_batch(work / "template", load_env_dataset(), per_group=args.per_group)
        _pad(work / "template", args.har_kb)
    for side in ("official", "ours", "ours-all-cores"):
        shutil.rmtree(work / side, ignore_errors=True)
        for k in range(args.folders):
            shutil.copytree(work / "template", work / side / f"run{k}")
    return len(list((work / "template").iterdir()))


def _folders(work: Path, side: str) -> list[Path]:
    return sorted((work / side).iterdir())


def _ratio(line: str, cost: Cost, official: Cost) -> str:
    return (f"{line:<34} {cost.wall:7.2f} s wall {official.wall / cost.wall:5.1f}x   "
            f"{cost.cpu:7.2f} s CPU {official.cpu / cost.cpu:5.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folders", type=int, default=1)
    parser.add_argument("--per-group", type=int, default=120)
    parser.add_argument("--har-kb", type=int, default=800)
    parser.add_argument("--keep", type=Path, help="build the folders here and keep them")
    parser.add_argument("--core", type=int, default=0, help="the core both sides are pinned to")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="web-eval-speed-"))
    work.mkdir(parents=True, exist_ok=True)
    official_cfg, our_cfg = _write_configs(work)
    n = args.folders * _batch(args, work)
    pin = ["taskset", "-c", str(args.core)]
    ours = [sys.executable, "-m", "benchwright.cli.web_cmd", "eval", "--config", str(our_cfg),
            "--json"]
    official = _cost([*pin, str(official_cli(evaluator_env())), "eval-tasks", "--config",
                      str(official_cfg), "--output-dir"], _folders(work, "official"))
    first = _cost([*pin, *ours], _folders(work, "ours"))
    again = _cost([*pin, *ours], _folders(work, "ours"))
    every_core = _cost(ours, _folders(work, "ours-all-cores"))
    agree = _scores(work / "official") == _scores(work / "ours") == \
        _scores(work / "ours-all-cores")
    load = os.getloadavg()[0]
    print(f"{n} attempts ({args.folders} folders), HARs ~{args.har_kb} KB, load {load:.1f}, "
          f"pinned to core {args.core}; ratios against the official CLI")
    print(f"{'official CLI (one call per folder)':<34} {official.wall:7.2f} s wall "
          f"{'':6}   {official.cpu:7.2f} s CPU")
    print(_ratio("benchwright, first scoring", first, official) + "   (target >= 15x)")
    print(_ratio("benchwright, re-scoring", again, official) + "   (verdicts reused)")
    print(_ratio(f"first scoring, all {len(os.sched_getaffinity(0))} cores (wall)", every_core,
                 official) + "   (CPU misses forked workers)")
    print(f"per attempt, one core: official {official.cpu / n * 1000:.1f} ms CPU, benchwright "
          f"first scoring {first.cpu / n * 1000:.1f} ms CPU (both including start-up)")
    print(f"verdicts agree on all {n} attempts: {agree}")
    print_row("web_eval_speed.py", f"`web eval`, {n} attempts, HARs ~{args.har_kb} KB, first "
              "scoring and re-scoring, one core", "`webarena-verified eval-tasks`, one core",
              f"{official.cpu / first.cpu:.1f}x first (CPU), {official.wall / first.wall:.1f}x "
              f"(wall), {official.cpu / again.cpu:.1f}x re-scoring (CPU), all cores "
              f"{official.wall / every_core.wall:.1f}x (wall), verdicts agree: {agree}",
              ">= 15x first scoring, per core")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
