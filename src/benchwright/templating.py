"""jinja templates given by users or problems (the coding and web tracks' prompt templates, the
judge's templates): data, never code. Every one renders here, in one sandboxed environment:

- jinja's immutable sandbox: no attribute that starts with `_` (so no `__globals__`, no way to
  Python's internals), no method that changes a list or dict;
- no loader: `{% include %}`, `{% extends %}` and `{% import %}` are errors, not file reads;
- bounded work: `range()` up to `MAX_RANGE` items, `MAX_LOOP_STEPS` loop steps per render, calls
  (macros, recursive loops) nested at most `MAX_CALL_DEPTH` deep, and no value or output over
  `MAX_TEXT` characters (`'a' * 10**10` stops before it allocates anything).

Their errors, a template that breaks a rule included, are one line naming the file, what is
wrong and which variables the template may use (`UserInputError`, exit 2).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchwright.errors import UserInputError

MAX_TEXT = 10_000_000
"""Characters (or items) any value a template makes, and its whole output, may hold."""
MAX_RANGE = 100_000
"""Items one `range()` may have."""
MAX_LOOP_STEPS = 1_000_000
"""Loop iterations one render may take, all loops together."""
MAX_CALL_DEPTH = 100
"""How deep calls may nest (a recursive macro, a recursive loop)."""
_LOOP_FILTER = "_benchwright_counted_loop"
_SIZED_FILTER = "_benchwright_sized"
_OTHER_FILES = {"Include": "{% include %}", "Extends": "{% extends %}",
                "Import": "{% import %}", "FromImport": "{% from ... import %}"}


@dataclass
class _Budget:
    """What one render has spent."""

    steps: int = 0
    depth: int = 0


_BUDGET: contextvars.ContextVar[_Budget] = contextvars.ContextVar("template_budget")


def _limit_error(message: str) -> Exception:
    from jinja2.exceptions import SecurityError

    return SecurityError(message)


def _sized(value: Any) -> Any:
    """`value`, unless it is longer than MAX_TEXT."""
    if isinstance(value, str | bytes | list | tuple | dict) and len(value) > MAX_TEXT:
        raise _limit_error(f"a value of {len(value):,} items is over the limit of {MAX_TEXT:,}")
    return value


def _check_binop(operator: str, left: Any, right: Any) -> None:
    """Refuse, before computing it, an operation whose result would be too big."""
    if operator == "*":
        for seq, times in ((left, right), (right, left)):
            if isinstance(seq, str | bytes | list | tuple) and isinstance(times, int) \
                    and len(seq) * times > MAX_TEXT:
                raise _limit_error(f"a value of {len(seq) * times:,} items is over the limit "
                                   f"of {MAX_TEXT:,}")
    if operator == "**" and isinstance(left, int | float) and isinstance(right, int | float) \
            and abs(left) > 1 and right > 64:
        raise _limit_error(f"the power {left}**{right} is over the limit (exponents up to 64)")
    if operator == "%" and isinstance(left, str):
        _check_format(left)


# a width or precision of 8 digits or more: `%9999999999d`, `{:>9999999999}`, `%.99999999f`
_WIDE_PERCENT = re.compile(r"%[-#0 +]*(\*|\d{8,}|\d*\.(\*|\d{8,}))")
_WIDE_BRACES = re.compile(r"\{[^{}]*:[^{}]*\d{8,}[^{}]*\}")
_NESTED_WIDTH = re.compile(r"\{[^{}]*:[^{}]*\{")  # `{:>{}}`: the width is an argument


def _check_format(text: str) -> None:
    """Refuse a format string that asks for a field too wide to build."""
    if _WIDE_PERCENT.search(text) or _WIDE_BRACES.search(text):
        raise _limit_error("a format string asks for a field wider than the limit "
                           f"of {MAX_TEXT:,} characters (or a `*` width)")


# what takes a width or a count and builds that much: str's methods and jinja's filters
_WIDTH_TAKERS = frozenset({"ljust", "rjust", "center", "zfill", "expandtabs", "do_center",
                           "do_indent", "do_wordwrap", "do_truncate"})


def _check_call(obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Refuse a call whose arguments would build something too big (`'a'.ljust(10**10)`)."""
    method = getattr(obj, "__wrapped__", obj)  # jinja wraps str.format
    name, owner = getattr(method, "__name__", ""), getattr(method, "__self__", None)
    if isinstance(owner, str) and name in ("format", "format_map"):
        _check_format(owner)
    if name in _WIDTH_TAKERS or (name in ("format", "format_map") and isinstance(owner, str)
                                 and _NESTED_WIDTH.search(owner)):
        for arg in [*args, *kwargs.values()]:
            if isinstance(arg, int) and not isinstance(arg, bool) and arg > MAX_TEXT:
                raise _limit_error(f"the width {arg:,} is over the limit of {MAX_TEXT:,}")
    if name in ("replace", "do_replace"):
        texts = [a for a in [owner, *args] if isinstance(a, str)]
        if texts and len(texts[0]) * max(len(t) for t in texts) > MAX_TEXT:
            raise _limit_error(f"replace() could make a value over the limit of {MAX_TEXT:,}")


def _bounded_range(*args: int) -> range:
    result = range(*args)
    if len(result) > MAX_RANGE:
        raise _limit_error(f"range() of {len(result):,} items is over the limit of {MAX_RANGE:,}")
    return result


def _counted(iterable: Iterable[Any]) -> Iterator[Any]:
    """A loop's items, each counted against the render's budget."""
    budget = _BUDGET.get(None) or _Budget()
    for item in iterable:
        budget.steps += 1
        if budget.steps > MAX_LOOP_STEPS:
            raise _limit_error(f"the template took more than {MAX_LOOP_STEPS:,} loop steps")
        yield item


def _bounded_filter(func: Callable[..., Any]) -> Callable[..., Any]:
    """A built-in filter whose arguments and result are held to MAX_TEXT (`center(10**10)`)."""

    @functools.wraps(func)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        _check_call(func, args, kwargs)
        if func.__name__ == "do_format" and args and isinstance(args[0], str):
            _check_format(args[0])  # `'%9999999999d'|format(1)`
        return _sized(func(*args, **kwargs))

    return bounded


def _refuse_other_files(tree: Any) -> None:
    """A template is one file: naming another is a syntax error, not a file read."""
    import jinja2
    from jinja2 import nodes

    for kind, tag in _OTHER_FILES.items():
        found = tree.find(getattr(nodes, kind))
        if found is not None:
            raise jinja2.TemplateSyntaxError(
                f"{tag} is not allowed: a template is one file and reads no other", found.lineno)


def _sized_concat_class() -> Any:
    from jinja2 import nodes
    from jinja2.visitor import NodeTransformer

    class SizedConcat(NodeTransformer):
        """Every `a ~ b` held to MAX_TEXT (a doubling loop stops at the limit)."""

        def visit_Concat(self, node: Any) -> Any:
            return nodes.Filter(self.generic_visit(node), _SIZED_FILTER, [], [], None, None,
                                lineno=node.lineno)

    return SizedConcat


@functools.cache
def environment(strict: bool = True) -> Any:
    """The sandboxed environment (`strict`: an undefined variable is an error, not empty)."""
    import jinja2
    from jinja2 import nodes
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class _DataEnvironment(ImmutableSandboxedEnvironment):
        intercepted_binops = frozenset({"*", "**", "%", "+"})

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            _check_binop(operator, left, right)
            return _sized(super().call_binop(context, operator, left, right))

        def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
            _check_call(__obj, args, kwargs)
            budget = _BUDGET.get(None) or _Budget()
            budget.depth += 1
            try:
                if budget.depth > MAX_CALL_DEPTH:
                    raise _limit_error(f"calls nest more than {MAX_CALL_DEPTH} deep "
                                       "(a recursive macro?)")
                return _sized(super().call(__context, __obj, *args, **kwargs))
            finally:
                budget.depth -= 1

        def _parse(self, source: str, name: str | None, filename: str | None) -> Any:
            tree = super()._parse(source, name, filename)
            _refuse_other_files(tree)
            for loop in tree.find_all(nodes.For):  # every loop's items counted
                loop.iter = nodes.Filter(loop.iter, _LOOP_FILTER, [], [], None, None,
                                         lineno=loop.lineno)
            return _sized_concat_class()().visit(tree)

    env = _DataEnvironment(loader=None, autoescape=False, keep_trailing_newline=True,
                           undefined=jinja2.StrictUndefined if strict else jinja2.Undefined)
    env.filters = {name: _bounded_filter(f) for name, f in env.filters.items()}
    env.filters[_LOOP_FILTER] = _counted
    env.filters[_SIZED_FILTER] = _sized
    env.globals.pop("lipsum", None)  # a generator of any size, and nothing a prompt needs
    env.globals["range"] = _bounded_range
    return env


@functools.lru_cache(maxsize=32)
def _compiled(text: str, strict: bool) -> Any:
    """A template compiled once (a run renders the same few many times)."""
    return environment(strict).from_string(text)


def render(text: str, values: dict[str, Any], *, strict: bool = True) -> str:
    """`text` rendered with `values` in the sandbox, within the limits above. Raises jinja's
    errors (`template_errors` turns them into one line)."""
    token = _BUDGET.set(_Budget())
    try:
        parts: list[str] = []
        size = 0
        for part in _compiled(text, strict).generate(**values):
            size += len(part)
            if size > MAX_TEXT:
                raise _limit_error(f"the output is over the limit of {MAX_TEXT:,} characters")
            parts.append(part)
        return "".join(parts)
    finally:
        _BUDGET.reset(token)


@contextlib.contextmanager
def template_errors(what: str, path: Path | None, variables: str) -> Iterator[None]:
    """Compiling or rendering `what` (e.g. "the prompt template") inside the block: a jinja
    error, or a limit broken, becomes a UserInputError."""
    import jinja2
    from jinja2.exceptions import SecurityError

    try:
        yield
    except jinja2.TemplateSyntaxError as exc:
        raise UserInputError(f"{what} does not compile at line {exc.lineno}: {exc.message}",
                             path=path, hint="fix the jinja syntax") from None
    except SecurityError as exc:
        raise UserInputError(f"{what} is refused: {exc.message}", path=path,
                             hint="templates are data: they may use their variables, not "
                             "Python's internals, files or unbounded work") from None
    except jinja2.TemplateError as exc:
        raise UserInputError(f"{what} does not render: {exc.message}", path=path,
                             hint=f"it may use {variables}") from None
    except (TypeError, ValueError, OverflowError, MemoryError, RecursionError,
            ArithmeticError, LookupError) as exc:
        raise UserInputError(f"{what} does not render: {type(exc).__name__}: {exc}"[:300],
                             path=path, hint=f"it may use {variables}") from None
