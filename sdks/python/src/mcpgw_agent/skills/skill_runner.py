"""Runs what a message asks for (a skill, a resource read, a prompt render) and says what came of it.

The runner knows nothing of deliveries: it answers ``run`` with the reply to
send, or ``Stopped`` (the caller cancelled or the deadline passed: ack with no
reply), or ``HandBack`` (the agent stops, or the reply could not be made:
``-NAK``). The inbox consumer acts on that (inbox/consumer.py).
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
from dataclasses import dataclass
from typing import Any, Callable, Union

from ..cancellation.cancellations import Call, Cancellations, CallStop
from ..context import CallTools, Context
from ..deadline import Deadline
from ..json_values import as_object
from ..logger import log
from ..replies.replier import Replier
from ..results import Result, ToolError, normalize, text
from .catalogue import Catalogue
from .message_handler import NO_MESSAGE_HANDLER, incoming_message, is_conversational

__all__ = ["HandBack", "Outcome", "SkillRunner", "Stopped"]


@dataclass(frozen=True)
class Stopped:
    """The call is over without a reply: acked, remembered as done."""

    reason: CallStop


@dataclass(frozen=True)
class HandBack:
    """The message goes back to the inbox (``-NAK``), after ``delay`` seconds when given."""

    delay: float | None = None


Outcome = Union[dict[str, Any], Stopped, HandBack]
"""The reply to send (an ``agent_reply``), or what to do without one."""


def _what(message: dict[str, Any]) -> str:
    call = as_object(message.get("tool_call"))
    return str(call["name"]) if call else "the call"


class SkillRunner:
    def __init__(self, catalogue: Catalogue, cancellations: Cancellations, replier: Replier, tools: CallTools) -> None:
        self._catalogue = catalogue
        self._cancellations = cancellations
        self._replier = replier
        self._tools = tools

    def context(self, message: dict[str, Any], call: Call) -> Context:
        return Context(self._tools, message, call)

    async def run(self, message: dict[str, Any], headers: dict[str, str]) -> Outcome:
        """The reply to the message; ``Stopped`` when it is done without one, ``HandBack`` when it goes back."""
        message_id: str = message["id"]
        meta = as_object(message.get("meta")) or {}
        call = Call(message_id, Deadline.from_wire(meta.get("timeout_ms")), headers)
        early = self._cancellations.stopped_before_start(call)
        if early:
            log.info("call %s %s before it began: acked with no reply", message_id, early)
            return Stopped(early)
        task = asyncio.create_task(self.dispatch(message, self.context(message, call)))
        call.task = task
        self._cancellations.track(call)
        try:
            await asyncio.wait({task})
        finally:
            self._cancellations.done(call)
        if call.stop_reason == "cancelled" or call.stop_reason == "deadline":
            log.info("call %s stopped (%s): acked with no reply", message_id, call.stop_reason)
            return Stopped(call.stop_reason)
        if task.cancelled():
            if call.stop_reason == "stopping":
                log.info("call %s handed back: the agent stops", message_id)
                return HandBack()
            result = Result([text(f"{_what(message)} failed: cancelled")], is_error=True)
        elif task.exception() is not None:
            log.error("could not answer %s; it will be delivered again: %r", message_id, task.exception())
            return HandBack(delay=1)
        else:
            result = task.result()
        return self._replier.to_reply(message, result)

    async def dispatch(self, message: dict[str, Any], ctx: Context) -> Result:
        """What the message asks for, as a Result (a skill's failure is an error result, never raised)."""
        read = as_object(message.get("resource_read"))
        if read:
            return await self._read_resource(read["uri"])
        prompt = as_object(message.get("prompt_get"))
        if prompt:
            return await self._get_prompt(prompt, ctx)
        if is_conversational(message):
            return await self._converse(message, ctx)
        call = as_object(message.get("tool_call"))
        skill = self._catalogue.skills.get(call["name"]) if call else None
        if not call or not skill:
            name = json.dumps(call["name"] if call else None)
            return Result([text(f"this agent has no skill {name}")], is_error=True)
        arguments = call["arguments"]
        return await self._handle(skill.name, lambda: skill.fn(arguments, ctx))

    async def _converse(self, message: dict[str, Any], ctx: Context) -> Result:
        """A conversational message, to the handler; without one (the gateway sends none then), an error reply."""
        handler = self._catalogue.message_handler
        if handler is None:
            return Result([text(NO_MESSAGE_HANDLER)], is_error=True)
        said = incoming_message(message)
        return await self._handle("message", lambda: handler(said, ctx))

    async def _handle(self, name: str, work: Callable[[], Any]) -> Result:
        """Run a skill (or the message handler): a raise is an error result, but for a cancellation."""
        try:
            output = work()
            if inspect.isawaitable(output):
                output = await output
            return normalize(output)
        except ToolError as error:
            return Result([text(str(error))], is_error=True)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.info("%s failed: %r", name, error)
            return Result([text(f"{name} failed: {error}")], is_error=True)

    async def _read_resource(self, uri: str) -> Result:
        resource = self._catalogue.resources.get(uri)
        if resource is None:
            return Result([text(f"no resource {uri}")], is_error=True)
        try:
            value = resource.fn(uri)
            if inspect.isawaitable(value):
                value = await value
        except asyncio.CancelledError:
            raise
        except Exception as error:
            return Result([text(f"reading {uri} failed: {error}")], is_error=True)
        contents: list[Any]
        one = as_object(value)
        if isinstance(value, str):
            contents = [{"uri": uri, "text": value}]
        elif isinstance(value, (bytes, bytearray)):
            contents = [{"uri": uri, "blob": base64.b64encode(bytes(value)).decode()}]
        elif one is not None:
            contents = [{"uri": uri, **one}]
        else:
            contents = list(value)
        if resource.mime_type:
            for item in contents:
                item.setdefault("mimeType", resource.mime_type)
        return Result([], structured={"contents": contents})

    async def _get_prompt(self, request: dict[str, Any], ctx: Context) -> Result:
        prompt = self._catalogue.prompts.get(request["name"])
        if prompt is None:
            return Result([text(f"no prompt {request['name']}")], is_error=True)
        try:
            value = prompt.fn(request.get("arguments") or {}, ctx)
            if inspect.isawaitable(value):
                value = await value
        except asyncio.CancelledError:
            raise
        except Exception as error:
            return Result([text(f"prompt {prompt.name} failed: {error}")], is_error=True)
        rendered: dict[str, Any]
        whole = as_object(value)
        if isinstance(value, str):
            rendered = {"messages": [{"role": "user", "content": text(value)}]}
        elif whole is not None:
            rendered = dict(whole)
        else:
            rendered = {"messages": list(value)}
        if prompt.description and "description" not in rendered:
            rendered["description"] = prompt.description
        return Result([], structured=rendered)
