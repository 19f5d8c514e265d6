"""The storefront (site `shopping`): catalogue, search, cart, customer login, orders, PDF invoices.

URLs follow the Magento storefront the WebArena shopping site runs (`/<slug>.html`,
`/catalogsearch/result?q=`, `/checkout/cart/add`, `/customer/account/login`,
`/sales/order/history`). The customer is Emma Lopez (emma.lopez@gmail.com / Password.123); the
`X-M2-Customer-Auto-Login: email:password` header logs in as well.
"""

from __future__ import annotations

import re
from html import escape

from benchwright.web.local_suite import pages
from benchwright.web.local_suite.invoice_pdf import text_pdf
from benchwright.web.local_suite.routing import Request, Response, Router, html_response, redirect
from benchwright.web.local_suite.sessions import SiteLogin
from benchwright.web.local_suite.shop_data import (
    CATEGORIES,
    CUSTOMER_ACCOUNTS,
    CUSTOMER_NAME,
    SHIPPING,
    STATUSES,
    Order,
    Product,
    ShopStore,
)

BRAND = "One Stop Market"
LOGIN = SiteLogin(accounts=CUSTOMER_ACCOUNTS, cookie="shop_session",
                  auto_login_header="x-m2-customer-auto-login", scope="/",
                  form_url="/customer/account/login", home="/customer/account", after_logout="/",
                  fold_case=True)


class ShopSite:
    """The storefront app."""

    site = "shopping"
    base_path = ""

    def __init__(self, store: ShopStore) -> None:
        self.store = store
        self.router = Router()
        for method, pattern, handler in (
            ("GET", r"/", self._home), ("GET", r"/catalogsearch/result/?", self._search),
            ("GET", r"/category/([a-z]+)", self._category),
            ("GET", r"/([a-z0-9-]+)\.html", self._product),
            ("POST", r"/checkout/cart/add", self._cart_add),
            ("GET", r"/checkout/cart/?", self._cart),
            ("GET", r"/customer/account/login/?", self._login_form),
            ("POST", r"/customer/account/loginPost/?", LOGIN.log_in),
            ("GET", r"/customer/account/logout/?", LOGIN.log_out),
            ("GET", r"/customer/account/?", LOGIN.required(self._account)),
            ("GET", r"/sales/order/history/?", LOGIN.required(self._history)),
            ("GET", r"/sales/order/view/(\d+)/?", LOGIN.required(self._order)),
            ("GET", r"/sales/order/invoice/(\d+)\.pdf", LOGIN.required(self._invoice)),
        ):
            self.router.add(method, pattern, handler)

    def handle(self, request: Request) -> Response:
        """Route the request; unknown paths are a 404 page."""
        return self.router.dispatch(request) or self._not_found()

    @property
    def state(self) -> ShopStore:
        """The store, shared with the admin."""
        return self.store

    def _not_found(self) -> Response:
        return self._page("Page not found", pages.notice("No such page."), 404)

    def _page(self, title: str, body: str, status: int = 200) -> Response:
        nav = [("nav-home", "/", "Home"), ("nav-kitchen", "/category/kitchen", "Kitchen"),
               ("nav-mugs", "/category/mugs", "Mugs & Cups"), ("nav-tea", "/category/tea", "Tea"),
               ("nav-cart", "/checkout/cart", "Cart"), ("nav-account", "/customer/account",
                                                        "My Account")]
        search = pages.form("/catalogsearch/result", pages.text_input(
            "search-query", "q", "Search the store", placeholder="Search entire store here..."),
            "search-submit", "Search", method="get")
        return html_response(pages.page(title, search + body, nav, BRAND), status)

    def _product_list(self, products: list[Product]) -> str:
        items = "".join(f"<li>{pages.link(f'product-{p.slug}', f'/{p.slug}.html', p.name)} "
                        f"{pages.money(p.price)}</li>" for p in products)
        return f"<ul class=\"products\">{items}</ul>" if items else pages.notice(
            "Your search returned no results.")

    def _home(self, request: Request, match: re.Match[str]) -> Response:
        cats = "".join(f"<li>{pages.link(f'cat-{k}', f'/category/{k}', v)}</li>"
                       for k, v in CATEGORIES.items())
        return self._page(BRAND, f"<h2>Shop by category</h2><ul>{cats}</ul>")

    def _search(self, request: Request, match: re.Match[str]) -> Response:
        query = request.query.get("q", "")
        found = self.store.search(query)
        return self._page(f"Search results for: '{query}'",
                          f"<p>{len(found)} items</p>" + self._product_list(found))

    def _category(self, request: Request, match: re.Match[str]) -> Response:
        key = match.group(1)
        if key not in CATEGORIES:
            return self._not_found()
        products = [p for p in self.store.products.values() if p.category == key]
        return self._page(CATEGORIES[key], self._product_list(products))

    def _product(self, request: Request, match: re.Match[str]) -> Response:
        product = self.store.by_slug.get(match.group(1))
        if product is None:
            return self._not_found()
        buy = pages.form("/checkout/cart/add", pages.hidden("product", str(product.id))
                         + pages.text_input("qty", "qty", "Qty", "1", kind="number"),
                         "add-to-cart", "Add to Cart")
        body = (f"<p class=\"price\">{pages.money(product.price)}</p>"
                f"<p>{escape(product.description)}</p>{buy}")
        return self._page(product.name, body)

    def _cart_add(self, request: Request, match: re.Match[str]) -> Response:
        try:
            product, qty = int(request.form.get("product", "")), int(request.form.get("qty", "1"))
        except ValueError:
            return redirect("/checkout/cart?error=1")
        if product in self.store.products and qty > 0:
            self.store.cart.append((product, qty))
        return redirect("/checkout/cart")

    def _cart(self, request: Request, match: re.Match[str]) -> Response:
        rows = [(escape(line.product.name), str(line.qty), pages.money(line.total))
                for line in self.store.lines(self.store.cart)]
        body = (pages.table(["Item", "Qty", "Subtotal"], rows, "cart-items") if rows
                else pages.notice("You have no items in your shopping cart."))
        return self._page("Shopping Cart", body)

    def _login_form(self, request: Request, match: re.Match[str]) -> Response:
        fields = (pages.hidden("next", request.query.get("next", LOGIN.home))
                  + pages.text_input("email", "login[username]", "Email", kind="email")
                  + pages.text_input("pass", "login[password]", "Password", kind="password"))
        error = (pages.notice("Invalid login or password.", error=True)
                 if "error" in request.query else "")
        return self._page("Customer Login", error + pages.form(
            "/customer/account/loginPost", fields, "send2", "Sign In"))

    def _account(self, request: Request, match: re.Match[str], user: str) -> Response:
        links = "".join(f"<li>{pages.link(i, h, t)}</li>" for i, h, t in (
            ("account-orders", "/sales/order/history", "My Orders"),
            ("account-logout", "/customer/account/logout", "Sign Out")))
        return self._page("My Account", f"<p>Welcome, {escape(CUSTOMER_NAME)}!</p><ul>{links}</ul>")

    def _history(self, request: Request, match: re.Match[str], user: str) -> Response:
        rows = [(f"#{o.number}", o.date, pages.money(self.store.grand_total(o)),
                 STATUSES[o.status], pages.link(f"view-order-{o.number}",
                                                f"/sales/order/view/{o.number}", "View Order"))
                for o in self.store.newest_orders(lambda o: o.email == user)]
        return self._page("My Orders", pages.table(
            ["Order #", "Date", "Order Total", "Status", "Action"], rows, "my-orders-table"))

    def _own_order(self, user: str, number: str) -> Order | None:
        order = self.store.orders.get(number)
        return order if order is not None and order.email == user else None

    def _order(self, request: Request, match: re.Match[str], user: str) -> Response:
        order = self._own_order(user, match.group(1))
        if order is None:
            return self._page("Order not found", pages.notice("This order does not exist."), 404)
        return self._page(f"Order # {order.number}", self._order_body(order))

    def _order_body(self, order: Order) -> str:
        rows = [(escape(line.product.name), pages.money(line.product.price), str(line.qty),
                 pages.money(line.total)) for line in self.store.lines(order.items)]
        totals = (f"<p>Subtotal: {pages.money(self.store.subtotal(order.items))}<br>"
                  f"Shipping &amp; Handling: {pages.money(SHIPPING)}<br>"
                  f"<strong>Grand Total: {pages.money(self.store.grand_total(order))}</strong></p>")
        invoice = (pages.link(f"invoice-{order.number}", f"/sales/order/invoice/{order.number}.pdf",
                              "Download invoice (PDF)") if order.invoice else
                   "<p>No invoice has been issued for this order yet.</p>")
        return (f"<p>Order Date: {order.date}</p><p>Status: {STATUSES[order.status]}</p>"
                + pages.table(["Product Name", "Price", "Qty", "Subtotal"], rows, "order-items")
                + totals + invoice)

    def _invoice(self, request: Request, match: re.Match[str], user: str) -> Response:
        order = self._own_order(user, match.group(1))
        if order is None or order.invoice is None:
            return self._page("Invoice not found", pages.notice("No such invoice."), 404)
        return Response(body=text_pdf(self._invoice_lines(order), f"Invoice {order.invoice}"),
                        content_type="application/pdf", headers=[(
                            "Content-Disposition",
                            f"attachment; filename=\"invoice-{order.number}.pdf\"")])

    def _invoice_lines(self, order: Order) -> list[str]:
        items = [f"{line.qty} x {line.product.name}  {pages.money(line.total)}"
                 for line in self.store.lines(order.items)]
        return [BRAND, f"Invoice number: {order.invoice}", f"Order # {order.number}",
                f"Order date: {order.date}", f"Bill to: {order.customer} <{order.email}>", "",
                *items, "", f"Shipping: {pages.money(SHIPPING)}",
                f"Grand total: {pages.money(self.store.grand_total(order))}"]
