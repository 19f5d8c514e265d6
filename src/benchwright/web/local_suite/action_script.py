"""Reference action scripts: one YAML file per task, replayed by the scripted agent.

    task_id: 9003
    steps:
      - navigate: {url: "__SHOPPING__"}                 # placeholders become the site URLs
      - input: {match: "id=search-query", text: "bamboo cutting board"}
      - click: {match: "id=search-submit"}
      - done: {text: "Added.", success: true}

`match` is a case-sensitive substring of the element's line in browser-use's `<browser_state>`
(`[12]<input id=search-query name=q type=text ... />`); the local sites give every control an
`id`, so the scripts match `id=...`. The last step is `done`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from benchwright.errors import UserInputError
from benchwright.web.config import Site


class NavigateArgs(BaseModel):
    """Open a URL in the current tab."""

    model_config = ConfigDict(extra="forbid")
    url: str
    """The URL, with site placeholders such as `__SHOPPING__`."""


class ClickArgs(BaseModel):
    """Click the first interactive element whose line contains `match`."""

    model_config = ConfigDict(extra="forbid")
    match: str
    """A substring of the element's `<browser_state>` line, e.g. `id=add-to-cart`."""


class InputArgs(BaseModel):
    """Type text into the matched element (its previous value is replaced)."""

    model_config = ConfigDict(extra="forbid")
    match: str
    """A substring of the element's `<browser_state>` line."""
    text: str
    """What to type."""


class SelectArgs(BaseModel):
    """Pick a dropdown option by its visible text."""

    model_config = ConfigDict(extra="forbid")
    match: str
    """A substring of the `<select>` element's line."""
    option: str
    """The option's visible text."""


class ScrollArgs(BaseModel):
    """Scroll the page by one screen."""

    model_config = ConfigDict(extra="forbid")
    down: bool = True
    """Down (true) or up."""


class DoneArgs(BaseModel):
    """Finish with a final answer."""

    model_config = ConfigDict(extra="forbid")
    text: str
    """The final answer as the agent would phrase it."""
    success: bool = True
    """False when the agent reports that the task cannot be done."""


_ACTIONS = ("navigate", "click", "input", "select", "scroll", "done")


class ScriptStep(BaseModel):
    """One agent step: exactly one action."""

    model_config = ConfigDict(extra="forbid")
    navigate: NavigateArgs | None = None
    """Open a URL."""
    click: ClickArgs | None = None
    """Click an element."""
    input: InputArgs | None = None
    """Type into an element."""
    select: SelectArgs | None = None
    """Pick a dropdown option."""
    scroll: ScrollArgs | None = None
    """Scroll the page."""
    done: DoneArgs | None = None
    """Finish."""

    @model_validator(mode="after")
    def _one_action(self) -> ScriptStep:
        if sum(getattr(self, name) is not None for name in _ACTIONS) != 1:
            raise ValueError(f"a step holds exactly one of {', '.join(_ACTIONS)}")
        return self

    @property
    def action(self) -> str:
        """The action's name."""
        return next(name for name in _ACTIONS if getattr(self, name) is not None)

    @property
    def args(self) -> BaseModel:
        """The action's arguments."""
        value: BaseModel = getattr(self, self.action)
        return value


class ActionScript(BaseModel):
    """A task's scripted agent run."""

    model_config = ConfigDict(extra="forbid")
    task_id: int
    """The task it solves (or, for `<id>.wrong.yaml`, deliberately fails)."""
    steps: list[ScriptStep]
    """The steps in order; the last one is `done`."""

    @model_validator(mode="after")
    def _ends_with_done(self) -> ActionScript:
        if not self.steps or self.steps[-1].done is None:
            raise ValueError("the last step must be `done`")
        if any(step.done is not None for step in self.steps[:-1]):
            raise ValueError("`done` may only be the last step")
        return self

    @property
    def final(self) -> DoneArgs:
        """The closing `done` step."""
        assert self.steps[-1].done is not None
        return self.steps[-1].done


def load_script(path: Path) -> ActionScript:
    """Read and validate a script; a bad file is a one-line UserInputError."""
    try:
        raw: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
        return ActionScript.model_validate(raw)
    except OSError as exc:
        raise UserInputError(f"cannot read the action script: {exc.strerror}", path=path,
                             hint="scripts live in benchwright/web/local_suite/scripts") from None
    except yaml.YAMLError:
        raise UserInputError("the action script is not valid YAML", path=path,
                             hint="see docs/web.md for the format") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise UserInputError(f"invalid action script at {where}: {first['msg']}", path=path,
                             hint="see docs/web.md for the format") from None


def render_url(url: str, site_urls: Mapping[str, str]) -> str:
    """Replace site placeholders (`__SHOPPING__` ...) with the site URLs."""
    for name, base in site_urls.items():
        site = Site.parse(name)
        if site is not None:
            url = url.replace(site.placeholder, base.rstrip("/"))
    return url
