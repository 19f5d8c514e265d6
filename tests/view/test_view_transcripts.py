"""Transcripts as people read them: a `mini` run against the fake LLM server, its checkpoint page
in Chromium. One step per model turn (the same count as the agent's summary), a bash call shown
as a highlighted command with the heredoc's file lifted out under its path (no `\\n` escapes),
the model's Markdown rendered as elements (its HTML as text), long results folded, tokens and
time per step. Plus the transcript's kinds (write, edit, patch, other) without a browser."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchwright.coding.agents.trajectory import Role, Step, ToolCall, ToolResult, Trajectory
from benchwright.testing import FakeLLMServer, Script
from benchwright.view.transcript import transcript
from tests.helpers import run_cli
from tests.helpers.tiers import starts
from tests.helpers.view_runs import Page, copy_screenshot, cut_off, rid

PLANTED = "<img src=x onerror=\"document.title='pwned'\">"
MARKDOWN = f"I will **write** the program in `ledger.py`:\n\n- read the file\n- print {PLANTED}"


def _script(problem: Path) -> Script:
    solution = problem / "solutions" / "checkpoint_1"
    writes = [f"cat > {f.name} <<'PYEOF'\n{f.read_text()}PYEOF"
              for f in sorted(solution.iterdir()) if f.is_file()]
    long_listing = "; ".join(f"echo line {i}" for i in range(40))
    return Script.model_validate({"turns": [
        {"text": MARKDOWN,
         "tool_calls": [{"name": "bash", "arguments": {"command": "\n".join(writes)}}]},
        {"text": "Let me check it runs.",
         "tool_calls": [{"name": "bash", "arguments": {"command": long_listing}}]},
        {"text": "Done: `ledger.py` prints the balances."}]})


@pytest.fixture(scope="module")
@starts("e2e", "sandbox")
def mini_run(problems_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("openai")
    root = tmp_path_factory.mktemp("transcripts") / "runs"
    with FakeLLMServer(_script(problems_dir / "ledger_cli")) as server:
        done = run_cli("run", "coding", "--agent", "mini", "--model", "fake", "--problems-dir",
                       str(problems_dir), "--base-url", f"{server.base_url}/v1", "--no-metrics",
                       "--out", str(root / "mini"),
                       env={**os.environ, "OPENAI_API_KEY": "sk-fake-0123456789abcdef"})
    assert done.returncode == 0, done.stderr[-3000:]
    return root / "mini"


@pytest.fixture(scope="module")
def served(mini_run: Path) -> Iterator[str]:
    from benchwright.view.server import serve_in_thread, start

    server = start([mini_run.parent])
    stop = serve_in_thread(server)
    yield server.url
    stop()


def test_a_checkpoint_page_reads_as_a_transcript(page: Page, served: str, mini_run: Path,
                                                 tmp_path: Path) -> None:
    tab = page.open(f"{served}#/run/{rid(mini_run)}/cp/ledger_cli/1/checkpoint_1")
    tab.evaluate("document.querySelector('#s-agent').scrollIntoView(); scrollBy(0, -60)")
    shot = tmp_path / "view-transcript.png"
    tab.screenshot(path=str(shot))
    copy_screenshot(shot, "view-transcript.png")
    agent = tab.inner_text("#s-agent ~ dl.kv")
    assert "3 (model calls)" in agent
    assert tab.inner_text("#s-agent ~ h3").startswith("Transcript: 3 steps")
    assert tab.locator(".step.turn").count() == 3
    shell = tab.locator(".call-shell pre.code.shell").first
    text = shell.inner_text()
    assert "cat > ledger.py <<'PYEOF'" in text and "\\n" not in text
    assert shell.locator("span").count() > 2  # highlighted: the shell lexer's tokens
    write = tab.locator(".call-shell .filehead").first.inner_text()
    assert "ledger.py" in write and "lines" in write
    first = tab.locator(".step.turn").first
    assert first.locator(".md b").inner_text() == "write"
    assert first.locator(".md code").first.inner_text() == "ledger.py"
    assert first.locator(".md li").count() == 2
    assert PLANTED in first.inner_text() and tab.title() != "pwned"
    assert first.locator(".md img").count() == 0
    meta = first.locator(".meta").inner_text()
    assert " in · " in meta and " s" in meta  # tokens and time per step
    folded = tab.locator(".step.turn").nth(1).locator("details.result")
    assert folded.count() == 1 and not folded.get_attribute("open")
    assert cut_off(tab) == [] and page.errors == []


def _call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=name, name=name, arguments=arguments)


def test_tool_calls_are_shown_by_kind() -> None:
    steps = [Step(role=Role.SYSTEM, text="You are an agent."), Step(role=Role.USER, text="task"),
             Step(role=Role.ASSISTANT, text="go", input_tokens=10, output_tokens=5,
                  timestamp="2026-01-01T00:00:00+00:00", tool_calls=[
                      _call("Write", file_path="a.py", content="x = 1\n"),
                      _call("Edit", file_path="a.py", old_string="x = 1", new_string="x = 2"),
                      _call("apply_patch", input="--- a\n+++ b\n"),
                      _call("shell", command=["bash", "-lc", "ls -la"]),
                      _call("search", query="q")]),
             Step(role=Role.TOOL, timestamp="2026-01-01T00:00:04+00:00", tool_results=[
                 ToolResult(call_id="shell", output="x\n" * 40),
                 ToolResult(call_id="Write", output="ok")]),
             Step(role=Role.ASSISTANT, text="done")]
    shown = transcript(Trajectory(agent="x", steps=steps))
    assert shown["turns"] == 2 and [p["role"] for p in shown["preamble"]] == ["system", "user"]
    calls = shown["steps"][0]["calls"]
    assert [c["kind"] for c in calls] == ["write", "edit", "patch", "shell", "other"]
    assert calls[0]["path"] == "a.py" and calls[0]["result"]["output"] == "ok"
    assert any(r[0] == "chg" for r in calls[1]["rows"])
    assert calls[3]["command"] == "ls -la" and calls[3]["result"]["fold"]
    assert shown["steps"][0]["duration_s"] == 4.0


def test_a_heredoc_write_is_lifted_out_of_the_command() -> None:
    command = "mkdir -p src\ncat > src/m.py <<'EOF'\nimport os\nprint(os.sep)\nEOF\npython src/m.py"
    [call] = transcript(Trajectory(agent="x", steps=[Step(role=Role.ASSISTANT, tool_calls=[
        _call("bash", command=command)])]))["steps"][0]["calls"]
    assert call["kind"] == "shell" and [w["path"] for w in call["writes"]] == ["src/m.py"]
    assert len(call["writes"][0]["lines"]) == 2
    shown = "\n".join("".join(t[1] for t in line) for line in call["lines"])
    assert "import os" not in shown and "2 lines shown below" in shown
    assert "python src/m.py" in shown


def test_web_steps_name_each_action_and_its_target(tmp_path: Path) -> None:
    import json

    from benchwright.web.trials.trial_files import read_trial

    history = {"history": [{
        "model_output": {"next_goal": "open **sign in**", "action": [
            {"click_element_by_index": {"index": 12}},
            {"input_text": {"index": 5, "text": "alice"}}, {"go_to_url": {"url": "http://a/b"}}]},
        "state": {"url": "http://a/", "title": "Home", "interacted_element": [
            {"node_name": "A", "attributes": {"aria-label": "Sign in"}}, None, None]},
        "result": [{"extracted_content": "clicked"}],
        "metadata": {"step_start_time": 10.0, "step_end_time": 12.5}}]}
    (tmp_path / "history.json").write_text(json.dumps(history))
    [step] = read_trial(tmp_path).steps
    assert [(a.name, a.target, a.detail) for a in step.calls] == [
        ("click_element_by_index", 'index 12 <a> "Sign in"', ""),
        ("input_text", "index 5", "alice"), ("go_to_url", "url http://a/b", "")]
    assert step.title == "Home" and step.duration_s == 2.5
