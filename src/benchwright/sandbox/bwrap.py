"""Run untrusted commands: in a bubblewrap sandbox, or (only when asked) directly on the host.

The bubblewrap sandbox starts from an empty root and binds in only what a Python program needs:
/usr (read-only), a short list of /etc files, the interpreter and environments named by the caller
(read-only), and the caller's writable folders. $HOME, /root and the rest of the host are absent.
The network namespace is private (loopback only) unless the caller asks for the network.
Memory is limited as resident memory of the whole sandbox, by a memory cgroup made for each
command (benchwright.sandbox.memory_cgroup); where none can be made, by an address-space rlimit per
process instead (said once). The other limits are rlimits set before bubblewrap starts; they
apply to every process in the sandbox (RLIMIT_NPROC counts per user namespace, so it bounds the
sandbox, not the host).
When the command ends or the wall clock runs out, the sandbox's PID namespace is torn down,
which kills every process the command left behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import os
import resource
import secrets
import shutil
import signal
import stat
import subprocess
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from pydantic import BaseModel

from benchwright.errors import PrerequisiteError
from benchwright.files.nofollow import chmod_at, deep_entries
from benchwright.protocols import ExecResult, Limits, Mount, Runtime
from benchwright.sandbox import memory_cgroup

__all__ = ["BwrapRuntime", "ExecResult", "Limits", "Mount", "UnsafeLocalRuntime", "get_runtime"]

SANDBOX_UID = 1000
# Host uids for sandboxes started by root: far above any real account or subordinate-uid range.
_SANDBOX_UID_BASE = 1_900_000_000
_SANDBOX_UID_SPAN = 10_000_000
_PR_SET_PDEATHSIG = 1
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}
# /etc entries Python programs need (certificates, name service, zone); never shadow or ssh.
_ETC_ALLOWED = (
    "alternatives", "ca-certificates", "ca-certificates.conf", "debian_version", "gai.conf",
    "group", "host.conf", "hosts", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
    "mime.types", "nsswitch.conf", "os-release", "passwd", "protocols", "resolv.conf", "services",
    "ssl", "timezone",
)
INSTALL_BWRAP = "sudo apt-get install -y bubblewrap"
CONTAINER_RUNTIMES = ("podman", "docker")
"""The runtimes that run each step in a container (`container`), on an image."""


class _Launch(BaseModel):
    """How a runtime starts a command: the full argv and what `_run_killable` needs."""

    argv: list[str]
    cwd: Path | None = None
    nproc_uid: int | None = None
    info_fds: tuple[int, int] | None = None


class _RuntimeBase:
    """The shared `run`: launch as the subclass says, enforce limits, leave nothing behind."""

    name = ""

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
        """Run `argv` and wait for it (or for the wall clock); `pass_fds` stay open in it."""
        launch = self._launch(list(argv), cwd, mounts, network)
        result = _run_killable(launch.argv, env, limits, stdout, stderr, cwd=launch.cwd,
                               nproc_uid=launch.nproc_uid, info_fds=launch.info_fds,
                               stdin=stdin, pass_fds=tuple(pass_fds))
        return result.model_copy(update={"argv": list(argv), "runtime": self.name,
                                         "sandbox_killed_by": self._killed_by(result)})

    def _killed_by(self, result: ExecResult) -> int | None:
        """The signal that killed the runtime's own process from outside, if one did."""
        return None

    def _launch(self, argv: list[str], cwd: Path, mounts: Sequence[Mount],
                network: bool) -> _Launch:
        raise NotImplementedError


class BwrapRuntime(_RuntimeBase):
    """Bubblewrap: private mount, PID, network, IPC and UTS namespaces."""

    name = "bwrap"

    def __init__(self, bwrap: str | None = None) -> None:
        self.bwrap = bwrap or require_bwrap()

    def _launch(self, argv: list[str], cwd: Path, mounts: Sequence[Mount],
                network: bool) -> _Launch:
        uid = _host_uid_for_sandbox()
        if uid is not None:
            for mount in mounts:
                if mount.writable:
                    _chown_tree(mount.path, uid)
        remount = _nosymfollow_targets(mounts, uid)
        info_read, info_write = os.pipe()
        full = [*self.bwrap_args(mounts, cwd, network, uid, admin=bool(remount)),
                "--info-fd", str(info_write), "--", *_remount_nosymfollow(remount),
                *_drop_to(uid), *argv]
        return _Launch(argv=full, nproc_uid=uid, info_fds=(info_read, info_write))

    def _killed_by(self, result: ExecResult) -> int | None:
        """bubblewrap itself died by a signal: the code inside cannot signal it (another PID
        namespace, another uid), and the harness kills it only past the wall clock, so it came
        from outside (the OOM killer, an operator). A command killed inside makes bwrap exit
        128+N instead, never die by the signal."""
        if result.exit_code < 0 and not result.timed_out:
            return -result.exit_code
        return None

    def bwrap_args(
        self, mounts: Sequence[Mount], cwd: Path, network: bool, host_uid: int | None = None,
        *, admin: bool = False,
    ) -> list[str]:
        """The bubblewrap options for these mounts, parents before children (`admin`: the
        first step keeps CAP_SYS_ADMIN, see `_remount_nosymfollow`)."""
        args = [self.bwrap, "--die-with-parent", "--new-session"]
        args += _namespace_args(network, host_uid)
        args += ["--cap-add", "CAP_SYS_ADMIN"] if admin else []
        args += [*_system_binds(), "--proc", "/proc", "--dev", "/dev"]
        ordered = sorted(mounts, key=lambda m: (len(m.inside.parts), m.writable))
        targets = {m.inside for m in mounts}
        made: set[Path] = set()
        for mount in ordered:
            for parent in reversed(mount.inside.parents[:-1]):
                if parent not in made and parent not in targets:
                    args += ["--perms", "0755", "--dir", str(parent)]
                    made.add(parent)
            flag = "--bind" if mount.writable else "--ro-bind"
            args += [flag, str(mount.path), str(mount.inside)]
        return [*args, "--chdir", str(cwd)]


def _namespace_args(network: bool, host_uid: int | None) -> list[str]:
    """Namespaces and identity.

    As root, bubblewrap runs privileged with no user namespace, and `setpriv` then drops the
    command to a fresh unprivileged host uid: a uid that maps to root through a user namespace
    is exempt from RLIMIT_NPROC, so a fork bomb would not stop. As any other user, bubblewrap
    needs a user namespace and the command keeps that user's uid.
    """
    net = [] if network else ["--unshare-net"]
    if host_uid is None:
        ident = ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    else:
        ident = ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    return ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try", *net,
            *ident, "--hostname", "sandbox"]


def _drop_to(host_uid: int | None) -> list[str]:
    if host_uid is None:
        return []
    return ["/usr/bin/setpriv", f"--reuid={host_uid}", f"--regid={host_uid}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]


def _nosymfollow_targets(mounts: Sequence[Mount], host_uid: int | None) -> list[str]:
    """Where, inside the sandbox, the `nosymfollow` mounts are. Only a sandbox started by root
    can have them: unprivileged, the remount would need a mount helper that runs as root in the
    user namespace (util-linux refuses any other uid), so they are left as they are (said once)."""
    wanted = [str(m.inside) for m in mounts if m.nosymfollow]
    if wanted and host_uid is None:
        _warn_no_nosymfollow()
        return []
    return wanted


@functools.cache
def _warn_no_nosymfollow() -> None:
    warnings.warn("not running as root: the grading sandbox cannot remount the submission's "
                  "folders nosymfollow, so a link the submission made is followed by the tests "
                  "(docs/security.md, links)", RuntimeWarning, stacklevel=4)


# bubblewrap remounts a bind with the flags it knows, and nosymfollow is not one of them (it is
# cleared: measured with 0.8.0), so the flag is set inside the sandbox, after bubblewrap's setup:
# a first step that alone holds CAP_SYS_ADMIN, runs only /usr's sh and mount (absolute paths,
# before any untrusted code exists in the sandbox), then execs the drop (`_drop_to`), which
# clears every capability for good. util-linux keeps the mount's other flags (nosuid, ro).
# `dev` (nodev cleared) is what lets the jail's own bubblewrap see links again: it remounts a
# bind only when the flags it wants (nosuid, nodev) differ from the mount's, and that remount
# drops nosymfollow, so inside the jail the submission's links work as under SCBench (measured:
# with nodev kept, nosymfollow reached the jail). Dropping nodev costs nothing here: no process
# of the sandbox can make a device node (no CAP_MKNOD; the snapshot copy leaves devices out).
# mount runs with an empty environment (no LIBMOUNT_* from a problem's variables). A kernel
# without nosymfollow (< 5.10) makes the step fail: nothing runs.
_REMOUNT = ('set -e; while [ "$1" != -- ]; do /usr/bin/env -i '
            '/usr/bin/mount -o remount,bind,nosymfollow,dev -- "$1"; shift; done; shift; '
            'exec "$@"')


def _remount_nosymfollow(targets: Sequence[str]) -> list[str]:
    """The first step that makes `targets` nosymfollow, then runs the rest of the argv."""
    if not targets:
        return []
    return ["/bin/sh", "-c", _REMOUNT, "nosymfollow", *targets, "--"]


def _host_uid_for_sandbox() -> int | None:
    """A host uid nobody else uses, when running as root; None otherwise."""
    if os.geteuid() != 0:
        return None
    return _SANDBOX_UID_BASE + secrets.randbelow(_SANDBOX_UID_SPAN)


def _chown_tree(root: Path, uid: int) -> None:
    os.chown(root, uid, uid, follow_symlinks=False)
    # by descriptor and without recursion: an earlier sandbox may have left any depth here
    for fd, name, _info in deep_entries(root):
        os.chown(name, uid, uid, dir_fd=fd, follow_symlinks=False)


class UnsafeLocalRuntime(_RuntimeBase):
    """No isolation: the command runs on the host in its own session, killed as a group."""

    name = "unsafe-local"

    def _launch(self, argv: list[str], cwd: Path, mounts: Sequence[Mount],
                network: bool) -> _Launch:
        return _Launch(argv=argv, cwd=cwd)


def usr_binds() -> list[str]:
    """`/usr` read-only, and the top-level `bin`, `sbin` and `lib*` as this system has them: the
    links of a merged-/usr system, or read-only folders."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64"):
        top = Path("/") / name
        if top.is_symlink():
            args += ["--symlink", str(top.readlink()), str(top)]
        elif top.is_dir():
            args += ["--ro-bind", str(top), str(top)]
    return args


def _system_binds() -> list[str]:
    # Folders bubblewrap creates itself are 0700 by default: /etc must be traversable.
    args: list[str] = [*usr_binds(), "--perms", "0755", "--dir", "/etc"]
    for name in _ETC_ALLOWED:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return args


def _run_killable(
    argv: list[str],
    env: Mapping[str, str],
    limits: Limits,
    stdout: IO[bytes] | int | None,
    stderr: IO[bytes] | int | None,
    cwd: Path | None = None,
    nproc_uid: int | None = None,
    info_fds: tuple[int, int] | None = None,
    stdin: bytes | None = None,
    pass_fds: tuple[int, ...] = (),
) -> ExecResult:
    if nproc_uid is None:
        # Without a uid of its own, the limit counts all of this user's processes.
        limits = limits.model_copy(
            update={"max_processes": limits.max_processes + _processes_of(os.getuid())})
    start = time.monotonic()
    group = _memory_group(limits)
    # A stop (Ctrl-C, SIGTERM) waits until the command is started and ours to kill: one landing
    # inside the fork (in an at-fork hook) is lost, and one just after it loses the process handle,
    # either way leaving a sandbox that nothing kills (bwrap's parent-death signal does not hold).
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        fds = (*(info_fds[1:] if info_fds else ()), *pass_fds)
        proc = _popen(argv, env, limits, stdout, stderr, cwd, fds, stdin, group)
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if group is not None:
            group.remove()
        for fd in info_fds or ():  # nobody will read the info pipe: do not leak it
            with contextlib.suppress(OSError):
                os.close(fd)
        raise
    timed_out = False
    namespace = None
    try:
        namespace = _read_pid_namespace(info_fds) if info_fds else None
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if stdin is not None and proc.stdin is not None:
            _feed(proc.stdin, stdin)
        proc.wait(timeout=limits.wall_clock_s)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        _kill_group(proc)
        if namespace is not None:
            _sweep_namespace(namespace)
        exceeded = group is not None and group.exceeded()
        if group is not None:
            group.remove()
    return ExecResult(
        argv=argv,
        exit_code=proc.returncode,
        duration_s=round(time.monotonic() - start, 3),
        timed_out=timed_out,
        memory_exceeded=exceeded,
    )


def _popen(
    argv: list[str],
    env: Mapping[str, str],
    limits: Limits,
    stdout: IO[bytes] | int | None,
    stderr: IO[bytes] | int | None,
    cwd: Path | None,
    pass_fds: tuple[int, ...],
    stdin: bytes | None,
    group: memory_cgroup.MemoryCgroup | None,
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
        preexec_fn=_limiter(limits, group.procs_file if group is not None else None),
        pass_fds=pass_fds,
    )


def memory_limit_mb(limits: Limits) -> int:
    """The memory limit in force: the given one, or the machine's default."""
    return limits.memory_mb if limits.memory_mb is not None else memory_cgroup.default_limit_mb()


def _memory_group(limits: Limits) -> memory_cgroup.MemoryCgroup | None:
    group = memory_cgroup.make(memory_limit_mb(limits))
    if group is None:
        _warn_no_cgroup()
    return group


@functools.cache
def _warn_no_cgroup() -> None:
    warnings.warn("no memory cgroup can be made here (cgroup v2 with the memory controller, or "
                  "v1's memory hierarchy, writable): the sandbox's memory limit falls back to an "
                  "address-space limit per process, which also counts memory never touched",
                  RuntimeWarning, stacklevel=3)


def _feed(pipe: IO[bytes], data: bytes) -> None:
    """Write stdin without blocking the caller on a command that never reads it."""

    def write() -> None:
        with contextlib.suppress(OSError), pipe:
            pipe.write(data)

    threading.Thread(target=write, daemon=True).start()


def _read_pid_namespace(info_fds: tuple[int, int]) -> int | None:
    """The sandbox's PID namespace inode, from bubblewrap's --info-fd (None if it never started)."""
    read_end, write_end = info_fds
    os.close(write_end)
    with os.fdopen(read_end, "rb") as info:
        data = info.read()
    try:
        return int(json.loads(data)["pid-namespace"])
    except (ValueError, KeyError, TypeError):
        return None


def _sweep_namespace(inode: int, deadline_s: float = 10.0) -> None:
    """Kill, and wait out, every process still in the sandbox's PID namespace.

    The kernel kills them when the namespace's init exits, but asynchronously: this makes
    "no process left behind" true by the time `run` returns.
    """
    target = f"pid:[{inode}]"
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        alive = [pid for pid in _pids() if _pid_namespace(pid) == target and not _zombie(pid)]
        if not alive:
            return
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def _pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def _zombie(pid: int) -> bool:
    """A zombie holds nothing but its process-table entry; its new parent reaps it in time."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] in ("Z", "X")


def _pid_namespace(pid: int) -> str | None:
    try:
        return str(Path(f"/proc/{pid}/ns/pid").readlink())
    except OSError:
        return None


def _processes_of(uid: int) -> int:
    count = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        uid_line = next((ln for ln in text.splitlines() if ln.startswith("Uid:")), "")
        threads = next((ln for ln in text.splitlines() if ln.startswith("Threads:")), "x 1")
        if uid_line.split()[1:2] == [str(uid)]:
            count += int(threads.split()[1])
    return count


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the command's whole process group, then reap the leader."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _limiter(limits: Limits, cgroup_procs: str | None) -> Callable[[], None]:
    """What the child does before exec: die with the harness, join the memory cgroup (so every
    process of the command is inside it), set the rlimits."""
    parent = os.getpid()
    address_space_mb = limits.address_space_mb or memory_limit_mb(limits)

    def apply() -> None:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)  # blocked only while launching
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the line above took effect
            os._exit(137)
        mib = 1024 * 1024
        if cgroup_procs is not None:
            memory_cgroup.join(cgroup_procs)
        else:
            _setrlimit(resource.RLIMIT_AS, address_space_mb * mib)
        _setrlimit(resource.RLIMIT_NPROC, limits.max_processes)
        _setrlimit(resource.RLIMIT_FSIZE, limits.max_file_mb * mib)
        _setrlimit(resource.RLIMIT_CORE, 0)

    return apply


def _setrlimit(which: int, value: int) -> None:
    _soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


@functools.cache
def require_bwrap() -> str:
    """The path of a working bwrap, or a PrerequisiteError that says how to get one."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise PrerequisiteError(
            "bubblewrap (bwrap) is not installed, so untrusted code cannot be sandboxed",
            hint=f"install it with `{INSTALL_BWRAP}`, or pass --unsafe-no-sandbox "
            "to run the code unisolated on this machine",
        )
    probe = subprocess.run(
        [bwrap, "--unshare-all", *_system_binds(), "/usr/bin/true"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        raise PrerequisiteError(
            f"bwrap is installed but cannot create a sandbox here: {probe.stderr.strip()}",
            hint="allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1), "
            "or pass --unsafe-no-sandbox",
        )
    return bwrap


def get_runtime(unsafe_no_sandbox: bool = False, runtime: str = "bwrap",
                image: str | None = None) -> Runtime:
    """The runtime sandboxed steps run in: `runtime` (bubblewrap by default; a container
    runtime on `image`, an image id resolved once per run), or the host when explicitly asked."""
    from benchwright.registry import RUNTIMES

    if unsafe_no_sandbox:
        return RUNTIMES.get("unsafe-local")()
    if runtime in CONTAINER_RUNTIMES:
        return RUNTIMES.get(runtime)(image=image)  # type: ignore[call-arg]
    return RUNTIMES.get(runtime)()


def is_sandbox_uid(uid: int) -> bool:
    """Whether `uid` is one of the fresh host uids sandboxes started by root run as."""
    return _SANDBOX_UID_BASE <= uid < _SANDBOX_UID_BASE + _SANDBOX_UID_SPAN


def reclaim_tree(root: Path) -> None:
    """Give back to the harness's user everything under `root` a sandbox uid owns, links
    included (never followed), so no later sandbox (a different uid) or sandboxed command can
    change it. Entries owned by anyone else are left alone: a hard link to a file of theirs
    must not become the harness's."""
    owner = (os.getuid(), os.getgid())
    parent = os.open(root.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _reclaim(parent, root.name, owner)
    finally:
        os.close(parent)
    for fd, name, _info in deep_entries(root):
        _reclaim(fd, name, owner)


def _reclaim(fd: int, name: str, owner: tuple[int, int]) -> None:
    with contextlib.suppress(FileNotFoundError):
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if not is_sandbox_uid(info.st_uid):
            return
        os.chown(name, *owner, dir_fd=fd, follow_symlinks=False)
        if not stat.S_ISLNK(info.st_mode):  # no set-id bits, and writable by the owner only
            chmod_at(fd, name, info.st_mode & 0o755)
