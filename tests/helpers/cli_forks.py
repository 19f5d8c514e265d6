"""`benchwright ARGS` as a fresh process forked from a pre-imported CLI (cli_zygote.py) instead of
a new interpreter: the same command, argv, environment, working directory, streams and exit code,
without the 0.4-0.5 s CPU of imports each time (the suite runs the CLI ~1,000 times).

A zygote serves one interpreter set-up: the environment variables read before or while importing
(PYTHON*, locale, HOME, ...: `_setup_key`). A set-up seen once runs as a plain subprocess; from its
second command on, a zygote of this test process serves it. BENCHWRIGHT_TEST_FORKS=0 turns it off
(every command a new interpreter, as before).

What differs from `python -m benchwright`: the interpreter is shared up to the imports (the hash
seed too), and the command's parent is a waiter process, not the test; stdin is /dev/null (as
run_cli gives it either way). Tests of start-up itself, Ctrl-C and process trees start the CLI
with subprocess.
"""

from __future__ import annotations

import atexit
import io
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import BinaryIO

ZYGOTE = Path(__file__).with_name("cli_zygote.py")
_PREFIXES = ("PYTHON", "_PYTHON", "LC_", "PYDANTIC", "TYPER")
_NAMES = {"HOME", "LANG", "LANGUAGE", "FORCE_COLOR", "PY_COLORS", "TERMINAL_WIDTH",
          "GITHUB_ACTIONS"}


def _setup_key(env: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The variables an interpreter reads while it starts and imports benchwright."""
    return tuple(sorted((k, v) for k, v in env.items() if k.startswith(_PREFIXES) or k in _NAMES))


class _Zygote:
    """One pre-imported CLI serving one set-up, started by this process."""

    def __init__(self, env: dict[str, str]) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="bw-zygote-"))
        self.path = str(self.folder / "s")
        log = self.folder / "log"
        with log.open("wb") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, str(ZYGOTE), self.path], env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=stderr, cwd=self.folder)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if line.strip() != b"ready":
            self.process.kill()
            self.process.wait()
            raise RuntimeError(f"the CLI zygote did not start: {line!r}\n"
                               f"{log.read_text(errors='replace')[-3000:]}")

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


_zygotes: dict[tuple[tuple[str, str], ...], _Zygote] = {}
_seen: set[tuple[tuple[str, str], ...]] = set()
_lock = threading.Lock()  # tests start commands from several threads


def _zygote_for(env: dict[str, str]) -> _Zygote | None:
    if os.environ.get("BENCHWRIGHT_TEST_FORKS", "1") == "0":
        return None
    key = _setup_key(env)
    with _lock:
        if key not in _seen:
            _seen.add(key)
            return None
        found = _zygotes.get(key)
        if found is None or not found.alive():
            found = _zygotes[key] = _Zygote(env)
        return found


@atexit.register
def stop_zygotes() -> None:
    """End every zygote this process started (the session's end, and at exit; each also ends
    within a second of this process)."""
    with _lock:
        for each in _zygotes.values():
            each.stop()
        _zygotes.clear()


def _answer(conn: socket.socket, answers: BinaryIO, deadline: float) -> dict[str, int]:
    """The waiter's next line (its pid, then the exit code), waited for until `deadline`."""
    conn.settimeout(max(0.01, deadline - time.monotonic()))
    line = answers.readline()
    if not line:
        raise RuntimeError("the CLI zygote's waiter ended without an answer")
    answer: dict[str, int] = json.loads(line)
    return answer


def _read_both(out: int, err: int, deadline: float) -> tuple[bytes, bytes] | None:
    """Everything written to the two pipes until both close (None at the deadline)."""
    chunks: dict[int, list[bytes]] = {out: [], err: []}
    with selectors.DefaultSelector() as selector:
        for fd in chunks:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            for key, _ in selector.select(left):
                data = os.read(key.fd, 1 << 16)
                if data:
                    chunks[key.fd].append(data)
                else:
                    selector.unregister(key.fd)
    return b"".join(chunks[out]), b"".join(chunks[err])


def _text(data: bytes) -> str:
    """As subprocess's text mode decodes (the locale's encoding, universal newlines)."""
    return io.TextIOWrapper(io.BytesIO(data)).read()


def _send(zygote: _Zygote, request: dict[str, object], fds: list[int]) -> socket.socket:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(zygote.path)
    socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], fds)
    return conn


def run_forked(args: list[str], env: dict[str, str], cwd: Path | str | None,
               timeout: float) -> subprocess.CompletedProcess[str] | None:
    """`benchwright ARGS` forked from a zygote, captured as `subprocess.run(..., text=True)`
    captures; None when no zygote serves this set-up (run a subprocess instead)."""
    zygote = _zygote_for(env)
    if zygote is None:
        return None
    argv = [sys.executable, "-m", "benchwright", *args]
    sys.audit("subprocess.Popen", sys.executable, argv, cwd, env)  # the tier guard sees it
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    null = os.open(os.devnull, os.O_RDONLY)
    request: dict[str, object] = {"argv": list(args), "env": env,
                                  "cwd": str(Path(cwd or Path.cwd()).absolute())}
    try:
        conn = _send(zygote, request, [null, out_w, err_w])
    except OSError:  # the zygote is gone: nothing started, a new interpreter runs it instead
        os.close(out_r)
        os.close(err_r)
        return None
    finally:
        for fd in (null, out_w, err_w):
            os.close(fd)
    deadline = time.monotonic() + timeout
    with conn, conn.makefile("rb") as answers:
        pid = _answer(conn, answers, deadline)["pid"]
        try:
            streams = _read_both(out_r, err_r, deadline)
            if streams is None:
                os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired(argv, timeout)
            code = _answer(conn, answers, deadline + 60)["returncode"]
        finally:
            os.close(out_r)
            os.close(err_r)
    return subprocess.CompletedProcess(argv, code, _text(streams[0]), _text(streams[1]))
