"""Names that become folder names (checkpoints, problems, assets, markers): names, not paths.

A name is 1-128 characters of ASCII letters, digits, `_`, `.` and `-`, starting with a letter or
digit, and holding no `..`: no separators, no control characters, never `.` or `..`. SCBench's
names (`checkpoint_1`, `code_search`, `file_backup`, `trajectory_api`) are all of this form.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}"
_NAME = re.compile(NAME_PATTERN)


def check_name(value: str) -> str:
    """`value` when it is a name; ValueError saying the rule otherwise."""
    if not _NAME.fullmatch(value) or ".." in value:
        raise ValueError(f"{value!r} is not a name: use 1-128 letters, digits, `_`, `.`, `-`, "
                         "starting with a letter or digit, without `..`")
    return value


Name = Annotated[str, AfterValidator(check_name)]
"""A string validated by `check_name`."""
