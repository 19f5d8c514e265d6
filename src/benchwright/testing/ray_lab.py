"""A Ray cluster on this machine for tests and `bench/`, that talks over loopback only.

Left to itself a Ray node binds the machine's outward address; here every process of the cluster
(and every command run against it) lives in a network namespace of the lab's own with only `lo`
up, so nothing can listen or connect anywhere but 127.0.0.1. The head (no CPUs: it takes no job)
and each worker node are separate `ray start --block` processes with their own resources. A
worker node also gets a mount namespace (folders in `hidden` are an empty tmpfs there: a job
that reached for the run directory would find nothing) and a pid namespace, so `kill_worker`
takes the whole node down at once, as a machine that dies would. Needs root (unshare, nsenter).
"""

from __future__ import annotations

import contextlib
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

JOIN_WAIT_S = 75.0
START_ATTEMPTS = 8
NICE = int(os.environ.get("BENCHWRIGHT_RAY_LAB_NICE", "-15"))
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_raylet_start_wait_time_s": "300",
           "RAY_agent_register_timeout_ms": "300000"}


COUNT_NODES = """
import sys, time
from ray._raylet import GcsClient  # the head's node table, read without joining as a driver

client = GcsClient(address=sys.argv[1])
while True:
    try:
        nodes = client.get_all_node_info(timeout=10).values()
        print("NODES", sum(node.state == 0 for node in nodes), flush=True)  # 0: ALIVE
    except Exception:  # the head not answering yet: look again
        pass
    time.sleep(1)
"""


class RayLab:
    """A head and `workers` worker nodes in a private network namespace."""

    def __init__(self, workers: int = 2, cpus: int = 1, hidden: Sequence[Path] = (),
                 log_dir: Path | None = None) -> None:
        self.n_workers, self.cpus, self.hidden = workers, cpus, list(hidden)
        self.log_dir = log_dir or Path(os.environ.get("TMPDIR", "/tmp"))
        self.port = 6379
        self._holder: subprocess.Popen[bytes] | None = None
        self._head: subprocess.Popen[bytes] | None = None
        self.workers: list[subprocess.Popen[bytes]] = []

    @property
    def address(self) -> str:
        """The head's GCS address, for `--ray-address`."""
        return f"127.0.0.1:{self.port}"

    @property
    def netns(self) -> str:
        assert self._holder is not None
        return f"/proc/{self._holder.pid}/ns/net"

    def start(self) -> RayLab:
        """Start the namespace, the head and the worker nodes; wait until all have joined."""
        self._holder = subprocess.Popen(
            ["unshare", "-n", "sh", "-c", "ip link set lo up && echo up && exec cat"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self._holder.stdout is not None
        self._holder.stdout.readline()
        _warm_imports()
        # the head shares this machine's pids: its raylet watches the drivers' pids
        self._head = self._started(1, lambda: self._spawn("head", self._ray_start(
            "--head", f"--port={self.port}", "--num-cpus=0", "--include-dashboard=false",
            *_ports(0))))
        for index in range(self.n_workers):  # one at a time: nodes starting together collide
            self.workers.append(self._started(index + 2, self._worker))
        for process in [self._head, *self.workers]:  # started: back to an ordinary share
            subprocess.run(["renice", "-n", "0", "-g", str(process.pid)], capture_output=True,
                           check=False)
        return self

    def _started(self, nodes: int, spawn: Callable[[], subprocess.Popen[bytes]]
                 ) -> subprocess.Popen[bytes]:
        """A node started until the cluster has `nodes` alive. A raylet gives its agents 15 s
        to report their ports and aborts after that; on a busy machine the first start may miss
        it (the imports are then warm), so a node that has not joined in time is started anew."""
        for attempt in range(1, START_ATTEMPTS + 1):
            process = spawn()
            try:
                self.wait_for_nodes(nodes, timeout_s=JOIN_WAIT_S)
                return process
            except (TimeoutError, RuntimeError):
                _kill(process)
                if attempt == START_ATTEMPTS:
                    raise
        raise AssertionError("unreachable")

    def _worker(self) -> subprocess.Popen[bytes]:
        """One more worker node (its own mount and pid namespaces)."""
        mounts = "".join(f"mount -t tmpfs tmpfs {shlex.quote(str(p))} && "
                         for p in self.hidden)
        index = len(self.workers) + 1
        start = self._ray_start(f"--address={self.address}", f"--num-cpus={self.cpus}",
                                *_ports(index))
        return self._spawn(f"worker{index}", _own_pids(start, before=mounts))

    def _ray_start(self, *args: str) -> list[str]:
        ray = str(Path(sys.executable).with_name("ray"))
        # on a busy machine a starting node gets the CPU first (see `_started`; `start` gives
        # the ordinary priority back once every node has joined)
        return ["nice", f"-n{NICE}", ray, "start", "--node-ip-address=127.0.0.1",
                "--disable-usage-stats", "--block", *args]

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        log = (self.log_dir / f"ray-lab-{name}.log").open("ab")
        return subprocess.Popen(["nsenter", f"--net={self.netns}", *argv], stdout=log,
                                stderr=subprocess.STDOUT, env={**os.environ, **RAY_ENV},
                                start_new_session=True)

    def wait_for_nodes(self, count: int, timeout_s: float = JOIN_WAIT_S) -> None:
        """Until `count` nodes are alive (raises on timeout). One counter process reads the
        head's node table every second (a `ray.init` per look cost a second of CPU each)."""
        deadline = time.monotonic() + timeout_s
        while not _port_open_in(self):
            self._check_alive()
            if time.monotonic() > deadline:
                raise TimeoutError(f"the Ray lab's head did not listen in {timeout_s:g} s")
            time.sleep(1)
        counter = subprocess.Popen(self.command([sys.executable, "-c", COUNT_NODES, self.address]),
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                   env={**os.environ, **RAY_ENV})
        try:
            self._await_count(counter, count, deadline)
        finally:
            counter.kill()
            counter.wait()

    def _await_count(self, counter: subprocess.Popen[str], count: int, deadline: float) -> None:
        assert counter.stdout is not None
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=_forward, args=(counter.stdout, lines), daemon=True).start()
        while time.monotonic() < deadline:
            self._check_alive()
            with contextlib.suppress(queue.Empty):
                if int(lines.get(timeout=1).split()[1]) >= count:
                    return
        raise TimeoutError(f"the Ray lab did not reach {count} nodes in time")

    def _check_alive(self) -> None:
        dead = [p.args for p in [self._head, *self.workers] if p and p.poll() is not None]
        if dead:
            raise RuntimeError(f"a Ray lab node exited: {dead[0]!r} (logs in {self.log_dir})")

    def run(self, argv: Sequence[str], timeout: float | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """A command in the lab's network namespace (it sees the cluster on 127.0.0.1)."""
        return subprocess.run(self.command(argv), capture_output=True, text=True,
                              timeout=timeout, env={**os.environ, **RAY_ENV, **(env or {})})

    def command(self, argv: Sequence[str]) -> list[str]:
        """`argv` prefixed so it runs in the lab's network namespace."""
        return ["nsenter", f"--net={self.netns}", *argv]

    def listening(self) -> list[str]:
        """The local addresses of every listening TCP socket in the namespace."""
        lines = self.run(["ss", "-Hltn"]).stdout.splitlines()
        return [line.split()[3] for line in lines if line.strip()]

    def worker_processes(self) -> list[str]:
        """The command lines of every process on the live worker nodes (their pid namespaces)."""
        return [command for _pid, command in self._node_processes()]

    def _node_processes(self) -> list[tuple[int, str]]:
        """(pid, command line) of every process on the live worker nodes."""
        namespaces = set()
        for process in self.workers:
            if process.poll() is None:
                children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
                with contextlib.suppress(OSError):
                    for child in children.read_text().split():
                        namespaces.add(str(Path(f"/proc/{child}/ns/pid").readlink()))
        found = []
        for entry in Path("/proc").iterdir():
            with contextlib.suppress(OSError):
                if entry.name.isdigit() and str((entry / "ns" / "pid").readlink()) in namespaces:
                    command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                    found.append((int(entry.name), command))
        return found

    def kill_task_workers(self, task: str) -> list[int]:
        """SIGKILL every Ray worker process running `task` (its title is `ray::<task>`) on the
        worker nodes, which stay up, as the OOM killer or an operator would; their pids."""
        killed = []
        for pid, command in self._node_processes():
            if command.startswith(f"ray::{task}"):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
        return killed

    def kill_worker(self, index: int) -> None:
        """Take worker node `index` down at once (SIGKILL to its pid namespace)."""
        _kill(self.workers[index])

    def stop(self) -> None:
        """Every node and the namespace, gone."""
        for process in [*self.workers, self._head]:
            if process is not None:
                _kill(process)
        if self._holder is not None:
            self._holder.kill()
            self._holder.wait()

    def __enter__(self) -> RayLab:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the node's process group (and so to the pid namespace's init, when it has
    one: the kernel then ends every process in it)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _forward(stream: IO[str], lines: queue.Queue[str]) -> None:
    for line in stream:
        lines.put(line)


def _warm_imports() -> None:
    """What a node's agents import, read once so a starting node finds it in the page cache."""
    subprocess.run([sys.executable, "-c", "import ray.dashboard.agent, "
                    "ray._private.runtime_env.agent.main"], capture_output=True, check=False)


def _ports(index: int) -> list[str]:
    """Ports of node `index`, apart from every other node's (they share one address)."""
    base = 20_000 + 2_000 * index
    return [f"--node-manager-port={base}", f"--object-manager-port={base + 1}",
            f"--metrics-export-port={base + 2}", f"--dashboard-agent-listen-port={base + 3}",
            f"--dashboard-agent-grpc-port={base + 4}", f"--runtime-env-agent-port={base + 5}",
            f"--min-worker-port={base + 100}", f"--max-worker-port={base + 1_999}"]


def _own_pids(argv: list[str], before: str = "") -> list[str]:
    """`argv` as pid 1 of new pid and mount namespaces: when it dies, every process of the node
    dies with it (the kernel's rule for a pid namespace's init)."""
    return ["unshare", "-m", "-p", "-f", "--mount-proc", "sh", "-c",
            f"{before}exec {shlex.join(argv)}"]


def _port_open_in(lab: RayLab) -> bool:
    probe = ("import socket,sys; s=socket.socket(); s.settimeout(1); "
             "sys.exit(s.connect_ex(('127.0.0.1', int(sys.argv[1]))))")
    return lab.run([sys.executable, "-c", probe, str(lab.port)]).returncode == 0

