"""Whether a failed environment build failed for a reason outside the submission.

A submission's requirements are its own: one that does not exist, does not build or conflicts
fails the submission's build, which grading tolerates (SCBench's rule: the code runs without
them). But a package index that refuses or does not answer, or a full cache disk, would fail any
submission's build: charged to the submission, it would score an attempt on the machine's state.

What the build printed cannot decide it: the submission's build backend writes that output. So
the harness looks for itself, after the failed build was cleaned up (its folders removed, so
nothing the build wrote counts): each index uv was given is asked for one fixed page
(`probe_indexes`), and the disks of the cache and the temporary folder are read. A full disk
is believed only when uv's output says so AND less than `LOW_DISK` is left: a submission that
claims one on a roomy disk is still charged, and one that claims it on a nearly full disk only
stops the run until there is space (then it is graded again).
"""

from __future__ import annotations

import errno
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from benchwright.errors import DiskFull

PYPI = "https://pypi.org/simple"
PROBE_PAGE = "pip/"
"""The page asked of each index: a project every index of Python packages can answer for
(404 is an answer too: the index is there, it lacks the project)."""
PROBE_TIMEOUT_S = 20.0
REFUSALS = (401, 403, 407, 429)
"""HTTP statuses that refuse the harness rather than answer about a project."""
LOW_DISK = 2**30
"""Below this on the cache's or the temporary folder's disk, a build that says its disk was full
is believed (its own files are removed by then)."""
DISK_WORDS = ("no space left on device", "os error 28", "disk quota exceeded", "os error 122")


def outside_cause(output: str, folders: list[Path]) -> str | None:
    """Why a failed build is not the submission's doing (one line), or None when nothing
    outside it is wrong. A full disk among `folders` (the cache's environments, the temporary
    folder) is raised as the `DiskFull` it is: the run stops with one line and resumes."""
    _full_disk(output, [*folders, Path(tempfile.gettempdir())])
    return probe_indexes()


def _full_disk(output: str, folders: list[Path]) -> None:
    if not any(word in output.lower() for word in DISK_WORDS):
        return
    known = [(free, folder) for folder in folders if (free := _free(folder)) is not None]
    low = [folder for free, folder in sorted(known) if free < LOW_DISK]
    if low:
        raise DiskFull(OSError(errno.ENOSPC, "No space left on device"), None, low[0])


def _free(folder: Path) -> int | None:
    for path in (folder, *folder.parents):
        try:
            info = os.statvfs(path)
        except OSError:
            continue
        return info.f_bavail * info.f_frsize
    return None


def build_indexes(environ: Mapping[str, str] | None = None) -> list[str]:
    """The indexes and find-links a build's uv reads (its own settings, as `env_build` passes
    them on): the default index (PyPI unless one is set) first; only find-links when uv is told
    to use no index (UV_NO_INDEX, UV_OFFLINE), so an offline setup is never probed online."""
    environ = os.environ if environ is None else environ
    links = [_url(item) for item in environ.get("UV_FIND_LINKS", "").split()]
    if any(_truthy(environ.get(name, "")) for name in ("UV_NO_INDEX", "UV_OFFLINE")):
        return list(dict.fromkeys(links))
    default = environ.get("UV_DEFAULT_INDEX") or environ.get("UV_INDEX_URL") or PYPI
    extra = [_url(item) for name in ("UV_INDEX", "UV_EXTRA_INDEX_URL")
             for item in environ.get(name, "").split()]
    return list(dict.fromkeys([default, *extra, *links]))


def _truthy(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on")


def _url(item: str) -> str:
    """`name=url` (UV_INDEX's named form) as its URL."""
    name, sep, rest = item.partition("=")
    return rest if sep and "://" not in name and "/" not in name else item


def probe_indexes(environ: Mapping[str, str] | None = None) -> str | None:
    """The first index that refuses or does not answer the harness, as one line; None when
    every one answers."""
    for index in build_indexes(environ):
        failure = _probe(index)
        if failure is not None:
            return f"the package index {index} {failure}"
    return None


def _probe(index: str) -> str | None:
    parts = urlsplit(index)
    if parts.scheme not in ("http", "https"):
        folder = Path(parts.path if parts.scheme == "file" else index)
        return None if folder.is_dir() and os.access(folder, os.R_OK | os.X_OK) else \
            "is not a folder benchwright can read"
    request = urllib.request.Request(f"{index.rstrip('/')}/{PROBE_PAGE}",
                                     headers={"Accept": "text/html"})
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT_S):
            return None
    except urllib.error.HTTPError as exc:
        status = exc.code
    except (OSError, ValueError) as exc:  # refused, reset, no such host, timed out
        return f"does not answer ({_reason(exc)})"
    if status in REFUSALS or status >= 500:
        return f"refused the request (HTTP {status})"
    return None


def _reason(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None) or exc
    return str(getattr(reason, "strerror", None) or reason)[:200]
