"""The jail: every process the tests start from the entry point runs in a nested sandbox of its own.

Inside the grading sandbox, pytest and the submission would otherwise share one view, in which the
tests folder (`.evaluation_tests/` beside the workspace: case data and expected outputs) is
readable. The harness hands
pytest the `--entrypoint` `python-in-jail entry.py`: a launcher program (`write_launcher`: it runs
`python -I -S jail.py python ARGS`) standing for `python`, so whatever way the tests start the
submission, it goes through here, and it runs under a nested bubblewrap that sees:

- `/usr`, the grading sandbox's short `/etc`, a minimal `/dev`, a private `/tmp`; the interpreter
  and the submission's environment (read-only);
- the workspace (the submission's own files, writable as in the grading sandbox); the tests
  folder, beside it, is an empty read-only folder;
- what the test handed it: the working folder, the paths named in its arguments (`ARG`, or what
  follows the first `=` in it: `--opt=ARG`, `name=ARG`; absolute or relative to that folder),
  and the absolute paths in the environment variables it set or changed from pytest's own
  (`HOME`, a config file; never a folder of the tests, `/tmp` or pytest's shared folders), and
  a test's whole own temporary folder (`tmp_path`) when any of these lies in it:
  inside the tests folder, the file or folder named and nothing beside it, read-only; elsewhere,
  a folder named, or the folder of a file named (existing or not yet: an output file), writable
  as in the grading sandbox, so a program can replace a file as programs do. A path reached
  through a link is not exposed (links are never followed to expose anything), nor is the root
  or any folder that holds the tests folder;
- every folder or file it binds, bound by descriptor: opened once from `/`, one component at a
  time, never through a link (`open_nofollow`), and handed to bubblewrap as `--bind-fd` or
  `--ro-bind-fd`. What was checked is what is bound: a process of the submission still running
  (a server started by an earlier call) that swaps a folder for a link after the check cannot
  change what bubblewrap binds (the race of issue 36, point 4);
- no `/proc` (a fresh one cannot be mounted in a nested PID namespace, and the grading sandbox's
  would show the other processes' roots), its own PID and IPC namespaces, no further user
  namespaces; the network namespace is the grading sandbox's (loopback only), so servers work.

Its environment is the one the test passed, without pytest's variables (`PYTEST_*`, which name
the running test), the harness's (`BENCHWRIGHT_*`, and `SCBENCH_*` as pytest started with them: a
test may set one of its own) and pytest's hardening (`PYTHONNOUSERSITE`; `PYTHONSAFEPATH` too,
were it set: `python entry.py` imports its sibling modules, as under SCBench), and with the
solution environment's `bin/` first on `PATH` and `VIRTUAL_ENV` set: only the jailed command runs
in the solution environment, pytest's `PATH` does not hold it.

This module runs inside the grading sandbox with the tests' interpreter and imports only the
standard library. Loaded as a pytest plugin (`-p benchwright.coding.grading.jail`) it rewrites, in
pytest's process, the `subprocess.Popen` calls that start the launcher (by name or path) into the
bubblewrap command directly (no start-up of its own), and sends the signals a test gives such a
Popen (or its pid, with `os.kill`, or its group, with `os.killpg`) to the program; any other way
of starting the launcher (a shell, `os.system`, `os.posix_spawn`) runs it as a program, which
does the same. The harness writes `jail.json` beside it (`write_config`).
"""

# Paths are handled as strings with os.path here: lexical normalisation (a link is never
# resolved to decide what to expose) and one cheap call per argument, in every test.
# ruff: noqa: PTH100, PTH109, PTH115, PTH118, PTH123, PTH208

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import stat
import subprocess
import sys
import weakref
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

CONFIG_NAME = "jail.json"
# The launcher program: what the tests see in place of `python`.
LAUNCHER = "python-in-jail"
HIDDEN_PREFIXES = ("PYTEST_", "BENCHWRIGHT_", "SCBENCH_")
# SCBench's prefix is also the problems' own: a test may hand the program a variable under it
# (pwd_manager's SCBENCH_FAKE_CLIPBOARD). Only the harness's, as pytest started with them, hide.
_TESTS_MAY_SET = "SCBENCH_"
# pytest's, not the submission's: with them `python entry.py` could not import its siblings.
HARDENING = ("PYTHONSAFEPATH", "PYTHONNOUSERSITE")
_FLAGS = ("-I", "-S")
_JAILED = "_benchwright_jailed"
_SENT = "_benchwright_signal"
_PATH = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC
# The jailed Popen objects by pid (bubblewrap's monitor), for `os.kill`.
_STARTED: weakref.WeakValueDictionary[int, subprocess.Popen[Any]] = weakref.WeakValueDictionary()


class Jailed(NamedTuple):
    """The bubblewrap command, and the descriptors it binds (open here: the caller hands them
    to bubblewrap, which closes them before the program starts, then closes its own)."""

    argv: list[str]
    fds: list[int]

    def close(self) -> None:
        """Close this process's copies of the descriptors."""
        for fd in self.fds:
            os.close(fd)


def launcher(python: str, tree: Path) -> list[str]:
    """The interpreter command the launcher program runs: `python` and its arguments follow."""
    return [python, *_FLAGS, str(tree / "benchwright" / "coding" / "grading" / "jail.py")]


def launcher_path(tree: Path) -> Path:
    """Where `write_launcher` puts the launcher program (its folder goes on pytest's PATH)."""
    return tree / "bin" / LAUNCHER


def write_launcher(tree: Path, python: str) -> Path:
    """Write the launcher program: a shell script that runs `python ARGS...` in the jail.

    The tests get `python-in-jail X.py` as `--entrypoint`: a bare name, no `.py` and no
    absolute file before the entry script, so that conftests which make the first `*.py` token
    (or the first existing file) absolute against pytest's working folder find the entry script,
    as they do with SCBench's `uv run X.py`, and the name starts with `python` for those that
    check it. Returns the folder to put on PATH."""
    path = launcher_path(tree)
    path.parent.mkdir(exist_ok=True)
    command = shlex.join([*launcher(python, tree), "python"])
    path.write_text(f'#!/bin/sh\nexec {command} "$@"\n')
    path.chmod(0o755)
    path.parent.chmod(0o755)
    return path.parent


def write_config(tree: Path, *, bwrap: str, workspace: Path, tests: Path, solution: Path,
                 readonly: Sequence[Path], env: Mapping[str, str], tmp: str = "/tmp",
                 log: Path | None = None) -> None:
    """Write the jail's settings beside its copy in the plugin tree (paths as the grading sandbox
    sees them). `solution` is the solution environment the jailed command runs in; `env` is
    the environment pytest starts with (a test hands over what it changes in it: `_env_paths`);
    `tmp` the grading sandbox's temporary folder, where pytest makes each test's own. With
    `log`, every jailed command is appended to it (a JSON line: command, cwd, the paths exposed
    beyond the workspace)."""
    config = {"bwrap": bwrap, "workspace": str(workspace), "tests": str(tests),
              "solution": str(solution),
              "readonly": [str(p) for p in readonly], "system": system_args(),
              "launcher": [LAUNCHER, str(launcher_path(tree))], "env": dict(env), "tmp": tmp,
              "log": str(log) if log else None}
    path = tree / "benchwright" / "coding" / "grading" / CONFIG_NAME
    path.write_text(json.dumps(config))
    path.chmod(0o644)


def system_args() -> list[str]:
    """What every jail sees of the system: /usr and the grading sandbox's /etc, read-only."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64"):
        top = Path("/") / name
        if top.is_symlink():
            args += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            args += ["--ro-bind", str(top), str(top)]
    return [*args, "--ro-bind", "/etc", "/etc", "--dev", "/dev", "--tmpfs", "/tmp"]


def _load(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / CONFIG_NAME).read_text())
    return data


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _candidates(command: Sequence[str]) -> Iterator[str]:
    """The arguments that may name paths: each one, and what follows the first `=` in it
    (`--opt=PATH`, `name=PATH`: log_query's `--source a=a.ndjson`)."""
    for arg in command[1:]:
        if not arg or "\0" in arg:
            continue
        yield arg
        if "=" in arg:
            yield arg.split("=", 1)[1]


def open_nofollow(path: str) -> int | None:
    """An O_PATH descriptor of the absolute, normalised `path`, opened from `/` one component
    at a time, never through a link: None when a component is a link (the last one included),
    `..`, not a folder on the way, or missing."""
    parts = [part for part in path.split("/") if part and part != "."]
    if not path.startswith("/") or ".." in parts:
        return None
    fd = os.open("/", _PATH | os.O_DIRECTORY)
    try:
        for part in parts:
            # O_NOFOLLOW with O_PATH opens a link itself (no ELOOP): refused just below, and a
            # link on the way cannot be walked through (openat with it as dir_fd: ENOTDIR).
            step = os.open(part, _PATH, dir_fd=fd)
            os.close(fd)
            fd = step
            if stat.S_ISLNK(os.fstat(fd).st_mode):
                raise OSError(f"{path}: {part} is a link")
    except OSError:
        os.close(fd)
        return None
    return fd


def _is_dir(fd: int) -> bool:
    return stat.S_ISDIR(os.fstat(fd).st_mode)


def _opened(path: str, folder: bool) -> tuple[str, int] | None:
    """`path` and its descriptor (`open_nofollow`), when it is a folder or `folder` is False."""
    fd = open_nofollow(path)
    if fd is not None and folder and not _is_dir(fd):
        os.close(fd)
        return None
    return None if fd is None else (path, fd)


def _as_exposed(candidate: str, cwd: str, tests: str) -> tuple[str, int] | None:
    """The path to expose for an argument, opened, or None. Inside the tests folder: the file
    or folder itself. Elsewhere: a folder itself, and for a file (or a path not there yet) its
    folder, so that the program can replace it as programs do (write a new file, rename it
    over the old). Never through a link, nor a link itself (nor the folder of one)."""
    path = os.path.normpath(os.path.join(cwd, candidate))
    if _within(path, tests):
        return _opened(path, folder=False)
    head, name = os.path.split(path)
    parent = _opened(head, folder=True)
    if parent is None:
        return None
    inner = _open_at(parent[1], name)
    if inner is not None:
        os.close(parent[1])
        if _is_dir(inner):
            return path, inner
        os.close(inner)  # a link: never exposed, nor its folder
        return None
    if _within(head, tests):
        os.close(parent[1])
        return None
    return parent


def _open_at(folder: int, name: str) -> int | None:
    """A descriptor of `name` in the open `folder` when it is a folder or a link (a link, never
    followed: the caller refuses it); None for a file or nothing (then the folder is exposed)."""
    try:
        fd = os.open(name or ".", _PATH, dir_fd=folder)
    except OSError:
        return None
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
        return fd
    os.close(fd)
    return None


def _env_paths(config: Mapping[str, Any], env: Mapping[str, str] | None) -> Iterator[str]:
    """The absolute paths the test handed over in the environment: each entry (of a
    `:`-separated value too) of a variable it set or changed from pytest's own (`HOME` set to a
    folder of its own, `APP_CONFIG=/tmp/.../app.env`, a folder put before `PATH`). What pytest
    started with (its `HOME`, `PATH`) hands nothing over."""
    if env is None:
        return
    baseline = config.get("env") or {}
    for name, value in env.items():
        if not isinstance(value, str) or not isinstance(name, str) or "\0" in value \
                or _hidden(name, value, baseline):
            continue
        before = set(baseline.get(name, "").split(os.pathsep))
        yield from (part for part in value.split(os.pathsep)
                    if part.startswith("/") and part not in before)


def _test_folder(path: str, tmp: str) -> str | None:
    """The test's own temporary folder `path` is in or is (pytest's `tmp_path`:
    `TMP/pytest-of-USER/pytest-N/NAME`), or None."""
    if not _within(path, tmp):
        return None
    parts = path[len(tmp.rstrip("/")) + 1:].split("/")
    if len(parts) < 3 or not (parts[0].startswith("pytest-of-")
                               and parts[1].startswith("pytest-")):
        return None
    return "/".join([tmp.rstrip("/"), *parts[:3]])


def _from_env(candidate: str, config: Mapping[str, Any], cwd: str) -> tuple[str, int] | None:
    """`_as_exposed` for a path the environment names, stricter: never a folder of the tests
    (a file there, read-only, alone), and in the temporary folder only a test's own folder or
    what is in it (never /tmp or pytest's folders holding every test's)."""
    found = _as_exposed(candidate, cwd, config["tests"])
    tmp = config.get("tmp", "/tmp")
    if found is None:
        return None
    path, fd = found
    refused = ((_within(path, config["tests"]) and _is_dir(fd))
               or (_within(path, tmp) and _test_folder(path, tmp) is None))
    if refused:
        os.close(fd)
        return None
    return found


def _widened(found: list[tuple[str, int]], tmp: str) -> list[tuple[str, int] | None]:
    """The tests' own temporary folders that hold a path found: the test wrote what is there
    for the program (a config file naming its sibling, a data folder beside the working one)."""
    tops = {_test_folder(path, tmp) for path, _fd in found} - {None}
    return [_opened(top, folder=True) for top in sorted(t for t in tops if t is not None)]


def _exposure(config: Mapping[str, Any], command: Sequence[str], cwd: str,
              env: Mapping[str, str] | None = None) -> list[tuple[str, int]]:
    """The working folder, the paths the arguments and the environment name (`env`: the one
    the command gets), and the tests' own temporary folders holding them, that the jail must
    add, each with its descriptor, sorted so that a folder comes before what is inside it."""
    tests, workspace = config["tests"], config["workspace"]
    visible = [*config["readonly"]]
    found = list(filter(None, [
        _opened(cwd, folder=True), *(_as_exposed(c, cwd, tests) for c in _candidates(command)),
        *(_from_env(c, config, cwd) for c in _env_paths(config, env))]))
    found += filter(None, _widened(found, config.get("tmp", "/tmp")))
    wanted: dict[str, int] = {}
    for path, fd in found:
        if path in wanted:
            os.close(fd)
        else:
            wanted[path] = fd
    keep: list[tuple[str, int]] = []
    for path in sorted(wanted):
        # The root, the scratch folder or above: never wholesale; the workspace: already there.
        skip = (path == "/" or (_within(tests, path) and path != tests)
                or (_within(path, workspace) and not _within(path, tests))  # already there
                or any(_within(path, v) for v in visible + [k for k, _fd in keep]))
        if skip:
            os.close(wanted[path])
        else:
            keep.append((path, wanted[path]))
    return keep


def exposed_paths(config: Mapping[str, Any], command: Sequence[str], cwd: str,
                  env: Mapping[str, str] | None = None) -> list[str]:
    """The paths `jail_command` adds for `command` run from `cwd` with `env`."""
    found = _exposure(config, command, cwd, env)
    for _path, fd in found:
        os.close(fd)
    return [path for path, _fd in found]


def _bind(flag: str, path: str, fds: list[int]) -> list[str]:
    """`flag`'s descriptor form for `path` opened with `open_nofollow` (`fds` gets it)."""
    fd = open_nofollow(path)
    if fd is None:
        raise OSError(f"jail.py: {path} is missing or reached through a link")
    fds.append(fd)
    return [flag, str(fd), path]


def jail_command(config: Mapping[str, Any], command: Sequence[str], cwd: str,
                 env: Mapping[str, str] | None = None) -> Jailed:
    """The bubblewrap command that runs `command` (from `cwd`, with `env`) in the jail, with the
    descriptors it binds. The system's folders (`system_args`) are bound by name: nothing in
    the grading sandbox can write them or what holds them."""
    tests, workspace = config["tests"], config["workspace"]
    args = [config["bwrap"], "--unshare-user", "--unshare-pid", "--unshare-ipc",
            "--disable-userns", "--die-with-parent", *config["system"]]
    fds: list[int] = []
    try:
        for path in config["readonly"]:
            args += _bind("--ro-bind-fd", path, fds)
        args += [*_bind("--bind-fd", workspace, fds), "--tmpfs", tests]
        for path, fd in _exposure(config, command, cwd, env):
            fds.append(fd)
            args += ["--ro-bind-fd" if _within(path, tests) else "--bind-fd", str(fd), path]
    except BaseException:
        Jailed(args, fds).close()
        raise
    args += ["--remount-ro", tests]
    return Jailed([*args, "--chdir", cwd, "--", *command], fds)


def _log(config: Mapping[str, Any], command: Sequence[str], cwd: str,
         env: Mapping[str, str]) -> None:
    if config.get("log"):
        record = {"command": list(command), "cwd": cwd,
                  "exposed": exposed_paths(config, command, cwd, env)}
        with open(config["log"], "a", encoding="utf-8") as log:
            log.write(json.dumps(record) + "\n")


def _hidden(name: str, value: str, baseline: Mapping[str, str]) -> bool:
    """Whether the jailed command never gets this variable: pytest's (`PYTEST_*`), the
    harness's (`BENCHWRIGHT_*`; `SCBENCH_*` as pytest started with it: the assets folder)."""
    if name.startswith(_TESTS_MAY_SET):
        return baseline.get(name) == value
    return name.startswith(HIDDEN_PREFIXES)


def jail_env(config: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, str]:
    """The environment without pytest's variables, the harness's and pytest's hardening, in the
    solution environment (its `bin/` first on PATH, as SCBench has it for the submission). A
    variable the test set under SCBench's prefix is the test's, and kept (`_hidden`)."""
    baseline = config.get("env") or {}
    kept = {k: v for k, v in env.items()
            if not _hidden(k, v, baseline) and k not in HARDENING}
    solution = config["solution"]
    path = kept.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    return {**kept, "PATH": f"{solution}/bin{os.pathsep}{path}", "VIRTUAL_ENV": solution}


def main(argv: Sequence[str]) -> None:
    """Run as the launcher: replace this process with the jailed command."""
    config = _load(Path(__file__).parent)
    if not argv:
        sys.exit("jail.py: no command given")
    full = jail_command(config, list(argv), os.getcwd(), os.environ)
    _log(config, list(argv), os.getcwd(), os.environ)
    for fd in full.fds:  # bubblewrap binds them, then closes them before the program starts
        os.set_inheritable(fd, True)
    os.execve(full.argv[0], full.argv, jail_env(config, os.environ))


# ---- the pytest side: rewrite Popen calls that start the launcher -------------------------


def _rewritten(config: Mapping[str, Any], args: Any, kwargs: dict[str, Any]) -> Jailed | None:
    """The jailed command for `args` (and `kwargs` with the jail's env and its descriptors
    passed), or None to run `args` unchanged. The launcher is named bare or by its path (a
    conftest may resolve it on PATH)."""
    if (not isinstance(args, list | tuple) or not args or kwargs.get("shell")
            or kwargs.get("executable") is not None
            or not isinstance(args[0], str | bytes | os.PathLike)
            or os.fsdecode(args[0]) not in config["launcher"]):
        return None
    command = ["python", *(os.fsdecode(a) for a in args[1:])]
    cwd = os.path.abspath(os.fsdecode(kwargs.get("cwd") or os.getcwd()))
    given = os.environ if kwargs.get("env") is None else kwargs["env"]
    kwargs["env"] = jail_env(config, given)
    _log(config, command, cwd, given)
    jailed = jail_command(config, command, cwd, given)
    kwargs["pass_fds"] = (*kwargs.get("pass_fds", ()), *jailed.fds)
    return jailed


def _probe(config: Mapping[str, Any]) -> None:
    """Start an empty jail once, before any test: where nested user namespaces are refused (an
    AppArmor or sysctl policy), grading stops with this reason instead of failing every test."""
    argv = [config["bwrap"], "--unshare-user", "--unshare-pid", "--disable-userns",
            *config["system"], "--", "/bin/true"]
    probe = subprocess.run(argv, capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        import pytest

        raise pytest.UsageError(
            "benchwright's jail for the code under test cannot start here (nested bubblewrap: "
            f"{probe.stderr.strip() or f'exit code {probe.returncode}'}); unprivileged user "
            "namespaces must be allowed inside the grading sandbox")


def _first_child(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as listing:
            children = listing.read().split()
    except OSError:
        return None
    return int(children[0]) if children else None


def _program(monitor: int) -> int | None:
    """The jailed program as seen from here: bubblewrap's monitor -> the jail's init -> it."""
    init = _first_child(monitor)
    return _first_child(init) if init is not None else None


def _install_signals() -> None:
    """A signal for a jailed Popen goes to the program, not to bubblewrap's monitor.

    Killing the monitor returns `wait()` at once while the program is still being torn down (a
    server still holding its port when the next test starts one: trajectory_api). Sent to the
    program, `wait()` returns once it has exited, as without the jail; bubblewrap reports a death
    by signal N as exit code 128+N, given back as -N, as Popen says it."""
    send, status = subprocess.Popen.send_signal, subprocess.Popen._handle_exitstatus  # type: ignore[attr-defined]

    def send_signal(self: subprocess.Popen[Any], sig: int) -> None:
        program = _program(self.pid) if getattr(self, _JAILED, False) else None
        if program is None or self.poll() is not None:
            send(self, sig)
            return
        setattr(self, _SENT, int(sig))
        try:
            os.kill(program, sig)
        except ProcessLookupError:
            send(self, sig)

    def handle_exitstatus(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        status(self, *args, **kwargs)
        sent = getattr(self, _SENT, None)
        if sent is not None and self.returncode == 128 + sent:
            self.returncode = -sent

    subprocess.Popen.send_signal = send_signal  # type: ignore[method-assign]
    subprocess.Popen._handle_exitstatus = handle_exitstatus  # type: ignore[attr-defined]
    _install_kill()


def _group_members(pgid: int, monitor: int) -> list[int]:
    """The processes of the process group `pgid` (a jailed Popen's own, started in a session of
    its own) but bubblewrap's monitor and the jail's init, read from /proc: the program and
    the children it keeps in its group."""
    init = _first_child(monitor)
    members = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (monitor, init):
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as stat_file:
                fields = stat_file.read().rpartition(")")[2].split()
        except OSError:  # gone meanwhile
            continue
        if len(fields) > 2 and fields[2] == str(pgid):
            members.append(int(name))
    return members


def _install_kill() -> None:
    """`os.kill(process.pid, sig)` on a jailed Popen still running goes to the program too, as
    `send_signal` does (a test that signals the pid it started, not through Popen), and
    `os.killpg` on the group of one (`start_new_session`) to every process of the group but
    bubblewrap's monitor: the monitor would die of it and the jail's teardown would kill the
    program (SIGKILL) before its handler ran. SIGKILL and SIGSTOP go to the whole group as
    they are (nothing to handle). Any other pid or group is unchanged. A process outside
    pytest's that signals the pid or group reaches the monitor: the program is killed, and
    the return code is -N as for an unjailed program that does not handle N."""
    kill, killpg = os.kill, os.killpg

    def os_kill(pid: int, sig: int) -> None:
        process = _STARTED.get(pid)
        program = _program(pid) if process is not None and process.returncode is None else None
        if program is None:
            kill(pid, sig)
            return
        setattr(process, _SENT, int(sig))
        try:
            kill(program, sig)
        except ProcessLookupError:
            kill(pid, sig)

    def os_killpg(pgid: int, sig: int) -> None:
        process = _STARTED.get(pgid)
        members = [] if (process is None or process.returncode is not None
                         or sig in (0, signal.SIGKILL, signal.SIGSTOP)) \
            else _group_members(pgid, pgid)
        if not members:
            killpg(pgid, sig)
            return
        setattr(process, _SENT, int(sig))
        for pid in members:
            with contextlib.suppress(ProcessLookupError):
                kill(pid, sig)

    os.kill = os_kill
    os.killpg = os_killpg


def _install() -> None:
    config = _load(Path(__file__).parent)
    _probe(config)
    original = subprocess.Popen.__init__

    def __init__(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        jailed = None
        if len(rest) <= 1:  # executable, cwd and env by keyword (or not at all)
            jailed = _rewritten(config, args, kwargs)
        try:
            original(self, args if jailed is None else jailed.argv, *rest, **kwargs)
        finally:
            if jailed is not None:
                jailed.close()
        setattr(self, _JAILED, jailed is not None)
        if jailed is not None:
            _STARTED[self.pid] = self

    subprocess.Popen.__init__ = __init__  # type: ignore[method-assign]
    _install_signals()


def pytest_configure(config: Any) -> None:
    """As a pytest plugin: jail the launcher's Popen calls from here on."""
    _install()


if __name__ == "__main__":
    main(sys.argv[1:])
