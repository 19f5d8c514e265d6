"""Serve the whole local suite on loopback: one server per site, each on a free port.

    with serve_suite() as suite:
        suite.site_urls   # {"shopping": "http://127.0.0.1:41233", "shopping_admin": ".../admin"}
        suite.reset()     # every site back to its seed state (between trials of MUTATE tasks)

Each site gets its own port because the evaluator maps trace URLs back to sites by substring:
two sites on one origin would be ambiguous.
"""

from __future__ import annotations

import contextlib
import threading
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from urllib.parse import urlsplit

from benchwright.web.local_suite.forum import ForumSite
from benchwright.web.local_suite.routing import RESET_PATH, App, serve_app
from benchwright.web.local_suite.shop import ShopSite
from benchwright.web.local_suite.shop_admin import ShopAdminSite
from benchwright.web.local_suite.shop_data import ShopStore
from benchwright.web.local_suite.wiki import WikiSite
from benchwright.web.sites.config import Site, SiteConfig, WebEnvConfig

DEFAULT_HOST = "127.0.0.1"


def build_apps() -> list[App]:
    """Fresh instances of every site (the two shop sites share one store)."""
    store = ShopStore()
    return [ShopSite(store), ShopAdminSite(store), ForumSite(), WikiSite()]


@dataclass
class LocalSuite:
    """The running sites."""

    apps: list[App]
    servers: list[ThreadingHTTPServer]
    lock: threading.Lock
    site_urls: dict[str, str] = field(default_factory=dict)
    """Site name -> base URL (shopping_admin's ends with /admin)."""

    def reset(self) -> None:
        """Every site back to its seed state (a state shared by two sites, once)."""
        with self.lock:
            for state in dict.fromkeys(app.state for app in self.apps):
                state.reset()

    def web_config(self) -> WebEnvConfig:
        """The site URLs as a `WebEnvConfig` (for the evaluator's `environments`)."""
        return WebEnvConfig(sites={Site(name): SiteConfig(urls=[url])
                                   for name, url in self.site_urls.items()})

    def close(self) -> None:
        """Stop every server."""
        for server in self.servers:
            server.shutdown()
            server.server_close()


def start_suite(host: str = DEFAULT_HOST) -> LocalSuite:
    """Start every site, each on a free port; call `close()` when done."""
    apps = build_apps()
    lock = threading.Lock()  # the shop sites share a store; one lock keeps it consistent
    suite = LocalSuite(apps=apps, servers=[], lock=lock)
    try:
        for app in apps:
            server = serve_app(app, host, lock)
            suite.servers.append(server)
            suite.site_urls[app.site] = f"http://{host}:{server.server_address[1]}{app.base_path}"
    except OSError:
        suite.close()
        raise
    return suite


@contextlib.contextmanager
def serve_suite(host: str = DEFAULT_HOST) -> Iterator[LocalSuite]:
    """The suite, served for the duration of the block."""
    suite = start_suite(host)
    try:
        yield suite
    finally:
        suite.close()


def reset_sites(site_urls: Mapping[str, str], timeout_s: float = 10.0) -> None:
    """Reset a suite served by another process, through each server's reset endpoint."""
    for url in site_urls.values():
        parts = urlsplit(url)
        request = urllib.request.Request(f"{parts.scheme}://{parts.netloc}{RESET_PATH}",
                                         data=b"", method="POST")
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            response.read()
