"""What a skill gets besides its arguments: the call it serves and the ways to talk back."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, Mapping

from .cancellation.cancellations import Call
from .deadline import Deadline
from .json_values import as_list, as_object
from .replies.call_events import CallEvents
from .replies.questions import Questions
from .replies.replier import Replier
from .skills.attachments import download
from .skills.notices import Notices

__all__ = [
    "Attachment",
    "CallTools",
    "Context",
    "LOG_LEVELS",
    "CLIENT_REQUEST_METHODS",
    "QUESTION_KEY",
    "StopReason",
]

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
CLIENT_REQUEST_METHODS = ("sampling/createMessage", "elicitation/create", "roots/list")
QUESTION_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,64}\Z")
"""A key a skill may give its question (it travels in JSON-RPC ids)."""

StopReason = Literal["cancelled", "deadline"]


@dataclass(frozen=True)
class Attachment:
    """A file part of the message: downloaded through its signed URL (``Context.download``)."""

    uri: str
    name: str | None = None
    mime_type: str | None = None
    metadata: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class CallTools:
    """What a Context reaches the bus through: one set per agent, made by the facade."""

    agent_id: str
    pod_id: str
    events: CallEvents
    questions: Questions
    replier: Replier
    notices: Notices


def _attachment(part: object) -> Attachment:
    """One file part of a checked inbox message (``messages.check_inbox_message``)."""
    fields = as_object(part) or {}
    file = as_object(fields.get("file")) or {}
    return Attachment(
        uri=file["uri"],
        name=file.get("name"),
        mime_type=file.get("mimeType"),
        metadata=as_object(fields.get("metadata")),
    )


class Context:
    """One call of a skill (or one resource read, one prompt render)."""

    def __init__(self, tools: CallTools, message: dict[str, Any], call: Call) -> None:
        self._tools = tools
        self._call = call
        self.message: dict[str, Any] = message
        """The chat message as it came (``tool_call``, ``sender``, ``meta``, …)."""
        self.message_id: str = message["id"]
        self.call_id: str | None = message.get("call_id")
        """The call's id: the one its caller sees in the result, webhooks report and ``admin call show`` finds."""
        self.channel_id: str = message["channel_id"]
        self.agent_id: str = tools.agent_id
        self.pod_id: str = tools.pod_id
        self.attachments: list[Attachment] = [_attachment(part) for part in as_list(message.get("attachments")) or []]

    @property
    def deadline(self) -> Deadline | None:
        """The call's deadline on this process's clock (``meta.timeout_ms`` anchored at arrival), if it has one."""
        return self._call.deadline

    @property
    def stop_reason(self) -> StopReason | None:
        """Why the call was stopped: ``'cancelled'`` (the caller cancelled) or ``'deadline'``; None while it runs.

        When it is set the skill's task has been cancelled (``asyncio.CancelledError``);
        no reply is sent, whatever the skill returns.
        """
        reason = self._call.stop_reason
        if reason == "cancelled":
            return "cancelled"
        if reason == "deadline":
            return "deadline"
        return None

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """MCP ``notifications/progress`` for the caller (best effort)."""
        event: dict[str, Any] = {"type": "progress", "in_reply_to": self.message_id, "progress": progress}
        if total is not None:
            event["total"] = total
        if message is not None:
            event["message"] = message[:1000]
        await self._tools.events.publish(self._call, event)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """MCP ``notifications/message`` for the caller (best effort)."""
        if level not in LOG_LEVELS:
            raise ValueError(f"log level must be one of {', '.join(LOG_LEVELS)}")
        event: dict[str, Any] = {"type": "log", "in_reply_to": self.message_id, "level": level, "data": data}
        if logger is not None:
            event["logger"] = logger[:200]
        await self._tools.events.publish(self._call, event)

    async def ask(self, method: str, params: Mapping[str, Any], key: str | None = None) -> dict[str, Any]:
        """Ask the MCP client (``elicitation/create``, ``sampling/createMessage``, ``roots/list``).

        Returns the client's result; raises ``ClientRequestError`` when the client
        answers with an error (or cannot be asked). Ends with the call.
        """
        if method not in CLIENT_REQUEST_METHODS:
            raise ValueError(f"method must be one of {', '.join(CLIENT_REQUEST_METHODS)}")
        if key is not None and not QUESTION_KEY.match(key):
            raise ValueError(f"a question key must match {QUESTION_KEY.pattern}")
        return await self._tools.questions.ask(self._call, self.message, method, dict(params), key)

    async def history(self, limit: int = 200) -> list[dict[str, Any]]:
        """The messages of this call's channel, oldest first (``[{seq, envelope}]``)."""
        return await self._tools.replier.history(self.channel_id, limit)

    async def download(self, attachment: Attachment | str, *, max_bytes: int = 64 * 1024 * 1024) -> bytes:
        """The bytes of an attachment, through its signed URL."""
        return await download(attachment if isinstance(attachment, str) else attachment.uri, max_bytes)

    async def resource_updated(self, uri: str) -> None:
        """Tell the clients subscribed to ``uri`` that it changed."""
        await self._tools.notices.resource_updated(uri)

    async def poll_later(self) -> None:
        """Say this call will take a while: a client that can resume may reconnect later."""
        await self._tools.events.publish(self._call, {"type": "poll", "in_reply_to": self.message_id})
