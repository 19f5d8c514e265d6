"""Python: radon for lines, maintainability and complexity; the ast module for the rest."""

from __future__ import annotations

import ast
import hashlib
import sys
from collections import Counter
from typing import Any

from benchwright.metrics.languages.base import (
    ClassInfo,
    CloneCandidate,
    Definition,
    FileAnalysis,
)
from benchwright.metrics.languages.python_raw import raw_counts
from benchwright.metrics.languages.python_shape import body_shape, import_count, module_variables
from benchwright.metrics.models import FileMetrics, LineCounts, SymbolMetrics
from benchwright.metrics.tools import radon_modules

_BRANCHES = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith,
             ast.Match)
_CLONE_KINDS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.If, ast.For, ast.While, ast.With,
                ast.Try, ast.Match)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
MIN_CLONE_LINES = 3


class PythonAnalyzer:
    """Analyses `.py` files."""

    name: str = "python"
    suffixes: tuple[str, ...] = (".py",)

    def analyze(self, rel_path: str, text: str) -> FileAnalysis:
        _raw, metrics, complexity = radon_modules()
        try:
            # Parsed first: a file this Python cannot parse (newer syntax, or none) would send
            # radon's line counter down its quadratic path (321 s on a 2,900-line file).
            tree = ast.parse(text)
            lines = _line_counts(text)
            blocks = complexity.cc_visit_ast(tree)
            mi = _maintainability(tree, lines, metrics, complexity)
        except (SyntaxError, ValueError) as exc:
            return FileAnalysis(metrics=FileMetrics(
                path=rel_path, language=self.name, lines=plain_counts(text), mi=0.0,
                mi_rank="C", symbols=0, parse_error=_unparsed(exc)))
        nodes = _definition_nodes(tree)
        symbols = [_symbol(b, rel_path, nodes, complexity) for b in blocks]
        file_metrics = FileMetrics(path=rel_path, language=self.name, lines=lines, mi=mi,
                                   mi_rank=metrics.mi_rank(mi), symbols=len(symbols),
                                   variables=module_variables(tree), imports=import_count(tree))
        return FileAnalysis(metrics=file_metrics, symbols=symbols,
                            clones=_clone_candidates(tree, rel_path),
                            definitions=_definitions(tree, rel_path),
                            classes=_classes(tree, rel_path), calls=_calls(tree),
                            imports=_imports(tree))


def _unparsed(exc: Exception) -> str:
    """Why a file was not parsed, and by which Python (SCBench's figures, by scb-check on a
    3.12+ interpreter with tree-sitter, still measure it)."""
    version = ".".join(map(str, sys.version_info[:2]))
    return f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__} " \
           f"(Python {version}'s parser)"


def plain_counts(text: str) -> LineCounts:
    """Line counts of a file that could not be parsed, read line by line (not radon's: a
    string's lines count as source): physical, blank, comment-only, the rest as source."""
    stripped = [line.strip() for line in text.splitlines()]
    blank = sum(not line for line in stripped)
    comments = sum(line.startswith("#") for line in stripped)
    return LineCounts(loc=len(stripped), sloc=len(stripped) - blank - comments, blank=blank,
                      comments=comments, single_comments=comments)


def _line_counts(text: str) -> LineCounts:
    try:
        return raw_counts(text)
    except (SyntaxError, ValueError):
        return LineCounts(loc=len(text.splitlines()))


def _maintainability(tree: ast.AST, lines: LineCounts, metrics: Any, complexity: Any) -> float:
    """radon's `mi_visit(code, multi=True)`, reusing the tree and the line counts."""
    comments = (lines.comments + lines.multi) / lines.sloc * 100 if lines.sloc else 0
    volume = metrics.h_visit_ast(tree).total.volume
    total_cc = complexity.ComplexityVisitor.from_ast(tree).total_complexity
    return float(metrics.mi_compute(volume, total_cc, lines.lloc, comments))


def _definition_nodes(tree: ast.AST) -> dict[tuple[int, str], ast.AST]:
    return {(n.lineno, n.name): n for n in ast.walk(tree)
            if isinstance(n, (*_FUNCTIONS, ast.ClassDef))}


def _symbol(block: Any, rel_path: str, nodes: dict[tuple[int, str], ast.AST],
            complexity: Any) -> SymbolMetrics:
    node = nodes.get((block.lineno, block.name))
    is_class = not hasattr(block, "is_method")
    kind = "class" if is_class else ("method" if block.is_method else "function")
    name = block.name if is_class or not block.classname else f"{block.classname}.{block.name}"
    walked = list(ast.walk(node)) if node is not None else []
    return SymbolMetrics(
        name=name, kind=kind, file=rel_path, start=block.lineno, end=block.endline,
        complexity=block.complexity, band=complexity.cc_rank(block.complexity),
        statements=sum(isinstance(n, ast.stmt) for n in walked) - 1 if walked else 0,
        branches=sum(isinstance(n, _BRANCHES) for n in walked),
        comparisons=sum(len(n.ops) for n in walked if isinstance(n, ast.Compare)),
        body_hash=_digest(ast.dump(node)) if node is not None else "",
        **(body_shape(node) if node is not None else {}),
    )


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


_RENAMABLE = frozenset({"name", "arg", "attr", "id", "asname"})
_SKIPPED = frozenset({"ctx", "type_comment"})


def _shape(node: ast.AST, memo: dict[int, str]) -> str:
    """A digest of the node's shape: names and literals become placeholders, so renamed
    variables and changed constants still match. Children are digested once (memo)."""
    if isinstance(node, ast.Name):
        return "N"
    if isinstance(node, ast.Constant):
        return f"C{type(node.value).__name__}"
    parts = [type(node).__name__]
    for name in node._fields:
        if name in _SKIPPED:
            continue
        value = getattr(node, name, None)
        if name in _RENAMABLE and isinstance(value, str):
            parts.append("_")
        elif isinstance(value, list):
            parts.append("[" + ",".join(_shape(v, memo) if isinstance(v, ast.AST) else repr(v)
                                        for v in value) + "]")
        elif isinstance(value, ast.AST):
            parts.append(_shape(value, memo))
        else:
            parts.append(repr(value))
    memo[id(node)] = digest = _digest("(".join(parts))
    return digest


def _clone_candidates(tree: ast.AST, rel_path: str) -> list[CloneCandidate]:
    memo: dict[int, str] = {}
    try:
        _shape(tree, memo)
    except RecursionError:
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, _CLONE_KINDS):
            continue
        end = getattr(node, "end_lineno", node.lineno) or node.lineno
        if end - node.lineno + 1 >= MIN_CLONE_LINES:
            found.append(CloneCandidate(kind=type(node).__name__.lower(), file=rel_path,
                                        start=node.lineno, end=end, digest=memo[id(node)]))
    return found


def _is_trivial_wrapper(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if len(body) != 1:
        return False
    stmt = body[0]
    value = stmt.value if isinstance(stmt, (ast.Return, ast.Expr)) else None
    if isinstance(value, ast.Await):
        value = value.value
    return isinstance(value, ast.Call)


def _definitions(tree: ast.Module, rel_path: str) -> list[Definition]:
    found = []
    for owner, node in _functions_with_owner(tree):
        qual = f"{owner}.{node.name}" if owner else node.name
        found.append(Definition(qualname=qual, name=node.name, file=rel_path,
                                is_method=owner is not None,
                                trivial_wrapper=_is_trivial_wrapper(node)))
    return found


def _functions_with_owner(
    tree: ast.Module,
) -> list[tuple[str | None, ast.FunctionDef | ast.AsyncFunctionDef]]:
    found: list[tuple[str | None, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for node in tree.body:
        if isinstance(node, _FUNCTIONS):
            found.append((None, node))
        elif isinstance(node, ast.ClassDef):
            found += [(node.name, m) for m in node.body if isinstance(m, _FUNCTIONS)]
    return found


def _classes(tree: ast.AST, rel_path: str) -> list[ClassInfo]:
    return [ClassInfo(qualname=n.name, file=rel_path,
                      methods=[m.name for m in n.body if isinstance(m, _FUNCTIONS)])
            for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]


def _calls(tree: ast.AST) -> Counter[str]:
    calls: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                calls[func.id] += 1
            elif isinstance(func, ast.Attribute):
                calls[func.attr] += 1
    return calls


def _imports(tree: ast.AST) -> list[tuple[str, int]]:
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            found.append((base, node.level))
            found += [(f"{base}.{a.name}" if base else a.name, node.level) for a in node.names]
    return found
