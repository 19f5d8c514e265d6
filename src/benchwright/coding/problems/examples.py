"""The example problems shipped inside the package (the embedded default)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from benchwright.errors import ProblemConfigError


def examples_dir() -> Path:
    """The folder of bundled problems."""
    return Path(str(resources.files("benchwright.coding.problems") / "bundled"))


def example_names() -> list[str]:
    """Names of the bundled problems."""
    root = examples_dir()
    return sorted(p.name for p in root.iterdir() if (p / "config.yaml").is_file())


def example_problem_dir(name: str) -> Path:
    """The folder of a bundled problem, or an error listing them."""
    if name not in example_names():
        raise ProblemConfigError(f"no bundled problem named {name!r}",
                                 hint=f"choose one of: {', '.join(example_names())}")
    return examples_dir() / name
