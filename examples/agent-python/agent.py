"""An agent written with mcpgw-agent: two skills that become MCP tools behind the gateway."""

import os

from mcpgw_agent import Agent, Context, Result, ToolError

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


if __name__ == "__main__":
    agent.run(on_started=lambda: print(f"agent {agent.agent_id} is serving; Ctrl-C stops it", flush=True))
