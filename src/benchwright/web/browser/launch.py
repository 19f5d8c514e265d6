"""Chromium for trials: headless, offline, confined, its process group ours, its CDP endpoint.

Every setting that keeps Chromium and browser-use off the internet lives here: the Chromium flags
(no background networking, no component updates, no QUIC, a host resolver that resolves only the
sites' hosts) and the environment variables browser-use reads (telemetry, cloud sync, version
check, extension downloads, hints). See docs/web.md, "Browser trials".
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import time
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from benchwright.errors import InfrastructureError, PrerequisiteError
from benchwright.web.browser import confinement

OFFLINE_ENV: dict[str, str] = {
    "ANONYMIZED_TELEMETRY": "false",
    "BROWSER_USE_CLOUD_SYNC": "false",
    "BROWSER_USE_VERSION_CHECK": "false",
    "BROWSER_USE_DISABLE_EXTENSIONS": "1",
    "BROWSER_USE_CLOUD_HINTS": "false",
    "BROWSER_USE_SETUP_LOGGING": "false",
    "BROWSER_USE_CALCULATE_COST": "false",
}
"""Environment variables that stop browser-use from reaching out (set before it is imported)."""

OFFLINE_FLAGS: tuple[str, ...] = (
    "--disable-gpu", "--disable-quic", "--no-first-run", "--no-default-browser-check",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-domain-reliability", "--disable-client-side-phishing-detection",
    "--disable-breakpad", "--metrics-recording-only", "--disable-features=Translate,"
    "OptimizationHints,MediaRouter,DialMediaRouteProvider,InterestFeedContentSuggestions,"
    # the omnibox popup is a chrome:// page the policy refuses; refused, it became a tab
    "WebUIOmniboxPopup,WebUIOmniboxAimPopup",
    "--password-store=basic", "--use-mock-keychain", "--mute-audio",
)
LOCAL_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "[::1]")
PR_SET_PDEATHSIG = 1


class BrowserSettings(BaseModel):
    """How trials launch and drive Chromium."""

    model_config = ConfigDict(extra="forbid")

    executable: Path = Path("/usr/bin/chromium")
    """The Chromium binary (Debian: `apt-get install -y chromium`)."""
    headless: bool = True
    """Run without a window."""
    window_width: int = 1280
    """Viewport width in pixels."""
    window_height: int = 960
    """Viewport height in pixels."""
    extra_args: list[str] = Field(default_factory=list)
    """More Chromium flags, appended last."""
    resolvable_hosts: list[str] = Field(default_factory=lambda: list(LOCAL_HOSTS))
    """Host names Chromium may resolve; every other name fails at once (no DNS leaves the
    machine). The sites' hosts are added per launch."""
    launch_timeout_s: float = 20.0
    """How long to wait for Chromium's DevTools endpoint."""
    wait_between_actions: float = 0.05
    """browser-use: pause between the actions of one step (its default 0.1)."""


def set_offline_env() -> None:
    """Put the offline variables into this process's environment."""
    os.environ.update(OFFLINE_ENV)


def resolver_rule(hosts: list[str]) -> str:
    """`--host-resolver-rules` value: every name fails except these hosts."""
    excluded = "".join(f", EXCLUDE {host}" for host in dict.fromkeys(hosts))
    return f"--host-resolver-rules=MAP * ~NOTFOUND{excluded}"


def hosts_of(urls: list[str]) -> list[str]:
    """The host names of these URLs (the host resolver must let them through)."""
    return [h for h in (urlsplit(u).hostname for u in urls) if h]


def chromium_args(settings: BrowserSettings, user_data_dir: Path,
                  site_urls: list[str]) -> list[str]:
    """The full command line for a trial browser."""
    args = [str(settings.executable), "--remote-debugging-port=0",
            "--remote-debugging-address=127.0.0.1", f"--user-data-dir={user_data_dir}",
            f"--window-size={settings.window_width},{settings.window_height}",
            *OFFLINE_FLAGS, resolver_rule(settings.resolvable_hosts + hosts_of(site_urls))]
    if settings.headless:
        args.append("--headless=new")
    # no --no-sandbox: Chromium runs as an unprivileged uid in bubblewrap (confinement.py)
    return [*args, *settings.extra_args, "about:blank"]


class ChromiumProcess:
    """A running Chromium in its own process group; `ws_url` is its browser CDP endpoint."""

    def __init__(self, process: subprocess.Popen[bytes], ws_url: str, user_data_dir: Path) -> None:
        self.process = process
        self.ws_url = ws_url
        self.user_data_dir = user_data_dir

    @property
    def http_url(self) -> str:
        """`http://127.0.0.1:PORT`, what browser-use's `cdp_url` wants."""
        return "http://" + self.ws_url.removeprefix("ws://").split("/", 1)[0]

    @property
    def alive(self) -> bool:
        """True while the browser process runs."""
        return self.process.poll() is None

    def stop(self, grace_s: float = 3.0) -> None:
        """Terminate the whole process group; kill it if it lingers."""
        if self.process.poll() is None:
            _signal_group(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(grace_s)
            except subprocess.TimeoutExpired:
                _signal_group(self.process.pid, signal.SIGKILL)
                self.process.wait()
        _signal_group(self.process.pid, signal.SIGKILL)  # helpers that outlived the parent


def launch_chromium(settings: BrowserSettings, user_data_dir: Path,
                    site_urls: list[str]) -> ChromiumProcess:
    """Start Chromium and wait for its DevTools endpoint."""
    if not settings.executable.is_file():
        raise PrerequisiteError(f"Chromium not found at {settings.executable}",
                                hint="apt-get install -y chromium, or set the browser executable")
    uid = confinement.browser_uid()
    policy = confinement.prepare(user_data_dir, uid)
    port_file = user_data_dir / "DevToolsActivePort"
    port_file.unlink(missing_ok=True)
    argv = confinement.confined(chromium_args(settings, user_data_dir, site_urls),
                                user_data_dir, policy, uid)
    process = subprocess.Popen(argv,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True,
                               preexec_fn=_die_with_parent)
    try:
        ws_path = _wait_for_port_file(process, port_file, settings.launch_timeout_s)
    except BaseException:
        ChromiumProcess(process, "", user_data_dir).stop(grace_s=0.5)
        raise
    return ChromiumProcess(process, f"ws://127.0.0.1:{ws_path}", user_data_dir)


def _wait_for_port_file(process: subprocess.Popen[bytes], port_file: Path,
                        timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise InfrastructureError(f"Chromium exited at start (code {process.returncode})",
                                      hint="run it by hand with the same flags to see why")
        with contextlib.suppress(OSError):
            lines = port_file.read_text().split()
            if len(lines) >= 2:
                return f"{lines[0]}{lines[1]}"
        time.sleep(0.02)
    raise InfrastructureError(f"Chromium did not open its DevTools port within {timeout_s:.0f} s")


def _die_with_parent() -> None:
    # Chromium must not outlive a harness killed with SIGKILL (an orphaned browser per trial).
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
