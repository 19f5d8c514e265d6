"""The site image's program: the forum and an env-ctrl endpoint answering as the official one, run
in this process; and the image's files alone are enough to run it (no container needed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from benchwright.web.local_suite.image import site_files
from benchwright.web.local_suite.site_container import CtrlHandler, EnvCtrl, WebService, ready_after


def _call(url: str, method: str = "GET") -> tuple[int, Any]:
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _serve(web: WebService) -> Iterator[str]:
    handler = type("Handler", (CtrlHandler,), {"ctrl": EnvCtrl(web, "http://127.0.0.1:9999")})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        web.stop()


@pytest.fixture
def ctrl() -> Iterator[str]:
    yield from _serve(WebService(0, ready_after_s=0.0))


@pytest.fixture
def never() -> Iterator[str]:
    yield from _serve(WebService(0, ready_after_s=None))


def _services(answer: dict[str, Any]) -> dict[str, str]:
    return dict(answer["details"]["value"]["services"])


def test_env_ctrl_answers_as_the_official_one(ctrl: str) -> None:
    status, answer = _call(f"{ctrl}/status")
    assert (status, answer["success"], _services(answer)["web"]) == (200, False, "STARTING")
    assert set(answer) == {"success", "message", "details"}
    assert set(answer["details"]) == {"value", "exec_logs"}
    status, started = _call(f"{ctrl}/start?wait=1", "POST")
    assert (status, started["success"]) == (200, True)
    assert _call(f"{ctrl}/status")[1]["success"] is True
    assert _services(_call(f"{ctrl}/status")[1]) == {"web": "HEALTHY", "env-ctrl": "RUNNING"}
    status, init = _call(f"{ctrl}/init", "POST")
    assert status == 200 and "http://127.0.0.1:9999" in init["message"]
    assert _call(f"{ctrl}/stop", "POST")[0] == 200
    assert _services(_call(f"{ctrl}/status")[1])["web"] == "STOPPED"
    assert _call(f"{ctrl}/reset", "POST") == (404, {"success": False, "error": "Not found"})
    assert _call(f"{ctrl}/health") == (404, {"success": False, "error": "Not found"})


def test_a_site_that_never_starts_says_so(never: str) -> None:
    status, answer = _call(f"{never}/start?wait=1", "POST")
    assert (status, answer["success"]) == (500, False)
    assert _services(_call(f"{never}/status")[1])["web"] == "STARTING"


def test_the_delay_setting() -> None:
    assert ready_after(None) == 1.0 and ready_after("never") is None and ready_after("0") == 0.0


def test_the_image_files_alone_run_the_site(tmp_path: Path) -> None:
    """What the image copies is enough: a new import in the forum would fail here first."""
    files = site_files()
    assert files["benchwright/__init__.py"] == b""  # nothing else of benchwright comes along
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    code = ("import benchwright.web.local_suite.site_container as s, sys; "
            "assert 'pydantic' not in sys.modules; print(s.EnvCtrl.__name__)")
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "EnvCtrl"
