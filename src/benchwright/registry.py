"""The explicit table of pluggable parts: name -> "module:attribute", imported only when used.

An unknown name is an error that lists the choices.
"""

from __future__ import annotations

import importlib
from typing import Any

from benchwright.errors import UserInputError

RUNTIMES: dict[str, str] = {
    "bwrap": "benchwright.sandbox:BwrapRuntime",
    "unsafe-local": "benchwright.sandbox:UnsafeLocalRuntime",
}
AGENTS: dict[str, str] = {
    "oracle": "benchwright.coding.agents.oracle:OracleAgent",
    "replay": "benchwright.coding.agents.replay:ReplayAgent",
    "command": "benchwright.coding.agents.command:CommandAgent",
    "claude_code": "benchwright.coding.agents.claude_code:ClaudeCodeAgent",
    "codex": "benchwright.coding.agents.codex:CodexAgent",
    "gemini": "benchwright.coding.agents.gemini:GeminiAgent",
    "opencode": "benchwright.coding.agents.opencode:OpencodeAgent",
    "openhands": "benchwright.coding.agents.openhands:OpenhandsAgent",
    "mini": "benchwright.coding.agents.mini:MiniAgent",
}
TRIAL_RUNNERS: dict[str, str] = {
    "browser": "benchwright.web.runs.browser_runner:BrowserTrialRunner",
    "fake": "benchwright.web.runs.fake_runner:FakeTrialRunner",
}


def resolve(kind: str, table: dict[str, str], name: str) -> Any:
    """The object registered under `name`, imported on demand."""
    if name not in table:
        raise UserInputError(f"unknown {kind} {name!r}",
                             hint=f"choose one of: {', '.join(sorted(table))}")
    module, _, attribute = table[name].partition(":")
    return getattr(importlib.import_module(module), attribute)
