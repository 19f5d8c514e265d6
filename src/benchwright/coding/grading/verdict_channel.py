"""The harness's end of the verdict pipe: what pytest reported, and whether it can be trusted.

The pipe's read end never enters the sandbox; its write end is held only by pytest (see
`verdict_plugin`). What arrives here is cross-checked against pytest's exit status and against
the JSON report file pytest also wrote (which the code under test could reach); any disagreement
is tampering, never a pass.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

PLUGIN = "benchwright.coding.grading.verdict_plugin"
# The plugin's own copy of this name: it runs in the test environment and imports nothing of ours.
FD_ENV = "BENCHWRIGHT_VERDICT_FD"
_PLUGIN_FILE = Path(__file__).with_name("verdict_plugin.py")
REVERSE_PLUGIN = "benchwright.coding.grading.reverse_plugin"
_REVERSE_FILE = Path(__file__).with_name("reverse_plugin.py")
JAIL_PLUGIN = "benchwright.coding.grading.jail"
_JAIL_FILE = Path(__file__).with_name("jail.py")
_GUARD_FILE = Path(__file__).with_name("submission_guard.py")
# The guard's copy of this name: the submission's folders, as JSON {"roots": [], "trusted": []}.
ROOTS_ENV = "BENCHWRIGHT_SUBMISSION_ROOTS"
MAX_REPORT_FILE = 32 * 1024 * 1024
# The plugin's copy of this name: the longest text of a test's report it sends, in characters.
MESSAGE_ENV = "BENCHWRIGHT_MAX_MESSAGE_CHARS"
# Where the plugin says, in the report, what it cut: {"texts": N, "characters": M}.
CUT_KEY = "benchwright_cut"


class Channel:
    """A pipe whose write end goes to pytest; a thread drains it so pytest never blocks, keeping
    at most `max_bytes` (what comes after is read and dropped, and counted)."""

    def __init__(self, max_bytes: int = MAX_REPORT_FILE) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self._chunks: list[bytes] = []
        self._kept = 0
        self._max = max_bytes
        self.cut = 0
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        with os.fdopen(self.read_fd, "rb", buffering=0) as pipe:
            while chunk := pipe.read(1 << 16):
                room = self._max - self._kept
                if room < len(chunk):
                    self.cut += len(chunk) - max(room, 0)
                    chunk = chunk[:max(room, 0)]
                self._chunks.append(chunk)
                self._kept += len(chunk)

    def close_write_end(self) -> None:
        """Our copy of the write end: closed once the command is started (or over)."""
        if self.write_fd >= 0:
            os.close(self.write_fd)
            self.write_fd = -1

    def received(self) -> PipeReport:
        """Everything pytest sent; call after the sandboxed command has ended."""
        self.close_write_end()
        self._thread.join()
        report = parse(b"".join(self._chunks))
        report.cut_bytes = self.cut
        return report


class PipeReport(BaseModel):
    """What pytest told the harness over the pipe."""

    tests: list[dict[str, Any]] = Field(default_factory=list)
    """One record per test phase (setup, call, teardown), in run order."""
    collect_failures: list[str] = Field(default_factory=list)
    """Node ids of the collectors that failed."""
    collected_items: list[dict[str, Any]] | None = None
    """With `--collect-only`: every item collected (`nodeid`, `keywords`); None otherwise."""
    summary: dict[str, Any] | None = None
    """The final record; None when pytest never got to send it."""
    malformed: int = 0
    """Lines that were not one of the records above."""
    cut_bytes: int = 0
    """Bytes past the channel's limit, read and dropped (the last record is then lost)."""
    refused: list[str] = Field(default_factory=list)
    """Files of the submission the tests tried to run inside pytest (import, exec, dlopen),
    each refused by `submission_guard` and reported before it could run."""

    @property
    def json_report(self) -> dict[str, Any] | None:
        """pytest-json-report's report, as pytest held it in memory."""
        report = (self.summary or {}).get("report")
        return report if isinstance(report, dict) else None

    @property
    def collected(self) -> int:
        """Items pytest collected (0 when it said nothing)."""
        return int((self.summary or {}).get("collected") or 0)


def parse(data: bytes) -> PipeReport:
    """The records in `data`; a line that is not a record is counted, never trusted."""
    report = PipeReport()
    for line in data.decode("utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            report.malformed += 1
            continue
        kind = record.get("kind") if isinstance(record, dict) else None
        if kind == "test":
            report.tests.append(record)
        elif kind == "collect":
            report.collect_failures.append(str(record.get("nodeid")))
        elif kind == "collected" and report.collected_items is None:
            items = record.get("items")
            report.collected_items = [i for i in items if isinstance(i, dict)] \
                if isinstance(items, list) else []
        elif kind == "refused":
            report.refused.append(str(record.get("path")))
        elif kind == "summary" and report.summary is None:
            report.summary = record
        else:
            report.malformed += 1
    return report


def read_report_file(path: Path, max_bytes: int = MAX_REPORT_FILE) -> dict[str, Any] | None:
    """The JSON report file as the sandbox left it: a regular file of at most `max_bytes`, never
    followed through a link, never a FIFO the harness would block on; None when it is anything
    else."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        try:
            data = json.loads(file.read())
        except ValueError:
            return None
    return data if isinstance(data, dict) else None


def plugin_tree(folder: Path) -> Path:
    """A folder holding only the plugin, importable as `benchwright.coding.grading.verdict_plugin`;
    returns what goes on pytest's PYTHONPATH."""
    folders = [folder / "benchwright", folder / "benchwright" / "coding"]
    package = folders[-1] / "grading"
    package.mkdir(parents=True)
    for init in (*folders, package):
        (init / "__init__.py").write_text("")
    shutil.copyfile(_PLUGIN_FILE, package / "verdict_plugin.py")
    shutil.copyfile(_REVERSE_FILE, package / "reverse_plugin.py")
    shutil.copyfile(_JAIL_FILE, package / "jail.py")
    shutil.copyfile(_GUARD_FILE, package / "submission_guard.py")
    # Read-only and readable by the sandbox's uid, whatever the umask.
    for path in (folder, *folders, package):
        path.chmod(0o755)
    for path in folders[0].rglob("*.py"):
        path.chmod(0o644)
    return folder


def tampering(
    exit_code: int, pipe: PipeReport, file_report: Mapping[str, Any] | None
) -> str | None:
    """Why the pipe's report disagrees with pytest's exit status or report file; None if not."""
    summary = pipe.summary
    if summary is None:
        return None
    if pipe.malformed:
        return f"{pipe.malformed} lines on the verdict channel were not pytest's records"
    if pipe.json_report is None:
        return "pytest finished without sending its test report to the harness"
    if summary.get("exitstatus") != exit_code:
        return (f"pytest exited with code {exit_code} but reported exit status "
                f"{summary.get('exitstatus')} to the harness")
    return _outcome_mismatch(exit_code, pipe) or _file_mismatch(pipe, file_report)


def _outcome_mismatch(exit_code: int, pipe: PipeReport) -> str | None:
    failing = sum(1 for t in pipe.tests if t.get("outcome") == "failed" and not t.get("xfail"))
    failing += len(pipe.collect_failures)
    if failing != (pipe.summary or {}).get("failed"):
        return (f"pytest counted {(pipe.summary or {}).get('failed')} failures but reported "
                f"{failing} failing phases")
    if exit_code == 0 and failing:
        return f"pytest exited with code 0 but {failing} test phases failed"
    if exit_code == 1 and not failing:
        return "pytest exited with code 1 (tests failed) but reported no failing test"
    return None


def _file_mismatch(pipe: PipeReport, file_report: Mapping[str, Any] | None) -> str | None:
    trusted = pipe.json_report
    if trusted is None:
        return None
    if file_report is None:
        return "pytest's JSON report file was removed or is not valid JSON after pytest wrote it"
    theirs = _outcomes(file_report)
    changed = [f"{nodeid}: {outcome} -> {theirs.get(nodeid, 'missing')}"
               for nodeid, outcome in _outcomes(trusted).items() if theirs.get(nodeid) != outcome]
    extra = set(theirs) - set(_outcomes(trusted))
    if not changed and not extra:
        return None
    listed = "; ".join(changed[:3]) or f"{len(extra)} tests pytest never ran"
    return (f"pytest's JSON report file was rewritten during grading ({len(changed)} outcomes "
            f"differ from what pytest reported: {listed})")


def _outcomes(report: Mapping[str, Any]) -> dict[str, str]:
    tests = report.get("tests")
    if not isinstance(tests, list):
        return {}
    return {str(t.get("nodeid")): str(t.get("outcome")) for t in tests if isinstance(t, dict)}
