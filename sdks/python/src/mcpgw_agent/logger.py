"""The SDK's logger (standard ``logging``, logger ``mcpgw_agent``) and best-effort bus calls."""

from __future__ import annotations

import logging
from typing import Any, Awaitable

__all__ = ["log", "quietly"]

log = logging.getLogger("mcpgw_agent")


async def quietly(awaitable: Awaitable[Any]) -> None:
    """An ack, nak or heartbeat: best effort (a closed connection, a message acked already)."""
    try:
        await awaitable
    except Exception as error:  # noqa: BLE001
        log.debug("ignored: %r", error)
