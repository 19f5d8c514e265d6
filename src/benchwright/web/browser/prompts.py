"""What the web agent is told: `structured` (the default: site context, start pages, the task,
the task types, the status codes and the final response format), `plain` (the task and "answer in
the done text", read back by the response adapter), or a template file of the user's own.

A template file is jinja, rendered in the sandbox every given template renders in
(`benchwright.templating`); it may use `{{ task }}`, `{{ start_urls }}`, `{{ sites }}` and
`{{ response_format }}`. With a file the final response schema is enforced as with `structured`.
"""

from __future__ import annotations

import re
from pathlib import Path

from benchwright.errors import UserInputError
from benchwright.files.untrusted import read_untrusted_text
from benchwright.templating import render, template_errors
from benchwright.web.evaluation.final_response import STATUS_CODES
from benchwright.web.evaluation.tasks import WebTask

STRUCTURED = "structured"
PLAIN = "plain"
PROMPT_KINDS = (STRUCTURED, PLAIN)
MAX_TEMPLATE_BYTES = 2**20
# a field of the format templates had before they were jinja: `{task}`
_OLD_FIELD = re.compile(r"(?<!\{)\{(task|start_urls|sites|response_format)\}(?!\})")

SITE_CONTEXT = {
    "shopping": "an online store, seen as a customer (a Magento storefront)",
    "shopping_admin": "the administration panel of that online store (Magento admin)",
    "reddit": "a discussion forum with forums, posts and comments (Postmill, like Reddit)",
    "gitlab": "a GitLab server with projects, issues and merge requests",
    "wikipedia": "an offline copy of an encyclopedia (Kiwix)",
    "map": "a map service (OpenStreetMap) with search and directions",
    "homepage": "a start page linking to the other sites",
}

RESPONSE_FORMAT = f"""\
Finish with the done action. Its data is your final response, with these fields:
- task_type: RETRIEVE if the task asks you to find information, MUTATE if it asks you to change
  something on the site (create, edit, delete, order, post), NAVIGATE if it asks you to open a
  particular page (stay on that page when you finish).
- status: SUCCESS when you did what was asked; otherwise the code that says why not:
  NOT_FOUND_ERROR (what the task refers to does not exist), PERMISSION_DENIED_ERROR (this user
  may not do it), ACTION_NOT_ALLOWED_ERROR (the site does not offer that action),
  DATA_VALIDATION_ERROR (the input the task gives is invalid), UNKNOWN_ERROR (anything else).
  The six codes are exactly: {", ".join(STATUS_CODES)}.
- retrieved_data: for a RETRIEVE task that succeeded, a list of the values asked for (one item
  per value, numbers as numbers, no units or extra words); null otherwise.
- error_details: one sentence when status is an error, else null."""


def site_lines(task: WebTask, site_urls: dict[str, str]) -> str:
    """One line per site of the task: its URL, what it is, and that the session is logged in."""
    lines = []
    for site in task.sites:
        name = str(site)
        url = site_urls.get(name, f"__{name.upper()}__")
        lines.append(f"- {url}: {SITE_CONTEXT.get(name, name)}.")
    return "\n".join(lines)


def structured_prompt(task: WebTask, start_urls: str, site_urls: dict[str, str],
                      intent: str) -> str:
    """The default prompt."""
    return (f"You operate a web browser to carry out one task on the site(s) below.\n"
            f"{site_lines(task, site_urls)}\n"
            "The browser is already signed in wherever the task needs an account: do not log "
            "out or sign in as someone else. Stay on these sites.\n\n"
            f"The browser starts at: {start_urls}\n\nTask: {intent}\n\n{RESPONSE_FORMAT}")


def plain_prompt(start_urls: str, intent: str) -> str:
    """The prompt of the free-text path (the response adapter reads the answer)."""
    return (f"{intent}\n\nThe browser starts at {start_urls}. "
            "Work only on this site. When you are finished, call done with just the answer; "
            "if the task cannot be done, call done with success=false and say why.")


def file_prompt(path: Path, task: WebTask, start_urls: str, site_urls: dict[str, str],
                intent: str) -> str:
    """A template file filled in (rendered in the sandbox of `benchwright.templating`)."""
    return _render_file(path, task=intent, start_urls=start_urls,
                        sites=site_lines(task, site_urls), response_format=RESPONSE_FORMAT)


def check_prompt_file(path: Path) -> None:
    """Read and render a template file once with sample values: a broken or hostile one is one
    line (exit 2) before a run folder exists."""
    _render_file(path, task="the task", start_urls="http://localhost/",
                 sites="- http://localhost/: a site.", response_format=RESPONSE_FORMAT)


def _render_file(path: Path, **values: str) -> str:
    text = read_untrusted_text(path, what="the prompt template", max_bytes=MAX_TEMPLATE_BYTES)
    old = _OLD_FIELD.search(text)
    if old is not None and "{{" not in text:
        raise UserInputError(f"the prompt template uses {old.group(0)}, the old format's field",
                             path=path, hint=f"prompt templates are jinja: write "
                             f"{{{{ {old.group(1)} }}}}")
    with template_errors("the prompt template", path, "task, start_urls, sites and "
                         "response_format"):
        return render(text, values)


def uses_schema(prompt: str) -> bool:
    """True when the agent's final response must fit the schema (every prompt but plain)."""
    return prompt != PLAIN
