"""The deadline a message carries (meta.timeout_ms), anchored at arrival on the monotonic clock."""

from __future__ import annotations

import math

import pytest

from mcpgw_agent.deadline import Deadline, wire_budget


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_anchored_at_arrival() -> None:
    clock = Clock()
    deadline = Deadline.from_wire(1500, clock)
    assert deadline is not None
    assert deadline.remaining() == pytest.approx(1.5)
    assert deadline.remaining_ms() == 1500
    clock.now += 1.0
    assert deadline.remaining_ms() == 500
    assert not deadline.expired
    clock.now += 0.5
    assert deadline.expired
    clock.now += 10
    assert deadline.remaining() == 0 and deadline.remaining_ms() == 0


def test_rounds_the_time_left_up() -> None:
    clock = Clock()
    deadline = Deadline.from_wire(10, clock)
    assert deadline is not None
    clock.now += 0.0095
    assert deadline.remaining_ms() == 1


def test_zero_is_expired_at_once() -> None:
    deadline = Deadline.from_wire(0, Clock())
    assert deadline is not None and deadline.expired


@pytest.mark.parametrize("value", [None, -1, math.nan, math.inf, "1000", True, [], {}])
def test_no_deadline_for_what_is_not_a_budget(value: object) -> None:
    assert wire_budget(value) is None
    assert Deadline.from_wire(value, Clock()) is None


def test_after_ms_counts_nonsense_as_zero() -> None:
    clock = Clock()
    assert Deadline.after_ms(-5, clock).expired
    assert Deadline.after_ms(math.nan, clock).expired
