"""GET /openapi.json: the HTTP API described in OpenAPI 3.1, built from the same route table,
tool table and id rule the service enforces, so the document cannot drift from the code.

The operations are the route table's (see `_routes`); here are what they share: the path
parameters, the error shape and what each error status means, and the component schemas."""

from __future__ import annotations

from typing import Any

from .._conversation_ids import CONVERSATION_ID_PATTERN
from .._profile_names import PROFILE_NAME_PATTERN
from ..conversations import SESSION_STATES
from ..tools import tool_definitions
from ._routes import ROUTES, Operation, Payload, Route, component_ref

# What each status an operation answers with the error shape means in this API.
_ERROR_MEANINGS = {
    400: "Bad request: invalid conversation id, body not a JSON object, or invalid input",
    401: "Missing or wrong bearer token (when BROWSER_TOOL_TOKEN is set)",
    404: "Unknown tool",
    403: "The hand-over link or the page's secret is not (or no longer) valid",
    409: "Clashes with the state: a person holds the browser already, a profile is in use, the "
    "conversation has started",
    410: "The hand-over is over",
    413: "Body over BROWSER_TOOL_MAX_BODY_BYTES",
    503: "The service is shutting down (storage state: or the browser did not answer)",
}


_CONVERSATION = {
    "name": "conversation_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": CONVERSATION_ID_PATTERN},
    "description": "The agent's conversation id; each one gets its own browser.",
}

_SCHEMAS: dict[str, Any] = {
    "Error": {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
            }
        },
    },
    "ToolOutput": {
        "type": "object",
        "required": ["output", "is_error", "images"],
        "properties": {
            "output": {"type": "string", "description": "Text for the model"},
            "is_error": {"type": "boolean", "description": "The tool failed; output says why"},
            "images": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "media_type": {"type": "string"},
                        "data": {"type": "string", "contentEncoding": "base64"},
                        "path": {"type": "string", "description": "Where the image was saved"},
                    },
                },
            },
        },
    },
    "CleanupReport": {
        "type": "object",
        "properties": {
            "conversation_id": {"type": "string"},
            "existed": {"type": "boolean"},
            "pid": {"type": ["integer", "null"]},
            "browser_killed": {"type": "boolean"},
            "sigkill_needed": {"type": "boolean"},
            "survivors": {"type": "integer", "description": "Processes left alive (should be 0)"},
            "files_removed": {"type": "boolean"},
            "duration_s": {"type": "number"},
            "errors": {"type": "array", "items": {"type": "string"}},
        },
    },
    "SessionInfo": {
        "type": "object",
        "properties": {
            "conversation_id": {"type": "string"},
            "pid": {"type": ["integer", "null"]},
            "state": {"type": "string", "enum": list(SESSION_STATES)},
            "age_s": {"type": "number"},
            "idle_s": {"type": "number"},
            "idle_left_s": {"type": "number"},
            "calls": {"type": "integer"},
            "last_error": {"type": ["string", "null"]},
            "rss_bytes": {"type": "integer", "description": "RSS of Chrome's whole group"},
            "shared": {
                "type": "boolean",
                "description": "pid is a Chrome shared with other conversations (isolation "
                "context), each in a browser context of its own",
            },
            "profile": {
                "type": ["string", "null"],
                "description": "The persistent profile its Chrome runs on (issue 21)",
            },
            "handoff": {
                "description": "A hand-over to a person, while one is open (issue 21)",
                "oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/HandoffInfo"}],
            },
        },
    },
    # Issue 21: hand-over to a person.
    "HandoffInfo": {
        "type": "object",
        "properties": {
            "reason": {"type": "string"},
            "state": {"type": "string", "enum": ["offered", "held"]},
            "age_s": {"type": "number"},
            "held_s": {"type": ["number", "null"]},
            "expires_in_s": {"type": "number"},
        },
    },
    "Handoff": {
        "type": "object",
        "properties": {
            "conversation_id": {"type": "string"},
            "url": {
                "type": "string",
                "description": "The live view link; its fragment is the single-use token",
            },
            "reason": {"type": "string"},
            "expires_in_s": {"type": "number"},
        },
    },
    "LiveState": {
        "type": "object",
        "properties": {
            "reason": {"type": "string"},
            "url": {"type": "string", "description": "The current tab's address"},
            "expires_in_s": {"type": "number"},
        },
    },
}


def _parameter(name: str, tool_names: list[str]) -> dict[str, Any]:
    if name == "conversation_id":
        return _CONVERSATION
    if name == "tool":
        return {
            "name": "tool",
            "in": "path",
            "required": True,
            "schema": {"type": "string", "enum": tool_names},
        }
    if name == "profile":  # issue 21
        return {
            "name": "profile",
            "in": "path",
            "required": True,
            "schema": {"type": "string", "pattern": PROFILE_NAME_PATTERN},
            "description": "A persistent profile's name",
        }
    raise ValueError(f"path parameter {name!r} of the route table has no description here")


def _payload(payload: Payload) -> dict[str, Any]:
    return {
        "description": payload.description,
        "content": {payload.media_type: {"schema": dict(payload.schema)}},
    }


def _operation(route: Route, operation: Operation, tool_names: list[str]) -> dict[str, Any]:
    described: dict[str, Any] = {"summary": operation.summary}
    if route.parameters:
        described["parameters"] = [_parameter(name, tool_names) for name in route.parameters]
    if operation.request is not None:
        described["requestBody"] = _payload(operation.request)
    described["responses"] = {
        **{str(status): _payload(payload) for status, payload in operation.responses.items()},
        **{
            str(status): _payload(Payload(_ERROR_MEANINGS[status], component_ref("Error")))
            for status in operation.errors
        },
    }
    return described


def _paths() -> dict[str, Any]:
    tool_names = [tool["name"] for tool in tool_definitions()]
    return {
        route.template: {
            method.lower(): _operation(route, operation, tool_names)
            for method, operation in route.operations.items()
        }
        for route in ROUTES
    }


def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 description of every endpoint, error and record of the HTTP API."""
    return {
        "openapi": "3.1.0",
        "info": {"title": "browser-tool", "version": "1"},
        "paths": _paths(),
        "components": {
            "schemas": _SCHEMAS,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{}, {"bearer": []}],
    }
