"""The shop's catalogue, customers and orders: seed data, and the store both shop sites share.

The storefront (`shop.py`, site `shopping`) and its admin (`shop_admin.py`, site `shopping_admin`)
read and change one `ShopStore`, so an order cancelled in the admin shows as cancelled to the
customer. `reset()` restores the seed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from benchwright.web.local_suite.listing import matching, newest_first

SHIPPING = 5.00


@dataclass(frozen=True)
class Product:
    """A catalogue item."""

    id: int
    slug: str
    name: str
    category: str
    price: float
    description: str


@dataclass(frozen=True)
class Line:
    """A product and how many of it, in the cart or an order."""

    product: Product
    qty: int

    @property
    def total(self) -> float:
        """Price times quantity."""
        return self.product.price * self.qty


@dataclass
class Order:
    """A customer order."""

    number: str
    date: str
    customer: str
    email: str
    items: list[tuple[int, int]]
    status: str
    invoice: str | None = None
    history: list[str] = field(default_factory=list)


PRODUCTS: tuple[Product, ...] = (
    Product(1, "glass-electric-kettle-1-7l", "Glass Electric Kettle 1.7 L", "kitchen", 34.99,
            "Borosilicate glass electric kettle with blue LED, 2200 W, auto shut-off."),
    Product(2, "stainless-steel-electric-kettle-1-5l", "Stainless Steel Electric Kettle 1.5 L",
            "kitchen", 27.49, "Brushed steel electric kettle, 1800 W, boil-dry protection."),
    Product(3, "gooseneck-pour-over-electric-kettle", "Gooseneck Pour-Over Electric Kettle",
            "kitchen", 59.00, "Electric kettle with variable temperature for pour-over coffee."),
    Product(4, "retro-enamel-electric-kettle", "Retro Enamel Electric Kettle", "kitchen", 41.25,
            "Cream enamel finish electric kettle, 1.7 L."),
    Product(5, "stovetop-whistling-tea-kettle", "Stovetop Whistling Tea Kettle", "kitchen", 24.90,
            "Classic whistling kettle for gas and induction stoves (not electric)."),
    Product(6, "cast-iron-teapot-0-8l", "Cast Iron Teapot 0.8 L", "kitchen", 32.00,
            "Japanese-style cast iron teapot with infuser."),
    Product(7, "bamboo-cutting-board-large", "Bamboo Cutting Board, Large", "kitchen", 22.00,
            "45 x 30 cm bamboo board with juice groove."),
    Product(8, "bamboo-cutting-board-small", "Bamboo Cutting Board, Small", "kitchen", 14.50,
            "30 x 20 cm bamboo board for bread and cheese."),
    Product(9, "walnut-end-grain-cutting-board", "Walnut End-Grain Cutting Board", "kitchen",
            68.00, "Hand-finished walnut end-grain board, 40 x 30 cm."),
    Product(10, "stoneware-coffee-mug-blue", "Stoneware Coffee Mug, Blue", "mugs", 12.75,
            "350 ml glazed stoneware mug, dishwasher safe."),
    Product(11, "stoneware-coffee-mug-sand", "Stoneware Coffee Mug, Sand", "mugs", 12.75,
            "350 ml glazed stoneware mug in a sand colour."),
    Product(12, "insulated-travel-mug-16-oz", "Insulated Travel Mug 16 oz", "mugs", 24.95,
            "Vacuum insulated steel travel mug with leak-proof lid."),
    Product(13, "loose-leaf-sencha-green-tea-100g", "Loose Leaf Sencha Green Tea 100 g", "tea",
            9.80, "First flush sencha from Shizuoka."),
    Product(14, "earl-grey-tea-bags-50", "Earl Grey Tea Bags (50)", "tea", 7.25,
            "Black tea with bergamot, 50 bags."),
)

CATEGORIES = {"kitchen": "Kitchen", "mugs": "Mugs & Cups", "tea": "Tea"}

CUSTOMER_EMAIL = "emma.lopez@gmail.com"
CUSTOMER_NAME = "Emma Lopez"
CUSTOMER_ACCOUNTS = {CUSTOMER_EMAIL: "Password.123"}
ADMIN_ACCOUNTS = {"admin": "admin1234"}

_ORDERS: tuple[tuple[str, str, str, str, tuple[tuple[int, int], ...], str, str | None], ...] = (
    ("000000102", "2024-01-14", CUSTOMER_NAME, CUSTOMER_EMAIL, ((10, 2), (14, 1)), "complete",
     "INV-2024-00311"),
    ("000000103", "2024-01-20", "Grace Nguyen", "grace.nguyen@yahoo.com", ((3, 1),), "complete",
     "INV-2024-00318"),
    ("000000107", "2024-01-29", "Sarah Miller", "helloworld@yahoo.com", ((6, 1), (13, 1)),
     "complete", "INV-2024-00342"),
    ("000000109", "2024-02-03", CUSTOMER_NAME, CUSTOMER_EMAIL, ((9, 1),), "complete",
     "INV-2024-00365"),
    ("000000111", "2024-02-15", "Alex Martin", "alex.martin@gmail.com", ((4, 1),), "canceled",
     None),
    ("000000115", "2024-03-02", "Grace Nguyen", "grace.nguyen@yahoo.com", ((12, 2),),
     "processing", None),
    ("000000118", "2024-03-22", CUSTOMER_NAME, CUSTOMER_EMAIL, ((1, 1), (13, 2)), "complete",
     "INV-2024-00457"),
    ("000000119", "2024-03-25", "Lily Potter", "lily.potter@gmail.com", ((8, 1), (11, 1)),
     "processing", None),
    ("000000121", "2024-04-01", "Sarah Miller", "helloworld@yahoo.com", ((2, 1), (14, 2)),
     "pending", None),
    ("000000122", "2024-04-03", "Alex Martin", "alex.martin@gmail.com", ((5, 1),), "pending", None),
    ("000000124", "2024-04-09", CUSTOMER_NAME, CUSTOMER_EMAIL, ((12, 1), (7, 1)), "processing",
     None),
)

STATUSES = {"pending": "Pending", "processing": "Processing", "complete": "Complete",
            "canceled": "Canceled", "holded": "On Hold"}


def seed_orders() -> dict[str, Order]:
    """Fresh copies of the seed orders, by number."""
    return {n: Order(n, d, c, e, list(items), s, inv, [f"Order placed ({STATUSES[s]})"])
            for n, d, c, e, items, s, inv in _ORDERS}


class ShopStore:
    """Catalogue, orders and the cart; the one state both shop sites share."""

    def __init__(self) -> None:
        self.products = {p.id: p for p in PRODUCTS}
        self.by_slug = {p.slug: p for p in PRODUCTS}
        self.orders: dict[str, Order] = {}
        self.cart: list[tuple[int, int]] = []
        self.reset()

    def reset(self) -> None:
        """Seed orders, empty cart."""
        self.orders = seed_orders()
        self.cart = []

    def lines(self, items: list[tuple[int, int]]) -> list[Line]:
        """(product id, quantity) pairs as lines."""
        return [Line(self.products[pid], qty) for pid, qty in items]

    def subtotal(self, items: list[tuple[int, int]]) -> float:
        """Sum of the line totals."""
        return round(sum(line.total for line in self.lines(items)), 2)

    def grand_total(self, order: Order) -> float:
        """Subtotal plus flat shipping."""
        return round(self.subtotal(order.items) + SHIPPING, 2)

    def search(self, query: str) -> list[Product]:
        """Products whose name or description holds every word of the query."""
        return matching(query, PRODUCTS, lambda p: f"{p.name} {p.description}")

    def newest_orders(self, keep: Callable[[Order], bool]) -> list[Order]:
        """The orders `keep` accepts, newest first."""
        return newest_first((o for o in self.orders.values() if keep(o)), lambda o: o.number)
