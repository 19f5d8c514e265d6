"""A rubric: JSON lines, one item each, in SCBench's format (ours is shipped in `data/`).

Each line is an object with `name`, `category`, `type` (`verbosity` or `erosion`) and
`description`, and optionally `positive_indicators`, `negative_indicators` and `examples` (lists
of strings). Other keys are kept and reach the criteria template as they are. Items are asked
one request per category; names must be unique, since a flag names its item.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchwright.errors import UserInputError
from benchwright.files.untrusted import read_untrusted_text

MAX_RUBRIC_BYTES = 4 * 2**20
BUNDLED = "benchwright.jsonl"
"""Our rubric's file name among the package's data (`--rubric` not given)."""
RubricType = Literal["verbosity", "erosion"]


class RubricItem(BaseModel):
    """One criterion of a rubric."""

    model_config = ConfigDict(extra="allow")

    name: str = Field(min_length=1, max_length=200)
    """What flags call it (`criteria`)."""
    category: str = Field(min_length=1, max_length=200)
    """Items of one category are asked in one request."""
    type: RubricType
    """Which composite its flags count towards."""
    description: str = Field(min_length=1)
    """What the item is."""
    positive_indicators: list[str] = Field(default_factory=list)
    """Cases to flag."""
    negative_indicators: list[str] = Field(default_factory=list)
    """Look-alikes not to flag."""
    examples: list[str] = Field(default_factory=list)
    """Examples (SCBench's other rubric shape)."""


@dataclass(frozen=True)
class Rubric:
    """The items of a rubric file, and where it came from."""

    items: tuple[RubricItem, ...]
    source: str
    """The file's path, or `bundled:benchwright.jsonl`."""
    sha256: str
    """SHA-256 of the file's bytes."""

    def categories(self) -> dict[str, list[RubricItem]]:
        """Items by category, categories in first-seen order, items sorted by name."""
        found: dict[str, list[RubricItem]] = {}
        for item in self.items:
            found.setdefault(item.category, []).append(item)
        return {c: sorted(items, key=lambda i: i.name) for c, items in found.items()}

    def item(self, name: str) -> RubricItem | None:
        """The item of that name, if any."""
        return next((i for i in self.items if i.name == name), None)


def load_rubric(path: Path | None) -> Rubric:
    """A rubric file (`None`: ours); a malformed one is one line naming the line at fault."""
    if path is None:
        text = (resources.files("benchwright.judge") / "data" / BUNDLED).read_text("utf-8")
        return parse_rubric(text, f"bundled:{BUNDLED}", None)
    text = read_untrusted_text(path, what="the rubric", max_bytes=MAX_RUBRIC_BYTES)
    return parse_rubric(text, str(path), path)


def parse_rubric(text: str, source: str, path: Path | None) -> Rubric:
    """Items from JSONL text; blank lines are skipped."""
    items: list[RubricItem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            items.append(_item(line, number, path))
    if not items:
        raise UserInputError("the rubric has no items", path=path,
                             hint="one JSON object per line: name, category, type, description")
    names = [i.name for i in items]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UserInputError(f"the rubric names an item more than once: {', '.join(twice)}",
                             path=path, hint="flags name their item, so names must be unique")
    return Rubric(items=tuple(items), source=source,
                  sha256=hashlib.sha256(text.encode()).hexdigest())


def _item(line: str, number: int, path: Path | None) -> RubricItem:
    try:
        data: Any = json.loads(line)
        return RubricItem.model_validate(data)
    except json.JSONDecodeError as exc:
        problem = f"not JSON ({exc.msg})"
    except RecursionError:  # `[` x 5000
        problem = "nested too deeply"
    except ValidationError as exc:
        error = exc.errors()[0]
        problem = f"{'.'.join(str(p) for p in error['loc']) or 'item'}: {error['msg']}"
    raise UserInputError(f"rubric line {number}: {problem}", path=path,
                         hint="one JSON object per line: name, category, type (verbosity or "
                         "erosion), description") from None
