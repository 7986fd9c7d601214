"""The contract agent of the Python SDK (tools/agent-contract/README.md).

Started by the agent contract suite with NATS_URL, NATS_CREDS, BUS_PREFIX,
AGENT_ID, INBOX_ACK_WAIT_MS and CONTRACT_MARKERS in its environment. Prints
`contract agent ready` once started; exits non-zero with the reason on stderr
when it cannot start; SIGTERM drains and exits 0.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import sys
from typing import Any

from mcpgw_agent import Agent, AgentError, Context, IncomingMessage, Result, ToolError

PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
EMPTY = {"type": "object", "properties": {}}

MARKERS = os.environ.get("CONTRACT_MARKERS") or "."


def write_marker(name: str, content: str) -> None:
    """Written whole: a temporary name, then renamed."""
    path = os.path.join(MARKERS, name)
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as file:
        file.write(content)
    os.replace(temporary, path)


def append_marker(name: str, line: str) -> None:
    with open(os.path.join(MARKERS, name), "a", encoding="utf-8") as file:
        file.write(line + "\n")


def build(agent_id: str) -> Agent:
    agent = Agent(agent_id)

    @agent.skill(
        name="echo",
        description="Returns its text",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    )
    async def echo(args: dict[str, Any], ctx: Context) -> str:
        return str(args["text"])

    @agent.skill(name="image", description="Returns a 1x1 PNG and a text", input_schema=EMPTY)
    async def image(args: dict[str, Any], ctx: Context) -> list[dict[str, Any]]:
        return [{"type": "image", "mimeType": "image/png", "data": PNG_1X1}, {"type": "text", "text": "a pixel"}]

    @agent.skill(
        name="add",
        description="Adds two numbers",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
        output_schema={"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]},
    )
    async def add(args: dict[str, Any], ctx: Context) -> Result:
        total = args["a"] + args["b"]
        if isinstance(total, float) and total.is_integer():
            total = int(total)
        return Result(content=[{"type": "text", "text": str(total)}], structured={"sum": total})

    @agent.skill(name="fail", description="Fails on purpose", input_schema=EMPTY)
    async def fail(args: dict[str, Any], ctx: Context) -> str:
        raise ToolError("this tool fails on purpose")

    @agent.skill(
        name="report",
        description="Reports progress and log lines, step by step",
        input_schema={"type": "object", "properties": {"steps": {"type": "integer"}}, "required": ["steps"]},
    )
    async def report(args: dict[str, Any], ctx: Context) -> str:
        steps = int(args["steps"])
        for i in range(1, steps + 1):
            await ctx.progress(i, steps, f"step {i}")
            await ctx.log("info", {"step": i, "call_id": ctx.call_id})
            await asyncio.sleep(0.02)
        return f"reported {steps}"

    @agent.skill(name="ask_name", description="Asks the client for a name", input_schema=EMPTY)
    async def ask_name(args: dict[str, Any], ctx: Context) -> str:
        answer = await ctx.ask(
            "elicitation/create",
            {
                "message": "Your name?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                },
            },
            key="name",
        )
        action = answer.get("action")
        content = answer.get("content") or {}
        if action == "accept" and isinstance(content, dict) and "name" in content:
            return f"hello {content['name']}"
        return f"no name ({action})"

    @agent.skill(
        name="wait",
        description="Waits ms milliseconds, or until the call is stopped",
        input_schema={
            "type": "object",
            "properties": {"key": {"type": "string"}, "ms": {"type": "integer"}},
            "required": ["key", "ms"],
        },
    )
    async def wait(args: dict[str, Any], ctx: Context) -> str:
        key, ms = str(args["key"]), int(args["ms"])
        append_marker(f"started-{key}", str(os.getpid()))
        try:
            await asyncio.sleep(ms / 1000)
        except asyncio.CancelledError:
            if ctx.stop_reason:
                write_marker(f"stopped-{key}", ctx.stop_reason)
            raise
        return f"waited {ms} in {os.getpid()}"

    @agent.skill(name="attachment", description="Downloads every attachment", input_schema=EMPTY)
    async def attachment(args: dict[str, Any], ctx: Context) -> Result:
        files = []
        for part in ctx.attachments:
            data = await ctx.download(part)
            files.append({"name": part.name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
        summary = {"files": files}
        return Result(
            content=[{"type": "text", "text": json.dumps(summary, separators=(",", ":"))}], structured=summary
        )

    @agent.on_message
    async def on_message(message: IncomingMessage, ctx: Context) -> str:
        earlier = [
            stored
            for stored in await ctx.history()
            if _is_conversational(stored.get("envelope"), ctx.message_id)
        ]
        data = f" {json.dumps(message.data, separators=(',', ':'), ensure_ascii=False)}" if message.data else ""
        return f"heard {message.text}{data} ({len(earlier) + 1} in this conversation)"

    return agent


def _is_conversational(envelope: Any, current: str) -> bool:
    """An earlier conversational message of the channel: a chat_message with text and no tool call."""
    return (
        isinstance(envelope, dict)
        and envelope.get("type") == "chat_message"
        and envelope.get("text") is not None
        and envelope.get("tool_call") is None
        and envelope.get("id") != current
    )


def main() -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s")
    try:
        agent = build(os.environ.get("AGENT_ID", ""))
        # Blocking: SIGTERM / SIGINT drain, then it returns.
        agent.run(on_started=lambda: print("contract agent ready", flush=True))
    except AgentError as error:
        print(f"contract agent cannot start: {error}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
