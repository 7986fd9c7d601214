"""Turns a skill's result into an ``agent_reply`` and gets it stored by the message service.

Two ways (README.md, "What the SDK owns"): a first delivery's reply goes as a
request straight to the replica that delivered the message, with the
delivery's ack subject (``publishReply``): the replica stores it, acks the
message for the agent, then answers. A redelivery's reply, or one whose answer
did not come, is stored by request (``requestReplyAtReplica`` first, then
``storeReply`` at any replica), retried with backoff while the failure is
transient, and the agent acks itself: the skill never runs again for it.
The channel's history (``readHistory``) is read here too.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timezone
from typing import Any

from nats.aio.msg import Msg

from ..bus import BUS_REQUEST_TIMEOUT, Bus, retried
from ..errors import BusError
from ..json_values import as_list, as_object, encode
from ..logger import log, quietly
from ..results import UNSTORABLE_TEXT_REFUSAL, Result, holds_unstorable_text, text
from ..subjects import Subjects

__all__ = ["ATTEMPTS_EXHAUSTED", "HEADER_ROOM_BYTES", "Replier"]

ATTEMPTS_EXHAUSTED = "attempts_exhausted"
"""``meta.outcome`` of the error reply to a message whose skill attempts are used up (libs/contracts)."""

HEADER_ROOM_BYTES = 8 * 1024
"""What a reply leaves of the bus's ``max_payload`` for its headers."""


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Replier:
    def __init__(
        self, bus: Bus, subjects: Subjects, pod_id: str, ack_wait_ms: int, give_up: asyncio.Event
    ) -> None:
        """``give_up``: set once the drain's grace has passed (a reply not stored by then is handed back)."""
        self._bus = bus
        self._subjects = subjects
        self._pod_id = pod_id
        self._ack_wait_ms = ack_wait_ms
        self._give_up = give_up

    def to_reply(self, message: dict[str, Any], result: Result, meta: dict[str, Any] | None = None) -> dict[str, Any]:
        """The ``agent_reply`` to ``message``; a result the store or the bus cannot take becomes a tool error."""
        if holds_unstorable_text(result.content) or holds_unstorable_text(result.structured):
            result = Result([text(f"the tool's result cannot be stored: {UNSTORABLE_TEXT_REFUSAL}")], is_error=True)
        reply: dict[str, Any] = {
            "type": "agent_reply",
            "id": str(uuid.uuid4()),
            "channel_id": message["channel_id"],
            "agent_id": message["agent_id"],
            "in_reply_to": message["id"],
            "created_at": _now_iso(),
            "content": result.content,
            "meta": {"pod_id": self._pod_id, **(meta or {})},
        }
        if result.structured is not None:
            reply["structured_content"] = result.structured
        if result.is_error:
            reply["is_error"] = True
        size = len(encode(reply))
        limit = self._bus.max_payload - HEADER_ROOM_BYTES
        if size > limit:
            reply["content"] = [
                text(f"the tool's result is too large to deliver: {size} bytes, the bus takes {limit} at most")
            ]
            reply.pop("structured_content", None)
            reply["is_error"] = True
        return reply

    async def store_direct(self, msg: Msg, reply: dict[str, Any], reply_to: str, headers: dict[str, str]) -> None:
        """A first delivery's reply, to the replica that delivered it, with the ack subject.

        The replica stores it, acks the message for the agent, then answers. No
        answer (the replica died, or the reply was lost with a NATS server): the
        reply lives in this pod's memory only, and another pod that got the
        message after the ack wait would run the skill again, so store it at any
        replica and ack here.
        """
        # No longer than half the ack wait: a lost reply is stored again before JetStream could hand
        # the message to another pod (a new consumer leader may redeliver, heartbeats or not).
        within = max(0.25, min(BUS_REQUEST_TIMEOUT, self._ack_wait_ms / 2000))
        try:
            await self._bus.request(reply_to, reply, timeout=within, headers={**headers, "Mcpgw-Ack": msg.reply})
            return
        except BusError as error:
            log.warning(
                "the delivering replica did not confirm the reply to %s (%s); storing it by request",
                reply["in_reply_to"],
                error,
            )
        await self.store_held(msg, reply, None, headers)

    async def store_held(
        self, msg: Msg, reply: dict[str, Any], reply_to: str | None, headers: dict[str, str]
    ) -> None:
        """Store the reply by request (retried with backoff while transient), then ack; the skill never reruns."""
        in_reply_to = reply["in_reply_to"]
        try:
            await retried(
                lambda attempt: self._store_once(reply, reply_to, attempt), f"reply to {in_reply_to}", self._give_up
            )
        except BusError as error:
            if error.transient:
                log.warning("handed back %s with its reply unstored", in_reply_to)
                await quietly(msg.nak())
            else:
                log.error("the message service refused the reply to %s; dropped: %s", in_reply_to, error)
                await quietly(msg.ack())
            return
        await quietly(msg.ack())

    async def _store_once(self, reply: dict[str, Any], reply_to: str | None, attempt: int) -> None:
        if reply_to and attempt == 1:
            try:
                await self._bus.request(reply_to, reply)
                return
            except BusError as error:
                if error.code != "unavailable":
                    raise
        await self._bus.request(self._subjects.store_reply, {"envelope": reply})

    async def history(self, channel_id: str, limit: int) -> list[dict[str, Any]]:
        """The messages of a channel, oldest first (``[{seq, envelope}]``)."""
        data = as_object(await self._bus.request(self._subjects.history, {"channel_id": channel_id, "limit": limit}))
        messages = as_list(data.get("messages")) if data is not None else None
        return list(messages) if messages is not None else []
