"""The agent's inbox: its durable JetStream pull consumer and every delivery's fate.

``receiveInboxMessage`` and ``acknowledgeDelivery`` (docs/asyncapi.yaml), as
README.md ("What the SDK owns") tells it: the consumer ``agent_<id>`` is made
if missing (waiting for the message service's stream) and bound again after a
reconnect or when it is gone; pulls take only as many messages as there are
free slots; a malformed message is terminated; ``+WPI`` every third of the ack
wait while a message is worked on; a duplicate gets the remembered reply
again, never a second run; a redelivery nobody here answered asks the message
service first (``askAnswered``); the last delivery gets the give-up reply. The
stop hands back (``-NAK``) what was pulled and not begun.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import nats.errors
import nats.js.errors
from nats.aio.msg import Msg
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from nats.js.client import JetStreamContext

from ..bus import Bus, retried
from ..errors import BusError
from ..json_values import as_object
from ..lifecycle import Lifecycle
from ..logger import log, quietly
from ..messages import Invalid, check_inbox_message, decode_json
from ..options import Settings
from ..replies.replier import ATTEMPTS_EXHAUSTED, Replier
from ..results import Result, text
from ..skills.skill_runner import HandBack, SkillRunner, Stopped
from ..subjects import Subjects
from .recently_seen import RecentlySeen

__all__ = ["CALL_HEADERS", "CONSUMER_CHECK_EVERY", "InboxConsumer"]

CONSUMER_CHECK_EVERY = 30.0
"""Seconds of empty pulls after which the agent asks JetStream whether its consumer still exists."""
CALL_HEADERS = ("Mcpgw-Request-Id", "traceparent", "tracestate")
"""The inbox message's headers its call events and reply carry on (request id, trace context)."""


class InboxConsumer:
    def __init__(
        self,
        bus: Bus,
        subjects: Subjects,
        settings: Settings,
        lifecycle: Lifecycle,
        runner: SkillRunner,
        replier: Replier,
    ) -> None:
        self._bus = bus
        self._subjects = subjects
        self._settings = settings
        self._lifecycle = lifecycle
        self._runner = runner
        self._replier = replier
        self._psub: JetStreamContext.PullSubscription | None = None
        self._pull_task: asyncio.Task[None] | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._slot_freed = asyncio.Event()
        # Messages worked on here, by id: the stream sequence of the delivery worked on, set once it is done.
        self._in_flight: dict[str, tuple[int, asyncio.Event]] = {}
        self._completed: RecentlySeen[dict[str, Any] | None] = RecentlySeen()
        """The messages answered here: their reply, or None when done without one."""
        self._must_rebind = False

    # ---- life ---------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Bind the consumer (waiting for the stream), then pull."""
        self._psub = await self._bind()
        self._pull_task = asyncio.create_task(self._pull_loop(), name="mcpgw-agent pull")

    def rebind_soon(self) -> None:
        """Bind again before the next pull (a reconnect: the server may have lost the stream and the consumer)."""
        self._must_rebind = True

    async def stop_pulling(self) -> None:
        """Pull no more; hand back what the pull took meanwhile."""
        self._slot_freed.set()
        if self._pull_task:
            self._pull_task.cancel()
            await asyncio.gather(self._pull_task, return_exceptions=True)
        await self._nak_unhandled()
        if self._psub is not None:
            # Unsubscribed, not drained: nats-py's drain waits on the pull queue's task_done(), which fetch never calls.
            await quietly(self._psub.unsubscribe())

    async def drain(self, grace_s: float, overdue: Callable[[], None]) -> None:
        """Let running messages finish within ``grace_s``; then ``overdue()`` (stop them) and wait 5 s more."""
        if not self._handlers:
            return
        _, pending = await asyncio.wait(set(self._handlers), timeout=grace_s)
        if pending:
            log.warning("handing back %d message(s) still running", len(pending))
            overdue()
            await asyncio.wait(pending, timeout=5)

    # ---- the consumer -------------------------------------------------------------------------------------

    def _fetch_expires(self) -> float:
        return max(1.0, min(5.0, self._settings.ack_wait_ms / 2000))

    async def _bind(self) -> JetStreamContext.PullSubscription:
        """The agent's durable consumer, made if missing; waits for the message service's stream."""
        js = self._bus.jetstream()
        config = ConsumerConfig(
            name=self._subjects.consumer,
            durable_name=self._subjects.consumer,
            filter_subject=self._subjects.inbox,
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL,
            ack_wait=self._settings.ack_wait_ms / 1000,
            max_deliver=self._settings.max_deliver + 1,
        )
        attempt = 0
        while True:
            attempt += 1
            try:
                # nats-py leaves add_consumer()'s **params (ConsumerConfig fields) untyped.
                await js.add_consumer(self._subjects.stream, config=config)  # pyright: ignore[reportUnknownMemberType]
                break
            except nats.js.errors.NotFoundError as error:
                if not self._lifecycle.running:
                    raise
                if attempt == 1:
                    log.warning("inbox stream not there yet (is the message service up?); waiting (%s)", error)
            except nats.js.errors.APIError as error:
                # A consumer made before with settings the server will not change: use it as it is.
                log.warning("could not update the inbox consumer: %s; binding it as it is", error)
                break
            except (nats.errors.TimeoutError, asyncio.TimeoutError, nats.errors.NoRespondersError):
                if not self._lifecycle.running:
                    raise
                if attempt == 1:
                    log.warning("JetStream does not answer; waiting")
            await asyncio.sleep(0.5)
        return await js.pull_subscribe_bind(consumer=self._subjects.consumer, stream=self._subjects.stream)

    async def _rebind(self) -> None:
        """Bind the consumer again (waiting for the stream): after a reconnect, or a pull that failed."""
        self._must_rebind = False
        try:
            old = self._psub
            self._psub = await self._bind()
            if old is not None:
                await quietly(old.unsubscribe())
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self._must_rebind = True
            log.warning("binding the consumer failed: %s", error)
            await asyncio.sleep(0.5)

    async def _consumer_lost(self) -> bool:
        """Whether the consumer is gone (a NATS server with memory storage restarted, a deleted stream)."""
        try:
            await self._bus.jetstream().consumer_info(self._subjects.stream, self._subjects.consumer)
            return False
        except nats.js.errors.NotFoundError:
            return True
        except Exception:
            return False

    async def _pull_loop(self) -> None:
        expires = self._fetch_expires()
        idle_since = asyncio.get_running_loop().time()
        while self._lifecycle.running:
            if self._must_rebind or self._psub is None:
                await self._rebind()
                continue
            free = self._settings.concurrency - len(self._handlers)
            if free <= 0:
                self._slot_freed.clear()
                await self._slot_freed.wait()
                continue
            try:
                msgs = await self._psub.fetch(batch=free, timeout=expires)
            except (nats.errors.TimeoutError, asyncio.TimeoutError):
                # An empty pull says nothing of a consumer that is gone: look now and then.
                now = asyncio.get_running_loop().time()
                if now - idle_since > CONSUMER_CHECK_EVERY:
                    idle_since = now
                    if await self._consumer_lost():
                        log.warning("the inbox consumer is gone; binding it again")
                        self._must_rebind = True
                continue
            except asyncio.CancelledError:
                raise
            except Exception as error:
                if not self._lifecycle.running:
                    return
                log.warning("fetch failed: %s; binding the consumer again", error)
                await asyncio.sleep(0.5)
                self._must_rebind = True
                continue
            idle_since = asyncio.get_running_loop().time()
            for msg in msgs:
                if not self._lifecycle.running:
                    await quietly(msg.nak())
                    continue
                task = asyncio.create_task(self._handle(msg))
                self._handlers.add(task)
                task.add_done_callback(self._handler_done)

    def _handler_done(self, task: asyncio.Task[None]) -> None:
        self._handlers.discard(task)
        self._slot_freed.set()
        if not task.cancelled() and task.exception() is not None:
            log.error("handling an inbox message failed: %r", task.exception())

    async def _nak_unhandled(self) -> None:
        """Messages the pull took after the stop began: straight back, for another pod."""
        # nats-py keeps them in its subscription's private pending queue; nothing public reaches it.
        sub = getattr(self._psub, "_sub", None)
        queue: asyncio.Queue[Msg] | None = getattr(sub, "_pending_queue", None)
        while queue is not None and not queue.empty():
            msg = queue.get_nowait()
            queue.task_done()
            if msg.reply and msg.reply.startswith("$JS.ACK."):
                await quietly(msg.nak())

    # ---- one delivery -------------------------------------------------------------------------------------

    async def _handle(self, msg: Msg) -> None:
        try:
            message = check_inbox_message(decode_json(msg.data), self._subjects.agent_id)
        except Invalid as error:
            log.warning("malformed inbox message terminated: %s", error)
            await quietly(msg.term())
            return
        try:
            delivered = msg.metadata.num_delivered
            seq = msg.metadata.sequence.stream
        except Exception:
            log.warning("inbox message without JetStream metadata dropped")
            return
        message_id: str = message["id"]
        running = self._in_flight.get(message_id)
        if running is not None:
            if running[0] == seq:
                return  # this very delivery again: its ack will follow
            # A copy under another stream sequence while the first is worked on here: held until that one
            # is done, then answered as its copy (left unacked, it would wait out the ack wait).
            await self._after_running(msg, running[1])
            return
        done = asyncio.Event()
        self._in_flight[message_id] = (seq, done)
        heartbeat = asyncio.create_task(self._heartbeat(msg))
        headers = {k: v for k, v in (msg.headers or {}).items() if k in CALL_HEADERS}
        reply_to = (msg.headers or {}).get("Mcpgw-Reply-To")
        if reply_to is not None and not self._subjects.valid_reply_to(reply_to):
            log.warning("inbox message with a foreign reply subject: ignored it (storing by request)")
            reply_to = None
        try:
            if message_id in self._completed:
                log.info("duplicate of %s: answered from memory, the skill does not run again", message_id)
                remembered = self._completed[message_id]
                if remembered is None:
                    await quietly(msg.ack())
                else:
                    await self._replier.store_held(msg, remembered, reply_to, headers)
            elif delivered > 1 and await self._answered_elsewhere(msg, message):
                return  # acked (another pod answered it) or handed back
            elif delivered > self._settings.max_deliver:
                await self._give_up(msg, message, delivered, reply_to, headers)
            else:
                await self._run(msg, message, delivered, reply_to, headers)
        finally:
            heartbeat.cancel()
            del self._in_flight[message_id]
            done.set()

    async def _after_running(self, msg: Msg, running: asyncio.Event) -> None:
        heartbeat = asyncio.create_task(self._heartbeat(msg))
        try:
            await running.wait()
        finally:
            heartbeat.cancel()
        await self._handle(msg)

    async def _heartbeat(self, msg: Msg) -> None:
        every = max(self._settings.ack_wait_ms / 3000, 0.1)
        while True:
            await asyncio.sleep(every)
            await quietly(msg.in_progress())

    async def _run(
        self, msg: Msg, message: dict[str, Any], delivered: int, reply_to: str | None, headers: dict[str, str]
    ) -> None:
        """Run the message's skill, then store its reply, ack it with none, or hand it back."""
        message_id: str = message["id"]
        outcome = await self._runner.run(message, headers)
        if isinstance(outcome, Stopped):
            self._completed.remember(message_id, None)
            await quietly(msg.ack())
            return
        if isinstance(outcome, HandBack):
            await quietly(msg.nak(delay=outcome.delay))
            return
        self._completed.remember(message_id, outcome)
        if reply_to and delivered == 1 and self._subjects.valid_ack(msg.reply):
            await self._replier.store_direct(msg, outcome, reply_to, headers)
        else:
            await self._replier.store_held(msg, outcome, reply_to, headers)

    async def _give_up(
        self, msg: Msg, message: dict[str, Any], delivered: int, reply_to: str | None, headers: dict[str, str]
    ) -> None:
        attempts = delivered - 1
        log.warning("attempts used up for %s: answering with an error", message["id"])
        note = f"the agent could not complete this call after {attempts} attempts"
        reply = self._replier.to_reply(message, Result([text(note)], is_error=True), {"outcome": ATTEMPTS_EXHAUSTED})
        self._completed.remember(message["id"], reply)
        await self._replier.store_held(msg, reply, reply_to, headers)

    async def _answered_elsewhere(self, msg: Msg, message: dict[str, Any]) -> bool:
        """A redelivery this pod did not answer: another pod may have, and its ack was lost.

        The store is shared, the pods' memories are not: ask the message service
        before running the skill again. True when the message is done with here:
        acked (a reply is stored) or handed back (the drain's grace passed before
        the service could say). A refusal runs it.
        """
        message_id: str = message["id"]
        asked = {"channel_id": message["channel_id"], "message_id": message_id}
        try:
            data = await retried(
                lambda _: self._bus.request(self._subjects.answered, asked),
                f"whether {message_id} is answered",
                self._lifecycle.stop_storing,
            )
        except BusError as error:
            if not error.transient:
                log.warning("whether %s is answered was refused (%s); running it", message_id, error)
                return False
            log.warning("handed back %s: whether it is answered is unknown", message_id)
            await quietly(msg.nak())
            return True
        answer = as_object(data)
        if not (answer is not None and answer.get("answered") is True):
            return False
        log.info("%s answered elsewhere: acked, the skill does not run", message_id)
        self._completed.remember(message_id, None)
        await quietly(msg.ack())
        return True
