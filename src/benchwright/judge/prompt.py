"""The judge's two prompt parts, rendered from jinja templates as SCBench's are.

The prefix (instructions, the spec, the batch's files with numbered lines) is the same for every
category of a batch, so it goes first and providers can cache it; the criteria part lists the
category's items. Template variables are SCBench's: the prefix gets `spec` and `files` (each with
`file_path`, `file_content` and `language`; also `file_path`, the batch's paths joined by
commas), the criteria part gets `items` (each item's fields, extra keys included). Templates
render in the one sandbox every given template renders in (`benchwright.templating`): a
template file is input, not code we run.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from benchwright.files.untrusted import read_untrusted_text
from benchwright.judge.batching import SourceFile
from benchwright.judge.rubric import RubricItem
from benchwright.templating import render, template_errors

MAX_TEMPLATE_BYTES = 2**20
_LANGUAGES = {".py": "python", ".js": "javascript", ".ts": "typescript", ".go": "go",
              ".rs": "rust", ".java": "java", ".rb": "ruby", ".c": "c", ".cpp": "cpp",
              ".cs": "csharp", ".php": "php", ".kt": "kotlin", ".swift": "swift"}


@dataclass(frozen=True)
class Template:
    """One template's text and where it came from."""

    text: str
    source: str
    """Its path, or `bundled:NAME`."""

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


@dataclass(frozen=True)
class Templates:
    """The prefix and criteria templates of a judge run."""

    prefix: Template
    criteria: Template


def load_templates(prefix: Path | None = None, criteria: Path | None = None) -> Templates:
    """The given template files, ours where one is not given."""
    return Templates(prefix=_template(prefix, "prefix.jinja"),
                     criteria=_template(criteria, "criteria.jinja"))


def _template(path: Path | None, bundled: str) -> Template:
    if path is None:
        text = (resources.files("benchwright.judge") / "data" / bundled).read_text("utf-8")
        return Template(text=text, source=f"bundled:{bundled}")
    text = read_untrusted_text(path, what="the template", max_bytes=MAX_TEMPLATE_BYTES)
    return Template(text=text, source=str(path))


def numbered(text: str) -> str:
    """Every line prefixed by its number from 1, `N: line` (SCBench's numbering)."""
    return "\n".join(f"{i}: {line}" for i, line in enumerate(text.splitlines(), start=1))


def file_params(file: SourceFile) -> dict[str, str]:
    """What a template sees of one file."""
    suffix = Path(file.path).suffix
    return {"file_path": file.path, "file_content": numbered(file.text),
            "language": _LANGUAGES.get(suffix, suffix.lstrip(".") or "text")}


def render_prefix(templates: Templates, spec: str, files: list[SourceFile]) -> str:
    """The shared first part of every request about these files."""
    params = [file_params(f) for f in files]
    return _render(templates.prefix, spec=spec, files=params,
                   file_path=", ".join(f.path for f in files))


def render_criteria(templates: Templates, items: list[RubricItem]) -> str:
    """The part naming one category's items."""
    return _render(templates.criteria, items=[i.model_dump() for i in items])


def check_templates(templates: Templates, items: list[RubricItem]) -> None:
    """Render both templates once with sample values: a broken one is one line, up front."""
    sample = SourceFile(path="example.py", text="print('hello')\n", lines=1)
    render_prefix(templates, "the specification", [sample])
    render_criteria(templates, items)


def _render(template: Template, **values: Any) -> str:
    path = None if template.source.startswith("bundled:") else Path(template.source)
    with template_errors("the template", path, "spec, files and file_path (the prefix), "
                         "items (the criteria)"):
        return render(template.text, values, strict=False)
