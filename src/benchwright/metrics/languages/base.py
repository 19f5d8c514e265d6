"""What a language analyser gives the language-independent metrics."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from benchwright.metrics.models import FileMetrics, SymbolMetrics


@dataclass
class CloneCandidate:
    """A block eligible for clone detection, with its normalised hash."""

    kind: str
    file: str
    start: int
    end: int
    digest: str


@dataclass
class Definition:
    """A function or method, for waste detection."""

    qualname: str
    name: str
    file: str
    is_method: bool
    trivial_wrapper: bool


@dataclass
class ClassInfo:
    """A class and its methods, for waste detection."""

    qualname: str
    file: str
    methods: list[str]


@dataclass
class FileAnalysis:
    """Everything one file contributes."""

    metrics: FileMetrics
    symbols: list[SymbolMetrics] = field(default_factory=list)
    clones: list[CloneCandidate] = field(default_factory=list)
    definitions: list[Definition] = field(default_factory=list)
    classes: list[ClassInfo] = field(default_factory=list)
    calls: Counter[str] = field(default_factory=Counter)
    imports: list[tuple[str, int]] = field(default_factory=list)
    """(module, relative level) pairs as written."""


class LanguageAnalyzer(Protocol):
    """One language: which files it reads and what it finds in each."""

    name: str
    suffixes: tuple[str, ...]

    def analyze(self, rel_path: str, text: str) -> FileAnalysis:
        """Analyse one file's text."""
        ...
