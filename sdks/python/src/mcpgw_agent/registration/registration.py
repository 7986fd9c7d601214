"""Announces the agent and its catalogue to the gateway's registry (``register``).

At start, retried with backoff until the registry answers (the gateway may
start after the agent): a refusal fails ``start()``. Again after every
reconnect (a gateway that lost its state learns it again), in the background.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

from ..bus import Bus
from ..errors import AgentError, BusError
from ..json_values import as_object
from ..lifecycle import Lifecycle
from ..logger import log
from ..subjects import Subjects

__all__ = ["Registration"]

FIRST_RETRY = 0.25
MAX_RETRY = 5.0


class Registration:
    def __init__(
        self, bus: Bus, subjects: Subjects, catalogue: Callable[[], dict[str, Any]], lifecycle: Lifecycle
    ) -> None:
        """``catalogue``: the registration payload, asked for at each attempt."""
        self._bus = bus
        self._subjects = subjects
        self._catalogue = catalogue
        self._lifecycle = lifecycle
        self._background: set[asyncio.Task[Any]] = set()

    async def register_until_accepted(self) -> None:
        """Resolves once the registry accepted the catalogue; ``AgentError`` when it refuses it."""
        wait = FIRST_RETRY
        attempt = 1
        while True:
            try:
                answer = as_object(await self._bus.request(self._subjects.register, self._catalogue()))
                log.info("registered %s skill(s)", answer.get("registered") if answer is not None else "?")
                return
            except BusError as error:
                if not error.transient:
                    raise AgentError(f"the gateway refused the registration: {error}") from None
                if not self._lifecycle.running:
                    raise
                if attempt == 1 or attempt % 10 == 0:
                    log.warning("registration attempt %d failed: %s; retrying", attempt, error)
            await asyncio.sleep(wait)
            wait = min(wait * 2, MAX_RETRY)
            attempt += 1

    def again(self) -> None:
        """Register again in the background (after a reconnect); a failure is logged."""
        self._spawn(self._register_again())

    async def _register_again(self) -> None:
        try:
            await self.register_until_accepted()
        except (AgentError, BusError) as error:
            log.error("registering again after a reconnect failed: %s", error)

    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    def close(self) -> None:
        """Stop registering in the background."""
        for task in list(self._background):
            task.cancel()
