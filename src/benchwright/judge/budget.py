"""`--max-cost`: requests start only while the money spent, plus what the requests in flight may
cost, plus this one's estimate stays within the limit; the first refusal stops every later
request, so what is left stays unjudged (and resumable) instead of being judged out of order.

A request's estimate is the larger of the costliest call seen so far and the price table's cost
of its prompt; until the first call's cost is known, one request is in flight at a time. A call
whose cost cannot be known (no figure from the provider, no price in the table) stops the run:
the limit could not be kept. Only calls made count: answers from the cache are free.
"""

from __future__ import annotations

import threading

EPSILON = 1e-12


class Budget:
    """The money of one judging, shared by the threads that send requests."""

    def __init__(self, max_cost: float | None) -> None:
        self.max_cost = max_cost
        self.spent = 0.0
        self.reserved = 0.0
        self.largest: float | None = None
        self.in_flight = 0
        self.stop_reason: str | None = None
        self.fatal = False
        """Stopped by an error no request can get past (not by the limit)."""
        self._cond = threading.Condition()

    def acquire(self, floor: float = 0.0) -> float | None:
        """Reserve the money for one request (None: refused, the run stops here)."""
        with self._cond:
            if self.stop_reason is not None:  # by the limit or by an error (stop)
                return None
            if self.max_cost is None:
                self.in_flight += 1
                return 0.0
            while self.stop_reason is None and self.largest is None and self.in_flight:
                self._cond.wait()
            if self.stop_reason is not None:
                return None
            estimate = max(self.largest or 0.0, floor)
            if self.max_cost <= 0 or self.spent + self.reserved + estimate > self.max_cost \
                    + EPSILON:
                self._stop(f"stopped before passing --max-cost {self.max_cost:g} USD "
                           f"({self.spent:.4f} USD spent)")
                return None
            self.reserved += estimate
            self.in_flight += 1
            return estimate

    def settle(self, reservation: float, cost: float | None) -> None:
        """A reserved request is over; `cost` None: it was made but its cost is unknown."""
        with self._cond:
            self.reserved -= reservation
            self.in_flight -= 1
            if cost is None:
                if self.max_cost is not None:
                    self._stop("the cost of a call is unknown (the provider reports none and the "
                               "model has no price in benchwright's table), so --max-cost "
                               "cannot be kept")
            else:
                self.spent += cost
                self.largest = max(self.largest or 0.0, cost)
            self._cond.notify_all()

    def stop(self, reason: str) -> None:
        """Refuse every later request (a fatal provider error)."""
        with self._cond:
            self.fatal = self.fatal or self.stop_reason is None
            self._stop(reason)

    def _stop(self, reason: str) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason
        self._cond.notify_all()
