"""The viewer tests' runs, made once per session by the real CLI (tests/view/conftest.py serves
them, bundles them and opens them in a headless Chromium, the system's, through Playwright).

- `oracle`: the bundled problems with the oracle agent (every checkpoint solved);
- `evil`: ledger_cli with a `command` agent whose code prints a planted <script> (the attempt
  fails at checkpoint 1, so its tests' output holds the script too);
- `web_a`, `web_b`: four local-suite tasks through the fake trial runner; in `web_a` the agent's
  answer, its last step and one HAR response hold the planted script, and `eval` re-scores it;
- `cf_chain`, `cf_ref`: kv_server with a `command` agent that breaks code it inherited from
  itself (tests/fixtures/counterfactual/sloppy_agent.sh), from chain and from reference starts
  (its tests compute the head-to-head of one problem by hand);
- `judged`: a copy of `oracle` whose ledger_cli (not kv_server) is judged by `metrics judge`
  against the fake LLM server, with scripted flags (one flag's explanation holds the planted
  script).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from benchwright.testing import FakeLLMServer, Script
from tests.helpers import FIXTURES, run_cli
from tests.helpers.shared_runs import bundled_oracle_run
from tests.helpers.tiers import starts

XSS = "<script>document.title='pwned'</script>"
CHROMIUM = Path("/usr/bin/chromium")
TITLE = "benchwright view"
EVIL_AGENT = f"""cat > ledger.py <<'PY'
\"\"\"{XSS}\"\"\"
import sys
print("{XSS}")
sys.exit(1)
PY
echo "{XSS} said the agent"
"""


@dataclass
class Runs:
    """The session's run folders."""

    root: Path
    oracle: Path
    evil: Path
    web_a: Path
    web_b: Path
    cf_chain: Path
    cf_ref: Path
    judged: Path
    stderr: dict[str, str] = field(default_factory=dict)


def coding_run(root: Path, name: str, *args: str) -> str:
    done = run_cli("run", "coding", "--out", str(root / name), *args)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stderr


def web_run(root: Path, name: str) -> str:
    env = {**os.environ, "BENCHWRIGHT_WEB_TRIAL_RUNNER": "fake"}
    done = run_cli("run", "web", "--suite", "local", "--task-ids", "9001-9004",
                   "--out", str(root / name), env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stderr


def plant(trial: Path) -> None:
    """What a hostile agent and page would leave: the script in the answer, the last step and a
    HAR response (page HTML with that title), then scored again by `eval`."""
    (trial / "agent_response.json").write_text(json.dumps(
        {"task_type": "RETRIEVE", "status": "SUCCESS", "retrieved_data": [XSS],
         "error_details": None}))
    (trial / "history.json").write_text(json.dumps({"steps": [{"done": XSS}]}))
    har = json.loads((trial / "network.har").read_text())
    entry = har["log"]["entries"][0]
    entry["response"]["content"] = {"size": 60, "mimeType": "text/html",
                                    "text": f"<html><head><title>{XSS}</title></head></html>"}
    entry["request"]["headers"].append({"name": "X-Planted", "value": XSS})
    (trial / "network.har").write_text(json.dumps(har))


SLOPPY = FIXTURES / "counterfactual" / "sloppy_agent.sh"
JUDGE_KEY_ENV = "VIEW_JUDGE_KEY"
JUDGE_COST = 0.01
"""Cost of one judge call, as the fake server reports it."""
# (a snapshot's first line, a rubric category) -> the flags of that request
JUDGE_FLAGS = {
    ("ledger_cli, checkpoint 1:", "commentary"): [
        ("comment_restates_code", 20, 22, "restates its line"),
        ("docstring_echoes_name", 1, 1, XSS)],
    ("ledger_cli, checkpoint 1:", "error_handling"): [
        ("catch_all_handler", 30, 31, "catches everything")],
    ("ledger_cli, checkpoint 2:", "error_handling"): [
        ("catch_all_handler", 31, 32, "still catches everything")],
}


def _judge_reply(flags: list[tuple[str, int, int, str]]) -> dict[str, Any]:
    body = {"flags": [{"criteria": c, "file_name": "ledger.py", "start": a, "end": b,
                       "confidence": 4, "explanation": why} for c, a, b, why in flags]}
    return {"text": json.dumps(body),
            "usage": {"input_tokens": 1000, "output_tokens": 100, "cost_usd": JUDGE_COST}}


def judge_run(run: Path) -> None:
    """`metrics judge` on the run, against the fake server speaking Chat Completions."""
    from benchwright.judge.rubric import load_rubric

    first = {c: items[0].name for c, items in load_rubric(None).categories().items()}
    # a request's criteria part names its category's items, the first one first
    rules = [{"match": [cp, f"## {first[category]} ("], "replies": [_judge_reply(flags)]}
             for (cp, category), flags in JUDGE_FLAGS.items()]
    rules.append({"match": [], "replies": [_judge_reply([])]})
    env = {**os.environ, JUDGE_KEY_ENV: "view-judge-key-0123456789"}
    with FakeLLMServer(Script.model_validate({"rules": rules})) as server:
        done = run_cli("metrics", "judge", str(run), "--model", "fake-judge", "--base-url",
                       f"{server.base_url}/v1", "--api-key-env", JUDGE_KEY_ENV,
                       "--retry-backoff", "0", "--problem", "ledger_cli", "--json", env=env)
    assert done.returncode == 0, done.stderr[-3000:]


def sloppy_run(root: Path, name: str, *args: str) -> str:
    from benchwright.coding.problems.examples import examples_dir

    problems = examples_dir()
    return coding_run(root, name, "--agent", "command", "--agent-command",
                   f"bash {SLOPPY} {problems}", "--agent-mount", str(SLOPPY),
                   "--agent-mount", str(problems), "--no-metrics", "--problem", "kv_server",
                   *args)


@starts("e2e", "sandbox")
def make_runs(root: Path, factory: pytest.TempPathFactory) -> Runs:
    """The session's run folders, made under `root` (a new folder) by the real CLI; `oracle` is
    a copy of the run other test modules share (tests.helpers.shared_runs: made once per test
    session)."""
    root.mkdir()
    script = root.parent / "evil.sh"
    script.write_text(EVIL_AGENT)
    made = Runs(root=root, oracle=root / "oracle", evil=root / "evil", web_a=root / "web_a",
                web_b=root / "web_b", cf_chain=root / "cf_chain", cf_ref=root / "cf_ref",
                judged=root / "judged")
    bundled_oracle_run(factory)[0].rename(made.oracle)
    made.stderr["evil"] = coding_run(root, "evil", "--agent", "command", "--agent-command",
                                  f"sh {script}", "--agent-mount", str(script),
                                  "--problem", "ledger_cli")
    made.stderr["cf_chain"] = sloppy_run(root, "cf_chain")
    made.stderr["cf_ref"] = sloppy_run(root, "cf_ref", "--start-from", "reference")
    shutil.copytree(made.oracle, made.judged, symlinks=True)
    judge_run(made.judged)
    made.stderr["web_a"] = web_run(root, "web_a")
    made.stderr["web_b"] = web_run(root, "web_b")
    plant(made.web_a / "tasks" / "9001" / "trial_1")
    rescored = run_cli("eval", str(made.web_a))
    assert rescored.returncode == 0, rescored.stderr[-3000:]
    return made


def rid(path: Path) -> str:
    from benchwright.view.catalog import run_id

    return run_id(path.resolve())


def routes(runs: Runs) -> list[str]:
    o, e, a, b = (rid(p) for p in (runs.oracle, runs.evil, runs.web_a, runs.web_b))
    return ["#/", f"#/run/{o}", f"#/run/{e}", f"#/run/{o}/p/kv_server",
            f"#/run/{o}/cp/kv_server/1/checkpoint_2", f"#/run/{e}/cp/ledger_cli/1/checkpoint_1",
            f"#/cmp/{o}/{e}", f"#/run/{a}", f"#/run/{a}/t/9001/1", f"#/run/{a}/t/9002/1",
            f"#/cmp/{a}/{b}", *start_and_judge_routes(runs)]


def start_and_judge_routes(runs: Runs) -> list[str]:
    """Pages of a reference-start run, a counterfactual head-to-head and a judged run."""
    c, r, j = (rid(p) for p in (runs.cf_chain, runs.cf_ref, runs.judged))
    return [f"#/run/{r}", f"#/run/{r}/cp/kv_server/1/checkpoint_2", f"#/cmp/{c}/{r}",
            f"#/run/{j}", f"#/run/{j}/cp/ledger_cli/1/checkpoint_2"]


# what sticks out: the page wider than the window, or a table wider than its box
_OVERFLOW = """() => {
  const out = [], doc = document.documentElement;
  if (doc.scrollWidth > window.innerWidth) out.push('page ' + doc.scrollWidth);
  document.querySelectorAll('.tablewrap').forEach((w) => {
    const id = (w.querySelector('table') || {}).id;
    if (w.scrollWidth > w.clientWidth + 1) out.push(id + ' ' + w.scrollWidth + '>' + w.clientWidth);
  });
  return out;
}"""


def cut_off(tab: Any) -> list[str]:
    """What a page cuts off: the page wider than its window, or a table wider than its box."""
    found: list[str] = tab.evaluate(_OVERFLOW)
    return found


class Page:
    """A browser tab that records every console error and uncaught exception."""

    def __init__(self, browser: Any) -> None:
        self.tab = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.errors: list[str] = []
        self.tab.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.tab.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, url: str, ready: str = "main h1") -> Any:
        """Go to `url` and wait for its page's heading (and its charts' script to settle)."""
        self.tab.goto(url)
        # a new hash is no new document: wait for the viewer to say it drew this route (with
        # selectors: the page's policy forbids the eval a JavaScript predicate would need)
        route = "#" + url.split("#", 1)[1] if "#" in url else "#/"
        self.tab.wait_for_selector(f'body[data-rendered="{route}"]', timeout=60_000)
        self.tab.wait_for_selector(ready, timeout=60_000)
        self.tab.wait_for_load_state("networkidle")
        return self.tab

    def close(self) -> None:
        self.tab.close()


def settled(page: Page, url: str) -> Any:
    """The page at `url` with every chart drawn."""
    tab = page.open(url)
    tab.wait_for_selector(".chart .placeholder", state="detached", timeout=60_000)
    return tab


def copy_screenshot(source: Path, name: str) -> None:
    """With BENCHWRIGHT_SCREENSHOTS=DIR, keep a screenshot there (the README's pictures)."""
    folder = os.environ.get("BENCHWRIGHT_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, Path(folder) / name)



@contextmanager
def serving(folder: Path) -> Iterator[str]:
    """The viewer serving the runs under `folder` on loopback (in this process): its URL."""
    from benchwright.view.server import serve_in_thread, start

    server = start([folder])
    stop = serve_in_thread(server)
    try:
        yield server.url
    finally:
        stop()


def section_shot(tab: Any, section: str, path: Path) -> None:
    """A screenshot of the page scrolled to its `section` heading (`#s-<name>`), kept under the
    same name with BENCHWRIGHT_SCREENSHOTS."""
    tab.evaluate(f"document.querySelector('#s-{section}').scrollIntoView(); scrollBy(0, -60)")
    tab.screenshot(path=str(path))
    copy_screenshot(path, path.name)
