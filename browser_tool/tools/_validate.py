"""Validating tool input against the small JSON Schema subset our tool schemas use.

Pure. Supported: type object/string/integer/number/boolean/array, properties, required,
additionalProperties: false, minimum/maximum, minLength/maxLength, enum, items,
minItems/maxItems. Errors name the field and the rule, and nothing runs before the input is
valid; an unknown field spelt in camelCase (as other tools spell theirs) gets our name for it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .._errors import InvalidInputError

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def validate_input(schema: Mapping[str, Any], value: object) -> dict[str, Any]:
    """Return `value` as a dict if it satisfies `schema`; else raise InvalidInputError."""
    if not isinstance(value, dict):
        raise InvalidInputError("input", "must be a JSON object", value)
    properties: Mapping[str, Any] = schema.get("properties", {})
    for name in schema.get("required", ()):
        if name not in value:
            raise InvalidInputError(name, "is required")
    if schema.get("additionalProperties") is False:
        unknown = sorted(set(value) - set(properties))
        if unknown:
            allowed = ", ".join(sorted(properties)) or "none"
            snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", unknown[0]).lower()
            hint = f"; did you mean {snake!r}?" if snake in properties else ""
            raise InvalidInputError(unknown[0], f"is not a known field{hint} (known: {allowed})")
    for name, field_value in value.items():
        if name in properties:
            _check(name, properties[name], field_value)
    return dict(value)


def _check(name: str, schema: Mapping[str, Any], value: object) -> None:
    kind = schema.get("type")
    if kind is None:
        return
    if (kind in ("integer", "number") and isinstance(value, bool)) or not isinstance(
        value, _TYPES[kind]
    ):
        if kind == "integer" and isinstance(value, float) and value.is_integer():
            raise InvalidInputError(name, f"must be an integer; got {value!r}", value)
        raise InvalidInputError(name, f"must be {_article(kind)}; got {_describe(value)}", value)
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(choice) for choice in schema["enum"])
        raise InvalidInputError(name, f"must be one of {allowed}; got {value!r}", value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        low, high = schema.get("minimum"), schema.get("maximum")
        if (low is not None and value < low) or (high is not None and value > high):
            raise InvalidInputError(name, f"must be from {low} to {high}; got {value!r}", value)
    if isinstance(value, list):
        _check_items(name, schema, value)
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            raise InvalidInputError(name, "must not be empty", value)
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise InvalidInputError(
                name, f"must be at most {schema['maxLength']} characters; got {len(value)}"
            )


def _check_items(name: str, schema: Mapping[str, Any], value: list[Any]) -> None:
    if len(value) < schema.get("minItems", 0):
        raise InvalidInputError(name, f"must have at least {schema['minItems']} item(s)", value)
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        raise InvalidInputError(
            name, f"must have at most {schema['maxItems']} items; got {len(value)}"
        )
    items = schema.get("items")
    if items is None:
        return
    for index, item in enumerate(value):
        try:
            _check(name, items, item)
        except InvalidInputError as exc:
            raise InvalidInputError(name, f"item {index + 1} {exc.rule}", item) from None


def _article(kind: str) -> str:
    return {"integer": "an integer", "object": "an object", "array": "an array"}.get(
        kind, f"a {kind}"
    )


def _describe(value: object) -> str:
    if value is None:
        return "null"
    name = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array"}
    return f"{name.get(type(value), type(value).__name__)} {value!r}"[:80]
