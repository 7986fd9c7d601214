"""The pod's heartbeat on ``<prefix>.agents.<agent>.presence`` (docs/asyncapi.yaml, ``publishPresence``).

``up`` at start and every ``PRESENCE_INTERVAL_MS``, so that the gateway counts
the pod online (heard within 3 intervals); ``leaving`` once when it drains, so
that it is offline at once. Fire-and-forget: a beat lost is made up by the next.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

from ..logger import log

__all__ = ["PRESENCE_INTERVAL_MS", "PRESENCE_INTERVAL_MIN_MS", "PRESENCE_INTERVAL_MAX_MS", "Presence"]

PRESENCE_INTERVAL_MS = 15_000
PRESENCE_INTERVAL_MIN_MS = 100
PRESENCE_INTERVAL_MAX_MS = 600_000

Publish = Callable[[str, Any], Awaitable[None]]


class Presence:
    """Beats ``up`` every interval once started; says ``leaving`` once when the agent drains."""

    def __init__(self, publish: Publish, subject: str, pod_id: str, interval_ms: int) -> None:
        self._publish = publish
        self._subject = subject
        self._pod_id = pod_id
        self._interval_ms = interval_ms
        self._task: asyncio.Task[None] | None = None
        self._left = False

    def start(self) -> None:
        if self._task is None and not self._left:
            self._task = asyncio.create_task(self._beat(), name="mcpgw-agent presence")

    async def leave(self) -> None:
        """Say ``leaving`` (once) and beat no more."""
        if self._left:
            return
        self._left = True
        if self._task is None:
            return
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        await self._send("leaving")

    async def _beat(self) -> None:
        while True:
            await self._send("up")
            await asyncio.sleep(self._interval_ms / 1000)

    async def _send(self, state: str) -> None:
        try:
            await self._publish(
                self._subject, {"pod_id": self._pod_id, "state": state, "interval_ms": self._interval_ms}
            )
        except Exception as error:  # a closed connection: the gateway sees the pod offline after 3 intervals
            log.warning("presence %s not sent: %s", state, error)
