"""Questions from a skill to the MCP client in the middle of a call (sampling, elicitation, roots).

A question is an ``input_request`` event of the message (``publishCallEvent``);
the gateway streaming the call relays it and publishes the client's answer on
the message's input subject (``receiveInput``). An answer that asks for the
question again (``resend``: the client reconnected) gets it again. A question
ends with its call: a cancel or the deadline cancels the skill's task and so
the wait; it needs a timer of its own only when the message carried no deadline.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from nats.aio.msg import Msg

from ..bus import Bus
from ..cancellation.cancellations import Call
from ..logger import quietly
from ..messages import Invalid, check_input_response, decode_json
from ..results import ClientRequestError
from ..subjects import Subjects
from .call_events import CallEvents

__all__ = ["INPUT_REQUEST_FALLBACK", "Questions"]

INPUT_REQUEST_FALLBACK = 60.0
"""How long a question waits for the client when the call has no deadline."""


class Questions:
    def __init__(self, bus: Bus, subjects: Subjects, events: CallEvents) -> None:
        self._bus = bus
        self._subjects = subjects
        self._events = events

    async def ask(
        self, call: Call, message: dict[str, Any], method: str, params: dict[str, Any], key: str | None
    ) -> dict[str, Any]:
        """The client's result; raises ``ClientRequestError`` on its error, or when it does not answer in time."""
        key = key or str(uuid.uuid4())
        question = {
            "type": "input_request",
            "in_reply_to": call.message_id,
            "key": key,
            "method": method,
            "params": params,
            "channel_id": message["channel_id"],
        }
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

        async def on_input(msg: Msg) -> None:
            if msg.reply:
                return
            try:
                response = check_input_response(decode_json(msg.data))
            except Invalid:
                return
            if response.get("resend"):
                await self._events.publish(call, question)
                return
            if response["key"] == key and not answer.done():
                answer.set_result(response)

        sub = await self._bus.subscribe(self._subjects.input(call.message_id), on_input)
        try:
            await self._events.publish(call, question)
            timeout = None if call.deadline is not None else INPUT_REQUEST_FALLBACK
            try:
                response = await asyncio.wait_for(answer, timeout)
            except asyncio.TimeoutError:
                raise ClientRequestError(f"the client did not answer {method} in time") from None
        finally:
            await quietly(sub.unsubscribe())
        error = response.get("error")
        if error:
            raise ClientRequestError(str(error.get("message")), int(error.get("code")))
        return dict(response.get("result") or {})
