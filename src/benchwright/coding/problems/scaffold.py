"""`problems new`: a working problem in the SCBench format, to edit into one's own.

What it writes (from `scaffold_templates/<kind>/`): config.yaml, two checkpoint specs, the tests
(conftest.py with the `--entrypoint`/`--checkpoint` options and fixtures, one file per checkpoint
with Core, Functionality and Error tests), and a reference solution per checkpoint. As generated
it passes `problems validate`.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Literal

from benchwright.errors import UserInputError
from benchwright.files.names import check_name

Kind = Literal["cli", "http"]

# template file -> where it goes ("{entry}" is the entry file's stem)
_LAYOUT = {
    "config.yaml.tmpl": "config.yaml",
    "checkpoint_1.md.tmpl": "checkpoint_1.md",
    "checkpoint_2.md.tmpl": "checkpoint_2.md",
    "conftest.py.tmpl": "tests/conftest.py",
    "test_checkpoint_1.py.tmpl": "tests/test_checkpoint_1.py",
    "test_checkpoint_2.py.tmpl": "tests/test_checkpoint_2.py",
    "solution_1.py.tmpl": "solutions/checkpoint_1/{entry}.py",
    "solution_2.py.tmpl": "solutions/checkpoint_2/{entry}.py",
}


def entry_stem(name: str) -> str:
    """The entry module's stem for a problem name: a Python identifier."""
    stem = re.sub(r"\W", "_", name)
    return f"_{stem}" if stem[0].isdigit() else stem


def new_problem(name: str, kind: Kind, out: Path) -> Path:
    """Write problem `name` of `kind` into `out/name` (which must not exist); returns it."""
    try:
        check_name(name)
    except ValueError as exc:
        raise UserInputError(str(exc), hint="e.g. `word_count`") from None
    target = out / name
    if target.exists() or target.is_symlink():
        raise UserInputError("the folder exists already", path=target,
                             hint="choose another name or --out")
    entry = entry_stem(name)
    templates = resources.files("benchwright.coding.problems") / "scaffold_templates" / kind
    for source, dest in _LAYOUT.items():
        path = target / dest.format(entry=entry)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = (templates / source).read_text(encoding="utf-8")
        path.write_text(text.replace("__NAME__", name).replace("__ENTRY__", entry),
                        encoding="utf-8")
    return target
