"""Harness overhead per browser trial, and our HAR recorder against browser-use's stock one.

1. Overhead: every task of the local suite, served on loopback, run once with its reference script
   through `run_trial` on one SharedBrowser (as a site worker does). The scripted model has no think
   time, so a trial's duration minus its model time is all harness: browser reset, cookie and
   recorder set-up, browser-use's session and per-step page reading, the actions, the HAR, the
   history and the clean-up. Split three ways: benchwright's own part (`TrialOutcome.harness_s`),
   printed per trial against the target (<= 0.1 s, benchwright's share only), beside browser-use
   executing the actions (its `Tools.act`, timed from outside by this script) and the rest of
   browser-use (session and agent set-up, page reads, step bookkeeping).
2. Recorder: the same navigations through a browser-use session with (a) no recording,
   (b) browser-use's own HAR recording (`BrowserProfile(record_har_path=...)`), (c) our CDP
   recorder attached beside the session; per-navigation cost = (time - no recording) / navigations,
   and the ratio stock / ours. Entries written by each are printed too. Then the same navigations
   through a minimal recording HTTP proxy (Chromium `--proxy-server`), the alternative design.

Usage: python bench/web_trial_overhead.py [--navigations N] [--no-recorders]
(needs /usr/bin/chromium and `pip install 'benchwright[web]'`; about two minutes on two cores)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from perf_row import print_row

from benchwright.web.browser.imports import browser_use_module
from benchwright.web.browser.launch import BrowserSettings
from benchwright.web.browser.recorder import NetworkRecorder
from benchwright.web.browser.shared_browser import SharedBrowser
from benchwright.web.browser.trial import AgentSpec, TrialRequest, TrialStatus, run_trial
from benchwright.web.local_suite import load_local_dataset, script_path, serve_suite

TARGET_S = 0.1
"""benchwright's own share of a trial (browser-use's part is not ours to cut)."""
CLICK_DOWNLOAD_WAIT_S = 0.5
"""browser-use 0.13's `_execute_click_with_download_detection(download_start_timeout=0.5)`."""
FINISHED = (TrialStatus.COMPLETED, TrialStatus.AGENT_ERROR)


@dataclass
class Split:
    """One trial's harness seconds, split by who spends them."""

    total: float
    ours: float
    actions: float
    clicks: int
    steps: int

    @property
    def browser_use_rest(self) -> float:
        """browser-use's session and agent set-up, page reads and step bookkeeping."""
        return self.total - self.ours - self.actions


class ActionTimer:
    """Seconds browser-use spends executing actions (`Tools.act`), measured from outside.

    A measuring wrapper installed by this script only: trials run browser-use unmodified.
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        tools = browser_use_module("browser_use.tools.service").Tools
        act = tools.act

        async def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await act(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started

        tools.act = timed

    def take(self) -> float:
        """Seconds since the last call."""
        seconds, self.seconds = self.seconds, 0.0
        return seconds


def overhead(site_urls: dict[str, str], reset: Callable[[], None], work: Path) -> list[Split]:
    """Harness seconds of each task's trial (duration minus model time), split."""
    dataset = load_local_dataset()
    timer, rows = ActionTimer(), []
    with SharedBrowser(site_urls=list(site_urls.values())) as browser:
        started = time.perf_counter()
        _trial(dataset.tasks[min(dataset.tasks)], work / "warm-up", site_urls, browser)
        print(f"  warm-up trial (Chromium launch, browser-use import; once per site worker, "
              f"not counted): {time.perf_counter() - started:.2f} s")
        for task_id in sorted(dataset.tasks):
            reset()
            timer.take()
            outcome, history = _trial(dataset.tasks[task_id], work / str(task_id), site_urls,
                                      browser)
            row = Split(total=outcome.duration_s - outcome.model_time_s, ours=outcome.harness_s,
                        actions=timer.take(), clicks=_clicks(history), steps=outcome.steps)
            rows.append(row)
            print(f"  task {task_id}: {row.total:5.2f} s  ({row.steps} steps, {row.clicks} "
                  f"clicks; benchwright {row.ours:4.2f} s, browser-use's actions "
                  f"{row.actions:4.2f} s, browser-use's rest {row.browser_use_rest:4.2f} s)")
    return rows


def _trial(task: Any, trial_dir: Path, site_urls: dict[str, str],
           browser: SharedBrowser) -> tuple[Any, list[dict[str, Any]]]:
    request = TrialRequest(task=task, trial_dir=trial_dir, site_urls=site_urls,
                           agent=AgentSpec(name="scripted", script=script_path(task.task_id)))
    outcome = run_trial(request, browser=browser)
    # the unachievable task ends with the agent's own failure report
    assert outcome.status in FINISHED and not outcome.errors, (task.task_id, outcome)
    history = json.loads((trial_dir / "history.json").read_text())["history"]
    return outcome, history


def print_split(rows: list[Split]) -> str:
    """The mean split per task, and the verdict against the target; returns the row's figure."""
    mean = statistics.mean(row.total for row in rows)
    ours = statistics.mean(row.ours for row in rows)
    actions = statistics.mean(row.actions for row in rows)
    clicks = statistics.mean(row.clicks for row in rows)
    steps = statistics.mean(row.steps for row in rows)
    verdict = "meets" if ours <= TARGET_S else "misses"
    print(f"benchwright's share: {ours:.3f} s/trial (target <= {TARGET_S} s: {verdict}; "
          f"{ours / TARGET_S:.2f}x the target), of {mean:.2f} s/trial harness time in all; "
          f"{steps:.1f} steps and {clicks:.1f} clicks/trial")
    print(f"  benchwright (browser reset, cookies, recorder, HAR, history, clean-up): "
          f"{ours:.3f} s/trial, max {max(row.ours for row in rows):.3f} s")
    print(f"  browser-use's share: {mean - ours:.2f} s/trial, of which executing the actions "
          f"{actions:.2f} s (its fixed {CLICK_DOWNLOAD_WAIT_S} s wait after each click for a "
          f"download to start: {clicks * CLICK_DOWNLOAD_WAIT_S:.2f} s), and session and agent "
          f"set-up, page reads and step bookkeeping {mean - ours - actions:.2f} s")
    return f"benchwright's share {ours:.3f} s a trial, of {mean:.2f} s harness time in all"


def _clicks(history: list[dict[str, Any]]) -> int:
    return sum("click" in action for step in history
               for action in (step.get("model_output") or {}).get("action", []))


async def navigate_all(browser: SharedBrowser, urls: list[str], profile_extra: dict[str, Any],
                       before: Callable[[], Awaitable[Any]] | None = None) -> tuple[float, Any]:
    """Seconds for the navigations in a fresh browser-use session on the shared browser."""
    await browser.reset()
    attached = await before() if before else None
    bu = browser_use_module()
    profile = bu.BrowserProfile(cdp_url=browser.running().http_url,
                                enable_default_extensions=False, **profile_extra)
    session = bu.BrowserSession(browser_profile=profile)
    await session.start()
    started = time.perf_counter()
    for url in urls:
        await session.navigate_to(url)
    elapsed = time.perf_counter() - started
    await session.stop()
    return elapsed, attached


async def recorders(urls: list[str], work: Path) -> str:
    """Per-navigation cost of browser-use's HAR recording and of ours."""
    with SharedBrowser(site_urls=urls) as browser:
        await navigate_all(browser, urls[:1], {})  # warm-up: first connection, page cache
        plain, _ = await navigate_all(browser, urls, {})
        stock_har = work / "stock.har"
        stock, _ = await navigate_all(browser, urls, {"record_har_path": str(stock_har)})
        ours_har = work / "ours.har"
        ours, recorder = await navigate_all(
            browser, urls, {}, lambda: NetworkRecorder.start(browser.running().ws_url, ours_har))
        await recorder.stop()
    n = len(urls)
    stock_cost, ours_cost = (stock - plain) / n, (ours - plain) / n
    print(f"navigation without recording: {plain / n:.3f} s")
    print(f"browser-use HAR recorder:     +{stock_cost:.3f} s/navigation "
          f"({_entries(stock_har)} entries; it keeps https only)")
    print(f"our CDP recorder:             {ours_cost:+.3f} s/navigation "
          f"({_entries(ours_har)} entries)")
    print(f"ratio stock / ours (total navigation time): {stock / ours:.1f}x")
    await proxy_cost(urls, plain)
    return f"our HAR recorder {ours_cost:+.3f} s a navigation, browser-use's {stock_cost:+.3f} s"


async def proxy_cost(urls: list[str], plain_s: float) -> None:
    """The same navigations through a minimal recording HTTP proxy (Chromium --proxy-server)."""
    seen: list[dict[str, Any]] = []
    server = await asyncio.start_server(lambda r, w: _relay(r, w, seen), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    settings = BrowserSettings(extra_args=[f"--proxy-server=http://127.0.0.1:{port}",
                                           "--proxy-bypass-list=<-loopback>"])
    with SharedBrowser(settings=settings, site_urls=urls) as browser:
        await navigate_all(browser, urls[:1], {})
        seen.clear()
        proxied, _ = await navigate_all(browser, urls, {})
    server.close()
    n = len(urls)
    with_fetch = sum(any(k.startswith("sec-fetch-") for k in e["headers"]) for e in seen)
    tunnels = sum(e["method"] == "CONNECT" for e in seen)
    print(f"recording proxy (http only):  {(proxied - plain_s) / n:+.3f} s/navigation "
          f"({len(seen) - tunnels} requests read, {with_fetch} with sec-fetch-*; "
          f"{tunnels} https tunnels it cannot read)")


async def _relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 seen: list[dict[str, Any]]) -> None:
    """One request: forward it upstream (connection: close), copy the answer back, record it."""
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
        writer.close()  # Chromium's idle preconnected sockets
        return
    head = raw.decode("latin-1").split("\r\n")
    method, url, _ = head[0].split(" ", 2)
    headers = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in head[1:] if h)}
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    parts = urlsplit(url)
    if method == "CONNECT" or not parts.hostname:
        seen.append({"method": method, "url": url, "headers": {}, "post": ""})
        writer.close()  # https: a tunnel, unreadable without a man-in-the-middle CA
        return
    try:
        up_reader, up_writer = await asyncio.open_connection(parts.hostname, parts.port or 80)
    except OSError:  # a host off the machine: offline, as in a trial
        writer.write(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")
        writer.close()
        return
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    kept = "".join(f"{k}: {v}\r\n" for k, v in headers.items()
                   if k not in ("proxy-connection", "connection"))
    up_writer.write(f"{method} {path} HTTP/1.1\r\n{kept}connection: close\r\n\r\n".encode()
                    + body)
    answer = await up_reader.read()
    up_writer.close()
    writer.write(answer)
    await writer.drain()
    writer.close()
    seen.append({"method": method, "url": url, "headers": headers, "post": body.decode()})


def _entries(har: Path) -> int:
    try:
        return len(json.loads(har.read_text())["log"]["entries"])
    except (OSError, ValueError, KeyError):
        return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--navigations", type=int, default=4)
    parser.add_argument("--no-recorders", action="store_true",
                        help="skip part 2 (the recorders' cost per navigation)")
    args = parser.parse_args()
    with serve_suite() as served, tempfile.TemporaryDirectory() as tmp:
        urls = served.site_urls
        print(f"harness overhead per trial, {len(load_local_dataset().tasks)} local tasks:")
        figures = [print_split(overhead(urls, served.reset, Path(tmp)))]
        if not args.no_recorders:
            pages = [urls["shopping"] + "/", urls["shopping"] + "/catalogsearch/result?q=mug",
                     urls["reddit"] + "/", urls["wikipedia"] + "/"]
            figures.append(asyncio.run(recorders((pages * args.navigations)[:args.navigations],
                                                 Path(tmp))))
    print_row("web_trial_overhead.py", "harness overhead a browser trial (the local suite's "
              "reference scripts); our HAR recorder", "the trial's whole harness time; "
              "browser-use's stock recorder", "; ".join(figures),
              f"<= {TARGET_S} s a trial (benchwright's share)")


if __name__ == "__main__":
    main()
