"""An agent with a resource and a prompt (the contract agent has skills only), for the e2e test.

Environment as for the contract agent (NATS_URL, NATS_CREDS, BUS_PREFIX, AGENT_ID).
Prints `catalogue agent ready` once started.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from mcpgw_agent import Agent, AgentError, Context

agent = Agent()


@agent.resource("test://python/readme", "Readme", description="A text resource", mime_type="text/plain")
async def readme(uri: str) -> str:
    return "read from python"


@agent.resource("test://python/pixel", "Pixel", mime_type="image/png")
async def pixel(uri: str) -> bytes:
    return b"\x89PNG\r\n\x1a\n"


@agent.prompt("greet", description="Greets someone", arguments=[{"name": "who", "required": True}])
async def greet(args: dict[str, Any], ctx: Context) -> str:
    return f"Say hello to {args.get('who')}"


@agent.skill(name="noop", description="Does nothing")
async def noop(args: dict[str, Any], ctx: Context) -> str:
    return "ok"


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    try:
        agent.run(on_started=lambda: print("catalogue agent ready", flush=True))
    except AgentError as error:
        print(f"catalogue agent cannot start: {error}", file=sys.stderr, flush=True)
        sys.exit(1)
