"""The images a task's `environment/Dockerfile` starts `FROM`, resolved in the engine's store
before a run starts: benchwright never pulls, so a base this machine has not built (or tagged)
is one clear error, and each base's image id (the digest of its content) is recorded in the
run's manifest and every trial record.

Only what `FROM` names is read: `--platform=...` flags are skipped, `AS name` stages and later
`FROM name` lines that reuse them are not images, `scratch` is none, and `$ARG` references are
replaced by the defaults of `ARG` lines before the first `FROM` (Docker's rule).
"""

from __future__ import annotations

import re
from pathlib import Path

from benchwright.errors import UserInputError
from benchwright.files.untrusted import read_untrusted_text
from benchwright.sandbox.images.engines import Engine

MAX_DOCKERFILE_BYTES = 1 << 20
_ARG = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


def from_images(dockerfile: Path) -> list[str]:
    """The images `dockerfile`'s FROM lines name, in order, without repeats."""
    text = read_untrusted_text(dockerfile, what="environment/Dockerfile",
                               max_bytes=MAX_DOCKERFILE_BYTES, error=UserInputError,
                               hint="a Harbor task builds its image from environment/Dockerfile")
    args: dict[str, str] = {}
    stages: set[str] = set()
    found: list[str] = []
    for words in _instructions(text):
        keyword, rest = words[0].upper(), words[1:]
        if keyword == "ARG" and not found and rest and "=" in rest[0]:
            name, _, default = rest[0].partition("=")
            args[name] = default.strip("\"'")  # an ARG without a default stays unresolved
        elif keyword == "FROM":
            rest = [w for w in rest if not w.startswith("--")]
            if not rest:
                raise UserInputError("a FROM line names no image", path=dockerfile)
            image = _ARG.sub(lambda m: args.get(m.group(1), m.group(0)), rest[0])
            if len(rest) >= 3 and rest[1].lower() == "as":
                stages.add(rest[2].lower())
            if image.lower() not in stages and image != "scratch" and image not in found:
                found.append(image)
    return found


def resolve_bases(engine: Engine, dockerfile: Path) -> dict[str, str]:
    """Each FROM image -> its id in the engine's store; one that is not there, or whose name
    still holds an unset `$ARG`, is the user's error in one line."""
    resolved = {}
    for image in from_images(dockerfile):
        found = None if "$" in image else engine.image_id(image)
        if found is None:
            raise UserInputError(
                f"FROM {image}: no such image in this machine's {engine.name} store "
                "(benchwright never pulls)", path=dockerfile,
                hint=f"build it (`benchwright images build`) or give a local image that name: "
                f"`{engine.name} tag ID {image}` (docs/harbor.md)")
        resolved[image] = found
    return resolved


def _instructions(text: str) -> list[list[str]]:
    """The Dockerfile's instructions as words, continuation lines joined, comments dropped."""
    joined, current = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#") and not current:
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        joined.append(current + stripped)
        current = ""
    joined.append(current)
    return [line.split() for line in joined if line.split()]
