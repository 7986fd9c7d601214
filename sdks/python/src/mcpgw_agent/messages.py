"""Checks of the payloads the agent hears (docs/asyncapi.yaml): anything else is dropped."""

from __future__ import annotations

import json
import re
from typing import Any

from .json_values import as_list, as_object

__all__ = ["Invalid", "check_inbox_message", "check_cancel", "check_input_response", "decode_json", "UUID"]

UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")
_SENDER_KINDS = frozenset({"mcp_client", "agent", "user"})


class Invalid(ValueError):
    """A payload that fails its schema."""


def decode_json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise Invalid("not JSON") from error


def _str(value: object, where: str, max_length: int | None = None, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise Invalid(f"{where} must be a string")
    if max_length is not None and len(value) > max_length:
        raise Invalid(f"{where} is longer than {max_length}")


def _uuid(value: object, where: str) -> None:
    if not isinstance(value, str) or not UUID.match(value):
        raise Invalid(f"{where} must be a UUID")


def _obj(value: object, where: str) -> dict[str, Any]:
    checked = as_object(value)
    if checked is None:
        raise Invalid(f"{where} must be an object")
    return checked


def _optional_obj(value: object, where: str) -> dict[str, Any] | None:
    return None if value is None else _obj(value, where)


def check_inbox_message(payload: object, agent_id: str) -> dict[str, Any]:
    """A chat message of this agent's inbox, with its channel; raises Invalid otherwise."""
    message = _obj(payload, "message")
    if message.get("type") != "chat_message":
        raise Invalid("type must be chat_message")
    _uuid(message.get("id"), "id")
    _uuid(message.get("channel_id"), "channel_id")
    if message.get("agent_id") != agent_id:
        raise Invalid("agent_id is not this agent")
    sender = _obj(message.get("sender"), "sender")
    if sender.get("kind") not in _SENDER_KINDS:
        raise Invalid("sender.kind is unknown")
    _str(sender.get("id"), "sender.id", 200)
    _str(message.get("created_at"), "created_at")
    _str(message.get("text"), "text", optional=True)
    _optional_obj(message.get("data"), "data")
    call = _optional_obj(message.get("tool_call"), "tool_call")
    if call is not None:
        _str(call.get("name"), "tool_call.name", 128)
        _obj(call.get("arguments"), "tool_call.arguments")
    read = _optional_obj(message.get("resource_read"), "resource_read")
    if read is not None:
        _str(read.get("uri"), "resource_read.uri", 2048)
    prompt = _optional_obj(message.get("prompt_get"), "prompt_get")
    if prompt is not None:
        _str(prompt.get("name"), "prompt_get.name", 200)
        _obj(prompt.get("arguments"), "prompt_get.arguments")
    if message.get("attachments") is not None:
        attachments = as_list(message.get("attachments"))
        if attachments is None:
            raise Invalid("attachments must be an array")
        for item in attachments:
            part = _obj(item, "attachment")
            if part.get("kind") != "file":
                raise Invalid("attachment.kind must be file")
            file = _obj(part.get("file"), "attachment.file")
            _str(file.get("uri"), "attachment.file.uri", 4096)
            _str(file.get("name"), "attachment.file.name", 255, optional=True)
            _str(file.get("mimeType"), "attachment.file.mimeType", 255, optional=True)
            _optional_obj(part.get("metadata"), "attachment.metadata")
    meta = _optional_obj(message.get("meta"), "meta")
    if meta is not None and meta.get("timeout_ms") is not None:
        timeout = meta["timeout_ms"]
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout >= 0:
            raise Invalid("meta.timeout_ms must be a number, 0 or more")
    return message


def check_cancel(payload: object) -> dict[str, Any]:
    cancel = _obj(payload, "cancel")
    if cancel.get("type") != "cancel":
        raise Invalid("type must be cancel")
    _uuid(cancel.get("message_id"), "message_id")
    _str(cancel.get("reason"), "reason", 1000, optional=True)
    return cancel


def check_input_response(payload: object) -> dict[str, Any]:
    answer = _obj(payload, "input response")
    _str(answer.get("key"), "key")
    _optional_obj(answer.get("result"), "result")
    error = _optional_obj(answer.get("error"), "error")
    if error is not None:
        if isinstance(error.get("code"), bool) or not isinstance(error.get("code"), (int, float)):
            raise Invalid("error.code must be a number")
        _str(error.get("message"), "error.message")
    if answer.get("resend") is not None and not isinstance(answer.get("resend"), bool):
        raise Invalid("resend must be a boolean")
    return answer
