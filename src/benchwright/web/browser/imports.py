"""Importing browser-use: offline settings first, the install command when it is missing."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import logging
import sys
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
    stand_in = ModuleType(ANTHROPIC_CHAT, "A stand-in: the anthropic package is not installed.")
    stand_in.ChatAnthropic = type("ChatAnthropic", (), {})  # type: ignore[attr-defined]
    sys.modules[ANTHROPIC_CHAT] = stand_in


@functools.cache
def _sweep_default_profile() -> None:
    # Importing browser-use builds a default BrowserProfile, which makes an empty profile folder
    # and an empty downloads folder in /tmp; trials never use them.
    session = importlib.import_module("browser_use.browser.session")
    default = session.DEFAULT_BROWSER_PROFILE
    for folder in (default.user_data_dir, default.downloads_path):
        if folder is not None and Path(folder).is_dir() and not any(Path(folder).iterdir()):
            Path(folder).rmdir()
