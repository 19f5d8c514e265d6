"""Resident-memory limits for sandboxed commands: one memory cgroup per command.

An address-space rlimit counts reservations a program never touches (a 4 GiB `bytearray` is
refused under a 4 GiB RLIMIT_AS before a byte is written), so it fails programs that fit in
memory. A memory cgroup counts what is really resident, and when the command's processes need
more than the limit the kernel kills one of them (the largest) instead of the host's.

The harness makes the cgroup: cgroup v2 where the memory controller is enabled for the
harness's parent cgroup (the sandbox's cgroup becomes a sibling of the harness's own, since v2
forbids processes in a cgroup whose children have controllers), v1 otherwise (a child of the
harness's own memory cgroup). The command's first process joins it before `exec`, so every
descendant is inside. Limits: `memory.max` with `memory.swap.max` 0 (v2), `memory.limit_in_bytes`
and, where swap is accounted, `memory.memsw.limit_in_bytes` (v1). After the command the
remaining processes are killed and the cgroup removed (a harness killed first leaves it behind
for the next one to remove); `oom_kill` (v2 `memory.events`, v1
`memory.oom_control`) says whether the limit ended something.

Where neither hierarchy can be used (no cgroup file system, not writable), `make` returns None
and the sandbox falls back to an address-space rlimit, with one warning per process.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

CGROUP_FS: Final = Path("/sys/fs/cgroup")
V1_MEMORY: Final = CGROUP_FS / "memory"
DEFAULT_FRACTION: Final = 0.5
"""The default limit: this share of the machine's memory (MemTotal)."""
_MIB: Final = 1024 * 1024
_PREFIX: Final = "benchwright-"


@dataclass(frozen=True)
class MemoryCgroup:
    """One command's memory cgroup."""

    path: Path
    version: int

    @property
    def procs_file(self) -> str:
        """The file a process writes its pid to in order to join."""
        return str(self.path / "cgroup.procs")

    def exceeded(self) -> bool:
        """Whether the limit made the kernel kill a process of the command."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        counters = _counters(self.path / name)
        if "oom_kill" in counters:
            return counters["oom_kill"] > 0
        # v1 kernels before 4.13 have no oom_kill counter: a hit of the limit is the best sign
        return self.version == 1 and _counters(self.path / "memory.failcnt").get("", 0) > 0

    def remove(self, deadline_s: float = 10.0) -> None:
        """Kill every process still inside, then delete the cgroup."""
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            for pid in self._members():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:  # EBUSY while dying processes still count
                time.sleep(0.01)

    def _members(self) -> list[int]:
        try:
            text = (self.path / "cgroup.procs").read_text()
        except OSError:
            return []
        return [int(pid) for pid in text.split()]


def default_limit_mb() -> int:
    """The default limit: half the machine's memory, in MiB."""
    return int(_mem_total_mb() * DEFAULT_FRACTION)


def make(limit_mb: int) -> MemoryCgroup | None:
    """A fresh memory cgroup limited to `limit_mb` MiB, or None where none can be made."""
    found = _parent()
    if found is None:
        return None
    parent, version = found
    _remove_stale(parent, version)
    folder = parent / f"{_PREFIX}{os.getpid()}-{_pid_namespace()}-{secrets.token_hex(4)}"
    try:
        folder.mkdir()
    except OSError:
        return None
    group = MemoryCgroup(folder, version)
    try:
        _set_limit(group, limit_mb * _MIB)
    except OSError:
        group.remove()
        return None
    return group


def available() -> bool:
    """Whether memory cgroups can be made here."""
    return _parent() is not None


def leftovers(harness_pid: int) -> list[Path]:
    """Cgroups a harness process of this pid made and did not remove (none, normally)."""
    found = _parent()
    return sorted(found[0].glob(f"{_PREFIX}{harness_pid}-*")) if found else []


def join(procs_file: str) -> None:
    """Put the calling process into the cgroup (run in the child, before exec)."""
    fd = os.open(procs_file, os.O_WRONLY)
    try:
        os.write(fd, str(os.getpid()).encode())
    finally:
        os.close(fd)


@functools.cache
def _remove_stale(parent: Path, version: int) -> None:
    """Once per process: remove the cgroups of harness processes that died (SIGKILL) before
    removing their own. Only those made in this process's pid namespace: a pid means nothing in
    another (Ray lab nodes, containers), and removing a live harness's group there between its
    `mkdir` and the command's `join` made that command fail to start."""
    for folder in parent.glob(f"{_PREFIX}*-*"):
        pid, *namespace, _token = folder.name.removeprefix(_PREFIX).split("-")
        if namespace not in ([], [_pid_namespace()]):  # [] : named before namespaces were
            continue
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            MemoryCgroup(folder, version).remove(deadline_s=1.0)


@functools.cache
def _pid_namespace() -> str:
    """This process's pid namespace, as its inode number ("0" where that cannot be read)."""
    try:
        return str(Path("/proc/self/ns/pid").stat().st_ino)
    except OSError:
        return "0"


def _set_limit(group: MemoryCgroup, limit: int) -> None:
    if group.version == 2:
        _write(group.path / "memory.max", limit)
        swap = group.path / "memory.swap.max"
        if swap.exists():
            _write(swap, 0)
        return
    _write(group.path / "memory.limit_in_bytes", limit)
    memsw = group.path / "memory.memsw.limit_in_bytes"
    if memsw.exists():  # only where swap is accounted; must not be below the limit above
        _write(memsw, limit)


def _write(path: Path, value: int) -> None:
    path.write_text(str(value))


@functools.cache
def _parent() -> tuple[Path, int] | None:
    """Where sandbox cgroups go, and the hierarchy's version; None if nowhere."""
    own = _own_cgroups()
    if (CGROUP_FS / "cgroup.controllers").is_file() and "" in own:
        return _v2_parent(own[""])
    if "memory" in own and (V1_MEMORY / "memory.limit_in_bytes").is_file():
        return _v1_parent(own["memory"])
    return None


def _v2_parent(own: str) -> tuple[Path, int] | None:
    mine = CGROUP_FS / own.lstrip("/")
    parent = mine if mine == CGROUP_FS else mine.parent
    try:
        enabled = (parent / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    if "memory" not in enabled or not os.access(parent, os.W_OK):
        return None
    return parent, 2


def _v1_parent(own: str) -> tuple[Path, int] | None:
    mine = V1_MEMORY / own.lstrip("/")
    # inside a container the hierarchy may be mounted at the harness's own cgroup
    parent = mine if (mine / "memory.limit_in_bytes").is_file() else V1_MEMORY
    return (parent, 1) if os.access(parent, os.W_OK) else None


def _own_cgroups() -> dict[str, str]:
    """Controller (`""` for v2) -> this process's cgroup path, from /proc/self/cgroup."""
    found: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        _id, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            found[name] = path
    return found


def _counters(path: Path) -> dict[str, int]:
    """`name value` lines (or one bare number, under the key "")."""
    try:
        text = path.read_text()
    except OSError:
        return {}
    found: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 1 and parts[0].isdigit():
            found[""] = int(parts[0])
        elif len(parts) == 2 and parts[1].isdigit():
            found[parts[0]] = int(parts[1])
    return found


def _mem_total_mb() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return 8192
