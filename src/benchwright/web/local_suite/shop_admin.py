"""The shop's admin (site `shopping_admin`, base URL `<origin>/admin`): orders grid, order view.

Login: admin / admin1234 through the form, or the `X-M2-Admin-Auto-Login: admin:admin1234` header.
An order's status changes through the comment form on its page
(`POST /admin/sales/order/addComment/<number>`, fields `history[status]` and `history[comment]`).
"""

from __future__ import annotations

import re
from html import escape

from benchwright.web.local_suite import pages
from benchwright.web.local_suite.routing import Request, Response, Router, html_response, redirect
from benchwright.web.local_suite.sessions import SiteLogin
from benchwright.web.local_suite.shop_data import ADMIN_ACCOUNTS, STATUSES, Order, ShopStore

BASE = "/admin"
LOGIN = SiteLogin(accounts=ADMIN_ACCOUNTS, cookie="admin_session",
                  auto_login_header="x-m2-admin-auto-login", scope=BASE, form_url=f"{BASE}/login",
                  home=f"{BASE}/", after_logout=f"{BASE}/login")


class ShopAdminSite:
    """The admin app, mounted under /admin."""

    site = "shopping_admin"
    base_path = BASE

    def __init__(self, store: ShopStore) -> None:
        self.store = store
        self.router = Router()
        for method, pattern, handler in (
            ("GET", r"/admin/?", self._dashboard), ("GET", r"/admin/login/?", self._login_form),
            ("POST", r"/admin/login/?", LOGIN.log_in), ("GET", r"/admin/logout/?", LOGIN.log_out),
            ("GET", r"/admin/sales/order/?", self._grid),
            ("GET", r"/admin/sales/order/view/(\d+)/?", self._order),
            ("POST", r"/admin/sales/order/addComment/(\d+)/?", self._add_comment),
        ):
            self.router.add(method, pattern, handler)

    def handle(self, request: Request) -> Response:
        """Route the request; everything but the login form needs an admin."""
        if not request.path.startswith(LOGIN.form_url) and not LOGIN.user(request):
            return LOGIN.to_form(request)
        return self.router.dispatch(request) or self._page(
            "Page not found", pages.notice("No such page."), 404)

    @property
    def state(self) -> ShopStore:
        """The store, shared with the storefront."""
        return self.store

    def _page(self, title: str, body: str, status: int = 200) -> Response:
        nav = [("menu-dashboard", f"{BASE}/", "Dashboard"),
               ("menu-sales-orders", f"{BASE}/sales/order", "Sales > Orders"),
               ("menu-logout", f"{BASE}/logout", "Sign Out")]
        return html_response(pages.page(title, body, nav, "Magento Admin"), status)

    def _login_form(self, request: Request, match: re.Match[str]) -> Response:
        fields = (pages.hidden("next", request.query.get("next", LOGIN.home))
                  + pages.text_input("username", "login[username]", "Username")
                  + pages.text_input("login", "login[password]", "Password", kind="password"))
        error = (pages.notice("The account sign-in was incorrect.", error=True)
                 if "error" in request.query else "")
        return self._page("Sign in", error + pages.form(f"{BASE}/login", fields, "sign-in",
                                                        "Sign in"))

    def _dashboard(self, request: Request, match: re.Match[str]) -> Response:
        pending = sum(o.status == "pending" for o in self.store.orders.values())
        item = f"<li>{escape(STATUSES['pending'])} orders: {pending}</li>"
        return self._page("Dashboard", f"<ul>{item}</ul>" + pages.link(
            "go-orders", f"{BASE}/sales/order", "View all orders"))

    def _grid(self, request: Request, match: re.Match[str]) -> Response:
        wanted = request.query.get("status", "")
        orders = self.store.newest_orders(lambda o: not wanted or o.status == wanted)
        rows = [(escape(o.number), o.date, escape(o.customer),
                 pages.money(self.store.grand_total(o)),
                 STATUSES[o.status], pages.link(f"view-{o.number}",
                                                f"{BASE}/sales/order/view/{o.number}", "View"))
                for o in orders]
        choices = [("", "Any status"), *STATUSES.items()]
        filters = pages.form(f"{BASE}/sales/order", pages.select(
            "filter-status", "status", "Status", choices, wanted), "apply-filters", "Apply Filters",
            method="get")
        return self._page("Orders", filters + f"<p>{len(rows)} records found</p>" + pages.table(
            ["ID", "Purchase Date", "Bill-to Name", "Grand Total", "Status", "Action"], rows,
            "orders-grid"))

    def _order(self, request: Request, match: re.Match[str]) -> Response:
        order = self.store.orders.get(match.group(1))
        if order is None:
            return self._page("Order not found", pages.notice("This order no longer exists."), 404)
        return self._page(f"# {order.number}", self._order_body(order, request))

    def _order_body(self, order: Order, request: Request) -> str:
        items = "".join(f"<li>{line.qty} x {escape(line.product.name)}</li>"
                        for line in self.store.lines(order.items))
        history = "".join(f"<li>{escape(line)}</li>" for line in order.history)
        saved = (pages.notice("The order status has been updated.")
                 if "saved" in request.query else "")
        comment = pages.form(
            f"{BASE}/sales/order/addComment/{order.number}",
            pages.select("history-status", "history[status]", "Status", STATUSES.items(),
                         order.status) + pages.text_area("history-comment", "history[comment]",
                                                         "Comment"),
            "submit-comment", "Submit Comment")
        return (saved + f"<p>Order Date: {order.date}</p><p>Customer: {escape(order.customer)} "
                f"({escape(order.email)})</p><p>Order Status: {STATUSES[order.status]}</p>"
                f"<p>Grand Total: {pages.money(self.store.grand_total(order))}</p>"
                f"<h2>Items Ordered</h2><ul>{items}</ul><h2>Notes for this Order</h2>"
                f"<ul id=\"order-history\">{history}</ul>{comment}")

    def _add_comment(self, request: Request, match: re.Match[str]) -> Response:
        order = self.store.orders.get(match.group(1))
        status = request.form.get("history[status]", "")
        if order is None or status not in STATUSES:
            return redirect(f"{BASE}/sales/order")
        order.status = status
        note = request.form.get("history[comment]", "").strip()
        order.history.append(f"{STATUSES[status]}: {note}" if note else STATUSES[status])
        return redirect(f"{BASE}/sales/order/view/{order.number}?saved=1")
