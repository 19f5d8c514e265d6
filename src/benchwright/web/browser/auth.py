"""Logging in: through the site's login form (cookie capture, live login) or auto-login headers.

`capture_cookies` logs into a site with the credentials of the web config and returns the
browser's cookies for it; `benchwright web auth capture` saves them and trials inject them before
the first navigation. When no cookies were captured, a trial can log in live (`LiveLogin`) before
its recorder starts, so the login never shows up in the task's HAR. Sites whose image accepts an
auto-login header (`use_header_login: true` in the config) get that header on every request.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from benchwright.errors import InfrastructureError, UserInputError
from benchwright.web.browser.cdp import CdpConnection
from benchwright.web.browser.cookies import browser_cookies
from benchwright.web.browser.trial_models import LiveLogin
from benchwright.web.sites.config import Site, WebEnvConfig

LOGIN_PATHS: dict[Site, str] = {
    Site.SHOPPING: "/customer/account/login/",
    Site.SHOPPING_ADMIN: "",
    Site.REDDIT: "/login",
    Site.GITLAB: "/users/sign_in",
}
"""Where each WebArena site shows its login form, relative to its base URL."""

FILL_AND_SUBMIT = """
(function (user, pass) {
  const visible = (e) => e.offsetParent !== null;
  const pws = [...document.querySelectorAll('input[type=password]')];
  const pw = pws.find(visible) || pws[0];
  if (!pw) return 'no password field on the page';
  const form = pw.form;
  const fields = [...(form ? form.elements : document.querySelectorAll('input'))]
    .filter((e) => e.tagName === 'INPUT' && ['text', 'email'].includes(e.type));
  const before = fields.filter((e) => e.compareDocumentPosition(pw) & 4);
  const name = before.filter(visible).pop() || before.pop() || fields[0];
  if (!name) return 'no user name field next to the password field';
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  for (const [el, v] of [[name, user], [pw, pass]]) {
    setter.call(el, v);
    el.dispatchEvent(new Event('input', {bubbles: true}));
    el.dispatchEvent(new Event('change', {bubbles: true}));
  }
  if (!form) return 'the password field is not in a form';
  const button = [...form.elements].find((e) => e.type === 'submit');
  if (form.requestSubmit) form.requestSubmit(button || undefined); else form.submit();
  return 'ok';
})
"""


def login_url(config: WebEnvConfig, site: Site, path: str | None = None) -> str:
    """The site's login page: its base URL plus `path` (default: the site's usual path)."""
    base = config.site(site).url
    if base is None:
        raise UserInputError(f"site {site} has no URL", hint="add it to --config ENV.yaml or set "
                             f"BENCHWRIGHT_WEB_{site.name}_URL")
    suffix = LOGIN_PATHS.get(site, "/login") if path is None else path
    return base + suffix


def live_login(config: WebEnvConfig, site: Site, path: str | None = None) -> LiveLogin:
    """The form login for a site, with the credentials of the web config."""
    credentials = config.site(site).credentials
    if credentials is None:
        raise UserInputError(f"site {site} has no credentials in the web config",
                             hint=f"add sites.{site}.credentials: {{username, password}}")
    return LiveLogin(login_url=login_url(config, site, path), username=credentials.username,
                     password=credentials.password)


def auto_login_headers(config: WebEnvConfig, sites: Iterable[Site]) -> dict[str, str]:
    """The auto-login headers of the sites configured with `use_header_login: true`."""
    headers: dict[str, str] = {}
    for site in sites:
        cfg = config.site(site)
        if cfg.use_header_login and cfg.auto_login_header is not None:
            headers[cfg.auto_login_header.name] = cfg.auto_login_header.value
    return headers


async def login_with_form(connection: CdpConnection, login: LiveLogin,
                          timeout_s: float = 30.0) -> str:
    """Fill and submit the login form in a new tab; the URL it ends on. The tab is closed."""
    created = await connection.send("Target.createTarget", {"url": "about:blank"})
    target = created["targetId"]
    try:
        session = (await connection.send("Target.attachToTarget",
                                         {"targetId": target, "flatten": True}))["sessionId"]
        await _load(connection, session, login.login_url, timeout_s)
        await _submit(connection, session, login, timeout_s)
        info = await connection.send("Target.getTargetInfo", {"targetId": target})
        final = str(info["targetInfo"]["url"])
    finally:
        await connection.send("Target.closeTarget", {"targetId": target})
    if _same_page(final, login.login_url):
        raise InfrastructureError(f"login at {login.login_url} failed: still on the login page",
                                  hint="check the credentials in the web config")
    return final


async def _load(connection: CdpConnection, session: str, url: str, timeout_s: float) -> None:
    loaded = _load_event(connection, session)
    await connection.send("Page.enable", session_id=session)
    await connection.send("Page.navigate", {"url": url}, session_id=session)
    await _wait(loaded, timeout_s, f"{url} did not load")


async def _submit(connection: CdpConnection, session: str, login: LiveLogin,
                  timeout_s: float) -> None:
    loaded = _load_event(connection, session)
    expression = f"{FILL_AND_SUBMIT}({json.dumps(login.username)}, {json.dumps(login.password)})"
    result = await connection.send("Runtime.evaluate", {"expression": expression,
                                                        "returnByValue": True},
                                   session_id=session)
    verdict = result.get("result", {}).get("value")
    if verdict != "ok":
        raise InfrastructureError(f"cannot log in at {login.login_url}: {verdict}")
    await _wait(loaded, timeout_s, f"the login form at {login.login_url} led nowhere")


def _load_event(connection: CdpConnection, session: str) -> asyncio.Event:
    event = asyncio.Event()

    def on_load(_params: dict[str, Any], source: str | None) -> None:
        if source == session:
            event.set()

    connection.on("Page.loadEventFired", on_load)
    return event


async def _wait(event: asyncio.Event, timeout_s: float, message: str) -> None:
    try:
        await asyncio.wait_for(event.wait(), timeout_s)
    except TimeoutError:
        raise InfrastructureError(f"{message} within {timeout_s:.0f} s") from None


def _same_page(a: str, b: str) -> bool:
    pa, pb = urlsplit(a), urlsplit(b)
    return (pa.netloc, pa.path.rstrip("/")) == (pb.netloc, pb.path.rstrip("/"))


def cookies_for(cookies: list[dict[str, Any]], url: str) -> list[dict[str, Any]]:
    """The cookies a request to `url` could carry (by domain)."""
    host = urlsplit(url).hostname or ""
    return [c for c in cookies if host == c.get("domain", "").lstrip(".")
            or host.endswith("." + c.get("domain", "").lstrip("."))]


async def capture_cookies(connection: CdpConnection, login: LiveLogin) -> list[dict[str, Any]]:
    """Log in through the form and return the site's cookies."""
    await connection.send("Storage.clearCookies")
    await login_with_form(connection, login)
    return cookies_for(await browser_cookies(connection), login.login_url)
