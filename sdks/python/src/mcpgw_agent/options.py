"""The agent's settings: what ``Agent(...)`` is given, else the environment, else the defaults."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Any, Mapping

from .errors import AgentError
from .registration.presence import PRESENCE_INTERVAL_MAX_MS, PRESENCE_INTERVAL_MIN_MS, PRESENCE_INTERVAL_MS
from .subjects import POD_ID_PATTERN

__all__ = ["Settings", "check_settings", "nats_servers", "settings_from_env"]


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
    source: Mapping[str, str] = os.environ if env is None else env

    def pick(key: str, name: str, default: str | None) -> str | None:
        value = given.get(key)
        return value if value is not None else (source.get(name) or default)

    def pick_int(key: str, name: str, default: int, minimum: int, maximum: int | None = None) -> int:
        value = given.get(key)
        if value is not None:
            return int(value)
        return _int_env(source, name, default, minimum, maximum)

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


def check_settings(settings: Settings) -> Settings:
    """The settings, once the ones given as arguments (not range-checked as read) are checked too."""
    if not POD_ID_PATTERN.match(settings.pod_id):
        raise AgentError(f"pod id {settings.pod_id!r} must match {POD_ID_PATTERN.pattern}")
    interval = settings.presence_interval_ms
    if not PRESENCE_INTERVAL_MIN_MS <= interval <= PRESENCE_INTERVAL_MAX_MS:
        raise AgentError(
            f"PRESENCE_INTERVAL_MS must be between {PRESENCE_INTERVAL_MIN_MS} and {PRESENCE_INTERVAL_MAX_MS}"
        )
    return settings
