"""Cookies for trials: the JSON file `web auth capture` writes, and injection over CDP.

Cookies are set browser-wide with `Storage.setCookies` before the first navigation, so the very
first request already carries them. The file holds CDP cookie objects (what
`Storage.getCookies` returns); a bare list or a Playwright `storage_state` file is read too.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from benchwright.errors import UserInputError
from benchwright.files.atomic import write_text_atomic
from benchwright.files.untrusted import read_untrusted_json
from benchwright.web.browser.cdp import CdpConnection

COOKIES_SCHEMA = "benchwright.web-cookies/1"
COOKIE_PARAM_KEYS = ("name", "value", "url", "domain", "path", "secure", "httpOnly", "sameSite",
                     "expires")


class CookieFile(BaseModel):
    """A site's login cookies, as `benchwright web auth capture` saves them."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    schema_: str = Field(default=COOKIES_SCHEMA, alias="schema")
    """Format version."""
    site: str
    """The site they log into (`shopping` ...)."""
    url: str
    """The site's base URL at capture time."""
    captured_at: str
    """When (UTC, ISO 8601)."""
    cookies: list[dict[str, Any]]
    """CDP cookie objects."""


def save_cookies(path: Path, site: str, url: str, cookies: list[dict[str, Any]]) -> None:
    """Write a cookie file atomically."""
    data = CookieFile(site=site, url=url, cookies=cookies,
                      captured_at=datetime.now(UTC).isoformat(timespec="seconds"))
    write_text_atomic(path, data.model_dump_json(by_alias=True, indent=2) + "\n")


def load_cookies(path: Path) -> list[dict[str, Any]]:
    """The cookies in a cookie file, a bare JSON list, or a Playwright storage state."""
    data = read_untrusted_json(path, what="the cookie file", max_bytes=16 * 2**20)
    cookies = data.get("cookies") if isinstance(data, dict) else data
    if not isinstance(cookies, list) or not all(isinstance(c, dict) for c in cookies):
        raise UserInputError("no list of cookies found", path=path,
                             hint="write it with `benchwright web auth capture`")
    for index, cookie in enumerate(cookies):
        if (problem := cookie_problem(cookie)) is not None:
            raise UserInputError(f"cookie {index + 1} of {len(cookies)}: {problem}", path=path,
                                 hint="fix or drop that entry, or capture the cookies again "
                                      "with `benchwright web auth capture`")
    return cookies


def cookie_problem(cookie: dict[str, Any]) -> str | None:
    """What makes a stored cookie unusable, or None. The browser would reject (or silently
    mangle) these, and the trial would run logged out, charged to the agent."""
    name, value = cookie.get("name"), cookie.get("value")
    if not isinstance(name, str) or not name:
        return f"its name is {name!r}, not a non-empty string"
    if not isinstance(value, str):
        return f"cookie {name!r} has no value (a string)" if value is None else \
            f"cookie {name!r}: its value is {value!r}, not a string"
    if "domain" in cookie and (not isinstance(cookie["domain"], str) or not cookie["domain"]):
        return f"cookie {name!r}: its domain is {cookie['domain']!r}, not a host name"
    if "domain" not in cookie and not isinstance(cookie.get("url"), str):
        return f"cookie {name!r} has neither a domain nor a url"
    return _expiry_problem(name, cookie.get("expires"))


def _expiry_problem(name: str, expires: object) -> str | None:
    if expires is None:
        return None
    # bool is an int to Python, and NaN/inf pass float(): neither is a time.
    if isinstance(expires, bool) or not isinstance(expires, int | float) \
            or not math.isfinite(expires):
        return f"cookie {name!r}: its expiry is {expires!r}, not a number of seconds"
    return None


def cookie_param(cookie: dict[str, Any]) -> dict[str, Any]:
    """A CDP `CookieParam` from a stored cookie (session cookies lose their expiry)."""
    param = {k: cookie[k] for k in COOKIE_PARAM_KEYS if k in cookie}
    if cookie.get("session") or float(param.get("expires", 0) or 0) <= 0:
        param.pop("expires", None)
    if "sameSite" in param:
        param["sameSite"] = str(param["sameSite"]).capitalize()
    return param


async def inject_cookies(connection: CdpConnection, cookies: list[dict[str, Any]]) -> None:
    """Set the cookies browser-wide (before any navigation)."""
    if cookies:
        await connection.send("Storage.setCookies",
                              {"cookies": [cookie_param(c) for c in cookies]})


async def browser_cookies(connection: CdpConnection) -> list[dict[str, Any]]:
    """Every cookie the browser holds."""
    result = await connection.send("Storage.getCookies")
    return list(result.get("cookies", []))
