"""One helper writes every missing-dependency message (`errors.install_command`): no other module
of benchwright spells out a `pip install` of its own (docstrings aside)."""

from __future__ import annotations

import ast
from pathlib import Path

from benchwright.errors import install_command, missing_extra

PACKAGE = Path(__file__).parents[1] / "src" / "benchwright"
# sandbox/env_build runs pip inside a sandbox (a command, not a message); the web track's second
# step installs browser-use itself without its dependencies (`web/browser/imports.missing_web`)
# a build script and a Dockerfile that install packages, not messages telling a user to
ALLOWED = {"errors.py", "sandbox/env_build.py", "web/browser/imports.py", "harbor/export.py"}


def _strings(tree: ast.AST) -> list[str]:
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef |
                                ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and id(node) not in docstrings]


def test_no_module_writes_its_own_install_line() -> None:
    found = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("coding/problems/bundled/") or rel in ALLOWED:
            continue
        found += [f"{rel}: {text!r}" for text in _strings(ast.parse(path.read_text()))
                  if "pip install" in text]
    assert found == []


def test_the_install_line_names_the_extra_its_version_and_a_second_step() -> None:
    assert install_command("ray", version="1.2.3") == "pip install 'benchwright[ray]==1.2.3'"
    assert install_command(None) == "pip install 'benchwright'"
    error = missing_extra("the viewer's charts need plotly", "view", then="echo done")
    assert error.one_line().endswith(
        "install it with: pip install 'benchwright[view]' && echo done)")
