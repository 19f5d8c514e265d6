"""browser-use's Agent asks `isinstance(llm, ChatAnthropic)`: answered without importing the
anthropic package while browser-use's Anthropic chat module was never imported."""

from __future__ import annotations

import sys
from types import ModuleType

import pytest

from benchwright.web.browser.imports import ANTHROPIC_CHAT, agent_construction


def test_the_check_gets_a_stand_in_removed_afterwards(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, ANTHROPIC_CHAT, raising=False)
    with agent_construction():
        from browser_use.llm.anthropic.chat import ChatAnthropic  # what Agent.__init__ runs

        assert (sys.modules[ANTHROPIC_CHAT].__doc__ or "").startswith("A stand-in")
        assert not isinstance(object(), ChatAnthropic)
    assert ANTHROPIC_CHAT not in sys.modules  # a later import gets the real module


def test_an_imported_chat_module_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    real = ModuleType(ANTHROPIC_CHAT)
    monkeypatch.setitem(sys.modules, ANTHROPIC_CHAT, real)
    with agent_construction():
        assert sys.modules[ANTHROPIC_CHAT] is real
    assert sys.modules[ANTHROPIC_CHAT] is real


def test_a_module_imported_meanwhile_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, ANTHROPIC_CHAT, raising=False)
    real = ModuleType(ANTHROPIC_CHAT)
    with agent_construction():
        sys.modules[ANTHROPIC_CHAT] = real
    assert sys.modules[ANTHROPIC_CHAT] is real
    del sys.modules[ANTHROPIC_CHAT]
