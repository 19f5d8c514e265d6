"""The viewer's server as an attacker would use it: paths that climb out, encoded or not, are
404; every method but GET and HEAD is 405; a foreign Host is refused; pages carry a strict
Content-Security-Policy; only the runs it was given are served."""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit

import pytest

from tests.helpers.view_runs import Runs, rid

CLIMBS = ["/../../etc/passwd", "/..%2f..%2fetc%2fpasswd", "/%2e%2e/%2e%2e/etc/passwd",
          "/static/../../../etc/passwd", "/static/..%2f..%2f..%2fetc%2fpasswd",
          "/static/%2e%2e%2fapp.js", "/data/../../etc/passwd.js", "/data/..%2f..%2fetc%2fpasswd.js",
          "/data/run/..%2f..%2f..%2fetc%2fpasswd.js", "/data/run/x/cp/../../../etc/passwd.js",
          "//etc/passwd", "/static//etc/passwd", "/data/%2Fetc%2Fpasswd.js", "/etc/passwd",
          "/index.html/../../etc/passwd", "/data/runs.js/../../manifest.json"]


def request(base: str, method: str, path: str,
            headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    """A raw request: the path goes out exactly as written (no client-side normalising)."""
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    conn.putrequest(method, path, skip_host=headers is not None and "Host" in headers)
    for name, value in (headers or {}).items():
        conn.putheader(name, value)
    conn.endheaders()
    response = conn.getresponse()
    response.read()
    conn.close()
    return response


@pytest.mark.parametrize("path", CLIMBS)
def test_no_path_leaves_the_viewer(viewer: str, path: str) -> None:
    assert request(viewer, "GET", path).status == 404


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_only_get(viewer: str, method: str) -> None:
    response = request(viewer, method, "/")
    assert response.status == 405
    assert response.getheader("Allow") == "GET, HEAD"


def test_pages_carry_a_strict_policy(viewer: str) -> None:
    for path in ("/", "/data/runs.js", "/static/app.js"):
        response = request(viewer, "GET", path)
        assert response.status == 200, path
        policy = response.getheader("Content-Security-Policy") or ""
        assert "script-src 'self'" in policy and "default-src 'none'" in policy
        assert "unsafe-eval" not in policy and "script-src 'self' 'unsafe-inline'" not in policy
        assert response.getheader("X-Content-Type-Options") == "nosniff"


def test_a_foreign_host_is_refused(viewer: str) -> None:
    # DNS rebinding: a page of another site, resolved to 127.0.0.1, must not read the runs
    assert request(viewer, "GET", "/data/runs.js", {"Host": "evil.example:80"}).status == 403


def test_only_the_runs_given(viewer: str, runs: Runs) -> None:
    assert request(viewer, "GET", f"/data/run/{rid(runs.oracle)}.js").status == 200
    assert request(viewer, "GET", "/data/run/000000000000.js").status == 404
    assert request(viewer, "GET", f"/data/run/{rid(runs.oracle)}/cp/kv_server/9/x.js"
                   ).status == 404
