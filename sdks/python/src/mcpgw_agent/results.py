"""What a skill may return, and how it becomes the content of an ``agent_reply``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence, cast

from .json_values import as_mapping

__all__ = [
    "CONTENT_TYPES",
    "ClientRequestError",
    "Result",
    "ToolError",
    "holds_unstorable_text",
    "normalize",
    "text",
    "UNSTORABLE_TEXT_REFUSAL",
]

CONTENT_TYPES = frozenset({"text", "image", "audio", "resource_link", "resource"})
UNSTORABLE_TEXT_REFUSAL = "text may not contain the character U+0000 or a lone UTF-16 surrogate"


class ToolError(Exception):
    """Raised by a skill: the caller gets an ``isError`` result with this message."""


class ClientRequestError(Exception):
    """The MCP client answered a question (``ctx.ask``) with an error, or could not be asked."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


def _no_content() -> list[dict[str, Any]]:
    return []


@dataclass
class Result:
    """A skill's full answer: content items, structured content (for an output schema), error flag."""

    content: list[dict[str, Any]] = field(default_factory=_no_content)
    structured: dict[str, Any] | None = None
    is_error: bool = False


def text(value: str) -> dict[str, Any]:
    """One text content item."""
    return {"type": "text", "text": value}


def _content_list(items: object) -> list[dict[str, Any]]:
    if isinstance(items, str):
        return [text(items)]
    if not isinstance(items, Sequence):
        raise TypeError(f"content must be a list of content items, not {type(items).__name__}")
    out: list[dict[str, Any]] = []
    for item in cast("Sequence[object]", items):
        if isinstance(item, str):
            out.append(text(item))
            continue
        mapping = as_mapping(item)
        if mapping is None or mapping.get("type") not in CONTENT_TYPES:
            raise TypeError(f"a content item must be a dict whose type is one of {sorted(CONTENT_TYPES)}")
        out.append(dict(mapping))
    return out


def normalize(output: object) -> Result:
    """A skill's return value as a Result.

    - a string: one text item;
    - a list: content items (dicts; strings become text items);
    - a ``Result``, or a dict with ``content`` / ``structured`` (or
      ``structured_content``) / ``is_error`` (or ``isError``);
    - None: no content.
    Anything else is a TypeError (the skill failed).
    """
    if output is None:
        return Result()
    if isinstance(output, Result):
        return Result(_content_list(output.content), _structured(output.structured), bool(output.is_error))
    if isinstance(output, str):
        return Result([text(output)])
    mapping = as_mapping(output)
    if mapping is not None:
        keys = {"content", "structured", "structured_content", "is_error", "isError", "structuredContent"}
        if not set(mapping) <= keys or not set(mapping) & keys:
            raise TypeError("a dict result takes the keys content, structured and is_error")
        structured = mapping.get("structured", mapping.get("structured_content", mapping.get("structuredContent")))
        is_error = mapping.get("is_error", mapping.get("isError", False))
        return Result(_content_list(mapping.get("content", [])), _structured(structured), bool(is_error))
    if isinstance(output, Sequence) and not isinstance(output, (bytes, bytearray)):
        return Result(_content_list(cast("Sequence[object]", output)))
    raise TypeError(f"a skill returns a string, a list of content items or a Result, not {type(output).__name__}")


def _structured(value: object) -> dict[str, Any] | None:
    if value is None:
        return None
    mapping = as_mapping(value)
    if mapping is None:
        raise TypeError("structured content must be a dict")
    return dict(mapping)


def holds_unstorable_text(value: object) -> bool:
    """Whether the value holds U+0000 or a lone surrogate in a string or a key (PostgreSQL's jsonb refuses both)."""
    return _has_bad(value)


def _has_bad(value: object) -> bool:
    # json.dumps escapes every non-ASCII character; look at the strings themselves to be exact.
    if isinstance(value, str):
        return "\x00" in value or any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    mapping = as_mapping(value)
    if mapping is not None:
        return any(_has_bad(k) or _has_bad(v) for k, v in mapping.items())
    if isinstance(value, (list, tuple)):
        return any(_has_bad(v) for v in cast("Sequence[object]", value))
    return False
