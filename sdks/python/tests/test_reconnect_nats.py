"""Reconnects: a nats-server of the test's own (memory storage) is restarted under a running agent.

The agent registers again after the reconnect, and binds its consumer again
once the message service (the stand) has made the lost stream again. Needs
the nats-server binary; skipped without it.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import tempfile
import uuid
from typing import Any, AsyncIterator

import nats
import pytest

from mcpgw_agent import Agent, Context

from .test_inbox_nats import AGENT, Stand, call, until

NATS_SERVER = shutil.which("nats-server")
pytestmark = pytest.mark.skipif(NATS_SERVER is None, reason="no nats-server binary")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    def __init__(self) -> None:
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="py-nats-")
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    async def start(self) -> None:
        assert NATS_SERVER
        self.process = subprocess.Popen(
            [NATS_SERVER, "-a", "127.0.0.1", "-p", str(self.port), "-js", "-sd", self.dir],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                await asyncio.sleep(0.05)
        raise RuntimeError("nats-server did not start")

    def stop(self) -> None:
        if self.process:
            self.process.kill()
            self.process.wait()

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    server = Server()
    await server.start()
    try:
        yield server
    finally:
        server.remove()


async def test_registers_again_and_binds_again_after_the_server_restarts(server: Server) -> None:
    prefix = f"pyre_{uuid.uuid4().hex[:8]}"
    nc = await nats.connect(server.url, max_reconnect_attempts=-1, reconnect_time_wait=0.2)  # type: ignore[arg-type]
    stand = Stand(nc, prefix)
    await stand.start()
    agent = Agent(AGENT, nats_url=server.url, prefix=prefix, env={}, ack_wait_ms=2000)

    @agent.skill(name="echo")
    async def echo(args: dict[str, Any], ctx: Context) -> str:
        return str(args["text"])

    await agent.start()
    try:
        assert len(stand.registrations) == 1
        server.stop()
        await asyncio.sleep(0.5)
        await server.start()  # memory storage: the stream and the consumer are gone
        await until("a second registration", lambda: len(stand.registrations) >= 2, timeout=20)
        # The message service makes the stream again; the agent binds its consumer again.
        for _ in range(100):
            try:
                await stand.js.add_stream(name=stand.subjects.stream, subjects=[f"{prefix}.agents.*.inbox"])
                break
            except Exception:
                await asyncio.sleep(0.1)
        await stand.post(call(stand, "echo", text="after"))
        await until("the reply after the restart", lambda: stand.direct, timeout=20)
        assert stand.direct[0]["reply"]["content"] == [{"type": "text", "text": "after"}]
    finally:
        await agent.stop()
        for sub in stand.subs:
            await sub.unsubscribe()
        await nc.close()
