"""What the npm agent CLIs' end-to-end tests share: whether Node is there, and a scripted model
that writes ledger_cli's first reference solution with the CLI's own tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchwright.coding.agents import toolchain
from benchwright.errors import BenchwrightError
from benchwright.testing import Script

PROBLEM = "ledger_cli"


def has_node() -> bool:
    """A Node.js >= 20 with npm to run the CLIs on."""
    try:
        toolchain.node_bin(20)
    except BenchwrightError:
        return False
    return True


def solution_files(problems: Path) -> list[Path]:
    """The files of checkpoint 1's reference solution."""
    solution = problems / PROBLEM / "solutions" / "checkpoint_1"
    return [f for f in sorted(solution.iterdir()) if f.is_file()]


def write_solution_command(problems: Path) -> str:
    """A shell command that writes checkpoint 1's reference solution into the cwd."""
    return "\n".join(f"cat > {f.name} <<'BENCHWRIGHT_EOF'\n{f.read_text()}BENCHWRIGHT_EOF"
                     for f in solution_files(problems))


def solving_script(tool_calls: list[dict[str, Any]], untooled: str = "ok") -> Script:
    """Two model turns: the tool calls that write the solution, then the final answer
    (11000 input and 920 output tokens in all)."""
    return Script.model_validate({"untooled": {"text": untooled}, "turns": [
        {"text": "I will write the program.", "tool_calls": tool_calls,
         "usage": {"input_tokens": 5000, "output_tokens": 900}},
        {"text": "Done: ledger.py prints the balances.",
         "usage": {"input_tokens": 6000, "output_tokens": 20}}]})
