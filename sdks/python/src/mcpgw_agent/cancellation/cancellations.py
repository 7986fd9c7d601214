"""Stopping a skill for its caller: a cancel request (``receiveCancel``) or the call's deadline.

Cancel requests for this agent's messages reach every pod (a fan-out
subscription); the one running the message cancels its skill's task. A cancel
that arrives before its message is remembered, so that the message is acked
with no reply when it comes. The message's deadline (``meta.timeout_ms``,
anchored on arrival) stops it the same way, with one timer per running call.
The drain stops what is still running once its grace has passed (``stopping``:
the message is handed back instead).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

from nats.aio.msg import Msg

from ..bus import Bus
from ..deadline import Deadline
from ..inbox.recently_seen import RecentlySeen
from ..logger import log
from ..messages import Invalid, check_cancel, decode_json
from ..results import Result
from ..subjects import Subjects

__all__ = ["Call", "Cancellations", "CallStop"]

CallStop = Literal["cancelled", "deadline", "stopping"]
"""Why a call was stopped: the caller cancelled, its deadline passed, or the agent stops."""


@dataclass
class Call:
    """One message while its skill runs."""

    message_id: str
    deadline: Deadline | None
    headers: dict[str, str]
    stop_reason: CallStop | None = None
    task: asyncio.Task[Result] | None = None
    timer: asyncio.TimerHandle | None = None

    def stop(self, reason: CallStop) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason
        if self.task is not None and not self.task.done():
            self.task.cancel()


class Cancellations:
    """The calls running here, and every rule that stops one."""

    def __init__(self, bus: Bus, subjects: Subjects) -> None:
        self._bus = bus
        self._subjects = subjects
        self._calls: dict[str, Call] = {}
        self._cancelled_early: RecentlySeen[bool] = RecentlySeen()

    async def start(self) -> None:
        """Hear the agent's cancel requests (before the first message is pulled)."""
        await self._bus.subscribe(self._subjects.cancel, self._on_cancel)

    def stopped_before_start(self, call: Call) -> CallStop | None:
        """Why the call is over before its skill began: cancelled already, or out of time; else None."""
        if call.message_id in self._cancelled_early:
            return "cancelled"
        if call.deadline is not None and call.deadline.expired:
            return "deadline"
        return None

    def track(self, call: Call) -> None:
        """The call runs: a cancel now stops it, and so does its deadline."""
        self._calls[call.message_id] = call
        if call.deadline is not None:
            call.timer = asyncio.get_running_loop().call_later(call.deadline.remaining(), call.stop, "deadline")

    def done(self, call: Call) -> None:
        if call.timer:
            call.timer.cancel()
        self._calls.pop(call.message_id, None)

    def stop_all(self, reason: CallStop) -> None:
        for call in list(self._calls.values()):
            call.stop(reason)

    async def _on_cancel(self, msg: Msg) -> None:
        if msg.reply:
            return  # not a request family: neither handled nor answered
        try:
            cancel = check_cancel(decode_json(msg.data))
        except Invalid:
            return
        message_id: str = cancel["message_id"]
        call = self._calls.get(message_id)
        if call is None:
            self._cancelled_early.remember(message_id, True)
            return
        log.info("cancelling %s", message_id)
        call.stop("cancelled")
