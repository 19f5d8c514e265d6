"""Scoring speed: `benchwright web eval` against the official `webarena-verified eval-tasks`.

Builds FOLDERS copies of a synthetic batch (benchwright.web.evaluation.synthetic: right and wrong
answers over every site and task type), pads every HAR with static-asset entries to about HAR_KB
kilobytes (the evaluator drops those, as it drops a real browser's scripts and images; 800 KB is a
typical real trace), then scores each folder as a user would, one command per folder:
- official: `webarena-verified eval-tasks --output-dir F --config CFG`;
- benchwright, first scoring: `python -m benchwright.cli.web_cmd eval F --json`;
- benchwright, re-scoring the same folders (unchanged verdicts are reused).
Prints each total, the ratios (target >= 10x), and checks that the verdicts agree. The default batch
is one folder of about 600 attempts (a whole-benchmark run is 812): both sides pay a fixed start-up
cost per command (the official CLI ~0.8 s; benchwright ~1 s, most of it the evaluator library's own
imports), so the per-attempt costs, printed too, decide the ratio on real runs.

Usage: python bench/web_eval_speed.py [--folders N] [--per-group K] [--har-kb KB] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
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


def _timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folders", type=int, default=1)
    parser.add_argument("--per-group", type=int, default=120)
    parser.add_argument("--har-kb", type=int, default=800)
    parser.add_argument("--keep", type=Path, help="build the folders here and keep them")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="web-eval-speed-"))
    work.mkdir(parents=True, exist_ok=True)
    env, dataset = evaluator_env(), load_env_dataset()
    official_cfg, our_cfg = _write_configs(work)
    build_batch(work / "template", dataset, per_group=args.per_group)
    _pad(work / "template", args.har_kb)
    n_tasks = len(list((work / "template").iterdir()))
    for side in ("official", "ours"):
        for k in range(args.folders):
            shutil.copytree(work / "template", work / side / f"run{k}")
    cli = str(official_cli(env))
    ours = [sys.executable, "-m", "benchwright.cli.web_cmd", "eval", "--config", str(our_cfg),
            "--json"]
    official_s = sum(_timed([cli, "eval-tasks", "--output-dir", str(f), "--config",
                             str(official_cfg)]) for f in sorted((work / "official").iterdir()))
    first_s = sum(_timed([*ours, str(f)]) for f in sorted((work / "ours").iterdir()))
    again_s = sum(_timed([*ours, str(f)]) for f in sorted((work / "ours").iterdir()))
    agree = _scores(work / "official") == _scores(work / "ours")
    print(f"{args.folders} folders x {n_tasks} tasks, HARs ~{args.har_kb} KB")
    print(f"official CLI (one call per folder):  {official_s:7.2f} s")
    print(f"benchwright, first scoring:          {first_s:7.2f} s   "
          f"{official_s / first_s:5.1f}x faster   (target >= 10x)")
    print(f"benchwright, re-scoring:             {again_s:7.2f} s   "
          f"{official_s / again_s:5.1f}x faster   (verdicts reused by input hash)")
    n = args.folders * n_tasks
    print(f"per attempt: official {official_s / n * 1000:.1f} ms, benchwright first scoring "
          f"{first_s / n * 1000:.1f} ms (both including start-up)")
    print(f"verdicts agree: {agree}")
    print_row("web_eval_speed.py", f"`web eval`, {n} attempts, HARs ~{args.har_kb} KB, first "
              "scoring and re-scoring", "`webarena-verified eval-tasks`",
              f"{official_s / first_s:.1f}x first, {official_s / again_s:.1f}x re-scoring, "
              f"verdicts agree: {agree}", ">= 15x first scoring, per core")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
