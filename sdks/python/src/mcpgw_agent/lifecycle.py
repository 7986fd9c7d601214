"""Where the agent is in its life: started, running (consuming), stopping; read by all its parts."""

from __future__ import annotations

import asyncio

__all__ = ["Lifecycle"]


class Lifecycle:
    """The agent's state, shared by the parts the facade wires (one per agent)."""

    def __init__(self) -> None:
        self.started = False
        """``start()`` began (and has not failed)."""
        self.running = False
        """Consuming: false once ``stop()`` began (or a start failed); retry loops then give up."""
        self.stopping = asyncio.Event()
        """``stop()`` began."""
        self.stop_storing = asyncio.Event()
        """The drain's grace has passed: replies not stored yet are handed back, not retried."""

    def begin(self) -> None:
        self.started = True
        self.running = True

    def failed_to_start(self) -> None:
        self.started = False
        self.running = False
