"""The agent's NATS connection: connecting (credentials, reconnects), requests answered with a frame, publishes.

Every request of docs/asyncapi.yaml (``register``, ``storeReply``,
``readHistory``, …) is answered on the agent's own reply inbox with a frame,
``{"ok": true, "data": …}`` or ``{"ok": false, "error": {code, message}}``:
``Bus.request`` returns the data or raises ``BusError`` (``unavailable`` when
nothing answered). The parts of the agent reach NATS only through here.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Awaitable, Callable, TypeVar

import nats.errors
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription
from nats.js.client import JetStreamContext

from .creds import Credentials
from .errors import AgentError, BusError
from .json_values import as_object, encode
from .lifecycle import Lifecycle
from .logger import log, quietly
from .options import Settings, nats_servers

__all__ = ["BUS_REQUEST_TIMEOUT", "DEFAULT_MAX_PAYLOAD", "Bus", "retried"]

BUS_REQUEST_TIMEOUT = 5.0
DEFAULT_MAX_PAYLOAD = 1_048_576
"""What a reply may weigh before the connection says (nats-server's default ``max_payload``)."""
FIRST_RETRY = 0.2
MAX_RETRY = 3.0

T = TypeVar("T")


class Bus:
    """One agent's NATS connection (made by ``connect``; the agent's parts share it)."""

    def __init__(self, lifecycle: Lifecycle) -> None:
        self._lifecycle = lifecycle
        self._nc: NatsClient | None = None
        self._last_error: Exception | None = None

    async def connect(
        self,
        settings: Settings,
        name: str,
        inbox_prefix: str,
        creds: Credentials | None,
        reconnected: Callable[[], Awaitable[None]],
    ) -> None:
        """Connect (reconnecting forever afterwards); raises ``AgentError`` with the reason after the timeout."""
        options: dict[str, Any] = {}
        if creds is not None:
            jwt = creds.jwt.encode()
            options["user_jwt_cb"] = lambda: bytearray(jwt)
            options["signature_cb"] = creds.sign
        nc = NatsClient()
        self._last_error = None
        connecting = nc.connect(
            servers=nats_servers(settings.nats_url),
            name=name,
            inbox_prefix=inbox_prefix,
            max_reconnect_attempts=-1,
            reconnect_time_wait=0.5,  # type: ignore[arg-type]  # typed int, taken as seconds (float works)
            allow_reconnect=True,
            reconnected_cb=reconnected,
            disconnected_cb=self._on_disconnected,
            error_cb=self._on_error,
            **options,
        )
        try:
            # nats-py retries a first connection forever: give up after NATS_CONNECT_TIMEOUT_MS, saying why.
            await asyncio.wait_for(connecting, timeout=settings.connect_timeout_ms / 1000)
        except BaseException as error:
            self._lifecycle.failed_to_start()
            await quietly(nc.close())
            if isinstance(error, asyncio.CancelledError):
                raise
            why = self._last_error or error
            raise AgentError(f"cannot connect to NATS at {settings.nats_url}: {why!r}") from None
        self._nc = nc

    async def _on_disconnected(self) -> None:
        if self._lifecycle.running:
            log.warning("nats disconnected")

    async def _on_error(self, error: Exception) -> None:
        self._last_error = error
        log.warning("nats error: %s", error)

    @property
    def nc(self) -> NatsClient:
        if self._nc is None:
            raise AgentError("the agent is not started")
        return self._nc

    @property
    def max_payload(self) -> int:
        """The largest message the server takes (its default before the connection says)."""
        return self._nc.max_payload if self._nc is not None else DEFAULT_MAX_PAYLOAD

    def jetstream(self) -> JetStreamContext:
        return JetStreamContext(self.nc, timeout=BUS_REQUEST_TIMEOUT)

    async def request(
        self,
        subject: str,
        payload: Any,
        timeout: float = BUS_REQUEST_TIMEOUT,
        headers: dict[str, str] | None = None,
    ) -> Any:
        """A request answered with a frame: its data, or a BusError."""
        data = payload if isinstance(payload, bytes) else encode(payload)
        try:
            answer = await self.nc.request(subject, data, timeout=timeout, headers=headers or None)
        except nats.errors.NoRespondersError:
            raise BusError("unavailable", f"{subject}: no service is listening") from None
        except (nats.errors.TimeoutError, asyncio.TimeoutError):
            raise BusError("unavailable", f"{subject}: no answer within {timeout} s") from None
        except nats.errors.Error as error:
            raise BusError("unavailable", f"{subject}: {error}") from None
        try:
            frame = as_object(json.loads(answer.data))
        except ValueError:
            raise BusError("internal", f"{subject}: malformed answer") from None
        if frame is None:
            raise BusError("internal", f"{subject}: malformed answer")
        if frame.get("ok") is True:
            return frame.get("data")
        failure = as_object(frame.get("error")) or {}
        raise BusError(str(failure.get("code", "internal")), str(failure.get("message", "refused")))

    async def publish(self, subject: str, payload: Any, headers: dict[str, str] | None = None) -> None:
        await self.nc.publish(subject, encode(payload), headers=headers or None)

    async def subscribe(self, subject: str, cb: Callable[[Msg], Awaitable[None]]) -> Subscription:
        # nats-py leaves the type of subscribe()'s `future` parameter open (a bare asyncio.Future).
        return await self.nc.subscribe(subject, cb=cb)  # pyright: ignore[reportUnknownMemberType]

    async def close(self) -> None:
        """Drain the connection (5 s at most), else close it."""
        nc = self._nc
        if nc is not None and not nc.is_closed:
            try:
                await asyncio.wait_for(nc.drain(), timeout=5)
            except Exception:
                await nc.close()


async def retried(attempt: Callable[[int], Awaitable[T]], what: str, give_up: asyncio.Event) -> T:
    """``attempt`` (given its number) until it succeeds, with backoff while the failure is transient.

    Raises a refusal at once, and a transient failure once ``give_up`` is set
    (the drain's grace has passed).
    """
    wait = FIRST_RETRY
    number = 1
    while True:
        try:
            return await attempt(number)
        except BusError as error:
            if not error.transient or give_up.is_set():
                raise
            if number == 1 or number % 10 == 0:
                log.warning("%s: not done yet (%s); trying again", what, error)
        try:
            await asyncio.wait_for(give_up.wait(), timeout=wait)
        except asyncio.TimeoutError:
            pass
        wait = min(wait * 2, MAX_RETRY)
        number += 1
