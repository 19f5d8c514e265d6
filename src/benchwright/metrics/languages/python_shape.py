"""The shape of Python code beyond complexity: how deep a function's control blocks nest, how
many sit in its body, its exception scaffolding and the variables it defines and reads; a
module's top-level variables and imports. Counted as SCBench counts them (on the ast module
rather than tree-sitter), so the checkpoint figures that depend on them can be compared."""

from __future__ import annotations

import ast

_CONTROL = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
            ast.TryStar, ast.Match)
_TRY = (ast.Try, ast.TryStar)
_ASSIGN = (ast.Assign, ast.AugAssign, ast.AnnAssign)


def body_shape(node: ast.AST) -> dict[str, int]:
    """Nesting, control blocks, exception scaffolding and variables of one definition."""
    defined, used = _variables(node)
    return {"max_nesting_depth": _depth(node), "control_blocks": _control_blocks(node),
            "exception_scaffold": _scaffold(node), "variables_defined": len(defined),
            "variables_used": len(used)}


def _depth(node: ast.AST) -> int:
    """Iterative: a hostile file may nest deeper than the recursion limit."""
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(node, 0)]
    while stack:
        current, level = stack.pop()
        deepest = max(deepest, level)
        for child in ast.iter_child_nodes(current):
            step = isinstance(child, _CONTROL) and not _is_elif(current, child)
            stack.append((child, level + step))
    return deepest


def _is_elif(parent: ast.AST, child: ast.AST) -> bool:
    """An `if` that is the whole `else` of another `if` is an `elif`: the same level."""
    return isinstance(parent, ast.If) and isinstance(child, ast.If) and parent.orelse == [child]


def _control_blocks(node: ast.AST) -> int:
    return sum(isinstance(stmt, _CONTROL) for stmt in getattr(node, "body", []))


def _scaffold(node: ast.AST) -> int:
    count = 0
    for inner in ast.walk(node):
        if isinstance(inner, _TRY):
            count += 1 + len(inner.handlers) + bool(inner.finalbody)
    return count


def _variables(node: ast.AST) -> tuple[set[str], set[str]]:
    """Names and attributes written by assignments, and those read anywhere else in the body."""
    defined: set[str] = set()
    body = list(getattr(node, "body", []))
    for inner in (n for stmt in body for n in ast.walk(stmt)):
        if isinstance(inner, _ASSIGN):
            for target in _targets(inner):
                defined |= _names([target])
    return defined, _names(body, skip_targets=True)


def _targets(node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> list[ast.expr]:
    return node.targets if isinstance(node, ast.Assign) else [node.target]


def _names(nodes: list[ast.AST], skip_targets: bool = False) -> set[str]:
    """Every name and attribute under `nodes`; with `skip_targets`, not those assigned to."""
    found: set[str] = set()
    stack = list(nodes)
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Name):
            found.add(current.id)
        elif isinstance(current, ast.Attribute):
            found.add(current.attr)
        children = list(ast.iter_child_nodes(current))
        if skip_targets and isinstance(current, _ASSIGN):
            children = [c for c in children if c not in _targets(current)]
        stack.extend(children)
    return found


def module_variables(tree: ast.Module) -> int:
    """Top-level assignments to a plain name, and `type` aliases."""
    count = 0
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign):
            count += isinstance(stmt.targets[0], ast.Name)
        elif isinstance(stmt, ast.AnnAssign):
            count += isinstance(stmt.target, ast.Name)
        elif type(stmt).__name__ == "TypeAlias":  # Python 3.12+
            count += 1
    return count


def import_count(tree: ast.AST) -> int:
    """One per module named by an `import`, one per `from ... import` statement."""
    return sum(len(n.names) if isinstance(n, ast.Import) else 1 for n in ast.walk(tree)
               if isinstance(n, (ast.Import, ast.ImportFrom)))
