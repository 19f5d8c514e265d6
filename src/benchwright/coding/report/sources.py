"""Where a run's problems came from, as the report shows it: a header line per origin and
commit, and a table of every problem's commit and content hash (from the manifest's
`problem_sources`)."""

from __future__ import annotations

from benchwright.coding.problems.source import ProblemSource

_SHOWN = 8


def source_lines(sources: dict[str, ProblemSource]) -> list[str]:
    """One line per (origin, commit, branch): `ORIGIN commit X (main): 36 problems`; problems
    outside any git checkout on a line of their own. Empty for runs that recorded none."""
    groups: dict[tuple[str | None, str | None, str | None], list[str]] = {}
    for name, source in sources.items():
        groups.setdefault((source.origin, source.commit, source.ref), []).append(name)
    return [_group_line(*key, names) for key, names in groups.items()]


def _group_line(origin: str | None, commit: str | None, ref: str | None,
                names: list[str]) -> str:
    shown = ", ".join(names[:_SHOWN]) + (f", ... ({len(names)} in all)"
                                         if len(names) > _SHOWN else "")
    if commit is None:
        return f"not in a git checkout (content hashes only): {shown}"
    branch = f" ({ref.removeprefix('refs/heads/')})" if ref else " (detached)"
    return f"`{origin or 'no origin'}` commit `{commit}`{branch}: {shown}"


def source_table(sources: dict[str, ProblemSource]) -> list[str]:
    """The report's section: each problem's folder in its checkout, commit and content hash."""
    if not sources:
        return []
    lines = ["## Problem sources", "",
             "A checkout's working tree may differ from its commit: the content hash is of the "
             "files the run read.", "",
             "| problem | origin | commit | folder | content hash | grading | note |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {name} | {_cell(s.origin)} | {_cell(s.commit and s.commit[:12])} | "
              f"{_cell(s.folder)} | {_cell(s.content_sha256 and s.content_sha256[:16])} | "
              f"{s.grading} | {_cell(s.note)} |" for name, s in sources.items()]
    return [*lines, ""]


def _cell(text: str | None) -> str:
    return (text or "-").replace("|", "/").replace("`", "'").replace("\n", " ")
