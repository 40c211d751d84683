"""The HTTP API's route table, written once: each row feeds the matcher (a regex derived from
the path template), the handler table (the `Endpoints` method each operation names) and the
OpenAPI document (the operation's summary, bodies and answers; its path parameters come from
the template). A route added here is served, routed and described, or the service fails at
start-up, never one of the three alone.

Pure data and matching; no trio.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .._errors import HttpError
from .._profile_names import PROFILE_NAME_PATTERN

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class Payload:
    """One body in the OpenAPI description: what it is, its JSON Schema, its media type."""

    description: str
    schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})
    media_type: str = "application/json"


@dataclass(frozen=True)
class Operation:
    """One HTTP method on one route: `handler` names the `Endpoints` method that serves it;
    `responses` are its own answers, `errors` the statuses it answers with the error shape."""

    handler: str
    summary: str
    responses: Mapping[int, Payload]
    errors: tuple[int, ...] = ()
    request: Payload | None = None


@dataclass(frozen=True)
class Route:
    """A path template such as `/v1/conversations/{conversation_id}/reset` and its operations
    by HTTP method. A probe is served without the token (nothing there is worth hiding) and
    while the service stops (it reports the stop itself). An MCP route is served whole by the
    MCP endpoint (the SDK's streamable-HTTP transport answers every method on it), behind the
    same token; its operations are here to be routed and described."""

    template: str
    operations: Mapping[str, Operation]
    is_probe: bool = False
    is_mcp: bool = False
    # Issue 21: served by the live view (`_live_view.LiveView`) rather than `Endpoints`; and,
    # with `own_secret`, without the bearer token: the hand-over's token or page secret (or
    # nothing, for the static page) guards it instead, since a person's browser has no token.
    live_view: bool = False
    own_secret: bool = False

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """The template as a regex: each `{name}` matches one path segment, as group `name`."""
        parts, end = [], 0
        for placeholder in _PLACEHOLDER.finditer(self.template):
            parts.append(re.escape(self.template[end : placeholder.start()]))
            parts.append(f"(?P<{placeholder[1]}>[^/]+)")
            end = placeholder.end()
        parts.append(re.escape(self.template[end:]))
        return re.compile("".join(parts))

    @property
    def parameters(self) -> tuple[str, ...]:
        """The path parameters, in template order."""
        return tuple(_PLACEHOLDER.findall(self.template))

    @property
    def needs_token(self) -> bool:
        """Whether the bearer token guards this route (see `is_probe`, `own_secret`)."""
        return not (self.is_probe or self.own_secret)

    def operation(self, method: str, path: str) -> Operation:
        """The operation for `method`. Raises HttpError(405) naming the allowed methods."""
        operation = self.operations.get(method)
        if operation is None:
            allowed = ", ".join(sorted(self.operations))
            raise HttpError(
                405,
                "method_not_allowed",
                f"{method} is not allowed on {path}; use {allowed}.",
                headers=(("allow", allowed),),
            )
        return operation


def find_route(path: str) -> tuple[Route, dict[str, str]] | None:
    """The route whose template matches all of `path`, with the path parameters; or None."""
    for route in ROUTES:
        match = route.pattern.fullmatch(path)
        if match is not None:
            return route, match.groupdict()
    return None


def component_ref(name: str) -> dict[str, str]:
    """A JSON Schema reference to one of the OpenAPI document's component schemas (their
    definitions are in `_openapi`)."""
    return {"$ref": "#/components/schemas/" + name}


_CONVERSATION = "/v1/conversations/{conversation_id}"
_CLEANUP = component_ref("CleanupReport")
MCP_CONVERSATION_TEMPLATE = _CONVERSATION + "/mcp"
MCP_SESSIONS_TEMPLATE = "/mcp"
_PROFILE_NAME = {"type": "string", "pattern": PROFILE_NAME_PATTERN}
_STORAGE_STATE = {
    "type": "object",
    "properties": {
        "cookies": {"type": "array", "items": {"type": "object"}},
        "origins": {"type": "array", "items": {"type": "object"}},
    },
}


def _mcp_operations(whose: str, *, in_path: bool) -> dict[str, Operation]:
    answers = {200: Payload("The JSON-RPC answer: application/json or text/event-stream")}
    if in_path:
        answers[400] = Payload("The conversation id breaks the id rule: a JSON-RPC error")
    return {
        "POST": Operation(
            "mcp",
            f"MCP: one JSON-RPC message, {whose}",
            answers,
            (401,),
            Payload("A JSON-RPC message (MCP streamable HTTP)"),
        ),
        "GET": Operation("mcp", "MCP: a handshake session's event stream", answers, (401,)),
        "DELETE": Operation("mcp", "MCP: end a handshake session", answers, (401,)),
    }


_LIVE = _CONVERSATION + "/live"
_LIVE_REFUSED = "403: the link or the page's secret is not (or no longer) valid"


def _live_route(tail: str, method: str, handler: str, summary: str, answer: Payload) -> Route:
    operation = Operation(handler, summary, {200: answer}, errors=(400, 403, 410, 413, 503))
    return Route(_LIVE + tail, {method: operation}, live_view=True, own_secret=True)


_LIVE_STATE = Payload("What the page shows", component_ref("LiveState"))
# The hand-over's routes (issue 21): opened with the bearer token, used by a person's browser
# with the link's token, then the page's secret (a cookie): see docs/http-api.md.
LIVE_ROUTES: tuple[Route, ...] = (
    Route(
        _CONVERSATION + "/handoff",
        {
            "POST": Operation(
                "handoff",
                "Hand the conversation's browser to a person: a single-use live view link",
                {200: Payload("The link and how long it is valid", component_ref("Handoff"))},
                errors=(400, 401, 409, 413, 503),
                request=Payload(
                    "Why (shown to the person and the model), and the link's life",
                    {
                        "type": "object",
                        "properties": {
                            "reason": {"type": "string", "maxLength": 500},
                            "ttl": {
                                "type": ["string", "number"],
                                "description": 'A duration ("10m") or seconds; default 10m, '
                                "at most 1h",
                            },
                        },
                    },
                ),
            )
        },
        live_view=True,
    ),
    Route(
        _LIVE,
        {
            "GET": Operation(
                "live_page",
                "The live view page (no token: it claims the hand-over with the link's token)",
                {200: Payload("The page", {"type": "string"}, "text/html")},
            )
        },
        live_view=True,
        own_secret=True,
    ),
    _live_route(
        "/claim",
        "POST",
        "live_claim",
        "Spend the link's token; the answer sets the page's secret cookie",
        _LIVE_STATE,
    ),
    _live_route("/state", "GET", "live_state", "What the page shows (page secret)", _LIVE_STATE),
    _live_route(
        "/frame",
        "GET",
        "live_frame",
        "The next screencast frame after ?after=N (long poll; 204: none yet)",
        Payload("A JPEG frame", {"type": "string"}, "image/jpeg"),
    ),
    _live_route(
        "/input",
        "POST",
        "live_input",
        "Forward the person's mouse, wheel and keyboard events",
        Payload("How many events were sent"),
    ),
    _live_route("/done", "POST", "live_done", "The person is done: hand back", Payload("Ended")),
)


ROUTES: tuple[Route, ...] = (
    Route(
        "/v1/tools",
        {
            "GET": Operation(
                "list_tools",
                "The tool definitions to hand to a model",
                {200: Payload("{'tools': [{name, ...}]}")},
            )
        },
    ),
    Route(
        _CONVERSATION + "/tools/{tool}",
        {
            "POST": Operation(
                "call_tool",
                "Run one tool call in the conversation's browser",
                {
                    200: Payload(
                        "The result; tool failures have is_error", component_ref("ToolOutput")
                    )
                },
                errors=(400, 401, 404, 413, 503),
                request=Payload("The tool input (see /v1/tools)"),
            )
        },
    ),
    Route(
        _CONVERSATION,
        {
            "DELETE": Operation(
                "delete_conversation",
                "End the conversation's browser and delete its files (idempotent)",
                {200: Payload("What was cleaned up", _CLEANUP)},
                errors=(400, 401, 503),
            ),
            "PUT": Operation(  # issue 21
                "bind_conversation",
                "Bind the conversation to a persistent profile, before its first call",
                {200: Payload("The binding", {"type": "object", "required": ["profile"]})},
                errors=(400, 401, 409, 413, 503),
                request=Payload(
                    "The profile to run its browser on",
                    {
                        "type": "object",
                        "required": ["profile"],
                        "properties": {"profile": _PROFILE_NAME},
                    },
                ),
            ),
        },
    ),
    Route(
        _CONVERSATION + "/reset",
        {
            "POST": Operation(
                "reset_conversation",
                "Close the browser and clear downloads; the next call starts clean",
                {200: Payload("What was closed", _CLEANUP)},
                errors=(400, 401, 503),
            )
        },
    ),
    Route(
        _CONVERSATION + "/keepalive",
        {
            "POST": Operation(
                "keepalive",
                "Set the conversation's idle timeout (capped by the settings)",
                {200: Payload("The idle timeout granted")},
                errors=(400, 401, 413, 503),
                request=Payload(
                    "The idle timeout wanted, in seconds",
                    {
                        "type": "object",
                        "required": ["idle_timeout_s"],
                        "properties": {"idle_timeout_s": {"type": "number", "exclusiveMinimum": 0}},
                    },
                ),
            )
        },
    ),
    # ---- issue 21: persistent profiles and storage state ------------------------------------
    Route(
        _CONVERSATION + "/storage-state",
        {
            "GET": Operation(
                "get_storage_state",
                "Cookies and localStorage the conversation's browser holds",
                {200: Payload("Playwright's storage_state shape", _STORAGE_STATE)},
                errors=(400, 401, 409, 503),
            ),
            "PUT": Operation(
                "put_storage_state",
                "Load a storage state: now between calls, or at the browser's launch",
                {200: Payload("What was loaded, and when ('applied' or 'pending')")},
                errors=(400, 401, 409, 413, 503),
                request=Payload("Playwright's storage_state shape", _STORAGE_STATE),
            ),
        },
    ),
    Route(
        "/v1/profiles",
        {
            "GET": Operation(
                "list_profiles",
                "The persistent profiles, and which conversation holds each",
                {200: Payload("{'profiles': [{name, in_use, held_by, size_bytes, modified_at}]}")},
                errors=(401,),
            )
        },
    ),
    Route(
        "/v1/profiles/{profile}",
        {
            "DELETE": Operation(
                "delete_profile",
                "Delete a persistent profile (refused while a conversation holds it)",
                {200: Payload("Whether it existed")},
                errors=(400, 401, 409, 503),
            )
        },
    ),
    # ---- end of issue 21 ---------------------------------------------------------------------
    Route(
        MCP_CONVERSATION_TEMPLATE,
        _mcp_operations("in this conversation, whatever the protocol version", in_path=True),
        is_mcp=True,
    ),
    Route(
        MCP_SESSIONS_TEMPLATE,
        _mcp_operations("one conversation per handshake session", in_path=False),
        is_mcp=True,
    ),
    Route(
        "/v1/sessions",
        {
            "GET": Operation(
                "sessions",
                "Inventory of live browser sessions",
                {
                    200: Payload(
                        "Sessions",
                        {
                            "type": "object",
                            "properties": {
                                "sessions": {
                                    "type": "array",
                                    "items": component_ref("SessionInfo"),
                                }
                            },
                        },
                    )
                },
                errors=(401,),
            )
        },
    ),
    Route(
        "/healthz",
        {
            "GET": Operation(
                "healthz",
                "Liveness (no token needed); 503 while shutting down",
                {200: Payload("Serving"), 503: Payload("Shutting down")},
            )
        },
        is_probe=True,
    ),
    Route(
        "/metrics",
        {
            "GET": Operation(
                "metrics",
                "Prometheus text format",
                {200: Payload("Metrics", {"type": "string"}, "text/plain")},
                errors=(401,),
            )
        },
    ),
    Route(
        "/openapi.json",
        {"GET": Operation("openapi", "This document", {200: Payload("OpenAPI 3.1")})},
    ),
    *LIVE_ROUTES,
)
