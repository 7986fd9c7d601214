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
        self.direct: list[dict[str, Any]] = []  # first-delivery replies to the replica (with Mcpgw-Ack)
        self.requested: list[tuple[str, dict[str, Any]]] = []  # replies sent as requests (subject, reply)
        self.registrations: list[dict[str, Any]] = []
        self.ack_direct = True
        self.replica_up = True
        self.store_failures = 0  # answer `unavailable` this many times at ms.agents.X.replies
        self.answered: set[str] = set()  # messages with a reply stored (by any pod)
        self.asked: list[str] = []  # messages asked about at ms.agents.X.answered
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
        self.subs.append(await self.nc.subscribe(self.subjects.answered, cb=self.on_answered))

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
        ack = (msg.headers or {}).get("Mcpgw-Ack")
        if ack is None:  # a retry by request: stored, answered, the agent acks
            if not self.replica_up:
                return
            self.requested.append((msg.subject, reply))
            await msg.respond(self.stored(reply))
            return
        # A first delivery's reply: stored, acked for the agent, then answered.
        self.direct.append({"reply": reply, "ack": ack, "request": bool(msg.reply)})
        if self.ack_direct:  # else the reply was lost: nothing stored, acked or answered
            await self.nc.publish(ack, b"+ACK")
            await msg.respond(self.stored(reply))

    async def on_store(self, msg: Any) -> None:
        if self.store_failures > 0:
            self.store_failures -= 1
            await msg.respond(json.dumps({"ok": False, "error": {"code": "unavailable", "message": "db"}}).encode())
            return
        reply = json.loads(msg.data)["envelope"]
        self.requested.append((msg.subject, reply))
        await msg.respond(self.stored(reply))

    async def on_answered(self, msg: Any) -> None:
        message_id = json.loads(msg.data)["message_id"]
        self.asked.append(message_id)
        await msg.respond(json.dumps({"ok": True, "data": {"answered": message_id in self.answered}}).encode())

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
    assert sent["request"]  # answered once stored and acked, so the agent knows it arrived
    await stand.settled()
    assert stand.requested == []


async def test_a_reply_its_replica_never_confirms_is_stored_at_any_replica_without_running_the_skill(
    stand: Stand, running: Any
) -> None:
    agent, runs = running
    stand.ack_direct = False  # lost with a NATS server, or the replica died before storing it
    message = call(stand, "echo", text="once")
    await stand.post(message)
    await until("the reply, stored by request", lambda: stand.requested, timeout=10)
    subject, reply = stand.requested[0]
    assert subject == stand.subjects.store_reply  # any replica: the delivering one did not answer
    assert reply == stand.direct[0]["reply"]  # the same reply (same id)
    await stand.settled()  # acked by the agent, well before the ack wait
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


async def test_a_copy_that_arrives_while_the_first_runs_waits_for_it_and_never_runs_the_skill(stand: Stand) -> None:
    runs = Runs()
    agent = make_agent(stand, runs, ack_wait_ms=30_000)  # a copy dropped unacked would wait 30 s
    await agent.start()
    try:
        message = call(stand, "sleep", key="copy", ms=500)
        await stand.post(message)
        await until("the skill running", lambda: runs.count.get("copy"))
        # The same envelope under another JetStream msg id, as a publish retried past the de-dup window is.
        data = json.dumps(message).encode()
        headers = {"Mcpgw-Reply-To": stand.replica, "Nats-Msg-Id": f"{message['id']}-retry"}
        await stand.js.publish(stand.subjects.inbox, data, headers=headers)
        await stand.settled(timeout=5)
        assert runs.count["copy"] == 1
        assert [reply["in_reply_to"] for _, reply in stand.requested] == [message["id"]]  # the copy's, stored again
    finally:
        await agent.stop()


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


async def test_a_redelivery_answered_by_another_pod_is_acked_without_running(stand: Stand) -> None:
    runs = Runs()
    agent = make_agent(stand, runs)
    await agent.start()
    await agent.stop()  # the consumer exists; nobody pulls now
    message = call(stand, "echo", text="answered-elsewhere")
    await stand.post(message)
    # Another pod took delivery 1 and its reply was stored, but its ack was lost.
    other = await stand.js.pull_subscribe_bind(stand.subjects.consumer, stand.subjects.stream)
    (taken,) = await other.fetch(1, timeout=5)
    assert taken.metadata.num_delivered == 1
    stand.answered.add(message["id"])
    await asyncio.sleep(1.2)  # the ack wait passes
    agent = make_agent(stand, runs)
    await agent.start()
    try:
        await stand.settled()
        assert stand.asked == [message["id"]]
        assert "answered-elsewhere" not in runs.count
        assert stand.direct == [] and stand.requested == []
    finally:
        await agent.stop()
        await other.unsubscribe()


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


async def test_the_context_talks_to_the_caller(stand: Stand) -> None:
    """progress, log, ask (with a resend in between), history, resource_updated, poll_later, download."""
    import http.server
    import threading

    events: list[dict[str, Any]] = []
    notices: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []

    async def on_event(msg: Any) -> None:
        event = json.loads(msg.data)
        events.append(event)
        if event["type"] == "input_request":
            questions.append(event)
            input_subject = stand.subjects.input(event["in_reply_to"])
            if len(questions) == 1:  # a gateway replica that took over asks for the question again
                await stand.nc.publish(input_subject, json.dumps({"key": "", "resend": True}).encode())
            elif event["key"] == "who":
                answer = {"key": "who", "result": {"action": "accept", "content": {"name": "Ada"}}}
                await stand.nc.publish(input_subject, json.dumps({"key": "other", "result": {}}).encode())
                await stand.nc.publish(input_subject, json.dumps(answer).encode())
            else:
                error = {"key": event["key"], "error": {"code": -32601, "message": "not supported"}}
                await stand.nc.publish(input_subject, json.dumps(error).encode())

    async def on_history(msg: Any) -> None:
        request = json.loads(msg.data)
        envelope = {"type": "chat_message", "id": str(uuid.uuid4()), "channel_id": request["channel_id"]}
        await msg.respond(json.dumps({"ok": True, "data": {"messages": [{"seq": 1, "envelope": envelope}]}}).encode())

    async def on_notice(msg: Any) -> None:
        notices.append(json.loads(msg.data))

    body = b"attached bytes"

    class Files(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200 if self.path == "/f?sig=1" else 403)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Files)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/f?sig=1"

    subs = [
        await stand.nc.subscribe(f"{stand.prefix}.calls.{AGENT}.*.events", cb=on_event),
        await stand.nc.subscribe(stand.subjects.history, cb=on_history),
        await stand.nc.subscribe(stand.subjects.notices, cb=on_notice),
    ]
    seen: dict[str, Any] = {}
    agent = Agent(AGENT, nats_url=NATS_URL, prefix=stand.prefix, env={}, ack_wait_ms=1000)

    @agent.skill(name="context")
    async def context(args: dict[str, Any], ctx: Context) -> str:
        await ctx.progress(1, 3, "one")
        await ctx.log("info", {"step": 1}, logger="ctx")
        seen["answer"] = await ctx.ask("elicitation/create", {"message": "Who?"}, key="who")
        try:
            await ctx.ask("roots/list", {})
        except Exception as error:  # ClientRequestError
            seen["error"] = (type(error).__name__, str(error), getattr(error, "code", None))
        seen["history"] = await ctx.history()
        seen["download"] = await ctx.download(ctx.attachments[0])
        seen["attachment"] = ctx.attachments[0]
        seen["deadline"] = ctx.deadline
        await ctx.resource_updated("test://thing")
        await ctx.poll_later()
        return "done"

    await agent.start()
    try:
        message = {
            **call(stand, "context"),
            "attachments": [{"kind": "file", "file": {"uri": url, "name": "a.txt", "mimeType": "text/plain"}}],
        }
        await stand.post(message)
        await until("the reply", lambda: stand.direct)
        assert stand.direct[0]["reply"]["content"] == [{"type": "text", "text": "done"}]
    finally:
        await agent.stop()
        for sub in subs:
            await sub.unsubscribe()
        server.shutdown()
    mid = message["id"]
    assert events[0] == {"type": "progress", "in_reply_to": mid, "progress": 1, "total": 3, "message": "one"}
    assert events[1] == {"type": "log", "in_reply_to": mid, "level": "info", "data": {"step": 1}, "logger": "ctx"}
    assert questions[0] == {
        "type": "input_request",
        "in_reply_to": mid,
        "key": "who",
        "method": "elicitation/create",
        "params": {"message": "Who?"},
        "channel_id": CHANNEL,
    }
    assert questions[1] == questions[0]  # asked again on `resend`
    assert seen["answer"] == {"action": "accept", "content": {"name": "Ada"}}
    assert seen["error"] == ("ClientRequestError", "not supported", -32601)
    assert seen["history"][0]["envelope"]["channel_id"] == CHANNEL
    assert seen["download"] == body
    assert seen["attachment"].name == "a.txt" and seen["attachment"].mime_type == "text/plain"
    assert seen["deadline"] is None
    assert notices == [{"kind": "resource_updated", "uri": "test://thing"}]
    assert events[-1] == {"type": "poll", "in_reply_to": mid}


async def test_sigterm_while_waiting_for_the_gateway_stops_the_agent_at_once(tmp_path: Any) -> None:
    """agent.run() (here through the contract agent): no gateway answers its registration; SIGTERM ends it, exit 0."""
    import signal
    import sys

    await (await nats_or_skip()).close()
    env = {
        **os.environ,
        "NATS_URL": NATS_URL,
        "BUS_PREFIX": f"pytest_{uuid.uuid4().hex[:10]}",
        "AGENT_ID": AGENT,
        "CONTRACT_MARKERS": str(tmp_path),
    }
    env.pop("NATS_CREDS", None)
    agent_file = os.path.join(os.path.dirname(__file__), "contract_agent.py")
    process = await asyncio.create_subprocess_exec(
        sys.executable, agent_file, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    await asyncio.sleep(1.5)
    assert process.returncode is None  # still trying to register
    process.send_signal(signal.SIGTERM)
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=10)
    assert process.returncode == 0, stderr.decode()
    assert b"contract agent ready" not in stdout
    assert b"registration attempt 1 failed" in stderr
