"""Optional dependencies imported where they are used: `import_extra` imports one, or raises the
one missing-dependency message (`errors.missing_extra`, which names the exact `pip install`)."""

from __future__ import annotations

import importlib
from types import ModuleType

from benchwright.errors import missing_extra


def import_extra(module: str, extra: str, needed_for: str) -> ModuleType:
    """Import an optional module, or raise `missing_extra` naming the extra that brings it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise missing_extra(f"{needed_for} needs the {module.split('.')[0]} package, which is "
                            "not installed", extra) from None
