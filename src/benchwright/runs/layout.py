"""Where the files every run directory has (coding or web) live; each track adds its own."""

from __future__ import annotations

from pathlib import Path

MANIFEST = "manifest.json"
RESULT_JSON = "result.json"
REPORT_MD = "report.md"
WORK = ".work"


class RunFiles:
    """The files every run directory (coding or web) has at its root."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def manifest(self) -> Path:
        return self.root / MANIFEST

    @property
    def result_json(self) -> Path:
        return self.root / RESULT_JSON

    @property
    def report_md(self) -> Path:
        return self.root / REPORT_MD
