"""The agent's pure parts: settings, the catalogue, running a skill and turning its output into a reply."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpgw_agent import ATTEMPTS_EXHAUSTED, Agent, AgentError, Context, IncomingMessage, Result, ToolError
from mcpgw_agent.cancellation.cancellations import Call
from mcpgw_agent.options import nats_servers, settings_from_env
from mcpgw_agent.skills.message_handler import NO_MESSAGE_HANDLER

from .test_messages import MESSAGE


def test_settings_from_the_environment_unless_given() -> None:
    env = {"NATS_URL": "nats://x:4222", "BUS_PREFIX": "p", "INBOX_ACK_WAIT_MS": "1500", "NATS_CREDS": "/c"}
    settings = settings_from_env(env)
    assert (settings.nats_url, settings.prefix, settings.ack_wait_ms, settings.creds_path) == (
        "nats://x:4222",
        "p",
        1500,
        "/c",
    )
    assert settings.max_deliver == 5 and settings.concurrency == 64 and settings.shutdown_grace_ms == 20_000
    assert settings_from_env(env, prefix="q", ack_wait_ms=900).prefix == "q"
    assert settings_from_env({}).prefix == "mcpgw"
    with pytest.raises(AgentError, match="INBOX_ACK_WAIT_MS"):
        settings_from_env({"INBOX_ACK_WAIT_MS": "100"})
    with pytest.raises(AgentError, match="POD_CONCURRENCY"):
        settings_from_env({"POD_CONCURRENCY": "many"})


def test_nats_url_takes_a_comma_separated_list_of_servers() -> None:
    assert nats_servers("nats://a:4222") == ["nats://a:4222"]
    assert nats_servers("nats://a:4222, nats://b:4223 ,nats://c:4224,") == [
        "nats://a:4222",
        "nats://b:4223",
        "nats://c:4224",
    ]
    with pytest.raises(AgentError, match="names no server"):
        nats_servers(" , ")


def test_an_agent_needs_a_valid_id() -> None:
    with pytest.raises(AgentError):
        Agent(env={})
    with pytest.raises(AgentError):
        Agent("bad.id", env={})
    assert Agent(env={"AGENT_ID": "from-env"}).agent_id == "from-env"


def make_agent() -> Agent:
    agent = Agent("my-agent", env={"POD_ID": "pod-1"})

    @agent.skill(
        name="reverse",
        description="Reverses text",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    )
    async def reverse(args: dict[str, Any], ctx: Context) -> str:
        return args["text"][::-1]

    @agent.skill(name="structured", output_schema={"type": "object"}, side_effect_class="write", title="S")
    async def structured(args: dict[str, Any], ctx: Context) -> Result:
        return Result(content=[{"type": "text", "text": "1"}], structured={"n": 1})

    @agent.skill(name="refuses")
    async def refuses(args: dict[str, Any], ctx: Context) -> str:
        raise ToolError("not today")

    @agent.skill(name="breaks")
    def breaks(args: dict[str, Any], ctx: Context) -> str:
        raise RuntimeError("boom")

    @agent.skill(name="bad_output")
    async def bad_output(args: dict[str, Any], ctx: Context) -> Any:
        return 42

    @agent.resource("test://hello", "Hello", mime_type="text/plain")
    async def hello(uri: str) -> str:
        return "hello world"

    @agent.prompt("greet", description="Greets", arguments=[{"name": "who", "required": True}])
    async def greet(args: dict[str, Any], ctx: Context) -> str:
        return f"Greet {args.get('who')}"

    return agent


def test_the_catalogue() -> None:
    catalogue = make_agent().catalogue()
    assert catalogue["agent_id"] == "my-agent" and catalogue["pod_id"] == "pod-1"
    reverse = catalogue["skills"][0]
    assert reverse == {
        "name": "reverse",
        "description": "Reverses text",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        "side_effect_class": "read",
    }
    assert catalogue["skills"][1] == {
        "name": "structured",
        "description": "structured",
        "input_schema": {"type": "object", "properties": {}},
        "title": "S",
        "output_schema": {"type": "object"},
        "side_effect_class": "write",
    }
    assert catalogue["resources"] == [{"uri": "test://hello", "name": "Hello", "mimeType": "text/plain"}]
    assert catalogue["prompts"] == [
        {"name": "greet", "description": "Greets", "arguments": [{"name": "who", "required": True}]}
    ]


def test_a_skill_is_registered_once() -> None:
    agent = make_agent()
    with pytest.raises(ValueError):
        agent.skill(name="reverse")(lambda args, ctx: "")


async def dispatch(agent: Agent, **fields: Any) -> Result:
    message = {**MESSAGE, "tool_call": None, **fields}
    runner = agent._runner  # the skill runner the agent wires (skills/skill_runner.py)
    return await runner.dispatch(message, runner.context(message, Call(message["id"], None, {})))


async def test_runs_skills_and_maps_their_failures() -> None:
    agent = make_agent()
    assert await dispatch(agent, tool_call={"name": "reverse", "arguments": {"text": "abc"}}) == Result(
        [{"type": "text", "text": "cba"}]
    )
    assert (await dispatch(agent, tool_call={"name": "structured", "arguments": {}})).structured == {"n": 1}
    assert await dispatch(agent, tool_call={"name": "refuses", "arguments": {}}) == Result(
        [{"type": "text", "text": "not today"}], None, True
    )
    assert await dispatch(agent, tool_call={"name": "breaks", "arguments": {}}) == Result(
        [{"type": "text", "text": "breaks failed: boom"}], None, True
    )
    bad = await dispatch(agent, tool_call={"name": "bad_output", "arguments": {}})
    assert bad.is_error and bad.content[0]["text"].startswith("bad_output failed: a skill returns")
    assert await dispatch(agent, tool_call={"name": "nope", "arguments": {}}) == Result(
        [{"type": "text", "text": 'this agent has no skill "nope"'}], None, True
    )
    # A conversational message to an agent without a handler (the gateway sends none): an error reply.
    assert await dispatch(agent, text="just chat") == Result([{"type": "text", "text": NO_MESSAGE_HANDLER}], None, True)


async def test_conversational_messages_reach_the_handler() -> None:
    agent = make_agent()
    assert "conversation" not in agent.catalogue()
    heard: list[IncomingMessage] = []

    @agent.on_message
    async def chat(message: IncomingMessage, ctx: Context) -> str:
        heard.append(message)
        if message.text == "refuse":
            raise ToolError("not now")
        return f"you said {message.text} ({ctx.message_id})"

    # Registered as a capability: the gateway sends conversational messages only to such agents.
    assert agent.catalogue()["conversation"] is True
    said = await dispatch(agent, text="hi", data={"n": 1})
    assert said == Result([{"type": "text", "text": f"you said hi ({MESSAGE['id']})"}])
    assert heard == [IncomingMessage("hi", {"n": 1})]
    assert await dispatch(agent, text="refuse") == Result([{"type": "text", "text": "not now"}], None, True)
    # A tool call is still a tool call, and a resource read a read: only a message that asks for none is a message.
    reversed_ = await dispatch(agent, tool_call={"name": "reverse", "arguments": {"text": "ab"}})
    assert reversed_.content == [{"type": "text", "text": "ba"}]
    assert len(heard) == 2


async def test_resources_and_prompts() -> None:
    agent = make_agent()
    read = await dispatch(agent, resource_read={"uri": "test://hello"})
    assert read == Result([], {"contents": [{"uri": "test://hello", "text": "hello world", "mimeType": "text/plain"}]})
    assert (await dispatch(agent, resource_read={"uri": "test://none"})).is_error
    prompt = await dispatch(agent, prompt_get={"name": "greet", "arguments": {"who": "Ada"}})
    assert prompt.structured == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Greet Ada"}}],
        "description": "Greets",
    }


def test_the_reply_envelope() -> None:
    agent = make_agent()
    reply = agent._replier.to_reply(MESSAGE, Result([{"type": "text", "text": "x"}], {"a": 1}, True))
    assert reply["type"] == "agent_reply"
    assert reply["in_reply_to"] == MESSAGE["id"] and reply["channel_id"] == MESSAGE["channel_id"]
    assert reply["agent_id"] == "my-agent" and reply["meta"] == {"pod_id": "pod-1"}
    assert reply["structured_content"] == {"a": 1} and reply["is_error"] is True
    assert reply["created_at"].endswith("Z")
    plain = agent._replier.to_reply(MESSAGE, Result([]))
    assert "is_error" not in plain and "structured_content" not in plain
    given_up = agent._replier.to_reply(MESSAGE, Result([], is_error=True), {"outcome": ATTEMPTS_EXHAUSTED})
    assert given_up["meta"] == {"pod_id": "pod-1", "outcome": "attempts_exhausted"}


def test_a_reply_the_store_cannot_hold_is_a_tool_error() -> None:
    reply = make_agent()._replier.to_reply(MESSAGE, Result([{"type": "text", "text": "nul\x00"}]))
    assert reply["is_error"] is True
    assert "U+0000" in reply["content"][0]["text"]


def test_a_reply_the_bus_cannot_carry_is_a_tool_error() -> None:
    reply = make_agent()._replier.to_reply(MESSAGE, Result([{"type": "text", "text": "x" * 2_000_000}], {"big": True}))
    assert reply["is_error"] is True
    assert "too large to deliver" in reply["content"][0]["text"]
    assert "structured_content" not in reply


async def test_a_stopped_call_cancels_its_task() -> None:
    call = Call("m", None, {})
    call.task = asyncio.create_task(asyncio.sleep(10))
    call.stop("deadline")
    call.stop("cancelled")  # the first reason stays
    await asyncio.wait({call.task})
    assert call.task.cancelled() and call.stop_reason == "deadline"
