"""Keep credentials out of web run directories, with the coding track's redactor.

The secrets of a web run: every secret environment variable and the one `--api-key-env` names, the
credentials inside the model's `--base-url` and the extractor's (user-info, key-like query
parameters), and the sites' passwords from the environment configuration (form credentials,
the password half of each auto-login header, credentials inside site URLs). A trial folder is
swept when the trial ends, before its journal record is written: every file (network.har,
history.json, metrics.json, agent_response.json, kept browser files), and, in HARs, the values of
credential headers (Authorization, Cookie, x-api-key ...) of requests to the model's endpoint
whatever they are. The manifest is redacted before it is written; on resume the base URLs get
their credentials back from the environment (`restored`: the mark names the variables to set).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from benchwright.errors import UserInputError
from benchwright.files.atomic import write_json_atomic
from benchwright.files.redaction import (
    MARK,
    Redactor,
    is_redacted,
    is_secret_name,
    restore,
    url_secrets,
)
from benchwright.web.sites.config import Site, WebEnvConfig
from benchwright.web.trials.models import WebManifest, WebRunConfig

CREDENTIAL_HEADERS: Final = frozenset({
    "authorization", "proxy-authorization", "cookie", "x-api-key", "api-key", "x-goog-api-key",
    "x-auth-token", "openai-organization", "openai-project"})


class RunSweeper:
    """The redactor of one web run, and where the model's endpoints are."""

    def __init__(self, config: WebRunConfig, env: WebEnvConfig,
                 site_urls: Mapping[str, Iterable[str]] | None = None) -> None:
        secrets = (key_secrets(config) | endpoint_secrets(config)
                   | site_secrets(env, site_urls or {}))
        self.redactor = Redactor.from_environ().with_secrets(secrets)
        self.model_origins = {origin(url) for url in _endpoints(config)}

    def trial(self, folder: Path) -> None:
        """Sweep a finished trial's folder."""
        for har in sorted(folder.glob("*.har")):
            redact_har_headers(har, self.model_origins)
        self.redactor.tree(folder)

    def write_manifest(self, path: Path, manifest: WebManifest) -> None:
        """Write the manifest with every secret in it redacted."""
        self.redactor.write_json(path, manifest.model_dump(mode="json"))


def restored(config: WebRunConfig) -> WebRunConfig:
    """The run's configuration with the credentials its saved URLs lost (redacted in the
    manifest) put back from the environment; an error naming the variables still missing."""
    agent, extractor = config.agent, config.extractor
    agent = agent.model_copy(update={"base_url": _restored_url(agent.base_url)})
    if extractor is not None:
        extractor = extractor.model_copy(update={"base_url": _restored_url(extractor.base_url)})
    return config.model_copy(update={"agent": agent, "extractor": extractor})


def _restored_url(url: str | None) -> str | None:
    if url is None or not is_redacted(url):
        return url
    back = restore(url)
    if is_redacted(back):
        names = sorted({n for m in MARK.findall(back) for n in m.split(",")})
        raise UserInputError(
            "the run's base URL held a credential, which the manifest does not keep",
            hint=f"set one of {', '.join(names)} to the value it held, then resume")
    return back


def key_secrets(config: WebRunConfig) -> dict[str, str]:
    """The keys in the variables `--api-key-env` names (whatever the variable is called)."""
    names = [config.agent.api_key_env]
    if config.extractor is not None:
        names.append(config.extractor.api_key_env)
    return {name: os.environ[name] for name in names if os.environ.get(name)}


def endpoint_secrets(config: WebRunConfig) -> dict[str, str]:
    """The credentials inside the model's and the extractor's base URLs."""
    found = url_secrets(config.agent.base_url or "", "BASE_URL")
    if config.extractor is not None and config.extractor.base_url != config.agent.base_url:
        found |= url_secrets(config.extractor.base_url, "EXTRACTOR_BASE_URL")
    return found


def site_secrets(env: WebEnvConfig,
                 site_urls: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """The sites' passwords: form credentials, auto-login headers, credentials in URLs."""
    found: dict[str, str] = {}
    for site in Site:
        cfg = env.site(site)
        if cfg.credentials is not None:
            found[f"{site.name}_SITE_PASSWORD"] = cfg.credentials.password
        if cfg.auto_login_header is not None:
            found[f"{site.name}_AUTO_LOGIN_PASSWORD"] = cfg.auto_login_header.value.partition(
                ":")[2]
        for index, url in enumerate([*cfg.urls, *site_urls.get(site.value, [])]):
            found |= url_secrets(url, f"{site.name}_URL{index + 1}")
    return found


def redact_har_headers(path: Path, origins: set[str]) -> bool:
    """Replace credential header values of requests to `origins` in a HAR; True if changed."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):  # the agent's browser wrote it
        return False
    changed = False
    for entry in _entries(data):
        request = entry.get("request")
        if isinstance(request, dict) and origin(str(request.get("url", ""))) in origins:
            changed |= _redact_headers(request.get("headers"))
    if changed:
        write_json_atomic(path, data)
    return changed


def origin(url: str) -> str:
    """`scheme://host:port` of a URL, without user-info (empty when it has none)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return ""
    if not parts.hostname:
        return ""
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return f"{parts.scheme}://{parts.hostname}:{port or default}"


def _endpoints(config: WebRunConfig) -> list[str]:
    urls = [config.agent.base_url or "https://api.openai.com/v1"]
    if config.extractor is not None:
        urls.append(config.extractor.base_url)
    return urls


def _entries(data: Any) -> list[dict[str, Any]]:
    log = data.get("log") if isinstance(data, dict) else None
    entries = log.get("entries") if isinstance(log, dict) else None
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def _redact_headers(headers: Any) -> bool:
    changed = False
    for header in headers if isinstance(headers, list) else []:
        if not isinstance(header, dict):
            continue
        name, value = str(header.get("name", "")), str(header.get("value", ""))
        if _is_credential(name) and value and not is_redacted(value):
            header["value"] = f"<redacted:{name.upper().replace('-', '_')}_HEADER>"
            changed = True
    return changed


def _is_credential(header: str) -> bool:
    lower = header.lower()
    return lower in CREDENTIAL_HEADERS or is_secret_name(lower.replace("-", "_"))
