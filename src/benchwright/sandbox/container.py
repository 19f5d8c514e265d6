"""Run untrusted commands in a container (podman, or the docker CLI): `--runtime podman|docker`.

The same contract as the bubblewrap runtime (`sandbox`), on an image instead of the host's /usr:
a container per command, seeing the image and exactly the caller's mounts (the image's own copy
of the grading interpreter stands in for the host's: the mount of a path the image's label says
it provides is left out), as a fresh unprivileged host uid when the harness is root (writable
mounts handed to it, taken back by `reclaim_tree` as for bubblewrap), with every capability
dropped and no new privileges (a container with `nosymfollow` mounts starts as root with four
capabilities for bubblewrap's remount step, which drops to that uid before anything else runs:
`_first_step`); no network (`--network none`: loopback only; the egress proxy's
bridge is a mounted socket, as in bubblewrap); the memory limit as the container's cgroup
(without swap), processes by the pids cgroup and RLIMIT_NPROC, file size and core by rlimits.
The file descriptors the caller passes (the verdict channel) reach the command under the same
numbers through a FIFO each, relayed by a thread (the docker CLI cannot pass descriptors).

Nothing is left behind: the container is removed when the command ends or its wall clock runs
out; one orphaned by a kill -9 of the harness carries its owner's pid and start time in its name
and is removed by the next runtime this machine starts (`sweep_orphans`), and podman's own
`--timeout` ends it at its wall clock meanwhile.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import resource
import secrets
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from benchwright.errors import GradingInfrastructureError, PrerequisiteError
from benchwright.files.owned_temp import OwnedTemp
from benchwright.protocols import ExecResult, Limits, Mount
from benchwright.sandbox.bwrap import (
    _chown_tree,
    _drop_to,
    _host_uid_for_sandbox,
    _nosymfollow_targets,
    _remount_nosymfollow,
    memory_limit_mb,
)
from benchwright.sandbox.images.engines import Engine, find_engine
from benchwright.sandbox.images.recipe import LABEL_PREFIX
from benchwright.sandbox.memory_cgroup import _pid_namespace

NAME_PREFIX = "benchwright-"
ORPHAN_MARGIN_S = 30
"""Past its wall clock by this much, a container ends by itself (its harness is gone)."""
# The image's system folders: a step never gets the host's in their place.
_IMAGE_SYSTEM = frozenset(Path(p) for p in (
    "/", "/bin", "/sbin", "/lib", "/lib64", "/usr", "/usr/bin", "/usr/sbin", "/usr/lib",
    "/usr/lib64", "/usr/local", "/usr/local/bin", "/etc"))
FDS_INSIDE = Path("/run/benchwright-fds")
_PR_SET_PDEATHSIG = 1
# podman/docker's own failures (the container never ran the command): not the command's status
_ENGINE_FAILED = (125, 126, 127)
_KILLED = 137
# Kept from the harness's environment for the engine's command line itself (never the command's).
_ENGINE_ENV = ("DOCKER_HOST", "DOCKER_CONFIG", "DOCKER_CONTEXT", "DOCKER_CERT_PATH",
               "DOCKER_TLS_VERIFY", "CONTAINERS_CONF", "CONTAINER_HOST", "XDG_RUNTIME_DIR",
               "XDG_CONFIG_HOME")


class ContainerRuntime:
    """One container per command, on an image resolved once (its id: never pulled)."""

    name = "container"

    def __init__(self, image: str | None = None, engine: str | None = None) -> None:
        """`image`: an image id or reference in the engine's store; None: the default grading
        image (`benchwright images build`)."""
        self.engine = find_engine(engine or self.name)
        if image is None:
            from benchwright.sandbox.images.build import default_image

            image = default_image(self.engine.name).id
        if self.engine.image_id(image) is None:  # a run's image removed since it started
            raise PrerequisiteError(f"image {image} is not in {self.engine.name}'s store",
                                    hint="benchwright never pulls: build it again "
                                    "(`benchwright images build`) or start a new run")
        self.image = image
        prefix = self.engine.label(image, LABEL_PREFIX)
        self.provided = frozenset([Path(prefix)] if prefix else [])
        sweep_orphans(self.engine)

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        mounts: Sequence[Mount],
        limits: Limits,
        network: bool = False,
        stdin: bytes | None = None,
        stdout: IO[bytes] | int | None = None,
        stderr: IO[bytes] | int | None = None,
        pass_fds: Sequence[int] = (),
    ) -> ExecResult:
        """Run `argv` in a fresh container and wait for it (or for the wall clock)."""
        uid = _host_uid_for_sandbox()
        if uid is not None:
            for mount in mounts:
                if mount.writable:
                    _chown_tree(mount.path, uid)
        name = container_name()
        relay = _FdRelay(tuple(pass_fds), uid)
        remount = _nosymfollow_targets(mounts, uid)
        try:
            command = self._command(name, list(argv), cwd, env, [*mounts, *relay.mounts()],
                                    limits, network, uid, stdin is not None, bool(remount))
            deadline = int(limits.wall_clock_s) + ORPHAN_MARGIN_S
            first = [*_remount_nosymfollow(remount), *_drop_to(uid)] if remount else []
            result = self._wait(name, [*command, *first, *relay.wrap(list(argv), deadline)],
                                env, limits, stdin, stdout, stderr, relay.folder)
        finally:
            relay.finish()
        return result.model_copy(update={
            "argv": list(argv), "runtime": self.name,
            "memory_exceeded": result.memory_exceeded or relay.oom_killed()})

    def _command(self, name: str, argv: list[str], cwd: Path, env: Mapping[str, str],
                 mounts: Sequence[Mount], limits: Limits, network: bool, uid: int | None,
                 interactive: bool, admin: bool = False) -> list[str]:
        """`ENGINE run ...` up to the image (the command follows; `admin`: it starts with the
        remount step, see `_first_step`)."""
        mem = memory_limit_mb(limits)
        args = ["run", "--name", name, "--label", "benchwright.runtime=1",
                "--hostname", "sandbox", "--cap-drop", "all",
                "--security-opt", "no-new-privileges", "--memory", f"{mem}m",
                "--memory-swap", f"{mem}m", "--pids-limit", str(limits.max_processes),
                *self._ulimits(limits), "--workdir", str(cwd)]
        args += ["--network", "bridge" if network else "none"]
        if admin:
            args += _first_step(uid, env)
        elif uid is not None:
            args += ["--user", f"{uid}:{uid}"]
        args += ["--interactive"] if interactive else []
        args += self._engine_specific(limits)
        for key in env:  # the values travel in the engine's environment, never on its argv
            args += ["--env", key]
        for mount in _ordered(mounts):
            if not mount.writable and mount.path in self.provided:
                continue  # the image's own copy (the same path) is what runs
            args += ["--mount", _mount_spec(mount)]
        return self.engine.command(*args, self.image)

    def _ulimits(self, limits: Limits) -> list[str]:
        """Every ulimit explicit: an engine's defaults can exceed this machine's hard limits
        (podman's nproc and nofile on Debian 12), and the container would not start."""
        nofile = _within_hard(resource.RLIMIT_NOFILE, 1024)
        values = {"nproc": limits.max_processes, "nofile": nofile,
                  "fsize": limits.max_file_mb * 1024 * 1024, "core": 0}
        return [arg for key, value in values.items()
                for arg in ("--ulimit", f"{key}={value}:{value}")]

    def _engine_specific(self, limits: Limits) -> list[str]:
        return []

    def _wait(self, name: str, command: list[str], env: Mapping[str, str], limits: Limits,
              stdin: bytes | None, stdout: IO[bytes] | int | None,
              stderr: IO[bytes] | int | None, scratch: Path) -> ExecResult:
        start = time.monotonic()
        timed_out = False
        # in a scratch folder: conmon writes its `oom` marker into the engine's working folder
        proc = subprocess.Popen(command, env=_engine_env(env), stdout=stdout, stderr=stderr,
                                cwd=scratch,
                                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                                start_new_session=True, preexec_fn=_die_with_parent)
        try:
            if stdin is not None and proc.stdin is not None:
                _feed(proc.stdin, stdin)
            proc.wait(timeout=limits.wall_clock_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill(proc)
            state = self._state(name) if proc.returncode in (*_ENGINE_FAILED, _KILLED) else None
            self.remove(name)
        if state is not None and not state.started and not timed_out:
            raise GradingInfrastructureError(
                f"{self.engine.name} could not start the container (exit {proc.returncode})",
                hint=f"check that `{self.engine.name} run --rm {self.image} true` works here")
        return ExecResult(argv=command, exit_code=proc.returncode, timed_out=timed_out,
                          duration_s=round(time.monotonic() - start, 3),
                          memory_exceeded=bool(state and state.oom_killed))

    def _state(self, name: str) -> _State | None:
        found = self.engine.text(["container", "inspect", "--format",
                                  "{{.State.OOMKilled}} {{.State.StartedAt}}", name])
        if found is None:
            return None
        oom, _, started = found.partition(" ")
        return _State(oom_killed=oom == "true", started=not started.startswith("0001-"))

    def remove(self, name: str) -> None:
        """Remove the container, killing whatever still runs in it."""
        self.engine.call(["rm", "--force", name], timeout=120)


class PodmanRuntime(ContainerRuntime):
    """Containers run by podman (rootful here; its output passed straight through)."""

    name = "podman"

    def _engine_specific(self, limits: Limits) -> list[str]:
        # conmon ends a container whose harness was killed at its wall clock (plus a margin);
        # passthrough: the command writes to our pipes directly, no log copy on disk
        # /proc/sys writable where permissions allow: the jail's nested bubblewrap sets its own
        # user namespace's max_user_namespaces (--disable-userns); host sysctls stay root's
        return ["--timeout", str(int(limits.wall_clock_s) + ORPHAN_MARGIN_S),
                "--log-driver", "passthrough",
                "--security-opt", "unmask=/proc/sys"]


class DockerRuntime(ContainerRuntime):
    """Containers run through the docker CLI (Docker's engine, or podman's Docker API)."""

    name = "docker"

    def _engine_specific(self, limits: Limits) -> list[str]:
        # as podman's unmask (see there); podman's Docker API knows only its own spelling
        paths = "unmask=/proc/sys" if self.engine.podman_api else "systempaths=unconfined"
        return ["--log-driver", "none", "--security-opt", paths]


class _State:
    def __init__(self, oom_killed: bool, started: bool) -> None:
        self.oom_killed, self.started = oom_killed, started


def container_name() -> str:
    """`benchwright-<pid namespace>-<pid>-<start time>-<random>`: its owner, for
    `sweep_orphans`."""
    return f"{owner_prefix(os.getpid())}{_start_time(os.getpid())}-{secrets.token_hex(4)}"


def owner_prefix(pid: int) -> str:
    """How the names of the containers process `pid` (of this pid namespace) starts begin."""
    return f"{NAME_PREFIX}{_pid_namespace()}-{pid}-"


@functools.cache
def sweep_orphans(engine: Engine) -> list[str]:
    """Remove the containers of benchwright processes that are gone (a kill -9, a crash): the
    first runtime of each process does it once. Returns the names removed."""
    listed = engine.text(["ps", "--all", "--filter", "label=benchwright.runtime",
                          "--format", "{{.Names}}"]) or ""
    orphans = [name for name in listed.split() if _orphaned(name)]
    if orphans:
        engine.call(["rm", "--force", *orphans], timeout=300)
    return orphans


def _orphaned(name: str) -> bool:
    """Started by a process of this pid namespace that is gone. A container of another
    namespace's harness (a Ray lab node, a harness in a container) is not ours to judge."""
    parts = name.removeprefix(NAME_PREFIX).split("-")
    if not name.startswith(NAME_PREFIX) or len(parts) != 4 or not parts[1].isdigit():
        return False
    return parts[0] == _pid_namespace() and _start_time(int(parts[1])) != parts[2]


def _start_time(pid: int) -> str:
    """The process's start time (clock ticks since boot), '' when it is gone: with the pid, it
    names one process for the machine's uptime."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def _ordered(mounts: Sequence[Mount]) -> list[Mount]:
    """Parents before children, a read-only child after a writable parent of the same path."""
    return sorted(mounts, key=lambda m: (len(m.inside.parts), m.writable))


# The submission's folders nosymfollow (`Mount.nosymfollow`), as in bubblewrap: neither podman
# 4.3.1 nor the docker CLI takes the option on a mount ("invalid mount option"), so the container
# starts as root holding only what the first step needs, the remount of bwrap.py (/usr's sh, env
# and mount, before any untrusted code exists in the container), which execs the same `setpriv`
# drop to the fresh uid: SETUID/SETGID for the drop, SETPCAP to empty the bounding set (without
# it setpriv leaves the three in CapBnd: measured). The default seccomp profile allows mount to a
# holder of CAP_SYS_ADMIN and podman's masked paths are not among the mounts; the shell that
# stays the container's init (`_FdRelay.wrap`) already runs as the fresh uid.
_FIRST_STEP_CAPS = ("SYS_ADMIN", "SETUID", "SETGID", "SETPCAP")


def _first_step(uid: int | None, env: Mapping[str, str]) -> list[str]:
    """The engine's options for a container whose first step remounts (`uid`: its drop). HOME,
    unless the command sets it, stays what the engine gives a uid the image does not know (`/`),
    not root's."""
    assert uid is not None, "only a root harness remounts (bwrap._nosymfollow_targets)"
    home = [] if "HOME" in env else ["--env", "HOME=/"]
    return ["--user", "0:0", *home,
            *(arg for cap in _FIRST_STEP_CAPS for arg in ("--cap-add", cap))]


def _mount_spec(mount: Mount) -> str:
    if mount.inside in _IMAGE_SYSTEM:
        raise PrerequisiteError(
            f"this step needs the host's {mount.inside} inside the container (a tool installed "
            "there, such as Node for a CLI agent), which would hide the image's own",
            hint="use an image that has the tool (--image), or --runtime bwrap")
    for path in (mount.path, mount.inside):
        if "," in str(path) or "=" in str(path):
            raise GradingInfrastructureError(f"a container cannot mount a path with ',' or '=': "
                                             f"{path}", hint="use --runtime bwrap")
    spec = f"type=bind,source={mount.path},destination={mount.inside}"
    return spec if mount.writable else f"{spec},readonly=true"


def _within_hard(which: int, wanted: int) -> int:
    _soft, hard = resource.getrlimit(which)
    return wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)


def _engine_env(env: Mapping[str, str]) -> dict[str, str]:
    """The engine CLI's environment: the command's variables (named with `--env KEY` on its
    argv, so no value shows in the process list) over the engine's own settings."""
    own = {k: v for k, v in os.environ.items() if k in _ENGINE_ENV}
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **own, **env}


def _die_with_parent() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _feed(pipe: IO[bytes], data: bytes) -> None:
    def write() -> None:
        with contextlib.suppress(OSError), pipe:
            pipe.write(data)

    threading.Thread(target=write, daemon=True).start()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


class _FdRelay:
    """The caller's descriptors inside the container, and the container's own report.

    A FIFO each, in a private folder (the harness's, read-only to the container) mounted at
    FDS_INSIDE, plus `status` and `ack`. The container's shell (its init) opens every FIFO under
    its descriptor's number, says `ready` on `status`, and waits on `ack`: the harness then
    unlinks the FIFOs (so no process of the command can open one by its path and write into
    the verdict channel) and acks; only then does the command start, without the status
    descriptor. When it ends, the shell writes its exit status and the container cgroup's
    `oom_kill` count on `status`: a process the memory limit killed, whichever it was. A thread
    per FIFO copies what arrives to the caller's descriptor."""

    def __init__(self, fds: tuple[int, ...], uid: int | None) -> None:
        self.fds = fds
        self.status_fd = next(n for n in range(9, 2, -1) if n not in fds)
        self._owned = OwnedTemp("benchwright-fds-")  # a kill -9: the next start's sweep
        self.folder = self._owned.path
        self.folder.chmod(0o755)
        self.status: list[str] = []
        self.threads: list[threading.Thread] = []
        self.wake_read, self.wake_write = os.pipe()
        for name in [*map(str, fds), "status", "ack"]:
            os.mkfifo(self.folder / name, 0o600)
            if uid is not None:
                os.chown(self.folder / name, uid, uid)
        for fd in fds:
            self._start(self.folder / str(fd), functools.partial(_write_all, fd))
        self._start(self.folder / "status", self._on_status)
        # held open by the harness: the shell's read never waits for a writer, and what is
        # written stays until it reads
        self.ack = os.open(self.folder / "ack", os.O_RDWR | os.O_NONBLOCK)

    def _start(self, fifo: Path, sink: Callable[[bytes], None]) -> None:
        source = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # never blocks, never EOF
        thread = threading.Thread(target=self._pump, args=(source, sink), daemon=True)
        thread.start()
        self.threads.append(thread)

    def mounts(self) -> list[Mount]:
        return [Mount(path=self.folder, target=FDS_INSIDE)]

    def wrap(self, argv: list[str], deadline_s: int) -> list[str]:
        """The command under a shell that stays the container's init (PID 1, which no signal
        from inside can kill): the command itself is killable from inside, as in bubblewrap,
        and its death by a signal is the shell's status 128+N (bash when a descriptor has two
        digits: POSIX sh redirects 0-9 only). Past `deadline_s` a watchdog kills every process
        but the init, which then exits: a container whose harness was killed ends by itself
        (the harness, alive, removes it at its wall clock before)."""
        status = self.status_fd
        opens = "".join(f"exec {fd}>{FDS_INSIDE}/{fd} || exit 125; " for fd in self.fds)
        closed = "".join(f" {fd}>&-" for fd in (*self.fds, status))
        script = (f"{opens}exec {status}>{FDS_INSIDE}/status || exit 125; "
                  f"echo ready >&{status}; read -r _ < {FDS_INSIDE}/ack || exit 125; "
                  # a process of its own (not a copy of this shell, whose command line holds
                  # the command's)
                  f"/bin/sh -c 'sleep {deadline_s}; kill -9 -1' </dev/null >/dev/null 2>&1"
                  f"{closed} & "
                  f'"$@" {status}>&-; s=$?; '
                  "o=$(cat /sys/fs/cgroup/memory/memory.oom_control "
                  "/sys/fs/cgroup/memory.events 2>/dev/null | grep '^oom_kill ' | head -n 1); "
                  f'echo "exit $s $o" >&{status}; exit $s')
        shell = "/bin/bash" if any(fd > 9 for fd in self.fds) else "/bin/sh"
        return [shell, "-c", script, "sh", *argv]

    def _on_status(self, data: bytes) -> None:
        for line in data.decode(errors="replace").splitlines():
            self.status.append(line)
            if line == "ready":
                self._ack()

    def _ack(self) -> None:
        for name in [*map(str, self.fds), "status"]:
            (self.folder / name).unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            os.write(self.ack, b"go\n")

    def oom_killed(self) -> bool:
        """The shell said the memory limit killed a process of the container."""
        ends = [line.split() for line in self.status if line.startswith("exit ")]
        return bool(ends) and ends[-1][2:3] == ["oom_kill"] and ends[-1][3:4] != ["0"]

    def _pump(self, source: int, sink: Callable[[bytes], None]) -> None:
        try:
            while True:
                ready, _, _ = select.select([source, self.wake_read], [], [])
                if source in ready and _drain_once(source, sink):
                    continue
                if self.wake_read in ready:
                    while _drain_once(source, sink):  # what is left, then stop
                        pass
                    return
        finally:
            os.close(source)

    def finish(self) -> None:
        os.write(self.wake_write, b"x")
        for thread in self.threads:
            thread.join()
        for fd in (self.wake_read, self.wake_write, self.ack):
            os.close(fd)
        self._owned.close()


def _drain_once(source: int, sink: Callable[[bytes], None]) -> bool:
    try:
        data = os.read(source, 1 << 16)
    except BlockingIOError:
        return False
    if data:
        sink(data)
    return bool(data)


def _write_all(target: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(target, view):]
        except OSError:
            return  # the caller closed its end: nothing more to deliver
