"""Optional dependencies: importing one, and the one message that names the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from benchwright.errors import PrerequisiteError


def missing_extra(package: str, extra: str, needed_for: str) -> PrerequisiteError:
    """The error for an optional package that is not installed, with the exact `pip install`."""
    return PrerequisiteError(f"{needed_for} needs the {package} package, which is not installed",
                             hint=f"pip install 'benchwright[{extra}]'")


def import_extra(module: str, extra: str, needed_for: str) -> ModuleType:
    """Import an optional module, or raise `missing_extra`."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise missing_extra(module.split(".")[0], extra, needed_for) from None
