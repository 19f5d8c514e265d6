"""Importing browser-use: offline settings first, the install command when it is missing."""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import importlib.util
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from benchwright.errors import PrerequisiteError, missing_extra
from benchwright.web.browser.launch import set_offline_env

BROWSER_USE = "browser-use==0.13.14"
"""The browser-use we run, installed without its own dependencies (the `web` extra names the
ones it imports for us): `pip install --no-deps` of it is the install's second step."""
ANTHROPIC_CHAT = "browser_use.llm.anthropic.chat"
QUIET_LOGGERS = ("browser_use", "cdp_use", "bubus", "BrowserSession", "Agent", "tools", "cost",
                 "service", "websockets")


def missing_web(needs: str) -> PrerequisiteError:
    """The missing-dependency error of the web track: its extra, then browser-use itself."""
    return missing_extra(needs, "web", then=f"pip install --no-deps {BROWSER_USE}")


def browser_use_module(name: str = "browser_use") -> ModuleType:
    """Import a browser-use module with the offline environment set and its logging quiet."""
    set_offline_env()
    _anthropic_stand_in()
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        missing = exc.name or "a module"
        needs = ("the web track's browser trials need browser-use"
                 if missing.startswith("browser_use") else
                 f"browser-use needs {missing}, which is not installed")
        raise missing_web(needs) from None
    for logger in QUIET_LOGGERS:
        logging.getLogger(logger).setLevel(logging.ERROR)
    _sweep_default_profile()
    _freeze_imported()
    return module


@functools.cache
def _anthropic_stand_in() -> None:
    """browser-use's Agent imports its Anthropic chat model for one check, `isinstance(llm,
    ChatAnthropic)` (an Anthropic model gets other prompts). Our agents' models never are that
    class, and the `web` extra leaves out the anthropic package (28 MB installed, never called):
    without it, a stand-in module answers the check. With anthropic installed, the real one is
    imported."""
    if ANTHROPIC_CHAT in sys.modules or importlib.util.find_spec("anthropic") is not None:
        return
    sys.modules[ANTHROPIC_CHAT] = _stand_in("the anthropic package is not installed")


def _stand_in(why: str) -> ModuleType:
    stand_in = ModuleType(ANTHROPIC_CHAT, f"A stand-in: {why}.")
    stand_in.ChatAnthropic = type("ChatAnthropic", (), {})  # type: ignore[attr-defined]
    return stand_in


@contextlib.contextmanager
def agent_construction() -> Iterator[None]:
    """Around `Agent(...)`: its `isinstance(llm, ChatAnthropic)` check without importing the
    anthropic package (2,000 modules, ~1 s of CPU per process, and a heap every trial's garbage
    collection walks) when it is installed but unused. While browser-use's Anthropic chat module
    was never imported, no model can be its ChatAnthropic: the check is answered by a stand-in,
    removed again afterwards so that anything importing that module later gets the real one.
    Callers hold a lock: one construction at a time."""
    if ANTHROPIC_CHAT in sys.modules:
        yield
        return
    stand_in = _stand_in("browser-use's Anthropic chat module was not imported")
    sys.modules[ANTHROPIC_CHAT] = stand_in
    try:
        yield
    finally:
        if sys.modules.get(ANTHROPIC_CHAT) is stand_in:
            del sys.modules[ANTHROPIC_CHAT]


@functools.cache
def _sweep_default_profile() -> None:
    # Importing browser-use builds a default BrowserProfile, which makes an empty profile folder
    # and an empty downloads folder in /tmp; trials never use them.
    session = importlib.import_module("browser_use.browser.session")
    default = session.DEFAULT_BROWSER_PROFILE
    for folder in (default.user_data_dir, default.downloads_path):
        if folder is not None and Path(folder).is_dir() and not any(Path(folder).iterdir()):
            Path(folder).rmdir()


@functools.cache
def _freeze_imported() -> None:
    # browser-use's Agent.close() runs a full gc.collect() after every trial, which walked every
    # object of the process: browser-use's modules, pydantic's schemas, ours (~0.1 s a trial).
    # What exists once browser-use is imported lives as long as the process: it goes to the
    # permanent generation once (after a collection, so no garbage is kept), and each later
    # collection walks only what came after. Measured: 12 scripted trials, 1.15 s less CPU.
    gc.collect()
    gc.freeze()
