"""A call's deadline on this process's monotonic clock.

On the wire a deadline is the time left (``meta.timeout_ms``); it is anchored
to the local clock when the message arrives, so no clock is compared with
another host's.
"""

from __future__ import annotations

import math
import time
from typing import Callable

__all__ = ["Deadline", "wire_budget"]


def wire_budget(value: object) -> float | None:
    """A remaining budget as the wire carries it (a finite number of ms, 0 or more), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    return float(value)


class Deadline:
    """A point on the monotonic clock."""

    __slots__ = ("_at", "_clock")

    def __init__(self, at: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._at = at
        self._clock = clock

    @classmethod
    def after_ms(cls, ms: float, clock: Callable[[], float] = time.monotonic) -> "Deadline":
        """``ms`` from now (negative or NaN counts as 0)."""
        budget = wire_budget(ms) or 0.0
        return cls(clock() + budget / 1000.0, clock)

    @classmethod
    def from_wire(cls, remaining_ms: object, clock: Callable[[], float] = time.monotonic) -> "Deadline | None":
        """The deadline a message carried (``meta.timeout_ms``), anchored now; None when it carried none."""
        budget = wire_budget(remaining_ms)
        return None if budget is None else cls.after_ms(budget, clock)

    @property
    def at(self) -> float:
        """The point, in seconds of ``time.monotonic()``."""
        return self._at

    def remaining(self) -> float:
        """Seconds left, never negative."""
        return max(0.0, self._at - self._clock())

    def remaining_ms(self) -> int:
        """Whole milliseconds left, rounded up (what goes on the wire)."""
        return math.ceil(self.remaining() * 1000.0)

    @property
    def expired(self) -> bool:
        return self._clock() >= self._at

    def __repr__(self) -> str:
        return f"Deadline(remaining={self.remaining():.3f}s)"
