"""JSON values as they come off the wire, typed: objects are ``dict[str, Any]`` once checked.

Each ``as_*`` casts before its ``isinstance`` test, where both checkers still
see ``object``: after the test pyright knows only ``dict[Unknown, Unknown]``
(an error in strict mode) and mypy would call the cast redundant.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, cast

__all__ = ["JsonObject", "as_list", "as_mapping", "as_object", "encode"]

JsonObject = dict[str, Any]
"""A decoded JSON object (its keys are strings; its values whatever JSON holds)."""


def as_object(value: object) -> JsonObject | None:
    """``value`` when it is a JSON object (a dict), else None."""
    checked = cast(JsonObject, value)
    return checked if isinstance(value, dict) else None


def as_list(value: object) -> list[Any] | None:
    """``value`` when it is a JSON array (a list), else None."""
    checked = cast(list[Any], value)
    return checked if isinstance(value, list) else None


def as_mapping(value: object) -> Mapping[Any, Any] | None:
    """``value`` when it is a mapping (any keys: a skill's output is checked before it is trusted), else None."""
    checked = cast("Mapping[Any, Any]", value)
    return checked if isinstance(value, Mapping) else None


def encode(value: object) -> bytes:
    """Compact UTF-8 JSON, as the bus carries it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
