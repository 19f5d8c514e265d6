"""HAR 1.2 entries built from CDP exchanges (pure functions; the recorder feeds them).

Headers come from the `*ExtraInfo` events when present (what the network stack really sent,
Cookie and sec-fetch-* included), else from the renderer's view. Multi-valued headers that CDP
joins with newlines (Set-Cookie) become one HAR header each.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from benchwright.version import __version__
from benchwright.web.browser.exchange import Exchange

HAR_VERSION = "1.2"
FORM_MIME = "application/x-www-form-urlencoded"
COOKIE_ATTRIBUTES = {"path", "domain", "expires", "httponly", "secure", "samesite", "max-age"}


def har_log(entries_json: str, browser_version: str = "") -> str:
    """A complete HAR document around already-serialised entries (`e1,e2,...`)."""
    creator = f'{{"name": "benchwright", "version": "{__version__}"}}'
    browser = f'{{"name": "Chromium", "version": "{_json_safe(browser_version)}"}}'
    return (f'{{"log": {{"version": "{HAR_VERSION}", "creator": {creator}, "browser": {browser}, '
            f'"pages": [], "entries": [\n{entries_json}\n]}}}}\n')


def _json_safe(text: str) -> str:
    return "".join(ch for ch in text if ch.isalnum() or ch in " ./-_()")


def har_entry(hop: Exchange) -> dict[str, Any]:
    """The HAR entry of one hop."""
    timings = _timings(hop)
    entry: dict[str, Any] = {
        "startedDateTime": _iso(hop.started_wall),
        "time": round(sum(v for k, v in timings.items() if v > 0 and k != "ssl"), 3),
        "request": _request(hop),
        "response": _response(hop),
        "cache": {},
        "timings": timings,
        "_resourceType": hop.resource_type.lower(),
    }
    if hop.response and hop.response.get("remoteIPAddress"):
        entry["serverIPAddress"] = hop.response["remoteIPAddress"].strip("[]")
    if hop.error:
        entry["_error"] = hop.error
    return entry


def _iso(epoch_s: float) -> str:
    return datetime.fromtimestamp(epoch_s, UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")


def header_list(headers: dict[str, Any] | None) -> list[dict[str, str]]:
    """CDP headers (a dict, values joined by newlines) -> HAR name/value pairs."""
    pairs: list[dict[str, str]] = []
    for name, value in (headers or {}).items():
        pairs.extend({"name": name, "value": part} for part in str(value).split("\n"))
    return pairs


def _find(headers: list[dict[str, str]], name: str) -> str | None:
    key = name.lower()
    return next((h["value"] for h in headers if h["name"].lower() == key), None)


def _request(hop: Exchange) -> dict[str, Any]:
    req = hop.request
    sent = hop.request_extra.get("headers") if hop.request_extra else None
    headers = header_list(sent if sent else req.get("headers"))
    result: dict[str, Any] = {
        "method": req.get("method", "GET"),
        "url": req.get("url", "") + req.get("urlFragment", ""),
        "httpVersion": _http_version(hop),
        "cookies": request_cookies(_find(headers, "cookie")),
        "headers": headers,
        "queryString": query_string(req.get("url", "")),
        "headersSize": -1,
        "bodySize": len(hop.post_data.encode()) if hop.post_data is not None else 0,
    }
    if hop.post_data is not None:
        result["postData"] = post_data(hop.post_data, _find(headers, "content-type"))
    return result


def query_string(url: str) -> list[dict[str, str]]:
    """HAR `queryString`: the URL's decoded query parameters, in order."""
    return [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(url).query,
                                                          keep_blank_values=True)]


def post_data(text: str, content_type: str | None) -> dict[str, Any]:
    """HAR `postData`; form bodies also get their `params`."""
    mime = content_type or ""
    data: dict[str, Any] = {"mimeType": mime, "text": text}
    if mime.lower().startswith(FORM_MIME):
        data["params"] = [{"name": k, "value": v}
                          for k, v in parse_qsl(text, keep_blank_values=True)]
    return data


def request_cookies(header: str | None) -> list[dict[str, str]]:
    """Cookies of a `Cookie: a=1; b=2` header."""
    cookies = []
    for part in (header or "").split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name:
            cookies.append({"name": name, "value": value})
    return cookies


def response_cookies(headers: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Cookies set by every `Set-Cookie` header."""
    return [c for h in headers if h["name"].lower() == "set-cookie"
            for c in [set_cookie(h["value"])] if c]


def set_cookie(line: str) -> dict[str, Any] | None:
    """One `Set-Cookie` value as a HAR cookie (name, value and its attributes)."""
    first, *attributes = line.split(";")
    name, sep, value = first.strip().partition("=")
    if not sep or not name:
        return None
    cookie: dict[str, Any] = {"name": name, "value": value}
    for attribute in attributes:
        key, _, val = attribute.strip().partition("=")
        key = key.lower()
        if key in ("httponly", "secure"):
            cookie["httpOnly" if key == "httponly" else "secure"] = True
        elif key in COOKIE_ATTRIBUTES:
            cookie["sameSite" if key == "samesite" else key] = val
    return cookie


def _response(hop: Exchange) -> dict[str, Any]:
    resp = hop.response or {}
    raw = hop.response_extra.get("headers") if hop.response_extra else None
    headers = header_list(raw if raw else resp.get("headers"))
    status = resp.get("status", hop.response_extra.get("statusCode", 0)
                      if hop.response_extra else 0)
    return {
        "status": int(status),
        "statusText": resp.get("statusText", ""),
        "httpVersion": _http_version(hop),
        "cookies": response_cookies(headers),
        "headers": headers,
        "content": _content(hop, resp),
        "redirectURL": hop.redirect_url,
        "headersSize": -1,
        "bodySize": int(hop.encoded_length) if hop.encoded_length >= 0 else -1,
    }


def _content(hop: Exchange, resp: dict[str, Any]) -> dict[str, Any]:
    content: dict[str, Any] = {"size": int(resp.get("encodedDataLength", 0) or 0),
                               "mimeType": resp.get("mimeType", "")}
    body = hop.body
    if body.text is not None:
        content["text"] = body.text
        content["size"] = len(body.text)
        if body.base64:
            content["encoding"] = "base64"
    elif body.skipped:
        content["comment"] = body.skipped
    return content


def _http_version(hop: Exchange) -> str:
    protocol = str((hop.response or {}).get("protocol", "")).lower()
    return {"h2": "HTTP/2.0", "h3": "HTTP/3", "http/1.0": "HTTP/1.0"}.get(protocol, "HTTP/1.1")


def _timings(hop: Exchange) -> dict[str, float]:
    timing = (hop.response or {}).get("timing")
    end_ms = ((hop.finished_ts or hop.started_ts) - hop.started_ts) * 1000
    if not timing:
        return {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0,
                "wait": round(max(end_ms, 0), 3), "receive": 0}
    offset_ms = (timing["requestTime"] - hop.started_ts) * 1000

    def span(start: str, end: str) -> float:
        return round(timing[end] - timing[start], 3) if timing.get(start, -1) >= 0 else -1

    headers_end = timing.get("receiveHeadersEnd", 0)
    first = min((timing[k] for k in ("dnsStart", "connectStart", "sendStart")
                 if timing.get(k, -1) >= 0), default=0)
    return {"blocked": round(offset_ms + first, 3), "dns": span("dnsStart", "dnsEnd"),
            "connect": span("connectStart", "connectEnd"), "ssl": span("sslStart", "sslEnd"),
            "send": max(span("sendStart", "sendEnd"), 0),
            "wait": round(max(headers_end - timing.get("sendEnd", 0), 0), 3),
            "receive": round(max(end_ms - offset_ms - headers_end, 0), 3)}
