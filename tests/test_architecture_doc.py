"""docs/architecture.md names every module and folder of src/benchwright, and nothing else.

The page's module tree is the code block that starts with `src/benchwright/`: an entry is a name
indented two spaces per level (a folder ends with `/`), followed by its description; a line
indented past the deepest level continues the description above. Every source folder has a
README.md saying what lives there.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "src" / "benchwright"
DOC = ROOT / "docs" / "architecture.md"
MAX_DEPTH = 6  # deeper indentation is a description's continuation
DATA = ("coding", "problems", "bundled")  # package data: problem folders, one entry


def named_in_doc(text: str) -> set[str]:
    """The paths (relative to src/benchwright, folders ending in `/`) the module tree names."""
    lines = text.split("```\nsrc/benchwright/\n", 1)[1].split("```", 1)[0].splitlines()
    names: set[str] = set()
    parents: list[str] = []
    for line in lines:
        indent = len(line) - len(line.lstrip(" "))
        if line.strip() and indent == 0:  # the tree of src/benchwright/ ends
            break
        if not line.strip() or indent > 2 * MAX_DEPTH:
            continue
        assert indent % 2 == 0 and indent >= 2, f"misindented entry: {line!r}"
        depth = indent // 2
        assert depth <= len(parents) + 1, f"entry deeper than its folder: {line!r}"
        name = line.split()[0]
        parents[depth - 1:] = [name] if name.endswith("/") else []
        names.add("".join(parents[: depth - 1]) + name)
    return names


def in_package() -> tuple[set[str], set[str]]:
    """Every module, and every folder holding a module (or package data named in the doc)."""
    modules, folders = set(), set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if rel.parts[:3] == DATA:
            continue
        if path.name != "__init__.py":
            modules.add(rel.as_posix())
        folders |= {Path(*rel.parts[:i]).as_posix() + "/" for i in range(1, len(rel.parts))}
    return modules, folders


def test_the_doc_names_every_module_and_folder() -> None:
    modules, folders = in_package()
    named = named_in_doc(DOC.read_text(encoding="utf-8"))
    assert sorted((modules | folders) - named) == []


def test_the_doc_names_nothing_that_does_not_exist() -> None:
    named = named_in_doc(DOC.read_text(encoding="utf-8"))
    missing = sorted(n for n in named if not (PACKAGE / n.rstrip("/")).exists())
    assert missing == []


def test_every_source_folder_has_a_readme() -> None:
    _, folders = in_package()
    assert sorted(f for f in folders if not (PACKAGE / f / "README.md").is_file()) == []


def test_the_parser_reads_nesting_and_continuations() -> None:
    text = ("```\nsrc/benchwright/\n  a.py  x\n  pkg/  y\n    b.py  z\n"
            "                       more of z\n  c.py  w\n```\n")
    assert named_in_doc(text) == {"a.py", "pkg/", "pkg/b.py", "c.py"}
