"""A bounded memory of message ids: the replies sent, the cancels heard before their message."""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

__all__ = ["REMEMBERED", "RecentlySeen"]

REMEMBERED = 10_000
"""How many ids one memory holds (the oldest forgotten first)."""

V = TypeVar("V")


class RecentlySeen(Generic[V]):
    """A bounded memory of message ids (the oldest forgotten first), each with what is remembered of it."""

    def __init__(self, limit: int = REMEMBERED) -> None:
        self._items: OrderedDict[str, V] = OrderedDict()
        self.limit = limit

    def remember(self, key: str, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.limit:
            self._items.popitem(last=False)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __getitem__(self, key: str) -> V:
        return self._items[key]

    def __len__(self) -> int:
        return len(self._items)
