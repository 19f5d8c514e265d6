"""How the sites order and search what they list: newest first, and hits holding every word."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")


def newest_first(items: Iterable[T], key: Callable[[T], int | str]) -> list[T]:
    """The items by `key` (a post id, an order number), highest first."""
    return sorted(items, key=key, reverse=True)


def matching(query: str, items: Iterable[T], text: Callable[[T], str]) -> list[T]:
    """The items whose text holds every word of the query, ignoring case; none for no words."""
    words = query.lower().split()
    return [item for item in items if words and all(w in text(item).lower() for w in words)]
