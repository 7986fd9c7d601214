"""An agent written with mcpgw-agent: two skills that become MCP tools behind the gateway, and a message handler."""

import os

from mcpgw_agent import Agent, Context, IncomingMessage, Result, ToolError

# NATS_URL, NATS_CREDS and BUS_PREFIX come from the environment; AGENT_ID names the agent.
agent = Agent(os.environ.get("AGENT_ID", "my-agent"))


@agent.skill(
    name="reverse",
    description="Reverses text",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)
async def reverse(args: dict, ctx: Context) -> str:
    await ctx.progress(1, 2, "half way")
    return args["text"][::-1]


@agent.skill(
    name="word_count",
    description="Counts the words of a text",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    output_schema={"type": "object", "properties": {"words": {"type": "integer"}}, "required": ["words"]},
)
async def word_count(args: dict, ctx: Context) -> Result:
    words = len(args["text"].split())
    if words == 0:
        raise ToolError("there is no text to count")
    return Result(content=[{"type": "text", "text": f"{words} words"}], structured={"words": words})


@agent.on_message
async def chat(message: IncomingMessage, ctx: Context) -> str:
    """Answers conversational messages (an A2A message that names no skill): what was said, and how many
    messages this conversation holds so far (one A2A contextId is one conversation, its history the channel's).
    Without a handler the gateway refuses such messages itself."""
    earlier = [
        m
        for m in (stored["envelope"] for stored in await ctx.history())
        if m.get("type") == "chat_message"
        and m.get("text") is not None
        and not m.get("tool_call")
        and m.get("id") != ctx.message_id
    ]
    return f"you said: {message.text} (message {len(earlier) + 1} of this conversation)"


if __name__ == "__main__":
    agent.run(on_started=lambda: print(f"agent {agent.agent_id} is serving; Ctrl-C stops it", flush=True))
