"""The scripted model's steps: which script entries share one browser-use agent step."""

from __future__ import annotations

from typing import Any

from benchwright.web.browser.action_script import ActionScript
from benchwright.web.browser.scripted_model import MAX_BATCH, ScriptedChatModel

LOGIN_PAGE = "\n".join([
    "[3]<input id=email />",
    "[4]<input id=pass />",
    "[5]<select id=store />",
    "[6]<button id=send2 />",
    "\tSign in",
])


def model(*steps: dict[str, Any]) -> ScriptedChatModel:
    return ScriptedChatModel(ActionScript.model_validate({"task_id": 1, "steps": list(steps)}))


def test_form_inputs_share_a_step_with_the_click_after_them() -> None:
    chat = model({"input": {"match": "id=email", "text": "a@b.c"}},
                 {"select": {"match": "id=store", "option": "Main"}},
                 {"input": {"match": "id=pass", "text": "pw"}},
                 {"click": {"match": "Sign in"}},
                 {"click": {"match": "Sign in"}},
                 {"done": {"text": "ok"}})
    goal, actions = chat._next(LOGIN_PAGE)
    assert [next(iter(a)) for a in actions] == ["input", "select_dropdown", "input", "click"]
    assert actions[-1] == {"click": {"index": 6}} and goal.count(";") == 3
    _, second = chat._next(LOGIN_PAGE)
    _, third = chat._next(LOGIN_PAGE)
    assert second == [{"click": {"index": 6}}] and third == [{"done": {"text": "ok",
                                                                        "success": True}}]


def test_done_and_elements_not_on_the_page_wait_for_the_next_step() -> None:
    chat = model({"input": {"match": "id=email", "text": "a"}}, {"done": {"text": "ok"}})
    assert len(chat._next(LOGIN_PAGE)[1]) == 1
    chat = model({"input": {"match": "id=email", "text": "a"}},
                 {"click": {"match": "id=next-page-only"}}, {"done": {"text": "ok"}})
    assert len(chat._next(LOGIN_PAGE)[1]) == 1
    assert chat._next("[9]<a id=next-page-only />")[1] == [{"click": {"index": 9}}]


def test_a_batch_stays_under_browser_uses_actions_per_step() -> None:
    chat = model(*[{"input": {"match": "id=email", "text": str(n)}} for n in range(9)],
                 {"done": {"text": "ok"}})
    assert [len(chat._next(LOGIN_PAGE)[1]) for _ in range(3)] == [MAX_BATCH, MAX_BATCH, 1]
