"""Prompt templates (jinja) shipped in the package: `just-solve` and `plan-first`, or a file."""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path

from benchwright.errors import UserInputError
from benchwright.files.untrusted import read_untrusted_text
from benchwright.templating import render, template_errors

BUILTIN_TEMPLATES = ("just-solve", "plan-first")
MAX_TEMPLATE_BYTES = 2**20


def template_text(name_or_path: str) -> str:
    """The template source for a built-in name or a path to a .jinja file."""
    if name_or_path in BUILTIN_TEMPLATES:
        folder = resources.files("benchwright.coding.problems") / "templates"
        return (folder / f"{name_or_path}.jinja").read_text(encoding="utf-8")
    path = Path(name_or_path)
    if not path.exists():
        raise UserInputError(f"unknown prompt template {name_or_path!r}",
                             hint=f"use one of {', '.join(BUILTIN_TEMPLATES)} or a .jinja file")
    return read_untrusted_text(path, what="the prompt template", max_bytes=MAX_TEMPLATE_BYTES)


def check_template(name_or_path: str) -> None:
    """Read, compile and render the template once with sample values, so a broken one is a
    one-line error before a run starts, not a failure inside every attempt."""
    text = template_text(name_or_path)
    with template_errors("the prompt template", Path(name_or_path), "spec, is_continuation, "
                         "agent, agent_type, model and model_name"):
        render_prompt(text, spec="spec", is_continuation=True, agent="agent", model="model")


def render_prompt(template: str, *, spec: str, is_continuation: bool, agent: str,
                  model: str | None) -> str:
    """Render a template with the variables SCBench's templates use, in the sandbox every
    template a user or a problem gives renders in (`benchwright.templating`)."""
    return render(template, {"spec": spec, "is_continuation": is_continuation, "agent": agent,
                             "agent_type": agent, "model": model, "model_name": model})


def prompt_hash(prompt: str) -> str:
    """The hash a journal keeps to notice a changed prompt (an edited spec)."""
    return hashlib.sha256(prompt.encode()).hexdigest()
