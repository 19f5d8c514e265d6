"""A file's change as side-by-side rows, each line split into highlighted tokens.

Rows are compact lists, `[kind, old_no, old_tokens, new_no, new_tokens]`, kind one of `eq`,
`del`, `add`, `chg` (a line replaced), or `gap` (unchanged lines left out; old_no holds how
many). A token is `[css_class, text]`: the page shows the text as text and the class as colour,
so a file's content can never become markup. Highlighting is pygments' lexer for the file name
(rich already depends on pygments); files past MAX_HIGHLIGHT lines are shown plain.
"""

from __future__ import annotations

import difflib
import functools
from typing import Any

CONTEXT = 3
"""Unchanged lines kept around each change."""
MAX_HIGHLIGHT = 5000
"""Longer files are not highlighted."""
MAX_LINE = 2000
"""Characters kept of one line."""

Token = list[str]
Row = list[Any]


def highlight(lines: list[str], filename: str) -> list[list[Token]]:
    """Each line's tokens as `[css_class, text]` (pygments' short class names)."""
    cut = [line[:MAX_LINE] for line in lines]
    if not cut:
        return []
    if len(cut) > MAX_HIGHLIGHT:
        return [[["", line]] for line in cut]
    return _highlighted("\n".join(cut), len(cut), filename)


@functools.lru_cache(maxsize=32)
def _highlighted(text: str, count: int, filename: str) -> list[list[Token]]:
    """Kept for a while: checkpoint N's new file is N+1's old one (callers only read it)."""
    from pygments.token import STANDARD_TYPES

    out: list[list[Token]] = [[]]
    for kind, value in _lexer(filename).get_tokens(text):
        css = _css(kind, STANDARD_TYPES)
        for i, part in enumerate(value.split("\n")):
            if i:
                out.append([])
            if part:
                out[-1].append([css, part])
    return (out + [[] for _ in range(count)])[:count]


@functools.lru_cache(maxsize=64)
def _lexer(filename: str) -> Any:
    """pygments' lexer for the name (finding it scans every lexer's patterns: milliseconds)."""
    from pygments.lexers import get_lexer_for_filename
    from pygments.lexers.special import TextLexer
    from pygments.util import ClassNotFound

    try:
        return get_lexer_for_filename(filename, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return TextLexer()


def _css(kind: Any, table: dict[Any, str]) -> str:
    while kind not in table and kind.parent is not None:
        kind = kind.parent
    return table.get(kind, "")


def side_by_side(old: list[str], new: list[str], filename: str,
                 context: int = CONTEXT) -> list[Row]:
    """The rows of old -> new, unchanged runs longer than 2 x context collapsed into gaps."""
    left, right = highlight(old, filename), highlight(new, filename)
    rows: list[Row] = []
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows += _equal(left, right, i1, i2, j1, context)
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            has_old, has_new = i < i2, j < j2
            kind = "chg" if has_old and has_new else ("del" if has_old else "add")
            rows.append([kind, i + 1 if has_old else None, left[i] if has_old else None,
                         j + 1 if has_new else None, right[j] if has_new else None])
    return _trim_edges(rows, context)


def _equal(left: list[list[Token]], right: list[list[Token]], i1: int, i2: int, j1: int,
           context: int) -> list[Row]:
    n = i2 - i1
    keep = list(range(n)) if n <= 2 * context else [*range(context), *range(n - context, n)]
    rows: list[Row] = []
    for pos, k in enumerate(keep):
        if pos == context and n > 2 * context:
            rows.append(["gap", n - 2 * context, None, None, None])
        rows.append(["eq", i1 + k + 1, left[i1 + k], j1 + k + 1, right[j1 + k]])
    return rows


def _trim_edges(rows: list[Row], context: int) -> list[Row]:
    """Unchanged lines before the first change and after the last, beyond `context`, as gaps."""
    changed = [i for i, r in enumerate(rows) if r[0] not in ("eq", "gap")]
    if not changed:
        return rows
    first, last = changed[0], changed[-1]
    head = _gap(rows[: max(0, first - context)])
    tail = _gap(rows[last + context + 1:])
    return head + rows[max(0, first - context): last + context + 1] + tail


def _gap(rows: list[Row]) -> list[Row]:
    hidden = sum(r[1] if r[0] == "gap" else 1 for r in rows)
    return [["gap", hidden, None, None, None]] if hidden else []
