"""A scripted browser-use trial on the loopback site, and what its HAR holds."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchwright.web.browser.trial import AgentSpec, TrialRequest, TrialStatus, run_trial
from benchwright.web.evaluation.tasks import WebTask
from tests.helpers.testsite import SiteServer

STEPS: list[dict[str, Any]] = [
    {"navigate": {"url": "__SHOPPING__/"}},
    {"click": {"match": "Open tab"}},
    {"switch_tab": {"match": "/ - "}},
    {"click": {"match": "Redirect me"}},
    {"navigate": {"url": "__SHOPPING__/form?ref=tests"}},
    {"input": {"match": "name=q", "text": "blue mug"}},
    {"click": {"match": "id=send"}},
    {"done": {"text": "ordered blue mug", "success": True}},
]


def headers(part: dict[str, Any]) -> dict[str, str]:
    return {h["name"].lower(): h["value"] for h in part["headers"]}


def entries_for(har: dict[str, Any], path: str) -> list[dict[str, Any]]:
    return [e for e in har["log"]["entries"] if e["request"]["url"].split("//", 1)[1]
            .split("/", 1)[1].startswith(path.lstrip("/"))]


@pytest.fixture(scope="module")
def trial(site: SiteServer, shared: Any, tmp_path_factory: pytest.TempPathFactory,
          ) -> tuple[Any, dict[str, Any], Path]:
    import yaml

    folder = tmp_path_factory.mktemp("trial")
    script = folder / "script.yaml"
    script.write_text(yaml.safe_dump({"task_id": 1, "steps": STEPS}))
    task = WebTask(task_id=1, sites=("shopping",), intent_template_id=1,
                   start_urls=("__SHOPPING__",),
                   intent="Order a blue mug", eval=(), revision=1, task_type="MUTATE",
                   expected_status="SUCCESS")
    request = TrialRequest(task=task, trial_dir=folder / "trial_1",
                           site_urls={"shopping": site.url},
                           agent=AgentSpec(name="scripted", script=script))
    outcome = run_trial(request, browser=shared)
    har = json.loads((request.trial_dir / "network.har").read_text())
    return outcome, har, request.trial_dir


def test_scripted_agent_finishes_the_task(trial: tuple[Any, dict[str, Any], Path],
                                          site: SiteServer) -> None:
    outcome, _, folder = trial
    assert outcome.status is TrialStatus.COMPLETED, outcome.errors
    # the structured prompt: the final text is the response the schema validated
    final = json.loads(outcome.final_text or "{}")
    assert final["task_type"] == "MUTATE" and final["status"] == "SUCCESS"
    assert outcome.agent_success is True
    # the input shares its agent step with the click after it
    assert outcome.steps == len(STEPS) - 1 and outcome.errors == []
    assert site.last_q == "blue mug"
    assert (folder / "history.json").is_file()
    assert not (folder / "browser").exists()  # browser files removed by default
    assert 0 < outcome.harness_s < outcome.duration_s - outcome.model_time_s


def test_har_is_version_1_2_with_every_request(trial: tuple[Any, dict[str, Any], Path]) -> None:
    _, har, _ = trial
    assert har["log"]["version"] == "1.2"
    paths = [e["request"]["url"].split("/", 3)[3] for e in har["log"]["entries"]]
    for expected in ("", "tab", "redirect?from=home", "landing", "form?ref=tests", "submit",
                     "done", "pixel.gif"):
        assert expected in paths, paths
    assert not any("browser-use.com" in e["request"]["url"] for e in har["log"]["entries"])


def test_redirect_hops_are_their_own_entries(trial: tuple[Any, dict[str, Any], Path]) -> None:
    _, har, _ = trial
    hop = entries_for(har, "/redirect")[0]
    assert hop["response"]["status"] == 302
    assert hop["response"]["redirectURL"].endswith("/landing")
    assert hop["request"]["queryString"] == [{"name": "from", "value": "home"}]
    post = entries_for(har, "/submit")[0]
    assert post["response"]["status"] == 303 and post["response"]["redirectURL"].endswith("/done")
    urls = [e["request"]["url"] for e in har["log"]["entries"]]
    assert urls.index(hop["request"]["url"]) < urls.index(entries_for(har, "/landing")[0]
                                                          ["request"]["url"])


def test_post_data_and_navigation_headers(trial: tuple[Any, dict[str, Any], Path]) -> None:
    _, har, _ = trial
    post = entries_for(har, "/submit")[0]
    assert post["request"]["method"] == "POST"
    assert post["request"]["postData"]["text"] == "q=blue+mug"
    assert post["request"]["postData"]["params"] == [{"name": "q", "value": "blue mug"}]
    assert post["request"]["postData"]["mimeType"].startswith("application/x-www-form-urlencoded")
    sent = headers(entries_for(har, "/landing")[0]["request"])
    assert sent["sec-fetch-dest"] == "document" and sent["sec-fetch-mode"] == "navigate"
    assert sent["sec-fetch-user"] == "?1" and "text/html" in sent["accept"]
    assert headers(entries_for(har, "/pixel.gif")[0]["request"])["sec-fetch-dest"] == "image"


def test_cookies_both_ways(trial: tuple[Any, dict[str, Any], Path]) -> None:
    _, har, _ = trial
    home = entries_for(har, "/")[0]
    assert {"name": "seen", "value": "1", "path": "/", "httpOnly": True} in (
        home["response"]["cookies"])
    assert any(h["name"].lower() == "set-cookie" for h in home["response"]["headers"])
    landing = entries_for(har, "/landing")[0]
    assert {"name": "seen", "value": "1"} in landing["request"]["cookies"]
    assert headers(landing["request"])["cookie"] == "seen=1"


def test_response_bodies(trial: tuple[Any, dict[str, Any], Path]) -> None:
    _, har, _ = trial
    done = entries_for(har, "/done")[0]
    assert done["response"]["status"] == 200
    assert "blue mug" in done["response"]["content"]["text"]
    assert done["response"]["content"]["mimeType"] == "text/html"
    gif = entries_for(har, "/pixel.gif")[0]["response"]["content"]
    assert "text" not in gif and "binary" in gif["comment"]


def test_second_tab_is_recorded(trial: tuple[Any, dict[str, Any], Path]) -> None:
    _, har, _ = trial
    tab = entries_for(har, "/tab")[0]
    assert tab["response"]["status"] == 200 and "Second tab" in tab["response"]["content"]["text"]
    assert headers(tab["request"])["sec-fetch-dest"] == "document"


def test_a_step_that_matches_nothing_fails_clearly(
        site: SiteServer, shared: Any, task: WebTask, tmp_path: Path,
        write_script: Callable[[list[dict[str, Any]]], Path]) -> None:
    script = write_script([{"navigate": {"url": "__SHOPPING__/"}},
                           {"click": {"match": "No such link"}},
                           {"done": {"text": "never", "success": True}}])
    outcome = run_trial(TrialRequest(task=task, trial_dir=tmp_path / "t",
                                     site_urls={"shopping": site.url},
                                     agent=AgentSpec(name="scripted", script=script)),
                        browser=shared)
    assert outcome.status is TrialStatus.AGENT_ERROR
    assert outcome.agent_success is False
    assert any("No such link" in e and "step 2" in e for e in outcome.errors), outcome.errors


def test_step_limit(site: SiteServer, shared: Any, task: WebTask, tmp_path: Path,
                    write_script: Callable[[list[dict[str, Any]]], Path]) -> None:
    script = write_script([{"navigate": {"url": "__SHOPPING__/"}},
                           {"navigate": {"url": "__SHOPPING__/form"}},
                           {"navigate": {"url": "__SHOPPING__/landing"}},
                           {"done": {"text": "late", "success": True}}])
    outcome = run_trial(TrialRequest(task=task, trial_dir=tmp_path / "t", max_steps=2,
                                     site_urls={"shopping": site.url},
                                     agent=AgentSpec(name="scripted", script=script)),
                        browser=shared)
    assert outcome.status is TrialStatus.STEP_LIMIT, outcome
    assert outcome.final_text != "late"
