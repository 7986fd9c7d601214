"""Subject names of the bus (docs/asyncapi.yaml) and the guards on what arrives from it.

Everything that comes from outside (a header naming a subject, a payload) is
checked here before the agent acts on it or publishes anywhere it names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "AGENT_ID_PATTERN",
    "MAX_SUBJECT_LENGTH",
    "POD_ID_PATTERN",
    "Subjects",
    "safe_name",
    "subject_of_shape",
]

AGENT_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}\Z")
"""Agent ids travel in subjects and URLs."""

POD_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}\Z")
"""Pod ids travel in payloads (registration, presence) and the gateway stores them per agent."""

MAX_SUBJECT_LENGTH = 512

# One literal token: printable ASCII without space, '.', '*' or '>' (libs/bus/src/subject-guard.ts).
_TOKEN = re.compile(r"^[!-)+-\-/-=?-~]+\Z")


def subject_of_shape(subject: object, pattern: str) -> bool:
    """True when ``subject`` is a concrete subject (literal tokens only) of the shape ``pattern`` names.

    In ``pattern`` a ``*`` token stands for exactly one token and a last ``>``
    for one or more; every other token must match exactly, and so must the
    number of tokens.
    """
    if not isinstance(subject, str) or not subject or len(subject) > MAX_SUBJECT_LENGTH:
        return False
    got = subject.split(".")
    if not all(_TOKEN.match(token) for token in got):
        return False
    want = pattern.split(".")
    rest = want[-1] == ">"
    fixed = len(want) - 1 if rest else len(want)
    if (len(got) <= fixed) if rest else (len(got) != fixed):
        return False
    return all(w == "*" or w == g for w, g in zip(want[:fixed], got[:fixed]))


def safe_name(value: str) -> str:
    """A stream or consumer name: characters outside ``[A-Za-z0-9_-]`` as ``_``."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", value)


@dataclass(frozen=True)
class Subjects:
    """Every subject one agent uses under one prefix."""

    prefix: str
    agent_id: str

    def __post_init__(self) -> None:
        if not AGENT_ID_PATTERN.match(self.agent_id):
            raise ValueError(f"agent id {self.agent_id!r} must match {AGENT_ID_PATTERN.pattern}")
        if not self.prefix or not all(_TOKEN.match(t) for t in self.prefix.split(".")):
            raise ValueError(f"BUS_PREFIX {self.prefix!r} is not a subject prefix")

    @property
    def inbox_prefix(self) -> str:
        """The agent's private reply inbox: the only one the services answer to."""
        return f"_INBOX.{self.prefix}.agent.{self.agent_id}"

    @property
    def register(self) -> str:
        return f"{self.prefix}.registry.agents.{self.agent_id}.register"

    @property
    def store_reply(self) -> str:
        return f"{self.prefix}.ms.agents.{self.agent_id}.replies"

    @property
    def history(self) -> str:
        return f"{self.prefix}.ms.agents.{self.agent_id}.history"

    @property
    def answered(self) -> str:
        """Whether a reply to one of the agent's messages is stored (asked before running a redelivery)."""
        return f"{self.prefix}.ms.agents.{self.agent_id}.answered"

    @property
    def cancel(self) -> str:
        return f"{self.prefix}.agents.{self.agent_id}.cancel"

    @property
    def notices(self) -> str:
        return f"{self.prefix}.agents.{self.agent_id}.notices"

    @property
    def presence(self) -> str:
        """The pods' heartbeats (``up`` every interval, ``leaving`` when draining)."""
        return f"{self.prefix}.agents.{self.agent_id}.presence"

    @property
    def inbox(self) -> str:
        return f"{self.prefix}.agents.{self.agent_id}.inbox"

    @property
    def stream(self) -> str:
        return f"{safe_name(self.prefix).upper()}_AGENT_INBOX"

    @property
    def consumer(self) -> str:
        return f"agent_{safe_name(self.agent_id)}"

    def events(self, message_id: str) -> str:
        return f"{self.prefix}.calls.{self.agent_id}.{message_id}.events"

    def input(self, message_id: str) -> str:
        return f"{self.prefix}.calls.{self.agent_id}.{message_id}.input"

    @property
    def replica_replies_shape(self) -> str:
        """What an inbox message's ``Mcpgw-Reply-To`` must look like: a replica's replies subject for this agent."""
        return f"{self.prefix}.ms.replicas.*.replies.{self.agent_id}"

    @property
    def ack_shape(self) -> str:
        """A delivery's ack subject on this agent's consumer (nats-server's v1 form)."""
        return f"$JS.ACK.{self.stream}.{self.consumer}.*.*.*.*.*"

    def valid_reply_to(self, subject: object) -> bool:
        return subject_of_shape(subject, self.replica_replies_shape)

    def valid_ack(self, subject: object) -> bool:
        return subject_of_shape(subject, self.ack_shape)
