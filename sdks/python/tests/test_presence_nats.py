"""Presence against a real nats-server, with the stand-in services of test_inbox_nats.

The agent says ``up`` on ``<prefix>.agents.<agent>.presence`` at start and every
PRESENCE_INTERVAL_MS, and ``leaving`` once when it stops.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpgw_agent import Agent, AgentError

from .test_inbox_nats import AGENT, NATS_URL, Runs, Stand, make_agent, stand, until  # noqa: F401 (the fixture)


async def test_heartbeats_arrive_and_leaving_is_sent_on_stop(stand: Stand) -> None:
    heard: list[dict[str, Any]] = []

    async def on_presence(msg: Any) -> None:
        heard.append(json.loads(msg.data))

    sub = await stand.nc.subscribe(stand.subjects.presence, cb=on_presence)
    agent = make_agent(stand, Runs(), presence_interval_ms=200)
    await agent.start()
    try:
        await until("three heartbeats", lambda: len(heard) >= 3, timeout=5)
        assert heard[0] == {"pod_id": "pod-t", "state": "up", "interval_ms": 200}
        assert {beat["state"] for beat in heard} == {"up"}
    finally:
        await agent.stop()
    await until("leaving", lambda: heard and heard[-1]["state"] == "leaving", timeout=5)
    assert heard[-1] == {"pod_id": "pod-t", "state": "leaving", "interval_ms": 200}
    count = len(heard)
    await stand.nc.flush()
    await until("no beat after leaving", lambda: True)
    assert len(heard) == count
    await sub.unsubscribe()


@pytest.mark.parametrize("settings", [{"presence_interval_ms": 99}, {"presence_interval_ms": 600_001}, {"pod_id": "a b"}])
def test_refuses_a_bad_interval_or_pod_id(settings: dict[str, Any]) -> None:
    with pytest.raises(AgentError):
        Agent(AGENT, nats_url=NATS_URL, env={}, **{"pod_id": "pod-t", **settings})


def test_reads_the_interval_from_the_environment() -> None:
    assert Agent(AGENT, env={"PRESENCE_INTERVAL_MS": "1234"}).settings.presence_interval_ms == 1234
    assert Agent(AGENT, env={}).settings.presence_interval_ms == 15_000
