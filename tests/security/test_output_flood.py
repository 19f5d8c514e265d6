"""Bounded output: a submission that writes 10 MB to stderr per call, echoed by the tests into
23 assertion messages, drove the harness to 4 GB resident and 2 GB written to --out (then the
1 GiB file limit cut the report, recorded as tampering). Whatever it prints, `eval checkpoint`
stays under 300 MB resident and writes under 50 MB, grades the checkpoint (failed, not
tampered) and records what it cut. Prints both figures (`pytest -s`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.output_flood import flood_problem, flood_workspace, grade_measured
from tests.helpers.peak_memory import peak_rss_mb, reset_peak

pytestmark = [pytest.mark.sandbox, pytest.mark.e2e]


def test_output_amplification_keeps_the_harness_bounded(tmp_path: Path) -> None:
    problem = flood_problem(tmp_path, 23)
    # The harness is started from this process: 400 MB resident here must not count as its own
    # (ru_maxrss would carry it across exec; see tests.helpers.peak_memory).
    ballast = bytearray(400 << 20)
    ballast[::4096] = b"x" * len(range(0, len(ballast), 4096))
    figures = grade_measured(problem, flood_workspace(tmp_path, "flood", 10), tmp_path / "out")
    del ballast
    print(f"\noutput flood (10 MB x 23 messages): harness peak RSS {figures['peak_rss_mb']:.1f} MB,"
          f" wrote {figures['wchar_mb']:.1f} MB (write()), --out {figures['out_mb']:.1f} MB;"
          f" cut {figures['cut']}")
    assert figures["status"] == "completed" and figures["passed"] == 0, figures
    assert figures["peak_rss_mb"] < 300, figures
    assert figures["wchar_mb"] < 50 and figures["out_mb"] < 50, figures
    assert '"messages": 0' not in str(figures["cut"]), figures  # the cut is recorded


def test_a_mini_agent_command_printing_a_gigabyte_costs_the_harness_what_it_keeps(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mini agent's bash tool read a command's whole output into the harness's memory."""
    pytest.importorskip("openai")
    from benchwright.coding.agents.base import AgentContext
    from benchwright.coding.agents.mini import MiniAgent
    from benchwright.coding.agents.settings import AgentSettings
    from benchwright.sandbox.bwrap import Limits, get_runtime
    from benchwright.sandbox.interpreters import resolve_python
    from benchwright.testing import FakeLLMServer, Script

    flood = "head -c 1000000000 /dev/zero | tr '\\\\0' x; echo; echo the-end"
    script = Script.from_yaml("turns:\n  - {text: go, tool_calls: [{name: bash, arguments: "
                              f"{{command: \"{flood}\"}}}}]}}\n  - {{text: done}}\n")
    for sub in ("ws", "agent"):
        (tmp_path / sub).mkdir()
    ctx = AgentContext(problem="p", problem_dir=tmp_path, checkpoint="checkpoint_1", trial=1,
                       workspace=tmp_path / "ws", prompt="do it", prompt_file=tmp_path / "p.txt",
                       is_continuation=False, artifacts_dir=tmp_path / "agent")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unit-test-key")
    before = reset_peak()
    with FakeLLMServer(script) as server:
        settings = AgentSettings(base_url=f"{server.base_url}/v1", retry_backoff_s=0)
        MiniAgent("fake", settings, get_runtime(), Limits(), resolve_python(None)).act(ctx)
    grown = peak_rss_mb() - before
    print(f"\nmini agent, a command printing 1 GB: harness peak RSS grew {grown:.1f} MB")
    steps = json.loads((tmp_path / "agent" / "trajectory.json").read_text())["steps"]
    output = next(s for s in steps if s["tool_results"])["tool_results"][0]["output"]
    assert output.startswith("exit code 0\nxxx") and output.endswith("the-end\n")
    assert "999,99" in output and "bytes cut by benchwright" in output and len(output) < 11_000
    assert grown < 100, grown


def test_a_gigabyte_agent_log_is_swept_for_keys_in_chunks(tmp_path: Path) -> None:
    """The redaction sweep read every file of a checkpoint whole (a command agent's stdout.txt
    may be a GiB), twice over; a key split across two reads must still be found."""
    from benchwright.files.redaction import Redactor

    key = "sk-flood-key-0123456789"
    redactor = Redactor({"FLOOD_API_KEY": key})
    log = tmp_path / "stdout.txt"
    block = b"x" * (1 << 20)
    with log.open("wb") as out:
        out.write(block[:(4 << 20) - 7 - (3 << 20)] + block * 3 + key.encode())  # across a read
        for _ in range(300):
            out.write(block)
        out.write(key.encode() + b"\n")
    before = reset_peak()
    assert redactor.file(log)
    grown = peak_rss_mb() - before
    print(f"\nredacting a 304 MB log: harness peak RSS grew {grown:.1f} MB")
    found = marks = 0
    with log.open("rb") as swept:
        while chunk := swept.read(64 << 20):
            found += chunk.count(key.encode())
            marks += chunk.count(b"<redacted:FLOOD_API_KEY>")
    assert found == 0 and marks == 2
    assert grown < 100, grown
