"""A browser-use chat model that plays an action script: the deterministic `scripted` agent.

It implements browser-use's `BaseChatModel` protocol. Each call with the agent's output schema is
one agent step: the script's next step becomes a browser-use action, with element indices read
from the `<browser_state>` of the last message. Inputs and selects leave the page and its indices
as they are, so like an LLM filling a form the model sends them in one step together with the
action after them (browser-use's multi-action step); every other action ends a step, and `done`
is always a step of its own. When nothing matches, the model waits one step for the page to
settle, then gives up with `done(success=false)` and records why in `failures`. Calls without the
agent's schema (page extraction, message compaction) get an empty answer.

With an `answer` function (the run asks for a structured final response), every `done` carries
that response as its `data`: the script's done text and success flag read into the schema, as a
deterministic agent would fill it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from benchwright.web.browser.action_script import ActionScript, ScriptStep, StepKind
from benchwright.web.browser.browser_state import find_element, find_tab, state_section
from benchwright.web.evaluation.response_adapter import AnswerInput, OutcomeKind, adapt
from benchwright.web.evaluation.tasks import WebTask

AnswerFn = Callable[[str, bool], dict[str, Any]]
"""(done text, success) -> the final response's fields."""

MODEL_NAME = "scripted"
RETRY_WAIT_S = 1
BATCHABLE = frozenset({StepKind.INPUT, StepKind.SELECT})
"""Steps that may share an agent step with the steps after them."""
MAX_BATCH = 4
"""Actions per agent step; browser-use cuts a step at its `max_actions_per_step` (default 5)."""


class StepMismatch(Exception):
    """A script step found nothing to act on in the current page."""


class ScriptedChatModel:
    """browser-use `BaseChatModel` that returns the script's actions one step at a time."""

    _verified_api_keys = True

    def __init__(self, script: ActionScript, answer: AnswerFn | None = None) -> None:
        self.model = MODEL_NAME
        self.answer = answer
        self.script = script
        self.position = 0
        self.retried = False
        self.failures: list[str] = []
        self.calls = 0

    @property
    def provider(self) -> str:
        """browser-use shows it in logs and usage."""
        return "benchwright"

    @property
    def name(self) -> str:
        """The model's name."""
        return MODEL_NAME

    @property
    def model_name(self) -> str:
        """Legacy alias of `model`."""
        return self.model

    async def ainvoke(self, messages: list[Any], output_format: type[BaseModel] | None = None,
                      **kwargs: Any) -> Any:
        """The next step's action, as an instance of `output_format`."""
        from browser_use.llm.views import ChatInvokeCompletion

        self.calls += 1
        if output_format is None or "action" not in output_format.model_fields:
            return ChatInvokeCompletion(completion=_empty(output_format), usage=None)
        state = state_section(messages[-1].text if messages else "")
        goal, actions = self._next(state)
        actions = [self._structured(action) for action in actions]
        stop = self._structured({"done": {"text": f"stopped before: {goal}", "success": False}})
        return ChatInvokeCompletion(completion=_agent_output(output_format, actions, goal, stop),
                                    usage=None)

    def _structured(self, action: dict[str, Any]) -> dict[str, Any]:
        """A `done` in the form the run asks for (text, or a structured response)."""
        done = action.get("done")
        if self.answer is None or done is None:
            return action
        success = bool(done["success"])
        return {"done": {"success": success, "data": self.answer(str(done["text"]), success)}}

    def _next(self, state: str) -> tuple[str, list[dict[str, Any]]]:
        if self.position >= len(self.script.steps):
            return self._give_up("the script ended without a done step")
        step = self.script.steps[self.position]
        try:
            action = to_action(step, state)
        except StepMismatch as exc:
            if not self.retried:
                self.retried = True
                return "wait for the page", [{"wait": {"seconds": RETRY_WAIT_S}}]
            return self._give_up(f"script step {self.position + 1} ({step.describe()}): {exc}")
        start = self.position
        self.position += 1
        self.retried = False
        actions = [action]
        while (self.script.steps[self.position - 1].kind in BATCHABLE
               and len(actions) < MAX_BATCH and (more := self._batched(state)) is not None):
            actions.append(more)
        return "; ".join(s.describe() for s in self.script.steps[start:self.position]), actions

    def _batched(self, state: str) -> dict[str, Any] | None:
        """The next step's action if it joins the current agent step (not `done`, its element on
        this page), advancing past it; None leaves it to the next agent step."""
        steps = self.script.steps
        if self.position >= len(steps) or steps[self.position].kind is StepKind.DONE:
            return None
        try:
            action = to_action(steps[self.position], state)
        except StepMismatch:
            return None
        self.position += 1
        return action

    def _give_up(self, why: str) -> tuple[str, list[dict[str, Any]]]:
        self.failures.append(why)
        self.position = len(self.script.steps) + 1
        return why, [{"done": {"text": why, "success": False}}]


def to_action(step: ScriptStep, state: str) -> dict[str, Any]:
    """The browser-use action for one script step on the page described by `state`."""
    args = step.args
    match step.kind:
        case StepKind.NAVIGATE:
            return {"navigate": {"url": args["url"], "new_tab": bool(args.get("new_tab", False))}}
        case StepKind.CLICK:
            return {"click": {"index": _element(state, args["match"])}}
        case StepKind.INPUT:
            return {"input": {"index": _element(state, args["match"]), "text": str(args["text"]),
                              "clear": bool(args.get("clear", True))}}
        case StepKind.SELECT:
            return {"select_dropdown": {"index": _element(state, args["match"]),
                                        "text": str(args["option"])}}
        case StepKind.SCROLL:
            return {"scroll": {"down": bool(args.get("down", True)),
                               "pages": float(args.get("pages", 1.0))}}
        case StepKind.SWITCH_TAB:
            return {"switch": {"tab_id": _tab(state, args["match"])}}
        case _:
            return _simple_action(step)


def _simple_action(step: ScriptStep) -> dict[str, Any]:
    args = step.args
    match step.kind:
        case StepKind.GO_BACK:
            return {"go_back": {}}
        case StepKind.SEND_KEYS:
            return {"send_keys": {"keys": str(args["keys"])}}
        case StepKind.WAIT:
            return {"wait": {"seconds": int(args.get("seconds", 1))}}
        case _:
            return {"done": {"text": str(args["text"]), "success": bool(args.get("success", True))}}


def _element(state: str, match: str) -> int:
    index = find_element(state, match)
    if index is None:
        raise StepMismatch(f"no interactive element matches {match!r}")
    return index


def _tab(state: str, match: str) -> str:
    tab = find_tab(state, match)
    if tab is None:
        raise StepMismatch(f"no tab matches {match!r}")
    return tab


def scripted_answer(task: WebTask) -> AnswerFn:
    """The scripted agent's final response for `task`: its done text read into the schema."""
    def answer(text: str, success: bool) -> dict[str, Any]:
        read = adapt(task, AnswerInput(kind=OutcomeKind.ANSWERED, final_text=text,
                                       agent_success=success))
        return read.response.model_dump(mode="json")
    return answer


def _agent_output(output_format: type[BaseModel], actions: list[dict[str, Any]],
                  goal: str, stop: dict[str, Any]) -> Any:
    fields = output_format.model_fields
    data: dict[str, Any] = {name: "" for name, f in fields.items()
                            if f.is_required() and name != "action"}
    if "next_goal" in fields:
        data["next_goal"] = goal
    try:
        return output_format.model_validate({**data, "action": actions})
    except ValidationError:
        # On the last allowed step browser-use's schema only admits `done`.
        return output_format.model_validate({**data, "action": [stop]})


def _empty(output_format: type[BaseModel] | None) -> Any:
    if output_format is None:
        return ""
    return output_format.model_validate({})
