"""Harbor tasks written for the tests, and `harbor` (PyPI) in an environment of its own.

A task's Dockerfile starts FROM the default grading image (built here, never pulled). Tests see
what the agent and the verifier did through the verifier's rewards only, as a Harbor user would.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.helpers.tiers import starts

HARBOR = "harbor==0.25.0"


@starts("container")
def base_image() -> str:
    """The default grading image's tag (built once per machine)."""
    from benchwright.sandbox.images.build import default_image

    return default_image("podman").tag


def harbor_python() -> Path:
    """The Python of an environment holding `harbor` (built the way benchwright builds its
    own pinned environments, cached); the test is skipped when the registry is unreachable."""
    from benchwright.errors import EnvironmentBuildError
    from benchwright.sandbox.environments import ensure_env
    from benchwright.sandbox.interpreters import resolve_python

    try:
        return ensure_env("harbor-tests", resolve_python("3.12"), [HARBOR]).python
    except EnvironmentBuildError as exc:
        pytest.skip(f"{HARBOR} could not be installed (is PyPI reachable?): {exc.message}")


def write_task(root: Path, name: str, toml: str, *, image: str, files: dict[str, str]) -> Path:
    """A task folder `root/name`: task.toml, the Dockerfile FROM `image`, and `files` (path ->
    text; `.sh` files executable)."""
    task = root / name
    (task / "environment").mkdir(parents=True)
    (task / "task.toml").write_text(textwrap.dedent(toml))
    (task / "environment" / "Dockerfile").write_text(
        f"FROM {image}\nRUN mkdir -p /app\nWORKDIR /app\n")
    for rel, text in files.items():
        path = task / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        if rel.endswith(".sh"):
            path.chmod(0o755)
    return task


# A verifier writing reward 1 when /app/answer.txt holds the step's expected text.
CHECK = """\
#!/bin/bash
want="{want}"
if [ "$(cat /app/answer.txt 2>/dev/null)" = "$want" ]; then r=1; else r=0; fi
echo "{{\\"reward\\": $r, \\"{key}\\": $r}}" > /logs/verifier/reward.json
"""


def single_step(root: Path, image: str) -> Path:
    """One step: write 42 into /app/answer.txt."""
    return write_task(root, "single", """\
        schema_version = "1.4"
        [task]
        name = "tests/single"
        [environment]
        workdir = "/app"
        """, image=image, files={
        "instruction.md": "Write 42 into /app/answer.txt\n",
        "tests/test.sh": CHECK.format(want="42", key="exact"),
        "solution/solve.sh": "#!/bin/bash\necho 42 > /app/answer.txt\n"})


def multi_step(root: Path, image: str, *, strategy: str = "mean",
               min_reward: str = "") -> Path:
    """Three steps (a, b, c), each its own answer; step b gated by `min_reward` when given."""
    gate = f"min_reward = {min_reward}\n" if min_reward else ""
    files = {"instruction.md": "three steps\n"}
    for step, want in (("a", "1"), ("b", "2"), ("c", "3")):
        files[f"steps/{step}/instruction.md"] = f"write {want}\n"
        files[f"steps/{step}/tests/test.sh"] = CHECK.format(want=want, key=f"step_{step}")
        files[f"steps/{step}/solution/solve.sh"] = f"#!/bin/bash\necho {want} > /app/answer.txt\n"
    return write_task(root, "multi", f"""\
        schema_version = "1.4"
        multi_step_reward_strategy = "{strategy}"
        [task]
        name = "tests/multi"
        [environment]
        workdir = "/app"
        [[steps]]
        name = "a"
        [[steps]]
        name = "b"
        {gate}
        [[steps]]
        name = "c"
        """, image=image, files=files)
