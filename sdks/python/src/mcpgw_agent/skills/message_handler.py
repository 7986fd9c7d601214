"""Conversational messages: a ``chat_message`` that asks for no tool, read, prompt or completion.

The gateway sends them (an A2A message that names no skill) only to an agent
that registered ``conversation`` (``@agent.on_message``); one that comes
anyway is answered with an error (``NO_MESSAGE_HANDLER``), never a crash.
Earlier turns of the same conversation (one A2A contextId, one channel) are
``await ctx.history()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Union

from ..context import Context
from ..json_values import JsonObject, as_object

__all__ = ["NO_MESSAGE_HANDLER", "IncomingMessage", "MessageFn", "incoming_message", "is_conversational"]

NO_MESSAGE_HANDLER = "this agent answers no conversational messages: name one of its skills"


@dataclass(frozen=True)
class IncomingMessage:
    """What was said: the chat_message's ``text`` (``""`` when none) and its structured ``data``, if any."""

    text: str
    data: JsonObject | None = None


MessageFn = Callable[[IncomingMessage, Context], Union[Awaitable[Any], Any]]
"""A message handler: ``async def on_message(message, ctx)`` returning what a skill may (``results.normalize``)."""

_OTHER_ASKS = ("tool_call", "resource_read", "prompt_get", "complete")


def is_conversational(message: JsonObject) -> bool:
    """True when the message asks for nothing else: no tool call, resource read, prompt or completion."""
    return all(message.get(ask) is None for ask in _OTHER_ASKS)


def incoming_message(message: JsonObject) -> IncomingMessage:
    """What the handler is given of a (checked) chat_message."""
    said = message.get("text")
    return IncomingMessage(text=said if isinstance(said, str) else "", data=as_object(message.get("data")))
