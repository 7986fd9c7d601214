"""Write an agent that stands behind the MCP agent gateway, on NATS (see README.md and docs/asyncapi.yaml)."""

from .agent import Agent
from .context import Attachment, Context
from .creds import Credentials, CredentialsError
from .deadline import Deadline
from .errors import AgentError, BusError
from .replies.replier import ATTEMPTS_EXHAUSTED
from .results import ClientRequestError, Result, ToolError
from .skills.message_handler import IncomingMessage

__all__ = [
    "ATTEMPTS_EXHAUSTED",
    "Agent",
    "AgentError",
    "Attachment",
    "BusError",
    "ClientRequestError",
    "Context",
    "Credentials",
    "CredentialsError",
    "Deadline",
    "IncomingMessage",
    "Result",
    "ToolError",
]

__version__ = "0.1.0"
