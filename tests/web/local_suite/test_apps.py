"""The local sites over real HTTP: pages, login and cookies, PDF invoices, state and reset."""

from __future__ import annotations

import http.cookiejar
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from benchwright.web.local_suite import LocalSuite, reset_sites
from benchwright.web.local_suite.invoice_pdf import text_pdf
from benchwright.web.local_suite.shop_data import ShopStore


def _opener() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))


def _get(opener: urllib.request.OpenerDirector, url: str,
         headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
    """Status, final URL and body (redirects followed)."""
    try:
        with opener.open(urllib.request.Request(url, headers=headers or {}), timeout=10) as r:
            return r.status, r.geturl(), r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, url, exc.read()


def _post(opener: urllib.request.OpenerDirector, url: str, form: dict[str, str]) -> tuple[int, str]:
    data = urllib.parse.urlencode(form).encode()
    with opener.open(urllib.request.Request(url, data=data), timeout=10) as response:
        return response.status, response.geturl()


def _login_shop(opener: urllib.request.OpenerDirector, base: str, password: str) -> str:
    _, url = _post(opener, f"{base}/customer/account/loginPost",
                   {"login[username]": "emma.lopez@gmail.com", "login[password]": password,
                    "next": "/sales/order/history"})
    return url


def test_every_site_serves_html_with_ids(suite: LocalSuite) -> None:
    assert set(suite.site_urls) == {"shopping", "shopping_admin", "reddit", "wikipedia"}
    assert suite.site_urls["shopping_admin"].endswith("/admin")
    for url in suite.site_urls.values():
        status, _, body = _get(_opener(), url)
        assert status == 200 and b"<!DOCTYPE html>" in body and b" id=\"" in body
    assert _get(_opener(), suite.site_urls["wikipedia"] + "/wiki/Nowhere")[0] == 404


def test_shop_login_sets_a_session_cookie(suite: LocalSuite) -> None:
    base, opener = suite.site_urls["shopping"], _opener()
    status, url, _ = _get(opener, f"{base}/sales/order/history")
    assert status == 200 and "/customer/account/login" in url  # not logged in yet
    assert "error=1" in _login_shop(opener, base, "wrong")
    assert _login_shop(opener, base, "Password.123").endswith("/sales/order/history")
    _, _, body = _get(opener, f"{base}/sales/order/history")
    assert b"#000000124" in body and b"#000000103" not in body  # only Emma's orders


def test_auto_login_header_and_forged_cookie(suite: LocalSuite) -> None:
    base = suite.site_urls["shopping"]
    header = {"X-M2-Customer-Auto-Login": "emma.lopez@gmail.com:Password.123"}
    assert _get(_opener(), f"{base}/customer/account", header)[1].endswith("/customer/account")
    forged = {"Cookie": "shop_session=emma.lopez%40gmail.com%7Cdeadbeef"}
    assert "/login" in _get(_opener(), f"{base}/customer/account", forged)[1]
    admin = suite.site_urls["shopping_admin"]
    ok = _get(_opener(), f"{admin}/sales/order", {"X-M2-Admin-Auto-Login": "admin:admin1234"})
    assert ok[1].endswith("/admin/sales/order") and b"records found" in ok[2]


def test_invoice_is_a_valid_pdf(suite: LocalSuite) -> None:
    base, opener = suite.site_urls["shopping"], _opener()
    _login_shop(opener, base, "Password.123")
    status, _, pdf = _get(opener, f"{base}/sales/order/invoice/000000118.pdf")
    assert status == 200 and pdf.startswith(b"%PDF-1.4") and pdf.rstrip().endswith(b"%%EOF")
    assert b"(Invoice number: INV-2024-00457)" in pdf
    assert _get(opener, f"{base}/sales/order/invoice/000000124.pdf")[0] == 404  # no invoice yet
    assert _get(opener, f"{base}/sales/order/invoice/000000103.pdf")[0] == 404  # not hers


def test_pdf_cross_reference_offsets_point_at_objects() -> None:
    pdf = text_pdf(["a (tricky) line \\ here"], "t")
    start = int(pdf.rsplit(b"startxref\n", 1)[1].split(b"\n")[0])
    assert pdf[start:].startswith(b"xref\n")
    offsets = re.findall(rb"(\d{10}) 00000 n ", pdf)
    for number, offset in enumerate(offsets, start=1):
        assert pdf[int(offset):].startswith(b"%d 0 obj" % number)
    assert b"(a \\(tricky\\) line \\\\ here)" in pdf


def test_admin_cancel_shows_to_the_customer_and_reset_restores(suite: LocalSuite) -> None:
    admin, shop = suite.site_urls["shopping_admin"], suite.site_urls["shopping"]
    staff = _opener()
    _post(staff, f"{admin}/login", {"login[username]": "admin", "login[password]": "admin1234"})
    _post(staff, f"{admin}/sales/order/addComment/000000124",
          {"history[status]": "canceled", "history[comment]": "test"})
    customer = _opener()
    _login_shop(customer, shop, "Password.123")
    page = _get(customer, f"{shop}/sales/order/view/000000124")[2]
    assert b"Status: Canceled" in page
    suite.reset()
    assert b"Status: Processing" in _get(customer, f"{shop}/sales/order/view/000000124")[2]


def test_forum_post_and_reset_endpoint(suite: LocalSuite) -> None:
    base, opener = suite.site_urls["reddit"], _opener()
    _, url = _post(opener, f"{base}/submit", {"submission[forum]": "books",
                                              "submission[title]": "Hello there",
                                              "submission[body]": "Body"})
    assert url.endswith("/f/books/10/hello-there")
    assert b"Hello there" in _get(opener, f"{base}/f/books")[2]
    reset_sites(suite.site_urls)
    assert b"Hello there" not in _get(opener, f"{base}/f/books")[2]


def test_cart_add_then_reset(suite: LocalSuite) -> None:
    base, opener = suite.site_urls["shopping"], _opener()
    _, url = _post(opener, f"{base}/checkout/cart/add", {"product": "7", "qty": "2"})
    assert url.endswith("/checkout/cart")
    assert b"Bamboo Cutting Board, Large" in _get(opener, url)[2]
    suite.reset()
    assert b"no items" in _get(opener, url)[2]


def test_suite_reset_resets_the_shared_shop_store_once(suite: LocalSuite,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[ShopStore] = []
    monkeypatch.setattr(ShopStore, "reset", lambda store: calls.append(store))
    suite.reset()
    assert len(calls) == 1


def test_served_from_its_own_process(tmp_path: Path) -> None:
    port_file = tmp_path / "suite.json"
    proc = subprocess.Popen([sys.executable, "-m", "benchwright.web.local_suite",
                             "--port-file", str(port_file)])
    try:
        for _ in range(200):
            if port_file.exists():
                break
            time.sleep(0.05)
        info = json.loads(port_file.read_text())
        assert info["schema"] == "benchwright.local-suite/1" and info["pid"] == proc.pid
        assert _get(_opener(), info["site_urls"]["wikipedia"] + "/wiki/Vell_River")[0] == 200
        reset_sites(info["site_urls"])
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


@pytest.mark.parametrize("path", ["/f/books/1/x", "/f/nope", "/user/rosie_g"])
def test_forum_pages(suite: LocalSuite, path: str) -> None:
    status, _, _ = _get(_opener(), suite.site_urls["reddit"] + path)
    assert status == (404 if path == "/f/nope" else 200)
