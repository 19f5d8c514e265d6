"""Header and totals of a real run: the `mini` agent against the fake LLM server with scripted
token counts and prices, so cost and tokens are known by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchwright.testing import FakeLLMServer, Script
from tests.helpers import run_cli
from tests.helpers.mini_runs import FAKE_KEY, PROBLEM

pytestmark = pytest.mark.sandbox
pytest.importorskip("openai")
USAGE = [(1200, 300), (1500, 40), (1700, 25)]
PRICE_IN, PRICE_OUT = 2.0, 8.0  # US dollars per million tokens


def _script(problem_dir: Path) -> Script:
    solution = problem_dir / "solutions" / "checkpoint_1"
    writes = [f"cat > {f.name} <<'BENCHWRIGHT_EOF'\n{f.read_text()}BENCHWRIGHT_EOF"
              for f in sorted(solution.iterdir()) if f.is_file()]
    turns: list[dict[str, Any]] = [
        {"text": "Writing it.", "tool_calls": [{"name": "bash", "arguments": {
            "command": "\n".join(writes)}}]},
        {"text": "Checking.", "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]},
        {"text": "Done."}]
    for turn, (i, o) in zip(turns, USAGE, strict=True):
        turn["usage"] = {"input_tokens": i, "output_tokens": o}
    return Script.model_validate({"turns": turns})


def test_header_and_totals_of_a_mini_run(problems_dir: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    out = tmp_path / "run"
    with FakeLLMServer(_script(problems_dir / PROBLEM)) as server:
        done = run_cli("run", "coding", "--agent", "mini", "--model", "fake", "--problems-dir",
                       str(problems_dir), "--base-url", f"{server.base_url}/v1", "--no-metrics",
                       "--prompt", "plan-first", "--out", str(out), "--json",
                       "-A", f"input_price_per_mtok={PRICE_IN:g}",
                       "-A", f"output_price_per_mtok={PRICE_OUT:g}")
    assert done.returncode == 0, done.stderr
    tokens_in, tokens_out = sum(i for i, _ in USAGE), sum(o for _, o in USAGE)
    cost = (tokens_in * PRICE_IN + tokens_out * PRICE_OUT) / 1e6
    totals = json.loads((out / "result.json").read_text())["totals"]
    assert (totals["input_tokens"], totals["output_tokens"], totals["steps"]) == (
        tokens_in, tokens_out, 3)
    assert totals["cost_usd"] == pytest.approx(cost)
    [record] = [json.loads(line) for line in
                (out / "checkpoint_records.jsonl").read_text().splitlines()]
    assert totals["agent_time_s"] == pytest.approx(record["agent"]["duration_s"])
    assert totals["grading_time_s"] == pytest.approx(record["grade_duration_s"])
    report = json.loads(run_cli("report", str(out), "--json").stdout)
    assert report["totals"] == totals
    header = report["header"]
    assert (header["agent"], header["model"], header["prompt"], header["policy"],
            header["trials"], header["problems"]) == ("mini", "fake", "plan-first", "core-cases",
                                                      1, [PROBLEM])
    text = (out / "report.md").read_text()
    assert f"| {cost:.4f} | {tokens_in:,} | {tokens_out:,} | 0 | 3 |" in text


def _unpriced_run(problems_dir: Path, out: Path, *options: str) -> Any:
    with FakeLLMServer(_script(problems_dir / PROBLEM)) as server:
        return run_cli("run", "coding", "--agent", "mini", "--model", "fake-unpriced",
                       "--problems-dir", str(problems_dir), "--base-url",
                       f"{server.base_url}/v1", "--no-metrics", "--out", str(out), *options)


def test_an_unpriced_model_costs_unknown_never_zero(problems_dir: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 27's acceptance: no $0.0000 in the CLI, report.md, report --json or the frames."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    out = tmp_path / "run"
    done = _unpriced_run(problems_dir, out)
    assert done.returncode == 0, done.stderr
    assert "cost unknown, tokens 4,400 in" in done.stdout
    report = run_cli("report", str(out), "--json")
    text = (out / "report.md").read_text()
    for shown in (done.stdout, done.stderr, text, report.stdout):
        assert "0.0000" not in shown
    assert "| unknown | 4,400 | 365 |" in text
    totals = json.loads(report.stdout)["totals"]
    assert (totals["cost_usd"], totals["cost_unknown"]) == (None, 1)
    [row] = json.loads(report.stdout)["per_checkpoint"]
    assert row["unknown"] == ["cost (USD)"] and "cost (USD)" not in [
        m["name"] for m in row["metrics"]]
    pytest.importorskip("pandas")
    import benchwright

    assert benchwright.checkpoints_frame([out])["cost_usd"].tolist() == [None]
    assert benchwright.runs_frame([out])["totals.cost_usd"].tolist() == [None]


def test_max_cost_needs_a_known_price(problems_dir: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """--max-cost on a model without a price is refused with one line before anything runs;
    with --price-in/--price-out it runs and the cost is known."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    refused = _unpriced_run(problems_dir, tmp_path / "refused", "--max-cost", "1")
    assert refused.returncode == 2
    [line] = refused.stderr.strip().splitlines()
    assert "--max-cost 1 cannot be enforced: model 'fake-unpriced' has no known price" in line
    assert "--price-in and --price-out" in line and "Traceback" not in refused.stderr
    assert not (tmp_path / "refused").exists()
    priced = _unpriced_run(problems_dir, tmp_path / "priced", "--max-cost", "1",
                           "--price-in", f"{PRICE_IN:g}", "--price-out", f"{PRICE_OUT:g}")
    assert priced.returncode == 0, priced.stderr
    cost = (4400 * PRICE_IN + 365 * PRICE_OUT) / 1e6
    assert f"cost ${cost:.4f}," in priced.stdout
