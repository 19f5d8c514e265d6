"""Reference action scripts: one YAML file per task, replayed by the scripted agent.

    task_id: 9003
    steps:
      - navigate: {url: "__SHOPPING__"}                 # placeholders become the site URLs
      - input: {match: "id=search-query", text: "bamboo cutting board"}
      - click: {match: "id=search-submit"}
      - done: {text: "Added.", success: true}

The format and its parser are the browser agent's (`benchwright.web.browser.action_script`); the
local sites give every control an `id`, so the suite's scripts match `id=...`.
"""

from __future__ import annotations

from collections.abc import Mapping

from benchwright.web.browser.action_script import ActionScript, ScriptStep, load_script
from benchwright.web.config import Site

__all__ = ["ActionScript", "ScriptStep", "load_script", "render_url"]


def render_url(url: str, site_urls: Mapping[str, str]) -> str:
    """Replace site placeholders (`__SHOPPING__` ...) with the site URLs."""
    for name, base in site_urls.items():
        site = Site.parse(name)
        if site is not None:
            url = url.replace(site.placeholder, base.rstrip("/"))
    return url
