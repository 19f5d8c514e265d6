"""`benchwright metrics judge` and `run coding --judge-model`, end to end through the CLI, on an
oracle run of the bundled problems, against the fake LLM server speaking OpenAI Chat
Completions and the Anthropic Messages API with scripted verdicts.

The verdicts are chosen by what a request holds (a file's first line names its problem and
checkpoint; the criteria part names the category's items), so the threads' order does not
matter. The hand-computed case, ledger_cli checkpoint 1 -> 2 (ledger.py's diff: line 1 replaced,
50 lines inserted after old line 111, old 120-139 rewritten as 35 lines, so old 112-119 move
+50 and old 140-145 move +65):
  cp1 flags   restates 20-22, duplicated 140-142, echoes 1-1, catch_all 30-31,
              swallowed 112-113, overloaded 110-113
  cp2 raised  catch_all 31-32 (the same as 30-31: start within 2), overloaded 160-180
  carried     restates 20-22, duplicated 205-207, swallowed 162-163 (an unchanged context line
              inside a hunk: SCBench would drop it); not echoes (line 1 replaced), not catch_all
              (raised again), not overloaded 110-113 (lines inserted inside it)
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchwright.coding.attempts import journal
from benchwright.coding.attempts.layout import RunLayout
from benchwright.judge.rubric import load_rubric
from benchwright.testing import FakeLLMServer, Script
from tests.helpers import run_cli
from tests.helpers.shared_runs import bundled_oracle_run

pytestmark = pytest.mark.sandbox
KEY_ENV, KEY = "JUDGE_CREDENTIAL_VAR", "judge-secret-value-0123456789"
# each snapshot's first line names its problem and checkpoint
CP = {(p, c): f"{p}, checkpoint {c}:" for p in ("ledger_cli", "kv_server") for c in (1, 2, 3)}
RUBRIC = load_rubric(None)
CATEGORY = {i.name: i.category for i in RUBRIC.items}
REQUESTS_PER_CHECKPOINT = len(RUBRIC.categories())  # one batch each: every snapshot is small
COST = 0.01  # per call, as the OpenAI-protocol server reports it (`usage.cost`)
ANTHROPIC_MODEL = "claude-haiku-4-5"  # priced 1 / 5 USD per million tokens in pricing.py
ANTHROPIC_COST = (1000 * 1.0 + 100 * 5.0) / 1e6

CP1 = [("comment_restates_code", 20, 22), ("duplicated_rule", 140, 142),
       ("docstring_echoes_name", 1, 1), ("catch_all_handler", 30, 31),
       ("swallowed_failure", 112, 113), ("overloaded_function", 110, 113)]
CP2 = [("catch_all_handler", 31, 32), ("overloaded_function", 160, 180)]
CP2_CARRIED = [("comment_restates_code", 20, 22), ("duplicated_rule", 205, 207),
               ("swallowed_failure", 162, 163)]


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The oracle over both bundled problems, with metrics: made once per test session."""
    out, summary = bundled_oracle_run(tmp_path_factory)
    assert summary["n_checkpoints"] == 6
    return out


@pytest.fixture
def run(oracle_run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(oracle_run, copy, symlinks=True)
    return copy


def _flag(name: str, start: int, end: int, file: str = "ledger.py") -> dict[str, Any]:
    return {"criteria": name, "file_name": file, "start": start, "end": end, "confidence": 4,
            "explanation": f"{name} here"}


def _reply(protocol: str, flags: list[dict[str, Any]] | str) -> dict[str, Any]:
    """One scripted answer: JSON text (openai) or the forced tool's input (anthropic)."""
    usage: dict[str, Any] = {"input_tokens": 1000, "output_tokens": 100}
    if protocol == "anthropic":
        body = flags if isinstance(flags, str) else {"flags": flags}
        return {"tool_calls": [{"name": "report_flags", "arguments": body}], "usage": usage}
    text = flags if isinstance(flags, str) else json.dumps({"flags": flags})
    return {"text": text, "usage": {**usage, "cost_usd": COST}}


def _rules(protocol: str, verdicts: dict[tuple[str, int], list[dict[str, Any]]],
           extra: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """A rule per checkpoint and category holding flags, then extra rules, then no flags."""
    rules = list(extra or [])
    for key, flags in verdicts.items():
        for category in {CATEGORY[f["criteria"]] for f in flags}:
            items = [f for f in flags if CATEGORY[f["criteria"]] == category]
            marker = f"## {RUBRIC.categories()[category][0].name} ("
            rules.append({"match": [CP[key], marker], "replies": [_reply(protocol, items)]})
    return [*rules, {"match": [], "replies": [_reply(protocol, [])]}]


def _server(protocol: str, rules: list[dict[str, Any]], **script: Any) -> FakeLLMServer:
    return FakeLLMServer(Script.model_validate({"rules": rules, **script}))


def _judge(run_dir: Path, server: FakeLLMServer, protocol: str, *args: str,
           expect: int = 0) -> dict[str, Any]:
    model = ANTHROPIC_MODEL if protocol == "anthropic" else "fake-judge"
    env = {**os.environ, KEY_ENV: KEY}
    done = run_cli("metrics", "judge", str(run_dir), "--model", model, "--protocol", protocol,
                   "--base-url", _base(server, protocol), "--api-key-env", KEY_ENV,
                   "--retry-backoff", "0", "--json", *args, env=env)
    assert done.returncode == expect, done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def _base(server: FakeLLMServer, protocol: str) -> str:
    # the openai SDK wants the /v1 in its base URL, the anthropic SDK adds it itself
    return server.base_url if protocol == "anthropic" else f"{server.base_url}/v1"


def _folder(run_dir: Path, problem: str, checkpoint: int) -> Path:
    return RunLayout(run_dir).checkpoint_dir(problem, 1, f"checkpoint_{checkpoint}")


def _rubric(run_dir: Path, problem: str, checkpoint: int) -> list[dict[str, Any]]:
    text = (_folder(run_dir, problem, checkpoint) / "rubric.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def _spans(flags: list[dict[str, Any]], carried: bool) -> set[tuple[str, int, int]]:
    return {(f["criteria"], f["start"], f["end"]) for f in flags
            if ("carried_over" in f) == carried}


def _judge_file(run_dir: Path, problem: str, checkpoint: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (_folder(run_dir, problem, checkpoint) / "judge.json").read_text())
    return data


def _records(run_dir: Path, problem: str) -> list[Any]:
    return journal.read_records(RunLayout(run_dir).journal(problem, 1))


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_judge_writes_carries_counts_and_caches(run: Path, protocol: str) -> None:
    verdicts = {("ledger_cli", 1): [_flag(*f) for f in CP1],
                ("ledger_cli", 2): [_flag(*f) for f in CP2]}
    dropped = [_flag("duplicated_rule", 5, 6, "kv_server.py"),  # another category's item
               _flag("catch_all_handler", 1, 2, "nope.py"),  # no such file
               _flag("catch_all_handler", 200, 400, "kv_server.py")]  # past its 230 lines
    extra = [{"match": [CP[("kv_server", 2)], "## catch_all_handler ("],
              "replies": [_reply(protocol, dropped)]}]
    with _server(protocol, _rules(protocol, verdicts, extra)) as server:
        summary = _judge(run, server, protocol)
        calls = len(server.model_calls)
        assert summary["n_judged"] == 6 and summary["n_errors"] == 0
        assert calls == summary["requests_made"] == 6 * REQUESTS_PER_CHECKPOINT
        # judging again: every checkpoint already judged, not one request
        again = _judge(run, server, protocol)
        assert again["n_skipped"] == 6 and len(server.model_calls) == calls
        # and with --overwrite every answer comes from the cache
        redo = _judge(run, server, protocol, "--overwrite")
        assert redo["n_judged"] == 6 and redo["requests_made"] == 0
        assert redo["requests_cached"] == 6 * REQUESTS_PER_CHECKPOINT
        assert len(server.model_calls) == calls
    _check_files(run, protocol)
    _check_carry_and_metrics(run)
    _check_records_and_report(run)
    assert KEY not in _all_text(run)


def _check_files(run_dir: Path, protocol: str) -> None:
    cost = COST if protocol == "openai" else ANTHROPIC_COST
    for problem in ("kv_server", "ledger_cli"):
        for checkpoint in (1, 2, 3):
            folder = _folder(run_dir, problem, checkpoint)
            raw = json.loads((folder / "raw_rubric.json").read_text())
            assert sum(len(v) for v in raw.values()) == REQUESTS_PER_CHECKPOINT
            result = _judge_file(run_dir, problem, checkpoint)
            assert result["format"] == "benchwright.judge/1" and result["status"] == "judged"
            assert result["requests"] == REQUESTS_PER_CHECKPOINT
            assert result["cost_usd"] == pytest.approx(cost * REQUESTS_PER_CHECKPOINT)
            assert result["cost_source"] == ("provider" if protocol == "openai"
                                             else "price_table")
            assert result["rubric"]["source"] == "bundled:benchwright.jsonl"
            assert (folder / "rubric.jsonl").is_file()
    assert _judge_file(run_dir, "kv_server", 2)["dropped"] == {
        "unknown_criterion": 1, "unknown_file": 1, "outside_lines": 1}
    assert _rubric(run_dir, "kv_server", 2) == []


def _check_carry_and_metrics(run_dir: Path) -> None:
    cp1, cp2, cp3 = (_rubric(run_dir, "ledger_cli", c) for c in (1, 2, 3))
    assert _spans(cp1, carried=False) == set(CP1) and _spans(cp1, carried=True) == set()
    assert _spans(cp2, carried=False) == set(CP2)
    assert _spans(cp2, carried=True) == set(CP2_CARRIED)
    assert {f["carried_over"] for f in cp2 if "carried_over" in f} == {"checkpoint_1"}
    assert cp3 == []  # every flagged line of checkpoint 2 is rewritten in checkpoint 3
    first = next(f for f in cp1 if f["criteria"] == "comment_restates_code")
    assert first == {"criteria": "comment_restates_code", "start": 20, "end": 22,
                     "explanation": "comment_restates_code here", "confidence": 4,
                     "file_name": "ledger.py", "category": "commentary", "type": "verbosity"}
    records = _records(run_dir, "ledger_cli")
    loc = [r.quality.values["loc"] for r in records]
    assert loc == [145, 210, 313]  # every line of the .py files (radon's LOC)
    expected = [  # total, carried, verbosity (restates, echoes), erosion
        (6, 0, 2, 4), (5, 3, 1, 4), (0, 0, 0, 0)]
    for record, (total, carried, verbosity, erosion), lines in zip(records, expected, loc,
                                                                   strict=True):
        rubric = record.quality.rubric
        assert (rubric.total_flags, rubric.carried_over, rubric.verbosity_flags,
                rubric.erosion_flags) == (total, carried, verbosity, erosion)
        assert rubric.per_loc == pytest.approx(total / lines)
        assert rubric.new_violations_per_loc == pytest.approx((total - carried) / lines)
        values = record.quality.values
        # our composite (bw_: SCBench's own verbosity is scb-check's, without the rubric)
        assert values["bw_verbosity"] == pytest.approx(
            values["bw_verbosity_static"] + total / lines, abs=1e-4)
    assert records[1].quality.delta["rubric_total_flags"] == -1


def _check_records_and_report(run_dir: Path) -> None:
    records = _jsonl(run_dir / "checkpoint_records.jsonl")
    assert all(record["quality"]["rubric"] is not None for record in records)
    # SCBench's rows, derived from our records
    row = next(r for r in _jsonl(run_dir / "checkpoint_results.jsonl")
               if r["problem"] == "ledger_cli" and r["checkpoint"] == "checkpoint_2")
    assert (row["rubric_total_flags"], row["rubric_carried_over"], row["rubric_verbosity_flags"],
            row["rubric_erosion_flags"]) == (5, 3, 1, 4)
    # SCBench's `loc` is source lines (ours: every line), its per-LOC figures divide by it
    assert row["rubric_per_loc"] == pytest.approx(5 / row["loc"])
    assert row["delta.new_violations_per_loc"] == pytest.approx(2 / row["loc"])
    saved = json.loads((RunLayout(run_dir).checkpoint_dir("ledger_cli", 1, "checkpoint_2")
                        / "quality_analysis" / "quality.json").read_text())
    assert saved["rubric"]["total_flags"] == 5
    result = json.loads((run_dir / "result.json").read_text())
    assert result["n_checkpoints_judged"] == 6 and result["judge_errors"] == []
    report = (run_dir / "report.md").read_text()
    assert "## LLM judge" in report and "| rubric flags per LOC |" in report
    assert "6 of 6 checkpoints judged" in report


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _all_text(run_dir: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in run_dir.rglob("*")
                   if p.is_file() and not p.is_symlink())


def test_failed_replies_end_as_listed_judge_errors_never_zero_flags(run: Path) -> None:
    bad = [{"match": [CP[("ledger_cli", 2)]], "replies": [{"text": "Here are my flags: none"}]},
           {"match": [CP[("kv_server", 2)]], "replies": [
               {"text": "{}", "fault": {"kind": "http_429", "times": 1000, "retry_after": 0}}]},
           {"match": [CP[("kv_server", 3)]], "replies": [
               {"text": "{}", "fault": {"kind": "malformed", "times": 1000}}]}]
    with _server("openai", _rules("openai", {}, bad)) as server:
        summary = _judge(run, server, "openai", expect=4)
    failed = {(r["problem"], r["checkpoint"]) for r in summary["checkpoints"]
              if r["status"] == "error"}
    assert failed == {("ledger_cli", "checkpoint_2"), ("ledger_cli", "checkpoint_3"),
                      ("kv_server", "checkpoint_2"), ("kv_server", "checkpoint_3")}
    assert summary["n_judged"] == 2 and len(summary["errors"]) == 4
    # the 429s: 1 + 4 retries per request; the replies that never validate: asked twice
    assert summary["requests_cached"] == 0
    assert summary["requests_made"] == (3 + 5 + 2 + 2) * REQUESTS_PER_CHECKPOINT
    cp2 = _judge_file(run, "ledger_cli", 2)
    assert cp2["status"] == "error" and "not JSON" in cp2["errors"][0]
    assert cp2["invalid_retries"] == REQUESTS_PER_CHECKPOINT  # each asked twice
    assert "kept failing: HTTP 429" in _judge_file(run, "kv_server", 2)["errors"][0]
    assert "not the protocol's JSON" in _judge_file(run, "kv_server", 3)["errors"][0]
    assert "checkpoint_2 could not be judged" in _judge_file(run, "ledger_cli", 3)["errors"][0]
    for problem, checkpoint in failed:
        assert not (_folder(run, problem, int(checkpoint[-1])) / "rubric.jsonl").exists()
    records = _records(run, "ledger_cli")
    assert records[0].quality.rubric is not None and records[1].quality.rubric is None
    result = json.loads((run / "result.json").read_text())
    assert len(result["judge_errors"]) == 4
    report = (run / "report.md").read_text()
    assert "4 checkpoint(s) could not be judged" in report


def test_max_cost_stops_before_the_limit_and_a_later_call_finishes(run: Path) -> None:
    total = 6 * REQUESTS_PER_CHECKPOINT
    with _server("openai", _rules("openai", {})) as server:
        first = _judge(run, server, "openai", "--max-cost", "0.105")
        assert len(server.model_calls) == first["requests_made"] == 10
        assert first["cost_usd_paid"] == pytest.approx(0.10)
        assert "--max-cost" in first["stopped"] and first["n_unjudged"] > 0
        assert first["n_judged"] + first["n_unjudged"] == 6
        second = _judge(run, server, "openai")
        assert len(server.model_calls) == total  # the 10 answered calls came from the cache
        assert second["n_judged"] == first["n_unjudged"] and second["n_errors"] == 0
        assert second["cost_usd_paid"] == pytest.approx((total - 10) * COST)
    assert all((_folder(run, p, c) / "rubric.jsonl").is_file()
               for p in ("kv_server", "ledger_cli") for c in (1, 2, 3))


def _alpha(lines: int, ones_per_line: list[int], samples: int = 3) -> float:
    """Krippendorff's nominal alpha by hand for binary codes, every unit coded by every sample:
    1 - (n - 1) * o_01 / (n_0 * n_1), o_01 = sum over lines of k (K - k) / (K - 1)."""
    n = lines * samples
    n_1 = sum(ones_per_line)
    o_01 = sum(k * (samples - k) / (samples - 1) for k in ones_per_line)
    return 1 - (n - 1) * o_01 / ((n - n_1) * n_1)


def test_samples_report_the_agreement_a_hand_computation_gives(run: Path) -> None:
    commentary = [
        [_flag("comment_restates_code", 20, 22), _flag("docstring_echoes_name", 1, 1)],
        [_flag("comment_restates_code", 20, 22)],
        [_flag("comment_restates_code", 20, 22), _flag("docstring_echoes_name", 1, 1),
         _flag("comment_contradicts_code", 50, 51)]]
    rules = [{"match": [CP[("ledger_cli", 1)], "## comment_contradicts_code ("],
              "replies": [_reply("openai", flags) for flags in commentary]}]
    with _server("openai", _rules("openai", {}, rules)) as server:
        summary = _judge(run, server, "openai", "--samples", "3", "--problem", "ledger_cli",
                         "--concurrency", "1")
        assert len(server.model_calls) == 3 * 3 * REQUESTS_PER_CHECKPOINT
    lines = 145 + 210 + 313  # ledger_cli's three snapshots, every sample judging each line
    table = {a["criterion"]: a for a in summary["agreement"]}
    assert table["comment_restates_code"]["alpha"] == 1.0
    assert table["comment_restates_code"]["stability"] == 1.0
    assert table["docstring_echoes_name"]["alpha"] == pytest.approx(_alpha(lines, [2]), abs=1e-4)
    assert table["docstring_echoes_name"]["stability"] == pytest.approx(2 / 3, abs=1e-4)
    assert table["comment_contradicts_code"]["alpha"] == pytest.approx(_alpha(lines, [1, 1]),
                                                                       abs=1e-4)
    assert table["comment_contradicts_code"]["stability"] == pytest.approx(1 / 3, abs=1e-4)
    assert table["comment_contradicts_code"]["flags_kept"] == 0
    assert table["swallowed_failure"]["alpha"] is None  # never flagged: undefined
    assert table["comment_restates_code"]["lines"] == lines
    kept = _spans(_rubric(run, "ledger_cli", 1), carried=False)
    assert kept == {("comment_restates_code", 20, 22), ("docstring_echoes_name", 1, 1)}
    assert _judge_file(run, "ledger_cli", 1)["flags_per_sample"] == [2, 1, 3]
    report = (run / "report.md").read_text()
    assert "Krippendorff's alpha" in report and "| docstring_echoes_name |" in report


def test_judging_killed_then_resumed_judges_each_checkpoint_once(run: Path) -> None:
    with _server("openai", _rules("openai", {}), latency_s=0.3) as server:
        argv = [sys.executable, "-m", "benchwright", "metrics", "judge", str(run), "--model",
                "fake-judge", "--base-url", f"{server.base_url}/v1", "--api-key-env", KEY_ENV,
                "--concurrency", "2", "--json"]
        proc = subprocess.Popen(argv, env={**os.environ, KEY_ENV: KEY},
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        journals = [RunLayout(run).judge_journal(p, 1) for p in ("kv_server", "ledger_cli")]
        deadline = time.monotonic() + 120
        while sum(_lines(j) for j in journals) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert 2 <= sum(_lines(j) for j in journals) < 6
        summary = _judge(run, server, "openai")
        assert summary["n_judged"] + summary["n_skipped"] == 6
        # requests in flight at the kill are asked again; answered ones come from the cache
        assert len(server.model_calls) <= 6 * REQUESTS_PER_CHECKPOINT + 2
    for path in journals:
        checkpoints = [json.loads(line)["checkpoint"] for line in path.read_text().splitlines()]
        assert sorted(checkpoints) == ["checkpoint_1", "checkpoint_2", "checkpoint_3"]


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.is_file() else 0


def test_run_coding_judges_each_checkpoint_as_it_finishes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    verdicts = {("ledger_cli", 1): [_flag(*f) for f in CP1],
                ("ledger_cli", 2): [_flag(*f) for f in CP2]}
    with _server("openai", _rules("openai", verdicts)) as server:
        options = ["--judge-model", "fake-judge", "-J", f"base_url={server.base_url}/v1",
                   "-J", f"api_key_env={KEY_ENV}", "-J", "concurrency=4"]
        env = {**os.environ, KEY_ENV: KEY}
        done = run_cli("run", "coding", "--problem", "ledger_cli", "--out", str(out),
                       "--json", *options, env=env)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["n_checkpoints_judged"] == 3
        calls = len(server.model_calls)
        assert calls == 3 * REQUESTS_PER_CHECKPOINT
        again = run_cli("run", "coding", "--resume", str(out), "--json", *options, env=env)
        assert again.returncode == 0, again.stderr
        assert len(server.model_calls) == calls
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["judge"]["model"] == "fake-judge"
    assert manifest["config"]["judge"]["api_key_env"] == KEY_ENV
    assert _spans(_rubric(out, "ledger_cli", 2), carried=True) == set(CP2_CARRIED)
    records = _records(out, "ledger_cli")
    assert [r.quality.rubric.total_flags for r in records] == [6, 5, 0]
    assert KEY not in _all_text(out)


def test_bad_judge_inputs_are_one_line_errors(run: Path, tmp_path: Path) -> None:
    rubric = tmp_path / "rubric.jsonl"
    rubric.write_text('{"name": "a", "category": "c", "type": "verbosity", "description": "d"}\n'
                      '{"name": "a", "category": "c", "type": "smell", "description": "d"}\n')
    env = {**os.environ, KEY_ENV: KEY}
    base = ["metrics", "judge", str(run), "--model", "m", "--api-key-env", KEY_ENV]
    done = run_cli(*base, "--rubric", str(rubric), env=env)
    assert done.returncode == 2 and "rubric line 2: type" in done.stderr
    assert "Traceback" not in done.stderr
    template = tmp_path / "prefix.j2"
    template.write_text("{% for f in files %}{{ f.file_path }\n")
    done = run_cli(*base, "--prefix-template", str(template), env=env)
    assert done.returncode == 2 and "does not compile" in done.stderr
    done = run_cli("metrics", "judge", str(run), "--model", "m",
                   env={k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"})
    assert done.returncode == 2 and "OPENAI_API_KEY is not set" in done.stderr
    done = run_cli(*base, "--problem", "nope", env=env)
    assert done.returncode == 2 and "no problem 'nope'" in done.stderr
    done = run_cli("metrics", "judge", str(tmp_path), "--model", "m", env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_scripts_are_yaml_too() -> None:
    # the rules above, written as a user would in a script file
    script = Script.from_yaml(yaml.safe_dump({"rules": _rules("openai", {})}))
    assert script.rules[0].match == [] and script.rules[0].replies[0].usage is not None


def test_reference_starts_carry_nothing(run: Path) -> None:
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["config"]["start_from"] = "reference"  # as `run coding --start-from reference` saves
    (run / "manifest.json").write_text(json.dumps(manifest))
    verdicts = {("ledger_cli", 1): [_flag(*f) for f in CP1],
                ("ledger_cli", 2): [_flag(*f) for f in CP2]}
    with _server("openai", _rules("openai", verdicts)) as server:
        _judge(run, server, "openai", "--problem", "ledger_cli")
    cp2 = _rubric(run, "ledger_cli", 2)
    assert _spans(cp2, carried=True) == set() and _spans(cp2, carried=False) == set(CP2)
    assert [r.quality.rubric.total_flags for r in _records(run, "ledger_cli")] == [6, 2, 0]


def test_the_judges_duration_is_measured_from_its_first_request(run: Path) -> None:
    """Requests are sent before the checkpoint is finished; judge.json times them all."""
    with _server("openai", _rules("openai", {}), latency_s=0.4) as server:
        _judge(run, server, "openai", "--problem", "ledger_cli", "--concurrency", "1")
    # one connection: the checkpoint's requests one after the other, 0.4 s each at least
    assert _judge_file(run, "ledger_cli", 1)["duration_s"] >= 0.4 * REQUESTS_PER_CHECKPOINT


def test_an_unpriced_judge_without_a_reported_cost_spends_unknown(run: Path) -> None:
    """No provider cost and no price: "unknown", never "spent 0.0000 USD"."""
    rules = [{"match": [], "replies": [{"text": json.dumps({"flags": []}),
                                        "usage": {"input_tokens": 1000, "output_tokens": 100}}]}]
    env = {**os.environ, KEY_ENV: KEY}
    with _server("openai", rules) as server:
        done = run_cli("metrics", "judge", str(run), "--model", "fake-judge", "--base-url",
                       _base(server, "openai"), "--api-key-env", KEY_ENV, "--problem",
                       "kv_server", env=env)
        as_json = _judge(run, server, "openai", "--problem", "ledger_cli")
    assert done.returncode == 0, done.stderr
    assert "spent unknown USD" in done.stdout and "0.0000" not in done.stdout
    assert as_json["cost_unknown"] is True
    assert _judge_file(run, "kv_server", 1)["cost_source"] == "unknown"
    report = run_cli("report", str(run))
    assert report.returncode == 0, report.stderr
    assert "unknown USD" in (run / "report.md").read_text()


def test_max_cost_with_an_unpriced_anthropic_model_is_refused_up_front(run: Path) -> None:
    env = {**os.environ, KEY_ENV: KEY}
    done = run_cli("metrics", "judge", str(run), "--model", "claude-unpriced", "--protocol",
                   "anthropic", "--base-url", "http://127.0.0.1:9", "--api-key-env", KEY_ENV,
                   "--max-cost", "1", env=env)
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert "--max-cost 1 cannot be enforced: model 'claude-unpriced' has no known price" in line


def test_an_endpoint_that_takes_no_connection_is_one_line_at_once(run: Path) -> None:
    """A --base-url with nothing listening (a typo'd port, a server not started): one line, exit
    3, before any checkpoint is tried (not minutes of retried requests ending in one error per
    checkpoint), and nothing written; the same for a judge asked of `run coding`."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    env = {**os.environ, KEY_ENV: KEY}
    done = run_cli("metrics", "judge", str(run), "--model", "fake-judge", "--base-url", dead,
                   "--api-key-env", KEY_ENV, env=env)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 3 and len(lines) == 1, done.stderr
    assert "cannot be reached: Connection refused" in lines[0] and "Traceback" not in done.stderr
    assert not list(run.rglob("judge.json"))
