"""A pytest plugin for `problems validate`: runs the test files in reverse order.

Each file keeps the order of its own tests (the problem format promises tests of a file run in
order), so what it finds is a file whose outcome depends on what ran before it.
"""

from __future__ import annotations

from typing import Any


def pytest_collection_modifyitems(session: Any, config: Any, items: list[Any]) -> None:
    """Reorder `items` in place: files last-to-first, each file's tests as collected."""
    by_file: dict[str, list[Any]] = {}
    for item in items:
        by_file.setdefault(str(item.nodeid).split("::", 1)[0], []).append(item)
    items[:] = [item for name in reversed(list(by_file)) for item in by_file[name]]
