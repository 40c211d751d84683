"""HttpApp: the ASGI application of `browser-tool serve` (and of `browser-tool mcp --http`,
which mounts the MCP endpoint at /mcp).

Hand-written rather than Starlette: nine routes of JSON in, JSON out, where every non-200 must
have our error shape (a framework's default 404/405/500 pages would not), the body limit must
hold while the body streams in, and the per-call overhead stays a few dozen microseconds.
"""

from __future__ import annotations

import hmac
import logging
import re

from .._errors import ClientGone, HttpError
from .._manager import BrowserSessionManager
from .._settings import Settings
from ._endpoints import Endpoints, Handler, Request
from ._runtime import InFlight, Shutdown
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

_CONVERSATION = r"/v1/conversations/(?P<conversation_id>[^/]+)"
ROUTES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), name)
    for pattern, name in (
        (r"/v1/tools", "tools"),
        (_CONVERSATION + r"/tools/(?P<tool>[^/]+)", "call"),
        (_CONVERSATION, "conversation"),
        (_CONVERSATION + r"/reset", "reset"),
        (_CONVERSATION + r"/keepalive", "keepalive"),
        (r"/v1/sessions", "sessions"),
        (r"/healthz", "healthz"),
        (r"/metrics", "metrics"),
        (r"/openapi.json", "openapi"),
    )
)
MCP_PATH = "/mcp"
# Probes must work without the token; nothing there is worth hiding.
_OPEN_PATHS = frozenset({"/healthz"})


class HttpApp:
    """The ASGI callable. Counts every request in flight for the shutdown drain."""

    def __init__(
        self,
        manager: BrowserSessionManager,
        settings: Settings,
        inflight: InFlight,
        shutdown: Shutdown,
        *,
        mcp: AsgiApp | None = None,
    ) -> None:
        self._table = Endpoints(manager, settings, shutdown).table()
        self._inflight = inflight
        self._shutdown = shutdown
        self._mcp = mcp
        self._token = settings.token.encode() if settings.token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return  # no websockets here; the server closes the connection
        path = str(scope["path"])
        if self._mcp is not None and (path == MCP_PATH or path.startswith(MCP_PATH + "/")):
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
            if path not in _OPEN_PATHS and not self._authorized(scope):
                raise _unauthorized()
            handler, params = self._route(str(scope["method"]), path)
            if self._shutdown.stopping and path not in _OPEN_PATHS:
                raise HttpError(503, "shutting_down", "The service is shutting down.")
            return await handler(Request(scope, receive, params))
        except HttpError as exc:
            return error_reply(exc)
        except ClientGone:
            raise
        except Exception:
            log.exception("%s %s failed", scope.get("method"), path)
            return error_reply(HttpError(500, "internal_error", "The service failed; see its log."))

    def _route(self, method: str, path: str) -> tuple[Handler, dict[str, str]]:
        for pattern, name in ROUTES:
            match = pattern.fullmatch(path)
            if match is None:
                continue
            handlers = self._table[name]
            handler = handlers.get(method)
            if handler is None:
                allowed = ", ".join(sorted(handlers))
                raise HttpError(
                    405,
                    "method_not_allowed",
                    f"{method} is not allowed on {path}; use {allowed}.",
                    headers=(("allow", allowed),),
                )
            return handler, match.groupdict()
        raise HttpError(404, "not_found", f"No endpoint at {path!r}; see GET /openapi.json.")

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
