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

from benchwright.web.browser.action_script import ActionScript, ScriptStep, load_script

__all__ = ["ActionScript", "ScriptStep", "load_script"]
