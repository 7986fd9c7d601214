"""Progress, log, question and poll events of a message in flight (``publishCallEvent``), on core NATS.

Whoever watches the call (the gateway, for a client that asked for progress)
hears them; nobody listening costs nothing. Best effort: an event not
published is logged, never raised to the skill. The reply never travels this way.
"""

from __future__ import annotations

from typing import Any

import nats.errors

from ..bus import Bus
from ..cancellation.cancellations import Call
from ..logger import log
from ..subjects import Subjects

__all__ = ["CallEvents"]


class CallEvents:
    def __init__(self, bus: Bus, subjects: Subjects) -> None:
        self._bus = bus
        self._subjects = subjects

    async def publish(self, call: Call, event: dict[str, Any]) -> None:
        """The event on ``calls.<agent>.<message>.events``, with the call's trace headers."""
        try:
            await self._bus.publish(self._subjects.events(call.message_id), event, call.headers)
        except nats.errors.Error as error:
            log.warning("call event not published: %s", error)
