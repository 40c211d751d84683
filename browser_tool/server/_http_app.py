"""HttpApp: the ASGI application of `browser-tool serve` (and of its alias `browser-tool mcp
--http`): the HTTP API, and the MCP routes of the table handed to the MCP endpoint.

Hand-written rather than Starlette: a handful of routes (the table in `_routes`) of JSON in,
JSON out, where every non-200 must have our error shape (a framework's default 404/405/500
pages would not), the body limit must hold while the body streams in, and the per-call overhead
stays a few dozen microseconds.
"""

from __future__ import annotations

import hmac
import logging

import trio

from .._errors import ClientGone, HttpError
from ._endpoints import Endpoints, Request
from ._live_view import LiveView
from ._routes import find_route
from ._service_parts import ServiceParts
from ._wire import (
    AsgiApp,
    Receive,
    Reply,
    Scope,
    Send,
    error_reply,
    header,
    send_reply,
)

log = logging.getLogger("browser_tool.http")


class HttpApp:
    """The ASGI callable. Counts every request in flight for the shutdown drain."""

    def __init__(self, parts: ServiceParts, nursery: trio.Nursery, *, mcp: AsgiApp) -> None:
        """`nursery` outlives every request (the service's): request helpers run there."""
        self._handlers = Endpoints(parts, nursery).handlers() | LiveView(parts, nursery).handlers()
        self._inflight = parts.inflight
        self._shutdown = parts.shutdown
        self._mcp = mcp
        self._token = parts.settings.token.encode() if parts.settings.token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return  # no websockets here; the server closes the connection
        path = str(scope["path"])
        found = find_route(path)
        if found is not None and found[0].is_mcp:
            if not self._authorized(scope):
                await send_reply(send, error_reply(_unauthorized()))
                return
            # MCP tool calls are counted inside the MCP handler: this request may be a
            # long-lived event stream that must not hold up a shutdown.
            await self._mcp(scope, receive, send)
            return
        with self._inflight.track():
            try:
                reply = await self._dispatch(scope, receive, path)
            except ClientGone:
                return
            await send_reply(send, reply)

    async def _dispatch(self, scope: Scope, receive: Receive, path: str) -> Reply:
        try:
            # The token comes before the path is judged: a caller without it learns nothing
            # about the API (not even 404 from 405), only the probe answers it.
            found = find_route(path)
            is_probe = found is not None and found[0].is_probe
            if (found is None or found[0].needs_token) and not self._authorized(scope):
                raise _unauthorized()
            if found is None:
                raise HttpError(
                    404, "not_found", f"No endpoint at {path!r}; see GET /openapi.json."
                )
            route, params = found
            operation = route.operation(str(scope["method"]), path)
            if self._shutdown.stopping and not is_probe:
                raise HttpError(503, "shutting_down", "The service is shutting down.")
            return await self._handlers[operation.handler](Request(scope, receive, params))
        except HttpError as exc:
            return error_reply(exc)
        except ClientGone:
            raise
        except Exception:
            log.exception("%s %s failed", scope.get("method"), path)
            return error_reply(HttpError(500, "internal_error", "The service failed; see its log."))

    def _authorized(self, scope: Scope) -> bool:
        if self._token is None:
            return True
        given = (header(scope, b"authorization") or "").encode("latin-1")
        return hmac.compare_digest(given, b"Bearer " + self._token)


def _unauthorized() -> HttpError:
    return HttpError(
        401,
        "unauthorized",
        "A bearer token is required: send 'Authorization: Bearer <BROWSER_TOOL_TOKEN>'.",
        headers=(("www-authenticate", "Bearer"),),
    )


async def _lifespan(receive: Receive, send: Send) -> None:
    # The service's resources are owned by the CLI's trio nursery, not by ASGI lifespan.
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
