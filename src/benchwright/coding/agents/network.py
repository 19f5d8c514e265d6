"""What an agent's sandbox may reach, and running a command with exactly that.

An agent given the network never shares the host's: its sandbox keeps a private network
namespace and reaches out only through the egress proxy (`benchwright.sandbox.egress.bridge`), which
opens the agent's LLM endpoint (and the package indexes when asked) and nothing else, host
loopback services included unless one IS the configured endpoint. Under `--unsafe-no-sandbox`
there is no namespace to keep, so the command gets the host's network, as that flag says.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO

from benchwright.protocols import Runtime
from benchwright.sandbox.bwrap import CONTAINER_RUNTIMES, ExecResult, Limits, Mount
from benchwright.sandbox.egress.bridge import bridged, without_proxy_settings
from benchwright.sandbox.egress.proxy import Endpoint, endpoint_of_url, index_endpoints

# The provider each credential belongs to, for an agent with no base URL of its own.
PROVIDER_HOSTS: dict[str, tuple[Endpoint, ...]] = {
    "ANTHROPIC": (("api.anthropic.com", 443),),
    "CLAUDE": (("api.anthropic.com", 443),),
    "OPENAI": (("api.openai.com", 443),),
    "GEMINI": (("generativelanguage.googleapis.com", 443),),
}


def provider_endpoints(credentials: Iterable[str]) -> list[Endpoint]:
    """The API hosts of the providers whose credentials are set (LLM_API_KEY: any of them)."""
    found: list[Endpoint] = []
    for name in credentials:
        prefixes = [p for p in PROVIDER_HOSTS if name.startswith(p)] or list(PROVIDER_HOSTS)
        found += [e for p in prefixes for e in PROVIDER_HOSTS[p]]
    return list(dict.fromkeys(found))


def agent_allowlist(urls: Iterable[str | None], fallback: Iterable[Endpoint] = (),
                    package_indexes: bool = False) -> list[Endpoint]:
    """The endpoints of `urls` (the configured LLM endpoint), else `fallback`; plus the package
    indexes when asked."""
    endpoints = [e for e in (endpoint_of_url(u) for u in urls if u) if e is not None]
    indexes = index_endpoints() if package_indexes else []
    return list(dict.fromkeys([*(endpoints or fallback), *indexes]))


def run_with_egress(
    runtime: Runtime,
    argv: Sequence[str],
    *,
    allow: Sequence[Endpoint],
    python: Path,
    cwd: Path,
    env: Mapping[str, str],
    mounts: Sequence[Mount],
    limits: Limits,
    stdin: bytes | None = None,
    stdout: IO[bytes] | int | None = None,
    stderr: IO[bytes] | int | None = None,
) -> ExecResult:
    """Run `argv` in the sandbox with only `allow` reachable (`python` runs the forwarder)."""
    if runtime.name not in ("bwrap", *CONTAINER_RUNTIMES):  # no namespace of its own to keep
        return runtime.run(argv, cwd=cwd, env=env, mounts=mounts, limits=limits, network=True,
                           stdin=stdin, stdout=stdout, stderr=stderr)
    with bridged(allow, python) as bridge:
        result = runtime.run(bridge.wrap(argv), cwd=cwd,
                             env=without_proxy_settings(dict(env)) | bridge.env(),
                             mounts=[*mounts, *bridge.mounts()], limits=limits, network=False,
                             stdin=stdin, stdout=stdout, stderr=stderr)
    return result.model_copy(update={"argv": list(argv)})
