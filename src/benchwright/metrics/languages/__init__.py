"""Language analysers, by file suffix. Another language is one new module and one line here."""

from __future__ import annotations

from benchwright.metrics.languages.base import LanguageAnalyzer


def analyzers() -> list[LanguageAnalyzer]:
    """Every available analyser."""
    from benchwright.metrics.languages.python import PythonAnalyzer

    return [PythonAnalyzer()]
