"""What the agent says of its catalogue between registrations: a resource changed (``publishNotice``)."""

from __future__ import annotations

from ..bus import Bus
from ..subjects import Subjects

__all__ = ["Notices"]


class Notices:
    def __init__(self, bus: Bus, subjects: Subjects) -> None:
        self._bus = bus
        self._subjects = subjects

    async def resource_updated(self, uri: str) -> None:
        """Tell the clients subscribed to ``uri`` that it changed (``resource_updated`` notice)."""
        if not uri or len(uri) > 4096:
            raise ValueError("a resource uri is 1 to 4096 characters")
        await self._bus.publish(self._subjects.notices, {"kind": "resource_updated", "uri": uri})
