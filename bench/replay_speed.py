"""Replaying model traffic against recording it: the replay spends no model time.

Two measurements, each with its reference taken in the same run:

1. Per call: a growing conversation of N Chat Completions calls (half of them streamed, the
   prompt growing by ~4 KB a call, as an agent's does) is recorded through the proxy against the
   fake LLM server scripted to answer after 1 s a call, then replayed from the cassette. The
   reference is the same calls sent straight to a fake server that answers at once: the client
   and loopback HTTP cost of a call. Overhead per call = (replay - reference) / N (target: under
   5 ms).
2. A whole run (`--run`): `benchwright run coding --agent mini` on ledger_cli's first checkpoint,
   recorded with 1 s a call, then replayed; the agents' time of each (result.json) and the
   command's wall time.

Usage: python bench/replay_speed.py [--calls N] [--run]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import openai
from perf_row import print_row

from benchwright.llm.models import LlmTraffic, TrafficMode
from benchwright.llm.proxy import LlmProxy
from benchwright.testing import FakeLLMServer, Script

LATENCY_S = 1.0
KEY = "sk-bench-replay-0000000000"


def script(calls: int, latency: float) -> Script:
    return Script.model_validate({"latency_s": latency, "turns": [
        {"text": f"step {i}: " + "ok " * 200,
         "usage": {"input_tokens": 1000 + i, "output_tokens": 200}} for i in range(calls)]})


def conversation(base_url: str, calls: int) -> float:
    """N calls of a growing conversation; seconds taken."""
    client = openai.OpenAI(api_key=KEY, base_url=f"{base_url}/v1", max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are terse. " * 300}]
    start = time.perf_counter()
    for i in range(calls):
        messages.append({"role": "user", "content": f"call {i} at /tmp/w{i} " + "x" * 4000})
        if i % 2:
            stream = client.chat.completions.create(
                model="gpt-5", messages=messages, stream=True)  # type: ignore[arg-type]
            text = "".join(c.choices[0].delta.content or "" for c in stream  # type: ignore[union-attr]
                           if c.choices)  # type: ignore[union-attr]
        else:
            reply = client.chat.completions.create(
                model="gpt-5", messages=messages)  # type: ignore[arg-type]
            text = reply.choices[0].message.content or ""
        messages.append({"role": "assistant", "content": text})
    return time.perf_counter() - start


def through_proxy(traffic: LlmTraffic, upstream: str | None, calls: int) -> float:
    with LlmProxy(traffic, upstream, "bench", "gpt-5") as proxy:
        proxy.begin("bench/conversation", {})
        seconds = conversation(proxy.url_for(upstream), calls)
        diverged = proxy.end()
    assert diverged is None, diverged
    return seconds


def per_call(calls: int, folder: Path) -> str:
    """Prints the per-call figures; returns the row's."""
    cassette = folder / "cassette"
    with FakeLLMServer(script(calls, 0.0)) as server:
        conversation(server.base_url, 2)  # warm-up: imports, first connection
    with FakeLLMServer(script(calls, 0.0)) as server:
        reference = conversation(server.base_url, calls)
    with FakeLLMServer(script(calls, LATENCY_S)) as server:
        recorded = through_proxy(LlmTraffic(mode=TrafficMode.RECORD, cassette=cassette),
                                 server.base_url, calls)
    replayed = through_proxy(LlmTraffic(mode=TrafficMode.REPLAY, cassette=cassette), None,
                             calls)
    overhead_ms = (replayed - reference) / calls * 1000
    print(f"per call ({calls} calls, model latency {LATENCY_S:g} s a call in the recording)")
    print(f"  reference (straight to an instant fake server): {reference / calls * 1000:8.2f} ms"
          " a call")
    print(f"  recorded through the proxy:                     {recorded / calls * 1000:8.2f} ms"
          " a call")
    print(f"  replayed from the cassette:                     {replayed / calls * 1000:8.2f} ms"
          " a call")
    print(f"  replay / recorded: {replayed / recorded:.4f}   replay / reference: "
          f"{replayed / reference:.2f}x   overhead per call: {overhead_ms:.2f} ms "
          f"({'under' if overhead_ms < 5 else 'OVER'} the 5 ms target)")
    return (f"{overhead_ms:.2f} ms a call over the reference; replay / recorded "
            f"{replayed / recorded:.4f} ({calls} calls)")


def whole_run(folder: Path) -> str:
    """Prints the whole run's figures; returns the row's."""
    from benchwright.coding.problems.examples import example_problem_dir

    problem = example_problem_dir("ledger_cli")
    solution = problem / "solutions" / "checkpoint_1"
    writes = "\n".join(f"cat > {f.name} <<'EOF_'\n{f.read_text()}EOF_"
                       for f in sorted(solution.iterdir()) if f.is_file())
    turns = {"latency_s": LATENCY_S, "turns": [
        {"text": "Writing.", "tool_calls": [{"name": "bash", "arguments": {"command": writes}}]},
        {"text": "Checking.", "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]},
        {"text": "Done."}]}
    cassette = folder / "run-cassette"
    with FakeLLMServer(Script.model_validate(turns)) as server:
        recorded = _mini(folder / "recorded", server.base_url, "--llm-record", cassette)
        base_url = server.base_url
    replayed = _mini(folder / "replayed", base_url, "--llm-replay", cassette)
    print("a whole run (mini, ledger_cli checkpoint 1, 3 model calls)")
    for name, (wall, agent) in (("recorded", recorded), ("replayed", replayed)):
        print(f"  {name}: agent time {agent:6.2f} s, command {wall:6.2f} s")
    print(f"  agent time replay / recorded: {replayed[1] / recorded[1]:.4f}; model time saved "
          f"per call: {(recorded[1] - replayed[1]) / 3:.2f} s")
    return f"a mini run's agent time {replayed[1] / recorded[1]:.4f}x its recording"


def _mini(out: Path, base_url: str, option: str, cassette: Path) -> tuple[float, float]:
    problems = out.parent / "problems"
    if not problems.exists():
        import shutil

        import yaml

        from benchwright.coding.problems.examples import example_problem_dir
        shutil.copytree(example_problem_dir("ledger_cli"), problems / "ledger_cli")
        config_path = problems / "ledger_cli" / "config.yaml"
        config = yaml.safe_load(config_path.read_text())
        config["checkpoints"] = {"checkpoint_1": config["checkpoints"]["checkpoint_1"]}
        config_path.write_text(yaml.safe_dump(config))
    env = {**os.environ, "OPENAI_API_KEY": KEY} if option == "--llm-record" else \
        {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "benchwright", "run", "coding", "--agent",
                           "mini", "--model", "gpt-5", "--problems-dir", str(problems),
                           "--base-url", f"{base_url}/v1", "--no-metrics", "--out", str(out),
                           option, str(cassette), "--json"], capture_output=True, text=True,
                          env=env, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return wall, float(json.loads(done.stdout)["totals"]["agent_time_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--run", action="store_true", help="also a whole mini run")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        figures = [per_call(options.calls, Path(folder))]
        if options.run:
            figures.append(whole_run(Path(folder)))
    print_row("replay_speed.py", "replaying recorded model traffic (a growing conversation; "
              "`--run`: a mini run too)", "the same calls to an instant fake server; recording "
              f"them (the model answers after {LATENCY_S:g} s)", "; ".join(figures),
              "< 5 ms a call")


if __name__ == "__main__":
    main()
