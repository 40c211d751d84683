"""GET /openapi.json: the HTTP API described in OpenAPI 3.1, built from the same tool table
and id rule the service enforces, so the document cannot drift from the code."""

from __future__ import annotations

from typing import Any

from .._conversation_ids import CONVERSATION_ID_PATTERN
from ..tools import tool_definitions

_REF = "#/components/schemas/"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": _REF + name}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*statuses: int) -> dict[str, Any]:
    meaning = {
        400: "Bad request: invalid conversation id, body not a JSON object, or invalid input",
        401: "Missing or wrong bearer token (when BROWSER_TOOL_TOKEN is set)",
        404: "Unknown tool",
        413: "Body over BROWSER_TOOL_MAX_BODY_BYTES",
        503: "The service is shutting down",
    }
    return {str(status): _json(_ref("Error"), meaning[status]) for status in statuses}


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
            "state": {"type": "string", "enum": ["starting", "ready", "closing", "closed"]},
            "age_s": {"type": "number"},
            "idle_s": {"type": "number"},
            "idle_left_s": {"type": "number"},
            "calls": {"type": "integer"},
            "last_error": {"type": ["string", "null"]},
            "rss_bytes": {"type": "integer", "description": "RSS of Chrome's whole group"},
        },
    },
}


def _paths() -> dict[str, Any]:
    names = [tool["name"] for tool in tool_definitions()]
    conversation = "/v1/conversations/{conversation_id}"
    return {
        "/v1/tools": {
            "get": {
                "summary": "The tool definitions to hand to a model",
                "responses": {"200": _json({"type": "object"}, "{'tools': [{name, ...}]}")},
            }
        },
        conversation + "/tools/{tool}": {
            "post": {
                "summary": "Run one tool call in the conversation's browser",
                "parameters": [
                    _CONVERSATION,
                    {
                        "name": "tool",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string", "enum": names},
                    },
                ],
                "requestBody": _json({"type": "object"}, "The tool input (see /v1/tools)"),
                "responses": {
                    "200": _json(_ref("ToolOutput"), "The result; tool failures have is_error"),
                    **_errors(400, 401, 404, 413, 503),
                },
            }
        },
        conversation: {
            "delete": {
                "summary": "End the conversation's browser and delete its files (idempotent)",
                "parameters": [_CONVERSATION],
                "responses": {
                    "200": _json(_ref("CleanupReport"), "What was cleaned up"),
                    **_errors(400, 401, 503),
                },
            }
        },
        conversation + "/reset": {
            "post": {
                "summary": "Close the browser and clear downloads; the next call starts clean",
                "parameters": [_CONVERSATION],
                "responses": {
                    "200": _json(_ref("CleanupReport"), "What was closed"),
                    **_errors(400, 401, 503),
                },
            }
        },
        conversation + "/keepalive": {
            "post": {
                "summary": "Set the conversation's idle timeout (capped by the settings)",
                "parameters": [_CONVERSATION],
                "requestBody": _json(
                    {
                        "type": "object",
                        "required": ["idle_timeout_s"],
                        "properties": {"idle_timeout_s": {"type": "number", "exclusiveMinimum": 0}},
                    },
                    "The idle timeout wanted, in seconds",
                ),
                "responses": {
                    "200": _json({"type": "object"}, "The idle timeout granted"),
                    **_errors(400, 401, 413, 503),
                },
            }
        },
        "/v1/sessions": {
            "get": {
                "summary": "Inventory of live browser sessions",
                "responses": {
                    "200": _json(
                        {
                            "type": "object",
                            "properties": {
                                "sessions": {"type": "array", "items": _ref("SessionInfo")}
                            },
                        },
                        "Sessions",
                    ),
                    **_errors(401),
                },
            }
        },
        "/healthz": {
            "get": {
                "summary": "Liveness (no token needed); 503 while shutting down",
                "responses": {
                    "200": _json({"type": "object"}, "Serving"),
                    "503": _json({"type": "object"}, "Shutting down"),
                },
            }
        },
        "/metrics": {
            "get": {
                "summary": "Prometheus text format",
                "responses": {
                    "200": {
                        "description": "Metrics",
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    },
                    **_errors(401),
                },
            }
        },
        "/openapi.json": {
            "get": {
                "summary": "This document",
                "responses": {"200": _json({"type": "object"}, "OpenAPI 3.1")},
            }
        },
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
