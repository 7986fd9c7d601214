"""Every payload the agent hears is checked; what fails is dropped."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mcpgw_agent.messages import Invalid, check_cancel, check_inbox_message, check_input_response, decode_json

MESSAGE: dict[str, Any] = {
    "type": "chat_message",
    "id": "7f8e2d3c-1b4a-4c5d-9e6f-0a1b2c3d4e5f",
    "channel_id": "0f1e2d3c-4b5a-4697-8877-665544332211",
    "agent_id": "my-agent",
    "sender": {"kind": "mcp_client", "id": "client-1"},
    "created_at": "2026-12-01T10:00:00.000Z",
    "tool_call": {"name": "echo", "arguments": {"text": "hi"}},
    "attachments": [{"kind": "file", "file": {"uri": "http://127.0.0.1/f", "name": "a.txt", "mimeType": None}}],
    "meta": {"timeout_ms": 3000},
}


def changed(path: list[str], value: Any) -> dict[str, Any]:
    message = copy.deepcopy(MESSAGE)
    target = message
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return message


def test_takes_a_chat_message_of_this_agent() -> None:
    assert check_inbox_message(copy.deepcopy(MESSAGE), "my-agent")["id"] == MESSAGE["id"]
    assert check_inbox_message(changed(["meta"], None), "my-agent")
    assert check_inbox_message(changed(["tool_call"], None), "my-agent")
    assert check_inbox_message({**MESSAGE, "unknown": 1}, "my-agent")
    assert check_inbox_message({**MESSAGE, "tool_call": None, "text": "hi", "data": {"n": 1}}, "my-agent")


@pytest.mark.parametrize(
    "path, value",
    [
        (["type"], "agent_reply"),
        (["id"], "not-a-uuid"),
        (["channel_id"], KeyError),  # the inbox carries only messages with their channel
        (["channel_id"], None),
        (["agent_id"], "other-agent"),
        (["sender", "kind"], "robot"),
        (["sender", "id"], "x" * 201),
        (["created_at"], 5),
        (["tool_call", "name"], None),
        (["tool_call", "name"], "n" * 129),
        (["tool_call", "arguments"], []),
        (["attachments"], {}),
        (["attachments", 0, "kind"], "url"),  # type: ignore[list-item]
        (["attachments", 0, "file", "uri"], 7),  # type: ignore[list-item]
        (["meta", "timeout_ms"], -1),
        (["meta", "timeout_ms"], "3000"),
        (["meta", "timeout_ms"], True),
        (["meta"], []),
        (["data"], []),  # a conversational message's structured part is an object
        (["data"], "x"),
    ],
)
def test_drops_a_malformed_message(path: list[Any], value: Any) -> None:
    with pytest.raises(Invalid):
        check_inbox_message(changed(path, value), "my-agent")


@pytest.mark.parametrize("payload", [None, [], "x", 3])
def test_drops_what_is_not_an_object(payload: object) -> None:
    with pytest.raises(Invalid):
        check_inbox_message(payload, "my-agent")


def test_decode_json() -> None:
    assert decode_json(b'{"a":1}') == {"a": 1}
    with pytest.raises(Invalid):
        decode_json(b"\xff{")
    with pytest.raises(Invalid):
        decode_json(b"{")


def test_cancel() -> None:
    assert check_cancel({"type": "cancel", "message_id": MESSAGE["id"], "reason": None})
    for bad in ({"type": "cancel", "message_id": "x"}, {"type": "other", "message_id": MESSAGE["id"]}, []):
        with pytest.raises(Invalid):
            check_cancel(bad)


def test_input_response() -> None:
    assert check_input_response({"key": "name", "result": {"action": "accept"}})
    assert check_input_response({"key": "", "resend": True})
    assert check_input_response({"key": "k", "error": {"code": -1, "message": "no"}})
    for bad in ({"result": {}}, {"key": "k", "error": {"code": "x", "message": "m"}}, {"key": "k", "resend": "yes"}):
        with pytest.raises(Invalid):
            check_input_response(bad)
