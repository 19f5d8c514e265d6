"""Bad input for `benchwright run harbor` as `bad_input_probes.Probe`s: a task folder at
`{tmp}/t` (one step, FROM the image the caller names), broken one way each. Shared by
tests/harbor/test_bad_inputs.py and scripts/probe_bad_inputs.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.helpers.bad_input_probes import DIR, FIFO, Probe

RUN = ["run", "harbor", "--tasks", "{tmp}/t", "--out", "{tmp}/o"]
TOML = 'schema_version = "1.4"\n[task]\nname = "probe/t"\n[environment]\nworkdir = "/app"\n'


def task(image: str, changes: dict[str, object] | None = None) -> dict[str, object]:
    """A valid task at `t/`, with `changes` (a path under t/ -> its content; None: removed)."""
    files: dict[str, object] = {
        "t/task.toml": TOML, "t/instruction.md": "write 42 into /app/answer.txt\n",
        "t/environment/Dockerfile": f"FROM {image}\nWORKDIR /app\n",
        "t/tests/test.sh": "#!/bin/bash\necho '{\"reward\": 1}' > /logs/verifier/reward.json\n",
        "t/solution/solve.sh": "#!/bin/bash\necho 42 > /app/answer.txt\n"}
    for key, value in (changes or {}).items():
        files[f"t/{key}"] = value
    return files


def sparse(size: int) -> Callable[[Path], None]:
    """A file entry: a sparse file of `size` bytes (no disk spent)."""
    def make(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as handle:
            handle.truncate(size)
    return make


def link(target: str) -> Callable[[Path], None]:
    """A file entry: a symlink to `target`."""
    def make(path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)
    return make


def harbor_probes(image: str) -> list[Probe]:
    """Each bad task folder or option, and the fragment its one error line must hold. Only the
    `from-*` probes ask the container engine (they need podman; none starts a container)."""
    return [
        Probe("tasks-missing", ["run", "harbor", "--tasks", "{tmp}/nope", "--out", "{tmp}/o"],
              {}, "--tasks"),
        Probe("tasks-a-file", RUN, {"t": "not a folder"}, "--tasks"),
        Probe("tasks-empty", RUN, {"t": DIR}, "no Harbor task"),
        Probe("toml-not-toml", RUN, task(image, {"task.toml": "x = [\n"}), "not TOML"),
        Probe("toml-wrong-type", RUN, task(image, {
            "task.toml": TOML + "[agent]\ntimeout_sec = 'soon'\n"}), "agent.timeout_sec"),
        Probe("toml-steps-a-table", RUN, task(image, {"task.toml": TOML + "[steps]\n"}),
              "steps"),
        Probe("toml-a-fifo", RUN, task(image, {"task.toml": FIFO}), "FIFO"),
        Probe("no-test-sh", RUN, task(image, {"tests/test.sh": None}), "test.sh"),
        Probe("test-sh-a-link-out", RUN, task(image, {"tests/test.sh": link("/etc/shadow")}),
              "link out of the task"),
        Probe("link-out-in-environment", RUN, task(image, {"environment/host": link("../../..")}),
              "link out of the task"),
        Probe("huge-file", RUN, task(image, {"environment/weights.bin": sparse(3 << 30)}),
              "MiB"),
        Probe("no-dockerfile", RUN, task(image, {"environment/Dockerfile": None}),
              "environment/Dockerfile"),
        Probe("from-not-built-here", RUN, task(image, {
            "environment/Dockerfile": "FROM benchwright-probe/never-built:1\n"}), "never pulls"),
        Probe("from-unset-arg", RUN, task(image, {"environment/Dockerfile": "FROM ${BASE}\n"}),
              "FROM ${BASE}"),
        Probe("resume-with-trials", ["run", "harbor", "--resume", "{tmp}/t", "--trials", "2"],
              task(image), "trials"),
        Probe("agent-unknown", [*RUN, "--agent", "claude"], task(image), "--agent"),
        Probe("command-without-command", [*RUN, "--agent", "command"], task(image),
              "--agent-command"),
    ]
