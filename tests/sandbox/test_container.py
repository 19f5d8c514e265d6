"""`--runtime podman|docker` (benchwright.sandbox.container): a container per command as a fresh
uid, no network, its limits, the caller's descriptors under their own numbers, secrets never on
the engine's command line, nothing left behind (a timeout, a kill -9 of the harness: swept by
the next start), images never pulled, a missing engine refused before a run folder exists."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from benchwright.errors import PrerequisiteError
from benchwright.protocols import Limits, Mount
from benchwright.sandbox.container import (
    ORPHAN_MARGIN_S,
    ContainerRuntime,
    owner_prefix,
    sweep_orphans,
)
from benchwright.sandbox.images.engines import find_engine
from benchwright.sandbox.images.resolve import environment_image, resolve_image
from benchwright.sandbox.interpreters import resolve_python
from tests.helpers import run_cli
from tests.helpers.processes import wait_for
from tests.helpers.runtimes import CONTAINER_PARAMS, make_runtime

pytestmark = pytest.mark.container
SCBENCH_ENV = """type: docker
name: python3.12
docker:
  image: {image}
  workdir: /workspace
  mount_workspace: true
"""


@pytest.fixture(scope="module", params=CONTAINER_PARAMS)
def runtime(request: pytest.FixtureRequest) -> ContainerRuntime:
    made = make_runtime(request.param, request)
    assert isinstance(made, ContainerRuntime)
    return made


def _python() -> str:
    return str(resolve_python(None).executable)


def _run(runtime: ContainerRuntime, code: str, tmp: Path, **kwargs: object
         ) -> tuple[int, str]:
    out = tmp / "stdout"
    with out.open("wb") as stdout:
        result = runtime.run([_python(), "-c", code], cwd=tmp, stdout=stdout,
                             env=kwargs.pop("env", {"PATH": "/usr/bin:/bin"}),  # type: ignore
                             mounts=[Mount(path=tmp, writable=True)],
                             limits=kwargs.pop("limits", Limits(wall_clock_s=120)),  # type: ignore
                             **kwargs)  # type: ignore[arg-type]
    return result.exit_code, out.read_text()


def _containers(runtime: ContainerRuntime) -> list[str]:
    listed = runtime.engine.text(["ps", "--all", "--filter", "label=benchwright.runtime",
                                  "--format", "{{.Names}}"]) or ""
    return listed.split()


def test_a_command_runs_as_a_fresh_uid_and_writes_only_its_mounts(
        runtime: ContainerRuntime, tmp_path: Path) -> None:
    code = ("import os; open('made.txt', 'w').write('x'); print(os.getuid());"
            "print(os.access('/usr/bin', os.W_OK), os.path.exists('/root/.cache'))")
    status, out = _run(runtime, code, tmp_path)
    uid, usr_writable, host_cache = out.split()
    assert status == 0 and (tmp_path / "made.txt").read_text() == "x"
    assert int(uid) != os.getuid() and usr_writable == "False" and host_cache == "False"


DESCRIPTOR = """
import fcntl, os, sys
from pathlib import Path
from benchwright.protocols import Limits
from benchwright.sandbox.bwrap import get_runtime
read, write = os.pipe()
number = fcntl.fcntl(write, fcntl.F_DUPFD, int(sys.argv[2]))  # the lowest free from there
os.close(write)
code = (f"import os; left = ','.join(os.listdir('/run/benchwright-fds')) or '-'; "
        f"os.write({number}, b'verdict:' + left.encode()); os.close({number})")
result = get_runtime(False, sys.argv[1]).run(
    [sys.argv[3], "-c", code], cwd=Path("/tmp"), env={"PATH": "/usr/bin"}, mounts=[],
    limits=Limits(wall_clock_s=120), pass_fds=(number,))
os.close(number)
print(number, result.exit_code, os.read(read, 100).decode())
"""


@pytest.mark.parametrize("lowest", [3, 10])  # one digit: sh opens it; two: bash
def test_a_passed_descriptor_keeps_its_number_and_no_path_leads_to_it(
        runtime: ContainerRuntime, lowest: int) -> None:
    # in a process of its own: this one holds most low descriptors (pytest's captures)
    done = subprocess.run([sys.executable, "-c", DESCRIPTOR, runtime.name, str(lowest),
                           _python()], capture_output=True, text=True, timeout=300, check=False)
    number, status, received = done.stdout.split()
    assert (int(number) < 10) == (lowest < 10), done.stderr
    # the FIFOs were unlinked before the command started: none can be opened by its path
    assert (status, received) == ("0", "verdict:ack")


def test_no_network_but_loopback(runtime: ContainerRuntime, tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        code = (f"import socket\ntry:\n socket.create_connection(('127.0.0.1', {port}), 3)\n"
                " print('reached')\nexcept OSError as e:\n print('refused')\n"
                "try:\n socket.create_connection(('1.1.1.1', 53), 3); print('out')\n"
                "except OSError:\n print('no route')")
        _status, out = _run(runtime, code, tmp_path)
    assert out.split() == ["refused", "no", "route"]


def test_the_memory_limit_kills_and_is_reported(runtime: ContainerRuntime, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # conmon's `oom` marker must not land in the harness's folder
    code = "b = bytearray(600 * 1024 * 1024); b[::4096] = b'x' * len(b[::4096])"
    result = runtime.run([_python(), "-c", code], cwd=Path("/tmp"), env={"PATH": "/usr/bin"},
                         mounts=[], limits=Limits(wall_clock_s=120, memory_mb=200))
    assert result.exit_code != 0 and result.memory_exceeded
    assert list(tmp_path.iterdir()) == []


def test_a_fork_bomb_stops_at_the_process_limit(runtime: ContainerRuntime,
                                                tmp_path: Path) -> None:
    code = ("import os\nn = 0\ntry:\n while True:\n  if os.fork() == 0:\n   import time; "
            "time.sleep(30); os._exit(0)\n  n += 1\nexcept OSError:\n print('stopped', n)")
    status, out = _run(runtime, code, tmp_path,
                       limits=Limits(wall_clock_s=120, max_processes=32))
    assert status == 0 and out.startswith("stopped") and int(out.split()[1]) < 32


def test_the_wall_clock_removes_the_container(runtime: ContainerRuntime) -> None:
    result = runtime.run(["sleep", "600"], cwd=Path("/tmp"), env={"PATH": "/usr/bin:/bin"},
                         mounts=[], limits=Limits(wall_clock_s=2))
    assert result.timed_out
    assert not [n for n in _containers(runtime) if n.startswith(owner_prefix(os.getpid()))]


def test_values_of_the_environment_never_reach_the_engines_command_line(
        runtime: ContainerRuntime, tmp_path: Path) -> None:
    secret = "s3cr3t-value-never-on-argv"
    command = runtime._command("x", ["true"], tmp_path, {"TOKEN": secret}, [], Limits(), False,
                               None, False)
    assert secret not in " ".join(command) and "TOKEN" in command
    status, out = _run(runtime, "import os; print(os.environ['TOKEN'])", tmp_path,
                       env={"PATH": "/usr/bin", "TOKEN": secret})
    assert (status, out.strip()) == (0, secret)


HARNESS = """
import sys
from pathlib import Path
from benchwright.sandbox.container import PodmanRuntime
from benchwright.protocols import Limits
PodmanRuntime().run(["sleep", "600"], cwd=Path("/tmp"), env={"PATH": "/usr/bin:/bin"},
                    mounts=[], limits=Limits(wall_clock_s=600))
"""


ORPHAN = """
import sys
from pathlib import Path
from benchwright.protocols import Limits
from benchwright.sandbox.bwrap import get_runtime
get_runtime(False, sys.argv[1]).run(["sleep", "600"], cwd=Path("/tmp"), mounts=[],
                                    env={"PATH": "/usr/bin:/bin"}, limits=Limits(wall_clock_s=1))
"""


def test_the_container_of_a_killed_harness_ends_by_itself_past_its_wall_clock(
        runtime: ContainerRuntime) -> None:
    if runtime.name == "podman":  # the same watchdog (and podman's --timeout): once is enough
        pytest.skip("tested through docker, where no engine option ends a container by itself")
    harness = subprocess.Popen([sys.executable, "-c", ORPHAN, runtime.name])
    mine = owner_prefix(harness.pid)

    def running() -> bool:
        return any(name.startswith(mine) for name in (runtime.engine.text([
            "ps", "--filter", "label=benchwright.runtime", "--format", "{{.Names}}"]) or "")
            .split())

    try:
        wait_for(running, 300, 0.2, what="the harness's container to run")
    finally:
        harness.send_signal(signal.SIGKILL)
        harness.wait()
    wait_for(lambda: not running(), 1 + ORPHAN_MARGIN_S + 120, 1.0,
             what="the orphaned container to end by itself")
    sweep_orphans.__wrapped__(runtime.engine)  # its stopped remains


def test_the_container_of_a_killed_harness_is_swept_by_the_next_start() -> None:
    engine = find_engine("podman")
    harness = subprocess.Popen([sys.executable, "-c", HARNESS])
    mine = owner_prefix(harness.pid)

    def started() -> bool:
        listed = engine.text(["ps", "--filter", "label=benchwright.runtime",
                              "--format", "{{.Names}}"]) or ""
        return any(name.startswith(mine) for name in listed.split())

    try:
        wait_for(started, 300, 0.5, what="the harness's container to run")
    finally:
        harness.send_signal(signal.SIGKILL)
        harness.wait()
    assert started(), "the container outlives its harness until the next start"
    removed = sweep_orphans.__wrapped__(engine)  # what the next runtime's start does
    assert [name for name in removed if name.startswith(mine)] and not started()


def test_an_image_is_never_pulled_and_an_environment_file_is_read_as_it_is(
        tmp_path: Path) -> None:
    engine = find_engine("podman")
    default = resolve_image("podman", None)
    name = "ghcr.io/astral-sh/uv:benchwright-test-stand-in"
    env_file = tmp_path / "docker-python3.12-uv.yaml"
    env_file.write_text(SCBENCH_ENV.format(image=name))
    assert environment_image(env_file) == name
    engine.call(["rmi", name])
    with pytest.raises(PrerequisiteError, match="never pulls"):
        resolve_image("podman", str(env_file))
    assert engine.call(["tag", default.id, name]).returncode == 0
    try:
        assert resolve_image("podman", str(env_file)).id == default.id
    finally:
        engine.call(["rmi", name])


@pytest.mark.e2e
def test_a_missing_engine_is_refused_before_the_run_folder_exists(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = dict(os.environ, PATH="/usr/bin:/bin")
    env.pop("DOCKER_HOST", None)
    done = run_cli("run", "coding", "--runtime", "docker", "--out", str(out), env={
        **env, "PATH": str(Path(sys.executable).parent)})
    assert done.returncode == 2 and not out.exists()
    assert "docker is not installed" in done.stderr and "Traceback" not in done.stderr


def test_a_system_folder_of_the_host_never_replaces_the_images(
        runtime: ContainerRuntime, tmp_path: Path) -> None:
    with pytest.raises(PrerequisiteError, match="use an image that has the tool"):
        runtime.run(["true"], cwd=Path("/tmp"), env={}, mounts=[Mount(path=Path("/usr/bin"))],
                    limits=Limits(wall_clock_s=60))


def test_a_container_of_another_pid_namespace_is_not_swept() -> None:
    from benchwright.sandbox.container import _orphaned

    assert _orphaned(f"{owner_prefix(999_999_999)}123-abcd")  # ours, and its owner is gone
    assert not _orphaned("benchwright-1-999999999-123-abcd")  # another namespace's harness
    assert not _orphaned("someone-else")
