"""jinja templates given by users (prompt templates, the judge's templates): their errors as one
line naming the file, what is wrong and which variables the template may use."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from benchwright.errors import UserInputError


@contextlib.contextmanager
def template_errors(what: str, path: Path | None, variables: str) -> Iterator[None]:
    """Compiling or rendering `what` (e.g. "the prompt template") inside the block: a jinja
    error becomes a UserInputError."""
    import jinja2

    try:
        yield
    except jinja2.TemplateSyntaxError as exc:
        raise UserInputError(f"{what} does not compile at line {exc.lineno}: {exc.message}",
                             path=path, hint="fix the jinja syntax") from None
    except jinja2.TemplateError as exc:
        raise UserInputError(f"{what} does not render: {exc.message}", path=path,
                             hint=f"it may use {variables}") from None
