"""What the agent offers: its skills (MCP tools), resources and prompts, as the decorators register them.

The catalogue is the payload of ``register`` (docs/asyncapi.yaml): the gateway
lists it to MCP clients. The definitions here are the wire's
(``input_schema``, ``side_effect_class``, ``mimeType``, …).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping, TypeVar, Union

from ..context import Context
from .message_handler import MessageFn

__all__ = ["SIDE_EFFECT_CLASSES", "Catalogue", "F", "Prompt", "Resource", "Skill", "SkillFn"]

SkillFn = Callable[[dict[str, Any], Context], Union[Awaitable[Any], Any]]
"""A skill: ``async def skill(args, ctx)`` (or a plain function) returning what ``results.normalize`` takes."""
ResourceFn = Callable[[str], Union[Awaitable[Any], Any]]
"""A resource's reader: ``async def read(uri) -> str | bytes | dict | list``."""
PromptFn = Callable[[dict[str, Any], Context], Union[Awaitable[Any], Any]]
"""A prompt's renderer: ``async def render(args, ctx) -> str | list[message] | {"messages": …}``."""
F = TypeVar("F", bound=Callable[..., Any])
"""A decorated function: the decorators give it back unchanged."""

SIDE_EFFECT_CLASSES = (None, "read", "write", "destructive")


@dataclass
class Skill:
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
class Resource:
    uri: str
    name: str
    fn: ResourceFn
    description: str | None = None
    mime_type: str | None = None

    def definition(self) -> dict[str, Any]:
        out: dict[str, Any] = {"uri": self.uri, "name": self.name}
        if self.description is not None:
            out["description"] = self.description
        if self.mime_type is not None:
            out["mimeType"] = self.mime_type
        return out


def _no_arguments() -> list[dict[str, Any]]:
    return []


@dataclass
class Prompt:
    name: str
    fn: PromptFn
    description: str | None = None
    arguments: list[dict[str, Any]] = field(default_factory=_no_arguments)

    def definition(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "arguments": self.arguments}
        if self.description is not None:
            out["description"] = self.description
        return out


class Catalogue:
    """The skills, resources and prompts of one agent, by name (by uri for resources)."""

    def __init__(self) -> None:
        self.skills: dict[str, Skill] = {}
        self.resources: dict[str, Resource] = {}
        self.prompts: dict[str, Prompt] = {}
        self.message_handler: MessageFn | None = None

    def skill(
        self,
        name: str | None,
        description: str | None,
        input_schema: Mapping[str, Any] | None,
        *,
        output_schema: Mapping[str, Any] | None,
        title: str | None,
        side_effect_class: str | None,
        annotations: Mapping[str, Any] | None,
    ) -> Callable[[F], F]:
        """The decorator that registers a skill (named after the function unless named; described by its docstring)."""
        if side_effect_class not in SIDE_EFFECT_CLASSES:
            raise ValueError("side_effect_class is one of 'read', 'write', 'destructive'")

        def register(fn: F) -> F:
            skill_name = name or fn.__name__
            if skill_name in self.skills:
                raise ValueError(f"skill {skill_name} is registered twice")
            self.skills[skill_name] = Skill(
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
        self, uri: str, name: str | None, *, description: str | None, mime_type: str | None
    ) -> Callable[[F], F]:
        """The decorator that registers a resource (its name defaults to the function's)."""

        def register(fn: F) -> F:
            self.resources[uri] = Resource(uri, name or fn.__name__, fn, description, mime_type)
            return fn

        return register

    def prompt(
        self, name: str | None, *, description: str | None, arguments: list[Mapping[str, Any]] | None
    ) -> Callable[[F], F]:
        """The decorator that registers a prompt (its name defaults to the function's)."""

        def register(fn: F) -> F:
            prompt_name = name or fn.__name__
            self.prompts[prompt_name] = Prompt(prompt_name, fn, description, [dict(a) for a in arguments or []])
            return fn

        return register

    def on_message(self, fn: F) -> F:
        """The decorator that makes ``fn`` the handler of conversational messages (one: a second replaces it)."""
        self.message_handler = fn
        return fn

    def payload(self, workspace_id: str, agent_id: str, pod_id: str) -> dict[str, Any]:
        """The registration payload (``register``): ``conversation`` when a message handler is registered."""
        payload: dict[str, Any] = {
            "workspace_id": workspace_id,
            "agent_id": agent_id,
            "pod_id": pod_id,
            "skills": [s.definition() for s in self.skills.values()],
            "resources": [r.definition() for r in self.resources.values()],
            "resource_templates": [],
            "prompts": [p.definition() for p in self.prompts.values()],
        }
        if self.message_handler is not None:
            # The gateway sends conversational messages only to an agent that says it answers them.
            payload["conversation"] = True
        return payload
