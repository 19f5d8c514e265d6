"""The containers of a Harbor trial, on podman or the docker CLI: the task's image built from its
Dockerfile without pulling, and each phase of a step in a container of its own.

Harbor keeps one container for the whole trial and runs the verifier in it; benchwright keeps
the agent's *files* between steps, never its processes: each agent phase runs in a new
container started from the image the last one left (`commit`), and ends with its container
(whatever it started dies with the container's init). The verifier runs in another container,
from the agent's image (`shared`) or the task's (`separate`, with `/app`-like artifacts copied
in), with the tests copied in after the agent is gone, and `/logs/verifier` mounted from a fresh
host folder the agent's containers never had. Every container runs without network, with
Docker's default capabilities less five and no new privileges (root inside, as Harbor's tasks
expect: podman 4.3 commits an id-mapped container's files unshifted, so a user namespace is
left for later: docs/harbor.md), named and labelled as `sandbox.container` names its own, so a
killed harness's leftovers are swept the same way.
"""

from __future__ import annotations

import hashlib
import secrets
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchwright.coding.agents.base import Usage
from benchwright.errors import GradingInfrastructureError, PrerequisiteError
from benchwright.sandbox.container import container_name, sweep_orphans
from benchwright.sandbox.images.engines import Engine, find_engine

STATE_LABEL = "benchwright.harbor-state"
"""Label of the images a trial commits between steps (removed when it ends; swept on resume)."""
_LIMITS = ("--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096", "--pids-limit", "4096")
# Docker's default capabilities less NET_RAW, MKNOD, AUDIT_WRITE, SYS_CHROOT and SETFCAP: what a
# task's own commands (package installs, chown, su) need, and no more.
_CAPS = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "SETPCAP",
         "NET_BIND_SERVICE")
_PRIVILEGES = ("--cap-drop", "all", *(a for cap in _CAPS for a in ("--cap-add", cap)))


@dataclass(frozen=True)
class PhaseResult:
    """How one container's command ended."""

    exit_code: int | None
    """Its exit status; None when the wall clock ended it."""
    timed_out: bool
    """The phase's timeout ended it."""
    usage: Usage | None = None
    """What a model-calling agent spent (None: no model was called by the harness)."""
    error: str | None = None
    """Why such an agent's turn ended early."""


def engine_for(runtime: str) -> Engine:
    """The engine of `--runtime podman|docker`; orphans of a killed harness removed."""
    if runtime not in ("podman", "docker"):
        raise PrerequisiteError(f"run harbor needs a container runtime, not {runtime!r}",
                                hint="give --runtime podman (or docker)")
    engine = find_engine(runtime)
    sweep_orphans(engine)
    return engine


def build_task_image(engine: Engine, context: Path) -> str:
    """The task's image built from `context/Dockerfile`, never pulling a base image: its id.
    A FROM that names an image the store lacks is one line saying how to provide it."""
    digest = hashlib.sha256(str(context.resolve()).encode()).hexdigest()[:12]
    tag = f"localhost/benchwright-harbor-task:{digest}"
    with tempfile.TemporaryDirectory(prefix="bw-harbor-build-") as scratch:
        done = engine.call(["build", "--pull=never", "-q", *_build_trust(Path(scratch)),
                            "-t", tag, str(context)], timeout=3600)
    if done.returncode != 0:
        detail = (done.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
        raise PrerequisiteError(f"the task's image did not build: {detail}",
                                path=context / "Dockerfile",
                                hint="benchwright never pulls: build or tag its FROM image "
                                "locally (`benchwright images build`, `podman tag ID NAME`; "
                                "docs/harbor.md)")
    found = engine.image_id(tag)
    if found is None:
        raise GradingInfrastructureError(f"{engine.name} built {tag} but does not list it")
    return found


def _build_trust(scratch: Path) -> list[str]:
    """A build's RUN steps see this machine's CA certificates (read-only) and a pip.conf
    naming them, so `pip install` works where this machine's does (behind a TLS-inspecting
    proxy too); nothing else of the machine (its own pip.conf may hold credentials)."""
    bundle = Path("/etc/ssl/certs/ca-certificates.crt")
    if not bundle.is_file():
        return []
    conf = scratch / "pip.conf"
    conf.write_text(f"[global]\ncert = {bundle}\n")
    conf.chmod(0o644)
    scratch.chmod(0o755)
    return ["-v", f"{bundle.parent}:{bundle.parent}:ro", "-v", f"{conf}:/etc/pip.conf:ro"]


def create(engine: Engine, image: str, argv: Sequence[str], *, user: str | None = None,
           workdir: str | None = None, mounts: Sequence[tuple[Path, str]] = (),
           env: dict[str, str] | None = None) -> str:
    """A container from `image` that will run `argv` (not started): its name."""
    name = container_name()
    args = ["create", "--name", name, "--label", "benchwright.runtime=1", "--network", "none",
            "--security-opt", "no-new-privileges", *_LIMITS, *_PRIVILEGES]
    args += ["--user", user] if user else []
    args += ["--workdir", workdir] if workdir else []
    for key, value in (env or {}).items():
        args += ["--env", f"{key}={value}"]
    for host, inside in mounts:
        args += ["--mount", f"type=bind,source={host},destination={inside}"]
    done = engine.call([*args, image, *argv], timeout=300)
    if done.returncode != 0:
        raise GradingInfrastructureError(
            f"{engine.name} could not create a container: "
            f"{done.stderr.decode(errors='replace').strip()[-300:]}")
    return name


def copy_in(engine: Engine, name: str, source: Path, inside: str, *,
            contents: bool = True) -> None:
    """The folder `source`'s contents (or, not `contents`, the folder itself) copied to
    `inside` in the (created) container."""
    done = engine.call(["cp", f"{source}/." if contents else str(source), f"{name}:{inside}"],
                       timeout=600)
    if done.returncode != 0:
        raise GradingInfrastructureError(f"copying {source} into the container failed: "
                                         f"{done.stderr.decode(errors='replace').strip()}")


def copy_between(engine: Engine, source: str, target: str, path: str) -> None:
    """`path` of the container `source` copied into the container `target`, as a tar stream
    (never unpacked on this machine)."""
    with subprocess.Popen(engine.command("cp", f"{source}:{path}", "-"),
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as out:
        parent = str(Path(path).parent)
        done = subprocess.run(engine.command("cp", "-", f"{target}:{parent}"), stdin=out.stdout,
                              capture_output=True, timeout=600, check=False)
    if done.returncode != 0 and out.returncode == 0:
        raise GradingInfrastructureError(f"copying {path} to the verifier failed: "
                                         f"{done.stderr.decode(errors='replace').strip()}")


def start(engine: Engine, name: str, timeout_s: float, log: Path) -> PhaseResult:
    """Start the created container, its output to `log`; wait at most `timeout_s`. When it
    ends (or is ended), nothing it started is left running."""
    with log.open("wb") as sink:
        proc = subprocess.Popen(engine.command("start", "--attach", name), stdout=sink,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            engine.call(["kill", name], timeout=120)
            proc.wait()
            return PhaseResult(exit_code=None, timed_out=True)
    state = engine.text(["container", "inspect", "--format",
                         "{{.State.ExitCode}} {{.State.StartedAt}}", name]) or ""
    code, _, started = state.partition(" ")
    if not code.lstrip("-").isdigit() or started.startswith("0001-"):
        tail = log.read_bytes()[-300:].decode(errors="replace").strip()
        raise GradingInfrastructureError(f"{engine.name} could not run the container: {tail}")
    return PhaseResult(exit_code=int(code), timed_out=False)


def start_idle(engine: Engine, name: str) -> None:
    """Start a created container whose command idles (its commands come by `exec`)."""
    done = engine.call(["start", name], timeout=300)
    if done.returncode != 0:
        raise GradingInfrastructureError(f"{engine.name} could not start the container: "
                                         f"{done.stderr.decode(errors='replace').strip()}")


def stop(engine: Engine, name: str) -> None:
    """Kill the container's init, and with it every process inside; wait until it is down."""
    engine.call(["kill", name], timeout=120)
    engine.call(["wait", name], timeout=120)


def commit(engine: Engine, name: str, run_id: str) -> str:
    """The stopped container's files as an image (labelled for the sweep): its id."""
    tag = f"localhost/benchwright-harbor-state:{secrets.token_hex(6)}"
    done = engine.call(["commit", "-q", "--change", f"LABEL {STATE_LABEL}={run_id}", name, tag],
                       timeout=1800)
    if done.returncode != 0:
        raise GradingInfrastructureError(f"{engine.name} could not keep the step's files: "
                                         f"{done.stderr.decode(errors='replace').strip()}")
    return tag


def remove(engine: Engine, name: str) -> None:
    """Remove a container, whatever still runs in it."""
    engine.call(["rm", "--force", name], timeout=120)


def remove_images(engine: Engine, images: Sequence[str]) -> None:
    """Remove the state images a trial made."""
    if images:
        engine.call(["rmi", "--force", *images], timeout=600)


def sweep_state_images(engine: Engine, run_id: str) -> None:
    """The state images a killed predecessor of this run left."""
    listed = engine.text(["images", "--filter", f"label={STATE_LABEL}={run_id}",
                          "--format", "{{.ID}}"]) or ""
    remove_images(engine, sorted(set(listed.split())))
