"""Cookies for trials: the JSON file `web auth capture` writes, and injection over CDP.

Cookies are set browser-wide with `Storage.setCookies` before the first navigation, so the very
first request already carries them. The file holds CDP cookie objects (what
`Storage.getCookies` returns); a bare list or a Playwright `storage_state` file is read too.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from benchwright.errors import UserInputError
from benchwright.fileio import write_text_atomic
from benchwright.untrusted_files import read_untrusted_json
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
    if not isinstance(cookies, list) or not all(isinstance(c, dict) and "name" in c
                                                for c in cookies):
        raise UserInputError("no list of cookies found", path=path,
                             hint="write it with `benchwright web auth capture`")
    return cookies


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
