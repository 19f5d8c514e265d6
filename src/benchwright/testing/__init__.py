"""Test doubles shipped with benchwright: a fake LLM server that speaks the providers' protocols."""

from benchwright.testing.fake_llm import FakeLLMServer, RecordedRequest
from benchwright.testing.script import Fault, FaultKind, Script, ToolCall, Turn, TurnUsage

__all__ = ["FakeLLMServer", "Fault", "FaultKind", "RecordedRequest", "Script", "ToolCall", "Turn",
           "TurnUsage"]
