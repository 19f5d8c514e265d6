"""Importing browser-use: offline settings first, the install command when it is missing."""

from __future__ import annotations

import functools
import importlib
import logging
from pathlib import Path
from types import ModuleType

from benchwright.errors import missing_extra
from benchwright.web.browser.launch import set_offline_env

BROWSER_USE = "browser-use==0.13.14"
"""The browser-use we run, installed without its own dependencies (the `web` extra names the
ones it imports for us): `pip install --no-deps` of it is the install's second step."""
QUIET_LOGGERS = ("browser_use", "cdp_use", "bubus", "BrowserSession", "Agent", "tools", "cost",
                 "service", "websockets")


def browser_use_module(name: str = "browser_use") -> ModuleType:
    """Import a browser-use module with the offline environment set and its logging quiet."""
    set_offline_env()
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        if exc.name is not None and not exc.name.startswith(("browser_use", "cdp_use")):
            raise
        raise missing_extra("the web track's browser trials need browser-use", "web",
                            then=f"pip install --no-deps {BROWSER_USE}") from None
    for logger in QUIET_LOGGERS:
        logging.getLogger(logger).setLevel(logging.ERROR)
    _sweep_default_profile()
    return module


@functools.cache
def _sweep_default_profile() -> None:
    # Importing browser-use builds a default BrowserProfile, which makes an empty profile folder
    # and an empty downloads folder in /tmp; trials never use them.
    session = importlib.import_module("browser_use.browser.session")
    default = session.DEFAULT_BROWSER_PROFILE
    for folder in (default.user_data_dir, default.downloads_path):
        if folder is not None and Path(folder).is_dir() and not any(Path(folder).iterdir()):
            Path(folder).rmdir()
