"""A benchwright CLI with its modules already imported, that forks a fresh process per command
(the tests' `run_cli`, see tests/helpers/cli_forks.py): run as a script, never imported.

Why: the suite runs the CLI about a thousand times, and a command spends most of its start-up
importing (0.4-0.5 s CPU of a 2-core machine each). A forked process skips that and nothing else:
it is a process of its own with the command's argv, environment, working directory and standard
streams, runs `python -m benchwright`'s `__main__` and ends through the interpreter's usual exit
(atexit handlers, threads joined, buffers flushed, exit code).

`python cli_zygote.py SOCKET`: imports, listens on the Unix socket SOCKET, prints "ready". A
request is one JSON line (argv, env, cwd) sent with three file descriptors (the command's stdin,
stdout and stderr); the reply is a JSON line with the command's pid, then one with its exit code
(negative: the signal that ended it, as subprocess reports). A waiter process per command (a fork
of this one) waits for it, so this process only accepts and reaps.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import json
import os
import runpy
import signal
import socket
import sys

# what most commands import before doing anything (each command's own module is in cli/, and
# the modules its functions import when it runs: `--help` alone loads none of those);
# no module that starts a thread or loads a native thread pool when imported (numpy, browser-use)
PRELOAD = (
    "benchwright.cli.main", "benchwright.cli.run_group", "benchwright.cli.eval_cmd",
    "benchwright.cli.report_cmd", "benchwright.cli.metrics_cmd", "benchwright.cli.problems_cmd",
    "benchwright.cli.web_cmd", "benchwright.cli.view_cmd", "benchwright.cli.testing_cmd",
    "benchwright.cli.run_cmd", "benchwright.cli.run_web_cmd",
    "benchwright.api.coding", "benchwright.api.web", "benchwright.cli.render",
    "benchwright.coding.problems.scaffold", "benchwright.coding.report.figures",
    "benchwright.coding.attempts.judging.judge", "benchwright.coding.validation.validate",
    "benchwright.metrics.static", "benchwright.runs", "benchwright.web.evaluation.scoring",
    "benchwright.web.sites.control", "benchwright.web.submission.package",
    "rich.console", "rich.progress", "rich.table",
)
WHEN_INSTALLED = ("openai", "openai.resources")
"""Imported too when installed: the model SDK that `--agent mini`, the judge and the web track's
model agents load on their first call (about 1,300 modules, 1.5 s CPU a command, three times
what the CLI itself costs to import; no thread at import). A command that must not find it
(`BLOCK=openai`, tests/helpers/bad_input_probes.py) has a PYTHONPATH of its own, hence a set-up
of its own: it never runs in a fork of a zygote that imported it."""


def _receive(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    """One request: its JSON line and the three descriptors sent with it."""
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 3)
    with conn.makefile("rb") as rest:  # the line's rest, had it not come in one piece
        return json.loads(data if data.endswith(b"\n") else data + rest.readline()), fds


def _become_the_command(request: dict[str, object], fds: list[int]) -> None:
    """Turn this fresh fork into `python -m benchwright ARGV` (returns only by raising)."""
    for fd, standard in zip(fds, (0, 1, 2), strict=True):
        os.dup2(fd, standard)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    cwd = str(request["cwd"])
    os.chdir(cwd)
    env = request["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    os.environ.update(env)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for each in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
        signal.signal(each, signal.SIG_DFL)
    argv = request["argv"]
    assert isinstance(argv, list)
    sys.argv = ["-m", *argv]
    sys.path.insert(0, cwd)  # as `python -m` puts the working directory first
    runpy.run_module("benchwright", run_name="__main__", alter_sys=True)


def _wait_for_it(conn: socket.socket, request: dict[str, object], fds: list[int]) -> None:
    """In the waiter: fork the command, tell its pid, wait for it, tell its exit code."""
    pid = os.fork()
    if pid == 0:
        conn.close()
        _become_the_command(request, fds)
        return  # `python -m` ran to its end: exit 0 the usual way
    try:
        for fd in fds:
            os.close(fd)
        conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        conn.sendall(json.dumps({"returncode": code}).encode() + b"\n")
    finally:  # the test may have gone (a time limit): the waiter ends here whatever happened
        os._exit(0)


def _reap() -> None:
    """Collect the waiters that have finished."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def serve(path: str) -> None:
    """Accept requests until the process that started this one is gone (not PR_SET_PDEATHSIG:
    that follows the thread that started this one, and a test may start it from any thread)."""
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    listener.settimeout(1.0)
    print("ready", flush=True)
    while os.getppid() == parent:
        _reap()
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        conn.settimeout(None)
        request, fds = _receive(conn)
        if os.fork() == 0:  # the waiter
            listener.close()
            _wait_for_it(conn, request, fds)
            return  # in the command, whose run ended: leave through the interpreter's exit
        conn.close()
        for fd in fds:
            os.close(fd)


def main() -> None:
    del sys.path[0]  # this script's folder: a command sees the sys.path `python -m` gives it
    for name in PRELOAD:
        importlib.import_module(name)
    for name in WHEN_INSTALLED:
        if importlib.util.find_spec(name.split(".")[0]) is not None:
            importlib.import_module(name)
    gc.collect()
    gc.freeze()  # what was imported stays shared with every fork (no copy-on-write by the GC)
    serve(sys.argv[1])


if __name__ == "__main__":
    main()
