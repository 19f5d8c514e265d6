"""Reference action scripts: one YAML file per task, one action per entry.

```yaml
task_id: 9001
steps:
  - navigate: {url: "__SHOPPING__/account/orders"}
  - click: {match: "Order #000000170"}
  - input: {match: "name=q", text: "blue mug"}
  - select: {match: "name=status", option: "Shipped"}
  - scroll: {down: true}
  - done: {text: "The total was $42.50", success: true}
```
`match` is a case-sensitive substring of an element's entry in browser-use's `<browser_state>`
(its `[N]<tag attr=... />` line and the text lines under it). Placeholders such as `__SHOPPING__`
are replaced with the site URLs. The scripted model (`scripted_model.py`) executes them.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from benchwright.errors import UserInputError
from benchwright.files.untrusted import read_untrusted_yaml


class StepKind(StrEnum):
    """What one script step does."""

    NAVIGATE = "navigate"
    CLICK = "click"
    INPUT = "input"
    SELECT = "select"
    SCROLL = "scroll"
    GO_BACK = "go_back"
    SEND_KEYS = "send_keys"
    SWITCH_TAB = "switch_tab"
    WAIT = "wait"
    DONE = "done"


REQUIRED_ARGS: dict[StepKind, frozenset[str]] = {
    StepKind.NAVIGATE: frozenset({"url"}),
    StepKind.CLICK: frozenset({"match"}),
    StepKind.INPUT: frozenset({"match", "text"}),
    StepKind.SELECT: frozenset({"match", "option"}),
    StepKind.SEND_KEYS: frozenset({"keys"}),
    StepKind.SWITCH_TAB: frozenset({"match"}),
    StepKind.DONE: frozenset({"text"}),
}
ALLOWED_ARGS: dict[StepKind, frozenset[str]] = {
    StepKind.NAVIGATE: frozenset({"url", "new_tab"}),
    StepKind.CLICK: frozenset({"match"}),
    StepKind.INPUT: frozenset({"match", "text", "clear"}),
    StepKind.SELECT: frozenset({"match", "option"}),
    StepKind.SCROLL: frozenset({"down", "pages"}),
    StepKind.GO_BACK: frozenset(),
    StepKind.SEND_KEYS: frozenset({"keys"}),
    StepKind.SWITCH_TAB: frozenset({"match"}),
    StepKind.WAIT: frozenset({"seconds"}),
    StepKind.DONE: frozenset({"text", "success"}),
}


class ScriptStep(BaseModel):
    """One step: `{kind: {args}}` in YAML."""

    model_config = ConfigDict(frozen=True)

    kind: StepKind
    """The action."""
    args: dict[str, Any] = Field(default_factory=dict)
    """Its arguments (`match`, `url`, `text` ...)."""

    @model_validator(mode="before")
    @classmethod
    def _from_mapping(cls, data: Any) -> Any:
        if isinstance(data, dict) and "kind" not in data:
            if len(data) != 1:
                raise ValueError(f"a step is one mapping {{action: {{...}}}}, got {list(data)}")
            (kind, args), = data.items()
            return {"kind": kind, "args": args or {}}
        return data

    @model_validator(mode="after")
    def _check_args(self) -> Self:
        missing = REQUIRED_ARGS.get(self.kind, frozenset()) - set(self.args)
        unknown = set(self.args) - ALLOWED_ARGS[self.kind]
        if missing:
            raise ValueError(f"{self.kind} needs {', '.join(sorted(missing))}")
        if unknown:
            raise ValueError(f"{self.kind} does not take {', '.join(sorted(unknown))}")
        return self

    def describe(self) -> str:
        """`click {match: 'Order #170'}`, for messages."""
        return f"{self.kind} {self.args}"


class FinalAnswer(BaseModel):
    """What a script's `done` step answers."""

    text: str
    """The final answer, as an agent would write it."""
    success: bool = True
    """False for an agent that reports it could not do the task."""


class ActionScript(BaseModel):
    """A task's reference script."""

    model_config = ConfigDict(frozen=True)

    task_id: int
    """The task it solves."""
    steps: tuple[ScriptStep, ...]
    """One agent step each, in order."""

    @model_validator(mode="after")
    def _ends_with_done(self) -> Self:
        kinds = [step.kind for step in self.steps]
        if not kinds or kinds[-1] is not StepKind.DONE:
            raise ValueError("the last step must be `done`")
        if StepKind.DONE in kinds[:-1]:
            raise ValueError("`done` may only be the last step")
        return self

    @property
    def final(self) -> FinalAnswer:
        """The closing `done` step's answer."""
        return FinalAnswer.model_validate(self.steps[-1].args)

    def with_sites(self, site_urls: dict[str, str]) -> ActionScript:
        """The script with `__SITE__` placeholders replaced by the sites' base URLs."""
        steps = tuple(step.model_copy(update={"args": _substituted(step.args, site_urls)})
                      for step in self.steps)
        return self.model_copy(update={"steps": steps})


def _substituted(args: dict[str, Any], site_urls: dict[str, str]) -> dict[str, Any]:
    out = dict(args)
    for key, value in args.items():
        if isinstance(value, str):
            for site, url in site_urls.items():
                value = value.replace(f"__{site.upper()}__", url.rstrip("/"))
            out[key] = value
    return out


def load_script(path: Path) -> ActionScript:
    """Read and validate a script file; a bad file is a one-line UserInputError."""
    raw = read_untrusted_yaml(path, what="the action script", max_bytes=2**20)
    try:
        return ActionScript.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise UserInputError(f"invalid action script at {where}: {first['msg']}", path=path,
                             hint="see benchwright.web.browser.action_script") from None
