"""The delivery contract against a real nats-server (JetStream), with a stand-in message service and gateway.

Needs a nats-server with JetStream at NATS_URL (default nats://127.0.0.1:4222,
no auth); skipped when none answers. Each test has a prefix of its own.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from typing import Any, AsyncIterator

import nats
import pytest
from nats.js.api import RetentionPolicy, StorageType, StreamConfig

from mcpgw_agent import ATTEMPTS_EXHAUSTED, Agent, Context
from mcpgw_agent.subjects import Subjects

NATS_URL = os.environ.get("NATS_URL", "nats://127.0.0.1:4222")
AGENT = "py-test-agent"
CHANNEL = str(uuid.uuid4())


async def nats_or_skip() -> Any:
    try:
        return await nats.connect(NATS_URL, connect_timeout=1, max_reconnect_attempts=0, allow_reconnect=False)
    except Exception:
        pytest.skip(f"no nats-server at {NATS_URL}")


class Stand:
    """The services around the agent: a gateway that takes registrations, a message service replica that stores replies."""

    def __init__(self, nc: Any, prefix: str) -> None:
        self.nc = nc
        self.js = nc.jetstream()
        self.subjects = Subjects(prefix, AGENT)
        self.prefix = prefix
        self.replica = f"{prefix}.ms.replicas.r1.replies.{AGENT}"
        self.direct: list[dict[str, Any]] = []  # replies published to the replica (with Mcpgw-Ack)
        self.requested: list[tuple[str, dict[str, Any]]] = []  # replies sent as requests (subject, reply)
        self.registrations: list[dict[str, Any]] = []
        self.ack_direct = True
        self.replica_up = True
        self.store_failures = 0  # answer `unavailable` this many times at ms.agents.X.replies
        self.subs: list[Any] = []

    async def start(self) -> None:
        await self.js.add_stream(
            StreamConfig(
                name=self.subjects.stream,
                subjects=[f"{self.prefix}.agents.*.inbox"],
                retention=RetentionPolicy.WORK_QUEUE,
                storage=StorageType.MEMORY,
            )
        )
        self.subs.append(await self.nc.subscribe(self.subjects.register, cb=self.on_register))
        self.subs.append(await self.nc.subscribe(self.replica, cb=self.on_replica))
        self.subs.append(await self.nc.subscribe(self.subjects.store_reply, cb=self.on_store))

    async def stop(self) -> None:
        for sub in self.subs:
            await sub.unsubscribe()
        await self.js.delete_stream(self.subjects.stream)

    async def on_register(self, msg: Any) -> None:
        payload = json.loads(msg.data)
        self.registrations.append(payload)
        await msg.respond(json.dumps({"ok": True, "data": {"registered": len(payload["skills"])}}).encode())

    async def on_replica(self, msg: Any) -> None:
        reply = json.loads(msg.data)
        if msg.reply:
            if not self.replica_up:
                return
            self.requested.append((msg.subject, reply))
            await msg.respond(self.stored(reply))
            return
        self.direct.append({"reply": reply, "ack": (msg.headers or {}).get("Mcpgw-Ack")})
        if self.ack_direct:
            await self.nc.publish(msg.headers["Mcpgw-Ack"], b"+ACK")

    async def on_store(self, msg: Any) -> None:
        if self.store_failures > 0:
            self.store_failures -= 1
            await msg.respond(json.dumps({"ok": False, "error": {"code": "unavailable", "message": "db"}}).encode())
            return
        reply = json.loads(msg.data)["envelope"]
        self.requested.append((msg.subject, reply))
        await msg.respond(self.stored(reply))

    @staticmethod
    def stored(reply: dict[str, Any]) -> bytes:
        return json.dumps({"ok": True, "data": {"channel_id": reply["channel_id"], "seq": 1, "duplicate": False}}).encode()

    def message(self, **fields: Any) -> dict[str, Any]:
        return {
            "type": "chat_message",
            "id": str(uuid.uuid4()),
            "channel_id": CHANNEL,
            "agent_id": AGENT,
            "sender": {"kind": "mcp_client", "id": "c1"},
            "created_at": "2026-12-01T10:00:00.000Z",
            **fields,
        }

    async def post(self, message: dict[str, Any] | bytes, reply_to: str | None = None) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        headers = {"Mcpgw-Reply-To": reply_to or self.replica}
        if isinstance(message, dict):
            headers["Nats-Msg-Id"] = message["id"]
        await self.js.publish(self.subjects.inbox, data, headers=headers)

    async def consumer(self) -> Any:
        return await self.js.consumer_info(self.subjects.stream, self.subjects.consumer)

    async def settled(self, timeout: float = 10.0) -> Any:
        """Waits until the consumer holds nothing (everything acked or terminated)."""
        for _ in range(int(timeout / 0.05)):
            info = await self.consumer()
            if info.num_ack_pending == 0 and info.num_pending == 0:
                return info
            await asyncio.sleep(0.05)
        raise AssertionError(f"the consumer never settled: {info}")


async def until(what: str, probe: Any, timeout: float = 10.0) -> Any:
    for _ in range(int(timeout / 0.02)):
        value = probe()
        if value:
            return value
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
async def stand() -> AsyncIterator[Stand]:
    nc = await nats_or_skip()
    prefix = f"pytest_{uuid.uuid4().hex[:10]}"
    stand = Stand(nc, prefix)
    await stand.start()
    try:
        yield stand
    finally:
        await stand.stop()
        await nc.close()


class Runs:
    def __init__(self) -> None:
        self.count: dict[str, int] = {}
        self.stopped: dict[str, str | None] = {}

    def ran(self, key: str) -> None:
        self.count[key] = self.count.get(key, 0) + 1


def make_agent(stand: Stand, runs: Runs, **settings: Any) -> Agent:
    agent = Agent(
        AGENT,
        nats_url=NATS_URL,
        prefix=stand.prefix,
        pod_id="pod-t",
        env={},
        **{"ack_wait_ms": 1000, "shutdown_grace_ms": 300, **settings},
    )

    @agent.skill(name="echo")
    async def echo(args: dict[str, Any], ctx: Context) -> str:
        runs.ran(args["text"])
        return args["text"]

    @agent.skill(name="sleep")
    async def sleep(args: dict[str, Any], ctx: Context) -> str:
        runs.ran(args["key"])
        try:
            await asyncio.sleep(args["ms"] / 1000)
        except asyncio.CancelledError:
            runs.stopped[args["key"]] = ctx.stop_reason
            raise
        return "slept"

    return agent


@pytest.fixture
async def running(stand: Stand) -> AsyncIterator[tuple[Agent, Runs]]:
    runs = Runs()
    agent = make_agent(stand, runs)
    await agent.start()
    try:
        yield agent, runs
    finally:
        await agent.stop()


def call(stand: Stand, skill: str, **arguments: Any) -> dict[str, Any]:
    return stand.message(tool_call={"name": skill, "arguments": arguments})


async def test_registers_then_replies_straight_to_the_replica_which_acks(stand: Stand, running: Any) -> None:
    agent, runs = running
    assert stand.registrations[0]["agent_id"] == AGENT
    assert [s["name"] for s in stand.registrations[0]["skills"]] == ["echo", "sleep"]
    message = call(stand, "echo", text="hi")
    await stand.post(message)
    await until("the direct reply", lambda: stand.direct)
    sent = stand.direct[0]
    assert sent["reply"]["in_reply_to"] == message["id"]
    assert sent["reply"]["content"] == [{"type": "text", "text": "hi"}]
    assert sent["ack"].startswith(f"$JS.ACK.{stand.subjects.stream}.{stand.subjects.consumer}.1.")
    await stand.settled()
    assert stand.requested == []


async def test_a_lost_reply_is_sent_again_by_request_without_running_the_skill(stand: Stand, running: Any) -> None:
    agent, runs = running
    stand.ack_direct = False  # the replica died before storing it
    message = call(stand, "echo", text="once")
    await stand.post(message)
    await until("the reply, sent again by request", lambda: stand.requested, timeout=10)
    subject, reply = stand.requested[0]
    assert subject == stand.replica  # the same replica first
    assert reply == stand.direct[0]["reply"]  # the same reply (same id)
    await stand.settled()
    assert runs.count["once"] == 1


async def test_the_reply_is_stored_at_any_replica_with_backoff_when_its_replica_is_gone(
    stand: Stand, running: Any
) -> None:
    agent, runs = running
    stand.ack_direct = False
    stand.replica_up = False
    stand.store_failures = 2
    message = call(stand, "echo", text="retry")
    await stand.post(message)
    await until("the reply stored at any replica", lambda: stand.requested, timeout=15)
    assert stand.requested[0][0] == stand.subjects.store_reply
    await stand.settled()
    assert runs.count["retry"] == 1


async def test_the_last_delivery_answers_with_an_error_instead_of_running(stand: Stand) -> None:
    runs = Runs()
    agent = make_agent(stand, runs, max_deliver=1)
    await agent.start()
    await agent.stop()  # the consumer exists (max_deliver 2); nobody pulls now
    message = call(stand, "echo", text="never")
    await stand.post(message)
    # A pod that died holding the message: delivery 1 is never answered.
    dead = await stand.js.pull_subscribe_bind(stand.subjects.consumer, stand.subjects.stream)
    (taken,) = await dead.fetch(1, timeout=5)
    assert taken.metadata.num_delivered == 1
    await asyncio.sleep(1.2)  # the ack wait passes
    agent = make_agent(stand, runs, max_deliver=1)
    await agent.start()
    try:
        await until("the give-up reply", lambda: stand.requested, timeout=10)
        reply = stand.requested[-1][1]
        assert reply["is_error"] is True
        assert reply["meta"]["outcome"] == ATTEMPTS_EXHAUSTED
        assert reply["content"] == [{"type": "text", "text": "the agent could not complete this call after 1 attempts"}]
        await stand.settled()
        assert "never" not in runs.count
    finally:
        await agent.stop()
        await dead.unsubscribe()


async def test_a_cancelled_call_stops_its_skill_and_is_acked_with_no_reply(stand: Stand, running: Any) -> None:
    agent, runs = running
    message = call(stand, "sleep", key="c", ms=20_000)
    await stand.post(message)
    await until("the skill to start", lambda: runs.count.get("c"))
    await stand.nc.publish(stand.subjects.cancel, json.dumps({"type": "cancel", "message_id": message["id"]}).encode())
    await until("the skill to stop", lambda: "c" in runs.stopped)
    assert runs.stopped["c"] == "cancelled"
    await stand.settled()
    assert stand.direct == [] and stand.requested == []


async def test_a_cancellation_before_the_message_drops_it(stand: Stand, running: Any) -> None:
    agent, runs = running
    message = call(stand, "sleep", key="early", ms=20_000)
    await stand.nc.publish(stand.subjects.cancel, json.dumps({"type": "cancel", "message_id": message["id"]}).encode())
    await stand.nc.flush()
    await asyncio.sleep(0.1)
    await stand.post(message)
    await stand.settled()
    assert "early" not in runs.count and stand.direct == []


async def test_the_deadline_stops_the_skill(stand: Stand, running: Any) -> None:
    agent, runs = running
    message = {**call(stand, "sleep", key="d", ms=20_000), "meta": {"timeout_ms": 300}}
    await stand.post(message)
    await until("the skill to stop", lambda: "d" in runs.stopped)
    assert runs.stopped["d"] == "deadline"
    await stand.settled()
    assert stand.direct == [] and stand.requested == []


async def test_a_malformed_message_is_terminated(stand: Stand, running: Any) -> None:
    agent, runs = running
    await stand.post(b"not json")
    await stand.post({**call(stand, "echo", text="x"), "agent_id": "someone-else"})
    await stand.post({**call(stand, "echo", text="y"), "channel_id": None})
    await stand.settled()
    assert runs.count == {} and stand.direct == []


async def test_a_foreign_reply_subject_is_never_published_to(stand: Stand, running: Any) -> None:
    agent, runs = running
    heard: list[Any] = []
    evil = f"{stand.prefix}.ms.replicas.r1.replies.other-agent"

    async def hear(msg: Any) -> None:
        heard.append(msg)

    sub = await stand.nc.subscribe(evil, cb=hear)
    try:
        await stand.post(call(stand, "echo", text="z"), reply_to=evil)
        await until("the reply stored by request", lambda: stand.requested)
        assert stand.requested[0][0] == stand.subjects.store_reply
        await stand.settled()
        assert heard == []
    finally:
        await sub.unsubscribe()


async def test_a_stop_hands_running_messages_back(stand: Stand) -> None:
    runs = Runs()
    agent = make_agent(stand, runs)
    await agent.start()
    message = call(stand, "sleep", key="drain", ms=20_000)
    await stand.post(message)
    await until("the skill to start", lambda: runs.count.get("drain"))
    await agent.stop()  # grace 300 ms: the skill is stopped and its message naked
    assert runs.stopped["drain"] is None
    info = await stand.consumer()
    assert info.num_ack_pending + info.num_pending + info.num_redelivered >= 1
    # Another pod takes it at once (no ack wait).
    second = make_agent(stand, runs)
    await second.start()
    try:
        await until("the second run", lambda: runs.count["drain"] == 2, timeout=5)
    finally:
        await second.stop()
