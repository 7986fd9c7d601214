"""Calls one tool through the gateway with the official Python MCP client (mcp 2.3.0).

Usage: python mcp_call.py <mcp url> <tool> <arguments as JSON>, with the agent's
API key in MCP_API_KEY (kept out of the command line). Prints one JSON line: the
result's content, isError and structured content, and the progress notifications
the client received.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main(url: str, tool: str, arguments: dict[str, Any]) -> None:
    progress: list[dict[str, Any]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append({"progress": value, "total": total, "message": message})

    http = create_mcp_http_client(headers={"X-Agent-API-Key": os.environ["MCP_API_KEY"]})
    async with http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool(tool, arguments, progress_callback=on_progress)
    content = [item.model_dump(exclude_none=True) for item in result.content]
    answer = {"isError": bool(result.is_error), "content": content, "structured": result.structured_content}
    print(json.dumps({**answer, "progress": progress}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
