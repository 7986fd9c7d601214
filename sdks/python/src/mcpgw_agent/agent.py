"""The agent: skills, resources and prompts served from its JetStream inbox (docs/asyncapi.yaml).

The SDK owns the whole delivery contract (see README.md): the durable
consumer, heartbeats (``+WPI``) while a skill runs, the reply (a request to the
delivering replica with ``Mcpgw-Ack``, answered once stored and acked; or, on a
redelivery or without that answer, stored by request and acked here, retried
with backoff without running the skill again), duplicate
suppression, the give-up reply on the last delivery, cancellation and
deadlines, registration (again after every reconnect) and the drain on stop.

This module is the facade: it wires the parts that do each (README.md,
"Modules") and holds the agent's life (start, run, stop).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import signal
from typing import Any, Callable, Mapping

from nats.aio.client import Client as NatsClient

from .bus import Bus
from .cancellation.cancellations import Cancellations
from .context import CallTools
from .creds import Credentials, CredentialsError, load_creds
from .errors import AgentError, BusError
from .inbox.consumer import InboxConsumer
from .lifecycle import Lifecycle
from .logger import log
from .options import Settings, check_settings, settings_from_env
from .registration.presence import Presence
from .registration.registration import Registration
from .replies.call_events import CallEvents
from .replies.questions import Questions
from .replies.replier import ATTEMPTS_EXHAUSTED, Replier
from .skills.catalogue import Catalogue, F
from .skills.notices import Notices
from .skills.skill_runner import SkillRunner
from .subjects import Subjects

__all__ = ["Agent", "AgentError", "BusError", "ATTEMPTS_EXHAUSTED", "settings_from_env", "Settings"]


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
        environment: Mapping[str, str] = os.environ if env is None else env
        agent_id = agent_id or environment.get("AGENT_ID")
        if not agent_id:
            raise AgentError("an agent needs its id (Agent('my-agent') or AGENT_ID)")
        settings = settings_from_env(
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
            self.subjects = Subjects(settings.prefix, agent_id)
        except ValueError as error:
            raise AgentError(str(error)) from None
        self.settings = check_settings(settings)
        self.agent_id = agent_id
        self.pod_id = settings.pod_id
        self._lifecycle = Lifecycle()
        self._bus = Bus(self._lifecycle)
        self._catalogue = Catalogue()
        self._cancellations = Cancellations(self._bus, self.subjects)
        events = CallEvents(self._bus, self.subjects)
        self._replier = Replier(
            self._bus, self.subjects, self.pod_id, settings.ack_wait_ms, self._lifecycle.stop_storing
        )
        self._notices = Notices(self._bus, self.subjects)
        tools = CallTools(
            agent_id=agent_id,
            pod_id=self.pod_id,
            events=events,
            questions=Questions(self._bus, self.subjects, events),
            replier=self._replier,
            notices=self._notices,
        )
        self._runner = SkillRunner(self._catalogue, self._cancellations, self._replier, tools)
        self._registration = Registration(self._bus, self.subjects, self.catalogue, self._lifecycle)
        self._consumer = InboxConsumer(
            self._bus, self.subjects, settings, self._lifecycle, self._runner, self._replier
        )
        self._presence = Presence(self._bus.publish, self.subjects.presence, self.pod_id, settings.presence_interval_ms)

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
        return self._catalogue.skill(
            name,
            description,
            input_schema,
            output_schema=output_schema,
            title=title,
            side_effect_class=side_effect_class,
            annotations=annotations,
        )

    def resource(
        self, uri: str, name: str | None = None, *, description: str | None = None, mime_type: str | None = None
    ) -> Callable[[F], F]:
        """Register a resource: ``async def read(uri) -> str | bytes | dict | list`` (text, blob, or contents)."""
        return self._catalogue.resource(uri, name, description=description, mime_type=mime_type)

    def prompt(
        self,
        name: str | None = None,
        *,
        description: str | None = None,
        arguments: list[Mapping[str, Any]] | None = None,
    ) -> Callable[[F], F]:
        """Register a prompt: ``async def render(args, ctx) -> str | list[message] | {"messages": …}``."""
        return self._catalogue.prompt(name, description=description, arguments=arguments)

    def on_message(self, fn: F) -> F:
        """Register ``async def on_message(message: IncomingMessage, ctx: Context)`` for conversational messages.

        A conversational message is an A2A message that names no skill; the
        handler gets what was said (``message.text``, ``message.data``) and
        returns what a skill may. Registered as the ``conversation``
        capability: without a handler the gateway answers such messages
        ``UnsupportedOperationError`` itself. Register it before ``start()``.
        """
        return self._catalogue.on_message(fn)

    def catalogue(self) -> dict[str, Any]:
        """The registration payload."""
        return self._catalogue.payload(self.settings.workspace_id, self.agent_id, self.pod_id)

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
        if self._lifecycle.started:
            raise AgentError("the agent is started already")
        creds: Credentials | None = None
        if self.settings.creds_path:
            try:
                creds = load_creds(self.settings.creds_path)
                creds.check_inbox(self.subjects.inbox_prefix, self.settings.creds_path)
            except CredentialsError as error:
                raise AgentError(str(error)) from None
        self._lifecycle.begin()
        await self._bus.connect(
            self.settings,
            name=f"mcpgw-agent {self.agent_id} {self.pod_id}",
            inbox_prefix=self.subjects.inbox_prefix,
            creds=creds,
            reconnected=self._on_reconnected,
        )
        try:
            await self._cancellations.start()
            await self._registration.register_until_accepted()
            await self._consumer.start()
            self._presence.start()
        except BaseException:
            await self._close()
            raise
        log.info("consuming", extra={"agent_id": self.agent_id})

    async def stop(self) -> None:
        """Drain: stop pulling, let running skills finish within SHUTDOWN_GRACE_MS, then hand the rest back."""
        if not self._lifecycle.started or self._lifecycle.stopping.is_set():
            return
        self._lifecycle.stopping.set()
        self._lifecycle.running = False
        # Offline at once for the gateway, before the drain (which may take SHUTDOWN_GRACE_MS).
        await self._presence.leave()
        await self._consumer.stop_pulling()
        await self._consumer.drain(self.settings.shutdown_grace_ms / 1000, self._overdue)
        await self._close()

    def _overdue(self) -> None:
        """The drain's grace has passed: replies not stored yet are handed back, running skills stopped."""
        self._lifecycle.stop_storing.set()
        self._cancellations.stop_all("stopping")

    async def _close(self) -> None:
        self._registration.close()
        await self._bus.close()

    async def _on_reconnected(self) -> None:
        log.warning("nats reconnected; registering again")
        # The server may have lost the stream and the consumer (memory storage): bind again before the next pull.
        self._consumer.rebind_soon()
        if self._lifecycle.running:
            self._registration.again()

    # ---- what the agent says besides replies --------------------------------------------------------------

    @property
    def nc(self) -> NatsClient:
        """The agent's NATS connection (``AgentError`` before ``start()``)."""
        return self._bus.nc

    async def resource_updated(self, uri: str) -> None:
        """Tell the clients subscribed to ``uri`` that it changed (``resource_updated`` notice)."""
        await self._notices.resource_updated(uri)
