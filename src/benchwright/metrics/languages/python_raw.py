"""radon's raw line counts, computed in one pass.

radon's `raw.analyze` re-tokenises a growing buffer for every line of a multi-line statement,
which is quadratic: a 3,600-line dict literal takes a minute. This module feeds the same stripped
lines to one tokenizer, cuts statements where radon's shortest clean buffer ends (a NEWLINE or NL
at bracket depth 0), and counts exactly as radon counts. Anything unusual (an ERRORTOKEN) falls
back to radon itself, so the figures always equal radon's.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Iterator
from typing import Any

from benchwright.metrics.models import LineCounts
from benchwright.metrics.tools import radon_modules

_OPEN, _CLOSE = set("([{"), set(")]}")


class _Fallback(Exception):
    pass


def raw_counts(source: str) -> LineCounts:
    """radon's `raw.analyze(source)`, in linear time; raises SyntaxError where radon does."""
    try:
        return _fast(source)
    except _Fallback:
        return LineCounts(**radon_modules()[0].analyze(source)._asdict())


def _fast(source: str) -> LineCounts:
    raw = radon_modules()[0]
    lines = [line.strip() for line in source.splitlines()]
    counts = dict.fromkeys(("lloc", "comments", "single_comments", "multi", "blank", "sloc"), 0)
    for tokens, first, last in _statements(lines):
        parsed = lines[first:last + 1]
        counts["comments"] += sum(1 for t in tokens if t[0] == tokenize.COMMENT)
        if raw.is_single_token(tokenize.COMMENT, tokens):
            counts["single_comments"] += 1
        elif raw.is_single_token(tokenize.STRING, tokens) and tokens[0][2][0] != tokens[0][3][0]:
            counts["multi"] += sum(1 for line in parsed if line)
            counts["blank"] += sum(1 for line in parsed if not line)
        elif raw.is_single_token(tokenize.STRING, tokens):
            counts["single_comments"] += 1
        else:
            counts["sloc"] += sum(1 for line in parsed if line)
            counts["blank"] += sum(1 for line in parsed if not line)
        counts["lloc"] += raw._logical(tokens)
    loc = counts["sloc"] + counts["blank"] + counts["multi"] + counts["single_comments"]
    return LineCounts(loc=loc, **counts)


def _statements(lines: list[str]) -> Iterator[tuple[list[Any], int, int]]:
    """(tokens + ENDMARKER, first line index, last line index) per radon statement."""
    end_marker = tokenize.TokenInfo(tokenize.ENDMARKER, "", (0, 0), (0, 0), "")
    # radon's last statement ends without a newline; a trailing empty line must still be seen.
    text = "\n".join(lines) + ("\n" if lines and not lines[-1] else "")
    reader = io.StringIO(text).readline
    depth, current, first = 0, [], 0
    try:
        for token in tokenize.generate_tokens(reader):
            if token.type == tokenize.ERRORTOKEN:
                raise _Fallback
            if token.type in (tokenize.ENDMARKER, tokenize.DEDENT, tokenize.INDENT):
                continue
            current.append(token)
            depth += _depth_change(token)
            if token.type in (tokenize.NEWLINE, tokenize.NL) and depth <= 0:
                yield [*current, end_marker], first, token.start[0] - 1
                current, first, depth = [], token.start[0], 0
    except tokenize.TokenError:
        raise SyntaxError(f"SyntaxError at line: {first + 1}") from None
    if current:
        raise _Fallback


def _depth_change(token: tokenize.TokenInfo) -> int:
    if token.type != tokenize.OP:
        return 0
    return 1 if token.string in _OPEN else -1 if token.string in _CLOSE else 0
