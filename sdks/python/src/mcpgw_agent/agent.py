"""The agent: skills, resources and prompts served from its JetStream inbox (docs/asyncapi.yaml).

The SDK owns the whole delivery contract (see README.md): the durable
consumer, heartbeats (``+WPI``) while a skill runs, the reply (a request to the
delivering replica with ``Mcpgw-Ack``, answered once stored and acked; or, on a
redelivery or without that answer, stored by request and acked here, retried
with backoff without running the skill again), duplicate
suppression, the give-up reply on the last delivery, cancellation and
deadlines, registration (again after every reconnect) and the drain on stop.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import signal
import socket
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Awaitable, Callable, Mapping, TypeVar, Union

import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from .context import Context
from .creds import Credentials, CredentialsError, load_creds
from .deadline import Deadline
from .messages import Invalid, check_cancel, check_inbox_message, check_input_response, decode_json
from .results import (
    UNSTORABLE_TEXT_REFUSAL,
    ClientRequestError,
    Result,
    ToolError,
    holds_unstorable_text,
    normalize,
    text,
)
from .presence import PRESENCE_INTERVAL_MAX_MS, PRESENCE_INTERVAL_MIN_MS, PRESENCE_INTERVAL_MS, Presence
from .subjects import POD_ID_PATTERN, Subjects

__all__ = ["Agent", "AgentError", "BusError", "ATTEMPTS_EXHAUSTED", "settings_from_env", "Settings"]

log = logging.getLogger("mcpgw_agent")

ATTEMPTS_EXHAUSTED = "attempts_exhausted"
"""``meta.outcome`` of the error reply to a message whose skill attempts are used up (libs/contracts)."""

BUS_REQUEST_TIMEOUT = 5.0
INPUT_REQUEST_FALLBACK = 60.0
"""How long a question waits for the client when the call has no deadline."""
HEADER_ROOM_BYTES = 8 * 1024
FIRST_RETRY = 0.2
MAX_RETRY = 3.0
REMEMBERED = 10_000
CONSUMER_CHECK_EVERY = 30.0
"""Seconds of empty pulls after which the agent asks JetStream whether its consumer still exists."""
CALL_HEADERS = ("Mcpgw-Request-Id", "traceparent", "tracestate")

SkillFn = Callable[[dict[str, Any], Context], Union[Awaitable[Any], Any]]
F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


class AgentError(Exception):
    """The agent cannot start (configuration, credentials)."""


class BusError(Exception):
    """A request's error frame, or no answer (``unavailable``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code

    @property
    def transient(self) -> bool:
        """Worth trying again: nothing answered or the service failed; not a refusal."""
        return self.code not in ("invalid_request", "not_found")


@dataclass(frozen=True)
class Settings:
    nats_url: str
    creds_path: str | None
    prefix: str
    workspace_id: str
    pod_id: str
    ack_wait_ms: int
    max_deliver: int
    concurrency: int
    shutdown_grace_ms: int
    connect_timeout_ms: int
    presence_interval_ms: int = PRESENCE_INTERVAL_MS


def _int_env(env: Mapping[str, str], name: str, default: int, minimum: int, maximum: int | None = None) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise AgentError(f"{name} must be an integer") from None
    if value < minimum or (maximum is not None and value > maximum):
        raise AgentError(f"{name} must be between {minimum} and {maximum if maximum is not None else 'any'}")
    return value


def nats_servers(url: str) -> list[str]:
    """The servers of ``NATS_URL``: one URL, or a comma-separated list for a cluster (spaces around commas allowed)."""
    servers = [server.strip() for server in url.split(",") if server.strip()]
    if not servers:
        raise AgentError("NATS_URL names no server")
    return servers


def settings_from_env(env: Mapping[str, str] | None = None, **given: Any) -> Settings:
    """The agent's settings: what is given, else the environment, else the defaults."""
    env = os.environ if env is None else env

    def pick(key: str, name: str, default: str | None) -> str | None:
        value = given.get(key)
        return value if value is not None else (env.get(name) or default)

    def pick_int(key: str, name: str, default: int, minimum: int, maximum: int | None = None) -> int:
        value = given.get(key)
        if value is not None:
            return int(value)
        return _int_env(env, name, default, minimum, maximum)

    return Settings(
        nats_url=pick("nats_url", "NATS_URL", "nats://127.0.0.1:4222") or "",
        creds_path=pick("creds", "NATS_CREDS", None),
        prefix=pick("prefix", "BUS_PREFIX", "mcpgw") or "mcpgw",
        workspace_id=pick("workspace_id", "WORKSPACE_ID", "demo") or "demo",
        pod_id=pick("pod_id", "POD_ID", f"{socket.gethostname()}-{os.getpid()}") or "",
        ack_wait_ms=pick_int("ack_wait_ms", "INBOX_ACK_WAIT_MS", 30_000, 500),
        max_deliver=pick_int("max_deliver", "INBOX_MAX_DELIVER", 5, 1),
        concurrency=pick_int("concurrency", "POD_CONCURRENCY", 64, 1, 1024),
        shutdown_grace_ms=pick_int("shutdown_grace_ms", "SHUTDOWN_GRACE_MS", 20_000, 0),
        connect_timeout_ms=pick_int("connect_timeout_ms", "NATS_CONNECT_TIMEOUT_MS", 10_000, 100),
        presence_interval_ms=pick_int(
            "presence_interval_ms",
            "PRESENCE_INTERVAL_MS",
            PRESENCE_INTERVAL_MS,
            PRESENCE_INTERVAL_MIN_MS,
            PRESENCE_INTERVAL_MAX_MS,
        ),
    )


@dataclass
class _Skill:
    name: str
    description: str
    input_schema: dict[str, Any]
    fn: SkillFn
    output_schema: dict[str, Any] | None = None
    title: str | None = None
    side_effect_class: str | None = "read"
    annotations: dict[str, Any] | None = None

    def definition(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }
        if self.title is not None:
            out["title"] = self.title
        if self.output_schema is not None:
            out["output_schema"] = self.output_schema
        if self.side_effect_class is not None:
            out["side_effect_class"] = self.side_effect_class
        if self.annotations is not None:
            out["annotations"] = self.annotations
        return out


@dataclass
class _Resource:
    uri: str
    name: str
    fn: Callable[..., Any]
    description: str | None = None
    mime_type: str | None = None

    def definition(self) -> dict[str, Any]:
        out: dict[str, Any] = {"uri": self.uri, "name": self.name}
        if self.description is not None:
            out["description"] = self.description
        if self.mime_type is not None:
            out["mimeType"] = self.mime_type
        return out


@dataclass
class _Prompt:
    name: str
    fn: Callable[..., Any]
    description: str | None = None
    arguments: list[dict[str, Any]] = field(default_factory=list)

    def definition(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "arguments": self.arguments}
        if self.description is not None:
            out["description"] = self.description
        return out


@dataclass
class _Call:
    """One message while its skill runs."""

    message_id: str
    deadline: Deadline | None
    headers: dict[str, str]
    stop_reason: str | None = None  # 'cancelled' | 'deadline' | 'stopping'
    task: asyncio.Task[Result] | None = None
    timer: asyncio.TimerHandle | None = None

    def stop(self, reason: str) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason
        if self.task is not None and not self.task.done():
            self.task.cancel()


class _Remembered(OrderedDict[str, Any]):
    """A bounded memory of message ids (the oldest forgotten first)."""

    def __init__(self, limit: int = REMEMBERED) -> None:
        super().__init__()
        self.limit = limit

    def remember(self, key: str, value: Any) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.limit:
            self.popitem(last=False)


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _encode(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class Agent:
    """An agent behind the gateway.

    ``Agent("my-agent")`` reads ``NATS_URL``, ``NATS_CREDS`` and ``BUS_PREFIX``
    (and ``INBOX_ACK_WAIT_MS``, ``INBOX_MAX_DELIVER``, ``POD_CONCURRENCY``,
    ``SHUTDOWN_GRACE_MS``, ``WORKSPACE_ID``, ``POD_ID``, ``PRESENCE_INTERVAL_MS``) from the environment
    unless given as keyword arguments.
    """

    def __init__(
        self,
        agent_id: str | None = None,
        *,
        nats_url: str | None = None,
        creds: str | None = None,
        prefix: str | None = None,
        workspace_id: str | None = None,
        pod_id: str | None = None,
        ack_wait_ms: int | None = None,
        max_deliver: int | None = None,
        concurrency: int | None = None,
        shutdown_grace_ms: int | None = None,
        connect_timeout_ms: int | None = None,
        presence_interval_ms: int | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        environment = os.environ if env is None else env
        agent_id = agent_id or environment.get("AGENT_ID")
        if not agent_id:
            raise AgentError("an agent needs its id (Agent('my-agent') or AGENT_ID)")
        self.settings = settings_from_env(
            environment,
            nats_url=nats_url,
            creds=creds,
            prefix=prefix,
            workspace_id=workspace_id,
            pod_id=pod_id,
            ack_wait_ms=ack_wait_ms,
            max_deliver=max_deliver,
            concurrency=concurrency,
            shutdown_grace_ms=shutdown_grace_ms,
            connect_timeout_ms=connect_timeout_ms,
            presence_interval_ms=presence_interval_ms,
        )
        try:
            self.subjects = Subjects(self.settings.prefix, agent_id)
        except ValueError as error:
            raise AgentError(str(error)) from None
        if not POD_ID_PATTERN.match(self.settings.pod_id):
            raise AgentError(f"pod id {self.settings.pod_id!r} must match {POD_ID_PATTERN.pattern}")
        interval = self.settings.presence_interval_ms
        if not PRESENCE_INTERVAL_MIN_MS <= interval <= PRESENCE_INTERVAL_MAX_MS:
            raise AgentError(
                f"PRESENCE_INTERVAL_MS must be between {PRESENCE_INTERVAL_MIN_MS} and {PRESENCE_INTERVAL_MAX_MS}"
            )
        self.agent_id = agent_id
        self.pod_id = self.settings.pod_id
        self._skills: dict[str, _Skill] = {}
        self._resources: dict[str, _Resource] = {}
        self._prompts: dict[str, _Prompt] = {}
        self._nc: NatsClient | None = None
        self._psub: Any = None
        self._cancel_sub: Any = None
        self._running = False
        self._started = False
        self._pull_task: asyncio.Task[None] | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._slot_freed = asyncio.Event()
        self._in_flight: set[str] = set()
        self._calls: dict[str, _Call] = {}
        self._completed: _Remembered = _Remembered()
        self._cancelled_early: _Remembered = _Remembered()
        self._stop_storing = asyncio.Event()
        self._stopping = asyncio.Event()
        self._register_task: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self._last_nats_error: Exception | None = None
        self._must_rebind = False
        self._presence = Presence(self._publish, self.subjects.presence, self.pod_id, interval)

    # ---- registration of skills, resources, prompts -------------------------------------------------------

    def skill(
        self,
        name: str | None = None,
        description: str | None = None,
        input_schema: Mapping[str, Any] | None = None,
        *,
        output_schema: Mapping[str, Any] | None = None,
        title: str | None = None,
        side_effect_class: str | None = "read",
        annotations: Mapping[str, Any] | None = None,
    ) -> Callable[[F], F]:
        """Register an ``async def skill(args: dict, ctx: Context)`` as an MCP tool."""
        if side_effect_class not in (None, "read", "write", "destructive"):
            raise ValueError("side_effect_class is one of 'read', 'write', 'destructive'")

        def register(fn: F) -> F:
            skill_name = name or fn.__name__
            if skill_name in self._skills:
                raise ValueError(f"skill {skill_name} is registered twice")
            self._skills[skill_name] = _Skill(
                name=skill_name,
                description=description if description is not None else (inspect.getdoc(fn) or skill_name),
                input_schema=dict(input_schema) if input_schema is not None else {"type": "object", "properties": {}},
                fn=fn,
                output_schema=dict(output_schema) if output_schema is not None else None,
                title=title,
                side_effect_class=side_effect_class,
                annotations=dict(annotations) if annotations is not None else None,
            )
            return fn

        return register

    def resource(
        self, uri: str, name: str | None = None, *, description: str | None = None, mime_type: str | None = None
    ) -> Callable[[F], F]:
        """Register a resource: ``async def read(uri) -> str | bytes | dict | list`` (text, blob, or contents)."""

        def register(fn: F) -> F:
            self._resources[uri] = _Resource(uri, name or fn.__name__, fn, description, mime_type)
            return fn

        return register

    def prompt(
        self,
        name: str | None = None,
        *,
        description: str | None = None,
        arguments: list[Mapping[str, Any]] | None = None,
    ) -> Callable[[F], F]:
        """Register a prompt: ``async def render(args, ctx) -> str | list[message] | {"messages": …}``."""

        def register(fn: F) -> F:
            prompt_name = name or fn.__name__
            self._prompts[prompt_name] = _Prompt(
                prompt_name, fn, description, [dict(a) for a in arguments or []]
            )
            return fn

        return register

    # ---- life ---------------------------------------------------------------------------------------------

    def run(self, on_started: Callable[[], Any] | None = None) -> None:
        """Start, serve until SIGTERM or SIGINT, then drain and stop. Blocking.

        ``on_started`` is called once ``start()`` has resolved (connected,
        registered, consuming). Raises ``AgentError`` when the agent cannot start.
        """
        asyncio.run(self._run_until_signalled(on_started))

    async def _run_until_signalled(self, on_started: Callable[[], Any] | None = None) -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(sig, stop.set)
            except (NotImplementedError, RuntimeError):  # pragma: no cover - not on the main thread
                pass
        # A SIGTERM while starting (e.g. waiting for the gateway to answer the registration) stops at once.
        starting = asyncio.ensure_future(self.start())
        signalled = asyncio.ensure_future(stop.wait())
        await asyncio.wait({starting, signalled}, return_when=asyncio.FIRST_COMPLETED)
        if not starting.done():
            starting.cancel()
            await asyncio.gather(starting, return_exceptions=True)
            return
        signalled.cancel()
        starting.result()  # raises AgentError when the agent could not start
        try:
            if on_started is not None:
                started = on_started()
                if inspect.isawaitable(started):
                    await started
            await stop.wait()
        finally:
            await self.stop()

    async def start(self) -> None:
        """Connect, register (retrying until the gateway answers) and start consuming the inbox."""
        if self._started:
            raise AgentError("the agent is started already")
        creds: Credentials | None = None
        if self.settings.creds_path:
            try:
                creds = load_creds(self.settings.creds_path)
                creds.check_inbox(self.subjects.inbox_prefix, self.settings.creds_path)
            except CredentialsError as error:
                raise AgentError(str(error)) from None
        self._started = True
        self._running = True
        options: dict[str, Any] = {}
        if creds is not None:
            jwt = creds.jwt.encode()
            options["user_jwt_cb"] = lambda: bytearray(jwt)
            options["signature_cb"] = creds.sign
        nc = NatsClient()
        self._last_nats_error = None
        connecting = nc.connect(
            servers=nats_servers(self.settings.nats_url),
            name=f"mcpgw-agent {self.agent_id} {self.pod_id}",
            inbox_prefix=self.subjects.inbox_prefix,
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.5,  # type: ignore[arg-type]  # typed int, taken as seconds (float works)
            allow_reconnect=True,
            reconnected_cb=self._on_reconnected,
            disconnected_cb=self._on_disconnected,
            error_cb=self._on_error,
            **options,
        )
        try:
            # nats-py retries a first connection forever: give up after NATS_CONNECT_TIMEOUT_MS, saying why.
            await asyncio.wait_for(connecting, timeout=self.settings.connect_timeout_ms / 1000)
        except BaseException as error:
            self._running = False
            self._started = False
            await _quietly(nc.close())
            if isinstance(error, asyncio.CancelledError):
                raise
            why = self._last_nats_error or error
            raise AgentError(f"cannot connect to NATS at {self.settings.nats_url}: {why!r}") from None
        self._nc = nc
        try:
            self._cancel_sub = await self._nc.subscribe(self.subjects.cancel, cb=self._on_cancel)
            await self._register_until_accepted()
            self._psub = await self._bind()
            self._pull_task = asyncio.create_task(self._pull_loop(), name="mcpgw-agent pull")
            self._presence.start()
        except BaseException:
            await self._close()
            raise
        log.info("consuming", extra={"agent_id": self.agent_id})

    async def stop(self) -> None:
        """Drain: stop pulling, let running skills finish within SHUTDOWN_GRACE_MS, then hand the rest back."""
        if not self._started or self._stopping.is_set():
            return
        self._stopping.set()
        self._running = False
        self._slot_freed.set()
        # Offline at once for the gateway, before the drain (which may take SHUTDOWN_GRACE_MS).
        await self._presence.leave()
        if self._register_task:
            self._register_task.cancel()
        if self._pull_task:
            self._pull_task.cancel()
            await asyncio.gather(self._pull_task, return_exceptions=True)
        await self._nak_unhandled()
        if self._psub is not None:
            # Unsubscribed, not drained: nats-py's drain waits on the pull queue's task_done(), which fetch never calls.
            await _quietly(self._psub.unsubscribe())
        if self._handlers:
            _, pending = await asyncio.wait(set(self._handlers), timeout=self.settings.shutdown_grace_ms / 1000)
            if pending:
                log.warning("handing back %d message(s) still running", len(pending))
                self._stop_storing.set()
                for call in list(self._calls.values()):
                    call.stop("stopping")
                await asyncio.wait(pending, timeout=5)
        await self._close()

    async def _close(self) -> None:
        for task in list(self._background):
            task.cancel()
        nc = self._nc
        if nc is not None and not nc.is_closed:
            try:
                await asyncio.wait_for(nc.drain(), timeout=5)
            except Exception:
                await nc.close()

    # ---- NATS plumbing ------------------------------------------------------------------------------------

    async def _on_reconnected(self) -> None:
        log.warning("nats reconnected; registering again")
        # The server may have lost the stream and the consumer (memory storage): bind again before the next pull.
        self._must_rebind = True
        if self._running:
            self._spawn(self._register_again())

    async def _register_again(self) -> None:
        try:
            await self._register_until_accepted()
        except (AgentError, BusError) as error:
            log.error("registering again after a reconnect failed: %s", error)

    async def _on_disconnected(self) -> None:
        if self._running:
            log.warning("nats disconnected")

    async def _on_error(self, error: Exception) -> None:
        self._last_nats_error = error
        log.warning("nats error: %s", error)

    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    @property
    def nc(self) -> NatsClient:
        if self._nc is None:
            raise AgentError("the agent is not started")
        return self._nc

    async def _request(
        self,
        subject: str,
        payload: Any,
        timeout: float = BUS_REQUEST_TIMEOUT,
        headers: dict[str, str] | None = None,
    ) -> Any:
        """A request answered with a frame: its data, or a BusError."""
        data = payload if isinstance(payload, bytes) else _encode(payload)
        try:
            answer = await self.nc.request(subject, data, timeout=timeout, headers=headers or None)
        except nats.errors.NoRespondersError:
            raise BusError("unavailable", f"{subject}: no service is listening") from None
        except (nats.errors.TimeoutError, asyncio.TimeoutError):
            raise BusError("unavailable", f"{subject}: no answer within {timeout} s") from None
        except nats.errors.Error as error:
            raise BusError("unavailable", f"{subject}: {error}") from None
        try:
            frame = json.loads(answer.data)
        except ValueError:
            raise BusError("internal", f"{subject}: malformed answer") from None
        if not isinstance(frame, dict):
            raise BusError("internal", f"{subject}: malformed answer")
        if frame.get("ok") is True:
            return frame.get("data")
        failure = frame.get("error")
        if not isinstance(failure, dict):
            failure = {}
        raise BusError(str(failure.get("code", "internal")), str(failure.get("message", "refused")))

    async def _publish(self, subject: str, payload: Any, headers: dict[str, str] | None = None) -> None:
        await self.nc.publish(subject, _encode(payload), headers=headers or None)

    # ---- registration -------------------------------------------------------------------------------------

    def catalogue(self) -> dict[str, Any]:
        """The registration payload."""
        return {
            "workspace_id": self.settings.workspace_id,
            "agent_id": self.agent_id,
            "pod_id": self.pod_id,
            "skills": [s.definition() for s in self._skills.values()],
            "resources": [r.definition() for r in self._resources.values()],
            "resource_templates": [],
            "prompts": [p.definition() for p in self._prompts.values()],
        }

    async def _register_until_accepted(self) -> None:
        wait = 0.25
        attempt = 1
        while True:
            try:
                answer = await self._request(self.subjects.register, self.catalogue())
                log.info("registered %s skill(s)", answer.get("registered") if isinstance(answer, dict) else "?")
                return
            except BusError as error:
                if not error.transient:
                    raise AgentError(f"the gateway refused the registration: {error}") from None
                if not self._running:
                    raise
                if attempt == 1 or attempt % 10 == 0:
                    log.warning("registration attempt %d failed: %s; retrying", attempt, error)
            await asyncio.sleep(wait)
            wait = min(wait * 2, 5.0)
            attempt += 1

    # ---- the inbox ----------------------------------------------------------------------------------------

    def _fetch_expires(self) -> float:
        return max(1.0, min(5.0, self.settings.ack_wait_ms / 2000))

    async def _bind(self) -> Any:
        """The agent's durable consumer, made if missing; waits for the message service's stream."""
        js = self.nc.jetstream(timeout=BUS_REQUEST_TIMEOUT)
        config = ConsumerConfig(
            name=self.subjects.consumer,
            durable_name=self.subjects.consumer,
            filter_subject=self.subjects.inbox,
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL,
            ack_wait=self.settings.ack_wait_ms / 1000,
            max_deliver=self.settings.max_deliver + 1,
        )
        attempt = 0
        while True:
            attempt += 1
            try:
                await js.add_consumer(self.subjects.stream, config=config)
                break
            except nats.js.errors.NotFoundError as error:
                if not self._running:
                    raise
                if attempt == 1:
                    log.warning("inbox stream not there yet (is the message service up?); waiting (%s)", error)
            except nats.js.errors.APIError as error:
                # A consumer made before with settings the server will not change: use it as it is.
                log.warning("could not update the inbox consumer: %s; binding it as it is", error)
                break
            except (nats.errors.TimeoutError, asyncio.TimeoutError, nats.errors.NoRespondersError):
                if not self._running:
                    raise
                if attempt == 1:
                    log.warning("JetStream does not answer; waiting")
            await asyncio.sleep(0.5)
        return await js.pull_subscribe_bind(consumer=self.subjects.consumer, stream=self.subjects.stream)

    async def _rebind(self) -> None:
        """Bind the consumer again (waiting for the stream): after a reconnect, or a pull that failed."""
        self._must_rebind = False
        try:
            old = self._psub
            self._psub = await self._bind()
            await _quietly(old.unsubscribe())
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self._must_rebind = True
            log.warning("binding the consumer failed: %s", error)
            await asyncio.sleep(0.5)

    async def _consumer_lost(self) -> bool:
        """Whether the consumer is gone (a NATS server with memory storage restarted, a deleted stream)."""
        try:
            await self.nc.jetstream(timeout=BUS_REQUEST_TIMEOUT).consumer_info(
                self.subjects.stream, self.subjects.consumer
            )
            return False
        except nats.js.errors.NotFoundError:
            return True
        except Exception:
            return False

    async def _pull_loop(self) -> None:
        expires = self._fetch_expires()
        idle_since = asyncio.get_running_loop().time()
        while self._running:
            if self._must_rebind:
                await self._rebind()
                continue
            free = self.settings.concurrency - len(self._handlers)
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
                if not self._running:
                    return
                log.warning("fetch failed: %s; binding the consumer again", error)
                await asyncio.sleep(0.5)
                self._must_rebind = True
                continue
            idle_since = asyncio.get_running_loop().time()
            for msg in msgs:
                if not self._running:
                    await _quietly(msg.nak())
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
        sub = getattr(self._psub, "_sub", None)
        queue = getattr(sub, "_pending_queue", None)
        while queue is not None and not queue.empty():
            msg = queue.get_nowait()
            queue.task_done()
            if msg.reply and msg.reply.startswith("$JS.ACK."):
                await _quietly(msg.nak())

    async def _handle(self, msg: Msg) -> None:
        try:
            message = check_inbox_message(decode_json(msg.data), self.agent_id)
        except Invalid as error:
            log.warning("malformed inbox message terminated: %s", error)
            await _quietly(msg.term())
            return
        try:
            delivered = msg.metadata.num_delivered
        except Exception:
            log.warning("inbox message without JetStream metadata dropped")
            return
        message_id: str = message["id"]
        if message_id in self._in_flight:
            return  # already worked on here; its ack will follow
        self._in_flight.add(message_id)
        heartbeat = asyncio.create_task(self._heartbeat(msg))
        headers = {k: v for k, v in (msg.headers or {}).items() if k in CALL_HEADERS}
        reply_to = (msg.headers or {}).get("Mcpgw-Reply-To")
        if reply_to is not None and not self.subjects.valid_reply_to(reply_to):
            log.warning("inbox message with a foreign reply subject: ignored it (storing by request)")
            reply_to = None
        try:
            if message_id in self._completed:
                log.info("duplicate of %s: answered from memory, the skill does not run again", message_id)
                remembered = self._completed[message_id]
                if remembered is None:
                    await _quietly(msg.ack())
                else:
                    await self._store_held(msg, remembered, reply_to, headers)
            elif delivered > 1 and await self._answered_elsewhere(msg, message):
                return  # acked (another pod answered it) or handed back
            elif delivered > self.settings.max_deliver:
                await self._give_up(msg, message, delivered, reply_to, headers)
            else:
                reply = await self._run(msg, message, headers)
                if reply is not None:
                    if reply_to and delivered == 1 and self.subjects.valid_ack(msg.reply):
                        await self._store_direct(msg, reply, reply_to, headers)
                    else:
                        await self._store_held(msg, reply, reply_to, headers)
        finally:
            heartbeat.cancel()
            self._in_flight.discard(message_id)

    async def _heartbeat(self, msg: Msg) -> None:
        every = max(self.settings.ack_wait_ms / 3000, 0.1)
        while True:
            await asyncio.sleep(every)
            await _quietly(msg.in_progress())

    async def _run(self, msg: Msg, message: dict[str, Any], headers: dict[str, str]) -> dict[str, Any] | None:
        """The reply to the message; None when it is done without one (stopped) or handed back."""
        message_id = message["id"]
        meta = message.get("meta") or {}
        call = _Call(message_id, Deadline.from_wire(meta.get("timeout_ms")), headers)
        early: str | None = None
        if message_id in self._cancelled_early:
            early = "cancelled"
        elif call.deadline is not None and call.deadline.expired:
            early = "deadline"
        if early:
            log.info("call %s %s before it began: acked with no reply", message_id, early)
            self._completed.remember(message_id, None)
            await _quietly(msg.ack())
            return None
        self._calls[message_id] = call
        context = Context(self, message, call)
        call.task = asyncio.create_task(self._dispatch(message, context))
        if call.deadline is not None:
            call.timer = asyncio.get_running_loop().call_later(call.deadline.remaining(), call.stop, "deadline")
        try:
            await asyncio.wait({call.task})
        finally:
            if call.timer:
                call.timer.cancel()
            self._calls.pop(message_id, None)
        task = call.task
        if call.stop_reason in ("cancelled", "deadline"):
            log.info("call %s stopped (%s): acked with no reply", message_id, call.stop_reason)
            self._completed.remember(message_id, None)
            await _quietly(msg.ack())
            return None
        if task.cancelled():
            if call.stop_reason == "stopping":
                log.info("call %s handed back: the agent stops", message_id)
                await _quietly(msg.nak())
                return None
            result = Result([text(f"{_what(message)} failed: cancelled")], is_error=True)
        elif task.exception() is not None:
            log.error("could not answer %s; it will be delivered again: %r", message_id, task.exception())
            await _quietly(msg.nak(delay=1))
            return None
        else:
            result = task.result()
        reply = self._to_reply(message, result)
        self._completed.remember(message_id, reply)
        return reply

    async def _dispatch(self, message: dict[str, Any], ctx: Context) -> Result:
        if message.get("resource_read"):
            return await self._read_resource(message["resource_read"]["uri"])
        if message.get("prompt_get"):
            return await self._get_prompt(message["prompt_get"], ctx)
        call = message.get("tool_call")
        skill = self._skills.get(call["name"]) if call else None
        if not call or not skill:
            name = json.dumps(call["name"] if call else None)
            return Result([text(f"this agent has no skill {name}")], is_error=True)
        try:
            output = skill.fn(call["arguments"], ctx)
            if inspect.isawaitable(output):
                output = await output
            return normalize(output)
        except ToolError as error:
            return Result([text(str(error))], is_error=True)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            log.info("skill %s failed: %r", skill.name, error)
            return Result([text(f"{skill.name} failed: {error}")], is_error=True)

    async def _read_resource(self, uri: str) -> Result:
        resource = self._resources.get(uri)
        if resource is None:
            return Result([text(f"no resource {uri}")], is_error=True)
        try:
            value = resource.fn(uri)
            if inspect.isawaitable(value):
                value = await value
        except asyncio.CancelledError:
            raise
        except Exception as error:
            return Result([text(f"reading {uri} failed: {error}")], is_error=True)
        if isinstance(value, str):
            contents: list[Any] = [{"uri": uri, "text": value}]
        elif isinstance(value, (bytes, bytearray)):
            import base64

            contents = [{"uri": uri, "blob": base64.b64encode(bytes(value)).decode()}]
        elif isinstance(value, dict):
            contents = [{"uri": uri, **value}]
        else:
            contents = list(value)
        if resource.mime_type:
            for item in contents:
                item.setdefault("mimeType", resource.mime_type)
        return Result([], structured={"contents": contents})

    async def _get_prompt(self, request: dict[str, Any], ctx: Context) -> Result:
        prompt = self._prompts.get(request["name"])
        if prompt is None:
            return Result([text(f"no prompt {request['name']}")], is_error=True)
        try:
            value = prompt.fn(request.get("arguments") or {}, ctx)
            if inspect.isawaitable(value):
                value = await value
        except asyncio.CancelledError:
            raise
        except Exception as error:
            return Result([text(f"prompt {prompt.name} failed: {error}")], is_error=True)
        if isinstance(value, str):
            rendered: dict[str, Any] = {"messages": [{"role": "user", "content": text(value)}]}
        elif isinstance(value, dict):
            rendered = dict(value)
        else:
            rendered = {"messages": list(value)}
        if prompt.description and "description" not in rendered:
            rendered["description"] = prompt.description
        return Result([], structured=rendered)

    # ---- replies ------------------------------------------------------------------------------------------

    def _to_reply(self, message: dict[str, Any], result: Result, meta: dict[str, Any] | None = None) -> dict[str, Any]:
        if holds_unstorable_text(result.content) or holds_unstorable_text(result.structured):
            result = Result([text(f"the tool's result cannot be stored: {UNSTORABLE_TEXT_REFUSAL}")], is_error=True)
        reply: dict[str, Any] = {
            "type": "agent_reply",
            "id": str(uuid.uuid4()),
            "channel_id": message["channel_id"],
            "agent_id": message["agent_id"],
            "in_reply_to": message["id"],
            "created_at": _now_iso(),
            "content": result.content,
            "meta": {"pod_id": self.pod_id, **(meta or {})},
        }
        if result.structured is not None:
            reply["structured_content"] = result.structured
        if result.is_error:
            reply["is_error"] = True
        size = len(_encode(reply))
        limit = (self._nc.max_payload if self._nc else 1_048_576) - HEADER_ROOM_BYTES
        if size > limit:
            reply["content"] = [
                text(f"the tool's result is too large to deliver: {size} bytes, the bus takes {limit} at most")
            ]
            reply.pop("structured_content", None)
            reply["is_error"] = True
        return reply

    async def _give_up(
        self, msg: Msg, message: dict[str, Any], delivered: int, reply_to: str | None, headers: dict[str, str]
    ) -> None:
        attempts = delivered - 1
        log.warning("attempts used up for %s: answering with an error", message["id"])
        note = f"the agent could not complete this call after {attempts} attempts"
        reply = self._to_reply(message, Result([text(note)], is_error=True), {"outcome": ATTEMPTS_EXHAUSTED})
        self._completed.remember(message["id"], reply)
        await self._store_held(msg, reply, reply_to, headers)

    async def _store_direct(
        self, msg: Msg, reply: dict[str, Any], reply_to: str, headers: dict[str, str]
    ) -> None:
        """A first delivery's reply, to the replica that delivered it, with the ack subject.

        The replica stores it, acks the message for the agent, then answers. No
        answer (the replica died, or the reply was lost with a NATS server): the
        reply lives in this pod's memory only, and another pod that got the
        message after the ack wait would run the skill again, so store it at any
        replica and ack here.
        """
        # No longer than half the ack wait: a lost reply is stored again before JetStream could hand
        # the message to another pod (a new consumer leader may redeliver, heartbeats or not).
        within = max(0.25, min(BUS_REQUEST_TIMEOUT, self.settings.ack_wait_ms / 2000))
        try:
            await self._request(reply_to, reply, timeout=within, headers={**headers, "Mcpgw-Ack": msg.reply})
            return
        except BusError as error:
            log.warning("the delivering replica did not confirm the reply to %s (%s); storing it by request",
                        reply["in_reply_to"], error)
        await self._store_held(msg, reply, None, headers)

    async def _store_held(
        self, msg: Msg, reply: dict[str, Any], reply_to: str | None, headers: dict[str, str]
    ) -> None:
        """Store the reply by request (retried with backoff while transient), then ack; the skill never reruns."""
        in_reply_to = reply["in_reply_to"]
        try:
            await self._retried(lambda attempt: self._store_once(reply, reply_to, attempt), f"reply to {in_reply_to}")
        except BusError as error:
            if error.transient:
                log.warning("handed back %s with its reply unstored", in_reply_to)
                await _quietly(msg.nak())
            else:
                log.error("the message service refused the reply to %s; dropped: %s", in_reply_to, error)
                await _quietly(msg.ack())
            return
        await _quietly(msg.ack())

    async def _answered_elsewhere(self, msg: Msg, message: dict[str, Any]) -> bool:
        """A redelivery this pod did not answer: another pod may have, and its ack was lost.

        The store is shared, the pods' memories are not: ask the message service
        before running the skill again. True when the message is done with here:
        acked (a reply is stored) or handed back (the drain's grace passed before
        the service could say). A refusal runs it.
        """
        message_id = message["id"]
        asked = {"channel_id": message["channel_id"], "message_id": message_id}
        try:
            data = await self._retried(
                lambda _: self._request(self.subjects.answered, asked), f"whether {message_id} is answered"
            )
        except BusError as error:
            if not error.transient:
                log.warning("whether %s is answered was refused (%s); running it", message_id, error)
                return False
            log.warning("handed back %s: whether it is answered is unknown", message_id)
            await _quietly(msg.nak())
            return True
        if not (isinstance(data, dict) and data.get("answered") is True):
            return False
        log.info("%s answered elsewhere: acked, the skill does not run", message_id)
        self._completed.remember(message_id, None)
        await _quietly(msg.ack())
        return True

    async def _retried(self, attempt: Callable[[int], Awaitable[T]], what: str) -> T:
        """``attempt`` (given its number) until it succeeds, with backoff while the failure is transient.

        Raises a refusal at once, and a transient failure once the drain's grace
        has passed (``_stop_storing``).
        """
        wait = FIRST_RETRY
        number = 1
        while True:
            try:
                return await attempt(number)
            except BusError as error:
                if not error.transient or self._stop_storing.is_set():
                    raise
                if number == 1 or number % 10 == 0:
                    log.warning("%s: not done yet (%s); trying again", what, error)
            try:
                await asyncio.wait_for(self._stop_storing.wait(), timeout=wait)
            except asyncio.TimeoutError:
                pass
            wait = min(wait * 2, MAX_RETRY)
            number += 1

    async def _store_once(self, reply: dict[str, Any], reply_to: str | None, attempt: int) -> None:
        if reply_to and attempt == 1:
            try:
                await self._request(reply_to, reply)
                return
            except BusError as error:
                if error.code != "unavailable":
                    raise
        await self._request(self.subjects.store_reply, {"envelope": reply})

    # ---- cancellation -------------------------------------------------------------------------------------

    async def _on_cancel(self, msg: Msg) -> None:
        if msg.reply:
            return  # not a request family: neither handled nor answered
        try:
            cancel = check_cancel(decode_json(msg.data))
        except Invalid:
            return
        message_id = cancel["message_id"]
        call = self._calls.get(message_id)
        if call is None:
            self._cancelled_early.remember(message_id, True)
            return
        log.info("cancelling %s", message_id)
        call.stop("cancelled")

    # ---- what a Context does ------------------------------------------------------------------------------

    async def _publish_event(self, call: _Call, event: dict[str, Any]) -> None:
        try:
            await self._publish(self.subjects.events(call.message_id), event, call.headers)
        except nats.errors.Error as error:
            log.warning("call event not published: %s", error)

    async def _ask(
        self, call: _Call, message: dict[str, Any], method: str, params: dict[str, Any], key: str | None
    ) -> dict[str, Any]:
        key = key or str(uuid.uuid4())
        question = {
            "type": "input_request",
            "in_reply_to": call.message_id,
            "key": key,
            "method": method,
            "params": params,
            "channel_id": message["channel_id"],
        }
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

        async def on_input(msg: Msg) -> None:
            if msg.reply:
                return
            try:
                response = check_input_response(decode_json(msg.data))
            except Invalid:
                return
            if response.get("resend"):
                await self._publish_event(call, question)
                return
            if response["key"] == key and not answer.done():
                answer.set_result(response)

        sub = await self.nc.subscribe(self.subjects.input(call.message_id), cb=on_input)
        try:
            await self._publish_event(call, question)
            timeout = None if call.deadline is not None else INPUT_REQUEST_FALLBACK
            try:
                response = await asyncio.wait_for(answer, timeout)
            except asyncio.TimeoutError:
                raise ClientRequestError(f"the client did not answer {method} in time") from None
        finally:
            await _quietly(sub.unsubscribe())
        error = response.get("error")
        if error:
            raise ClientRequestError(str(error.get("message")), int(error.get("code")))
        return dict(response.get("result") or {})

    async def _history(self, channel_id: str, limit: int) -> list[dict[str, Any]]:
        data = await self._request(self.subjects.history, {"channel_id": channel_id, "limit": limit})
        messages = data.get("messages") if isinstance(data, dict) else None
        return list(messages) if isinstance(messages, list) else []

    async def _download(self, url: str, max_bytes: int) -> bytes:
        import httpx

        if not url.lower().startswith(("http://", "https://")):
            raise ToolError("an attachment is downloaded over http(s) only")
        async with httpx.AsyncClient(timeout=30.0, follow_redirects=False) as client:
            async with client.stream("GET", url) as response:
                response.raise_for_status()
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > max_bytes:
                        raise ToolError(f"the attachment is larger than {max_bytes} bytes")
                    chunks.append(chunk)
                return b"".join(chunks)

    async def resource_updated(self, uri: str) -> None:
        """Tell the clients subscribed to ``uri`` that it changed (``resource_updated`` notice)."""
        if not uri or len(uri) > 4096:
            raise ValueError("a resource uri is 1 to 4096 characters")
        await self._publish(self.subjects.notices, {"kind": "resource_updated", "uri": uri})


def _what(message: dict[str, Any]) -> str:
    call = message.get("tool_call")
    return str(call["name"]) if call else "the call"


async def _quietly(awaitable: Awaitable[Any]) -> None:
    """An ack, nak or heartbeat: best effort (a closed connection, a message acked already)."""
    try:
        await awaitable
    except Exception as error:  # noqa: BLE001
        log.debug("ignored: %r", error)
