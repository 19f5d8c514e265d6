"""A pytest plugin of benchwright's: reports every test to the harness over a pipe it inherited.

Loaded inside the sandbox with `-p benchwright.coding.grading.verdict_plugin`, from a copy that
holds nothing else (see `verdict_channel.plugin_tree`); it imports only the standard library and
pytest. At load, before any test (and so any code under test) runs, it:

- takes the pipe's write end (its number in $BENCHWRIGHT_VERDICT_FD) and makes it
  non-inheritable, so no subprocess of the tests ever holds it;
- makes pytest non-dumpable: processes of the same uid (the submission) can then neither ptrace
  pytest nor open /proc/<pytest>/fd, /mem or /environ;
- removes its own traces from the environment the tests pass on to the submission;
- starts `submission_guard`: from then on, a file of the submission's run inside pytest (an
  import, an exec, a dlopen) is reported here, as a `refused` record, and refused.

It writes one JSON object per line: a `test` record per test phase, a `collect` record per
failed collector, with `--collect-only` one `collected` record (every item's node id and
keywords: the harness's own collection pass, see `expected`), and, at the very end, a
`summary` record with pytest's exit status, counts and pytest-json-report's in-memory report.
The harness trusts only what arrives here.
"""

from __future__ import annotations

import ctypes
import json
import os
from pathlib import Path
from typing import IO, Any

import pytest

from benchwright.coding.grading import submission_guard

FD_ENV = "BENCHWRIGHT_VERDICT_FD"
MESSAGE_ENV = "BENCHWRIGHT_MAX_MESSAGE_CHARS"
CUT_KEY = "benchwright_cut"
_PR_SET_DUMPABLE = 4


def _claim_channel() -> IO[str]:
    fd = int(os.environ.pop(FD_ENV))
    os.set_inheritable(fd, False)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")
    _drop_own_path()
    return os.fdopen(fd, "w", encoding="utf-8")


def _drop_own_path() -> None:
    """Take this plugin's folder off $PYTHONPATH: the submission sees the environment it would
    have seen without us (SCBench's runner sets no PYTHONPATH)."""
    own = {str(Path(__file__).parents[3]), str(Path(__file__).resolve().parents[3])}
    kept = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p not in own]
    if kept:
        os.environ["PYTHONPATH"] = os.pathsep.join(kept)
    else:
        os.environ.pop("PYTHONPATH", None)


class _State:
    def __init__(self) -> None:
        self.channel = _claim_channel()
        self.session: pytest.Session | None = None
        self.report: Any = None
        self.deselected = 0
        # The longest text of the report sent (and written to the report file): a submission
        # that prints 10 MB into every assertion message must not make the report that big.
        self.max_text = int(os.environ.pop(MESSAGE_ENV, "0") or 0)
        submission_guard.install(self.refused)

    def send(self, record: dict[str, Any]) -> None:
        self.channel.write(json.dumps(record, default=str, separators=(",", ":")) + "\n")

    def refused(self, path: str, how: str) -> None:
        """Tell the harness, and make sure it has it, before the guard raises."""
        self.send({"kind": "refused", "path": path, "how": how})
        self.channel.flush()


_STATE = _State()


def pytest_sessionstart(session: pytest.Session) -> None:
    _STATE.session = session


def pytest_deselected(items: list[pytest.Item]) -> None:
    _STATE.deselected += len(items)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _STATE.send({"kind": "collect", "nodeid": report.nodeid, "outcome": report.outcome})


def pytest_collection_finish(session: pytest.Session) -> None:
    """Only in a collect-only pass: the items as selected, each with its keywords (pytest-json-
    report's `keywords`, from which the harness derives a test's group)."""
    if session.config.option.collectonly:
        _STATE.send({"kind": "collected", "items": [
            {"nodeid": item.nodeid, "keywords": list(item.keywords)} for item in session.items]})


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _STATE.send({"kind": "test", "nodeid": report.nodeid, "when": report.when,
                 "outcome": report.outcome, "duration": report.duration,
                 "xfail": hasattr(report, "wasxfail")})


@pytest.hookimpl(optionalhook=True)
def pytest_json_modifyreport(json_report: dict[str, Any]) -> None:
    """Before pytest-json-report keeps the report and writes its file: every text longer than
    the limit keeps its head and tail, and the report says how many were cut."""
    if _STATE.max_text <= 0:
        return
    cut = [0, 0]
    _cut_texts(json_report, _STATE.max_text, cut)
    if cut[0]:
        json_report[CUT_KEY] = {"texts": cut[0], "characters": cut[1]}


def _cut_texts(value: Any, limit: int, cut: list[int]) -> Any:
    """`value` with every string over `limit` characters cut in the middle (in place for lists
    and dicts); `cut` counts the texts and characters taken out."""
    if isinstance(value, str) and len(value) > limit:
        gone = len(value) - limit
        cut[0] += 1
        cut[1] += gone
        half = limit // 2
        return (value[:half] + f"\n[... {gone} characters cut by benchwright ...]\n"
                + value[len(value) - (limit - half):])
    if isinstance(value, dict):
        for key in list(value):
            value[key] = _cut_texts(value[key], limit, cut)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            value[index] = _cut_texts(item, limit, cut)
    return value


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    # pytest-json-report builds its report first (tryfirst) and keeps it in memory.
    plugin = getattr(session.config, "_json_report", None)
    _STATE.report = getattr(plugin, "report", None)


def pytest_unconfigure(config: pytest.Config) -> None:
    session = _STATE.session
    if session is not None:
        # By now the exit status is final: it is what pytest's process returns.
        _STATE.send({"kind": "summary", "exitstatus": int(session.exitstatus),
                     # As pytest's `collected N items` line counts them: deselected items too.
                     "collected": session.testscollected + _STATE.deselected,
                     "failed": session.testsfailed,
                     "report": _STATE.report})
    _STATE.channel.close()
