"""The SDK's errors: the agent cannot start (``AgentError``), a request failed (``BusError``)."""

from __future__ import annotations

__all__ = ["AgentError", "BusError"]


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
