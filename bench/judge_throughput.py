"""LLM judge throughput against the fake LLM server answering every call after a fixed latency.

Writes a coding run of 20 checkpoints (4 problems x 5, one small file each), judges it with
`--concurrency 8` through the real judge (OpenAI protocol, loopback; the server in its own
process, as a provider would be), and compares the wall time of `judge_run` (set-up, planning,
requests, files, quality records) with the ideal: calls x latency / concurrency. Target: a ratio
of at most 1.3. Then judges it again (every answer from the cache) and prints that time too.

Usage: python bench/judge_throughput.py [--latency 0.2] [--concurrency 8] [--checkpoints 20]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from perf_row import print_row

from benchwright.coding.agents.base import AgentResult, AgentStatus
from benchwright.coding.attempts.judging.judge import judge_run
from benchwright.coding.attempts.layout import RunLayout
from benchwright.coding.attempts.models import CheckpointRecord, Manifest, RunConfig
from benchwright.coding.grading.evaluation import GradeStatus
from benchwright.coding.grading.policies import GroupCount, PassPolicy
from benchwright.coding.problems.config import Group
from benchwright.files.atomic import write_json_atomic
from benchwright.judge.models import JudgeSettings

PER_PROBLEM = 5


def _record(problem: str, index: int) -> CheckpointRecord:
    counts = {Group.CORE: GroupCount(passed=1, total=1)}
    return CheckpointRecord(
        problem=problem, trial=1, checkpoint=f"checkpoint_{index}", index=index,
        prompt_sha256="0" * 64, agent=AgentResult(status=AgentStatus.COMPLETED),
        grade_status=GradeStatus.COMPLETED, counts=counts,
        verdicts={PassPolicy.CORE_CASES: True}, passed=True, solved=True, iso_solved=True,
        core_solved=True, snapshot_files=1, grade_duration_s=0.0,
        finished_at="2026-01-01T00:00:00+00:00")


def _code(problem: str, index: int) -> str:
    body = "".join(f"def step_{i}(x):\n    return x + {i}\n\n\n" for i in range(12 + index))
    return f'"""{problem}, checkpoint {index}."""\n\n\n{body}'


def write_run(root: Path, checkpoints: int) -> RunConfig:
    """A coding run folder of `checkpoints` checkpoints, no grading behind it."""
    problems = [f"bench_{n}" for n in range(-(-checkpoints // PER_PROBLEM))]
    config = RunConfig(problems_dir=root / "no-problems", problems=problems, agent="oracle")
    names = {p: [f"checkpoint_{i}" for i in range(1, PER_PROBLEM + 1)] for p in problems}
    manifest = Manifest(created_at="2026-01-01T00:00:00+00:00", benchwright_version="bench",
                        config=config, problem_checksums={p: "0" for p in problems},
                        problem_checkpoints=names, environment={})
    layout = RunLayout(root)
    write_json_atomic(layout.manifest, manifest.model_dump(mode="json"))
    for n in range(checkpoints):
        problem, index = problems[n // PER_PROBLEM], n % PER_PROBLEM + 1
        folder = layout.checkpoint_dir(problem, 1, f"checkpoint_{index}")
        (folder / "snapshot").mkdir(parents=True)
        (folder / "snapshot" / "main.py").write_text(_code(problem, index))
        (folder / "prompt.txt").write_text(f"Write {problem}, step {index}.\n")
        journal = layout.journal(problem, 1)
        with journal.open("a") as handle:
            handle.write(_record(problem, index).model_dump_json() + "\n")
    return config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--checkpoints", type=int, default=20)
    args = parser.parse_args()
    # the SDK's import (seconds on a cold disk) is not judging: the package and the module of
    # the endpoint the judge calls, which the SDK imports on first use
    import openai.resources.chat  # noqa: F401
    script = {"latency_s": args.latency, "rules": [
        {"match": [], "replies": [{"text": '{"flags": []}', "usage": {
            "input_tokens": 1000, "output_tokens": 10, "cost_usd": 0.001}}]}]}
    with tempfile.TemporaryDirectory() as tmp, _server(Path(tmp), script) as base_url:
        run_dir = Path(tmp) / "run"
        config = write_run(run_dir, args.checkpoints)
        settings = JudgeSettings(model="fake-judge", base_url=f"{base_url}/v1",
                                 concurrency=args.concurrency)
        environ = {"OPENAI_API_KEY": "sk-bench-0123456789"}
        start, started = time.perf_counter(), [0.0]
        summary = judge_run(run_dir, config, settings, environ=environ,
                            on_start=lambda _n: started.__setitem__(0, time.perf_counter()))
        end = time.perf_counter()
        wall, setup = end - start, started[0] - start
        calls = _calls(base_url)
        assert summary.n_judged == args.checkpoints and calls == summary.requests_made
        ideal = calls * args.latency / args.concurrency
        start = time.perf_counter()
        judge_run(run_dir, config, settings, overwrite=True, environ=environ)
        cached = time.perf_counter() - start
        more = _calls(base_url) - calls
        reference = _bare_calls(f"{base_url}/v1", _bodies(base_url), args.concurrency)
    print(f"{args.checkpoints} checkpoints, {calls} calls, {args.latency:g} s each, "
          f"concurrency {args.concurrency}")
    print(f"wall {wall:.2f} s; ideal (calls x latency / concurrency) {ideal:.2f} s; the same "
          f"request bodies from a bare SDK client, {args.concurrency} threads: {reference:.2f} s")
    print(f"ratio {wall / ideal:.2f} (target <= 1.3); against the bare client "
          f"{wall / reference:.2f}")
    print(f"of the wall time, set-up (rubric, templates, client, planning) {setup:.2f} s; "
          f"the rest against the ideal: {(wall - setup) / ideal:.2f}")
    print(f"judged again from the cache: {cached:.2f} s, {more} more calls")
    print_row("judge_throughput.py", f"the LLM judge, {calls} requests, `--concurrency "
              f"{args.concurrency}`, the model answering after {args.latency:g} s",
              "calls x latency / concurrency (the ideal)", f"{wall / ideal:.2f}x ({wall:.2f} s "
              f"against {ideal:.2f} s; {wall / reference:.2f}x a bare SDK client)", "<= 1.3x")


def _bare_calls(base_url: str, bodies: list[dict[str, Any]], concurrency: int) -> float:
    """The reference: the judge's own request bodies sent again by one OpenAI client, on as
    many threads, nothing else done."""
    import openai

    client = openai.OpenAI(api_key="sk-bench-0123456789", base_url=base_url, max_retries=0)
    start = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(lambda body: client.chat.completions.create(**body), bodies))
    return time.perf_counter() - start


@contextlib.contextmanager
def _server(folder: Path, script: dict[str, Any]) -> Iterator[str]:
    """`benchwright testing fake-llm` in its own process; yields its base URL."""
    path = folder / "script.yaml"
    path.write_text(json.dumps(script))  # JSON is YAML
    proc = subprocess.Popen([sys.executable, "-m", "benchwright", "testing", "fake-llm",
                             "--script", str(path), "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().split()[3]
    finally:
        proc.terminate()
        proc.wait()


def _bodies(base_url: str) -> list[dict[str, Any]]:
    """The bodies of the model calls the server received."""
    with urllib.request.urlopen(f"{base_url}/_fake/requests") as response:
        return [r["body"] for r in json.load(response) if r["method"] == "POST"]


def _calls(base_url: str) -> int:
    return len(_bodies(base_url))


if __name__ == "__main__":
    main()
