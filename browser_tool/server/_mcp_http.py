"""MCP over streamable HTTP: the two MCP routes of the table, each on its own SDK session
manager and low-level Server (the same tools, see `_mcp`).

- `/v1/conversations/{conversation_id}/mcp`: every request belongs to the conversation in its
  path, whatever the protocol version: a stateless 2026-07-28 request, or a request of a
  handshake session (up to 2025-11-25). Any number of clients and sessions may share one
  conversation; an MCP session ending ends nothing but itself. The conversation ends as every
  conversation does: the delete hook, `kill_session`, the idle reaper.
- `/mcp`: one conversation per handshake session (`mcp-<session id>`), deleted when the client
  ends its session (DELETE). A session the SDK forgets after `idle_timeout` without requests
  has had its browser reaped by then (the manager's idle clock runs on the same timeout), and
  the record follows. A 2026-07-28 request has no session to key on, so it is refused with the
  per-conversation URL to use instead; `server/discover` here advertises only the handshake
  versions, so clients that probe first (the SDK's `mode="auto"`) fall back to `initialize`.

The conversation comes from the HTTP request that carried the message, which the SDK hands
handlers as `ctx.request` (a Starlette `Request`): the path parameter that the router below
puts into the ASGI scope, or the `Mcp-Session-Id` header. No private SDK attribute is read.
"""

from __future__ import annotations

import json
import logging
from contextlib import AsyncExitStack
from typing import Any

import mcp_types as types
import trio
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from .._conversation_ids import validate_conversation_id
from .._errors import InvalidInputError, NoConversationError
from ._listen import is_loopback
from ._mcp import Context, build_mcp_server, request_header
from ._routes import MCP_CONVERSATION_TEMPLATE, find_route
from ._service_parts import ServiceParts
from ._wire import Message, Receive, Reply, Scope, Send, header, send_reply

log = logging.getLogger("browser_tool.mcp")

CONVERSATION_PREFIX = "mcp-"
SESSION_HEADER = b"mcp-session-id"


class McpHttpEndpoint:
    """Both MCP routes. Run `run` in a nursery, then serve `asgi` (the HttpApp hands it the
    MCP routes of the table, after the token check)."""

    def __init__(self, parts: ServiceParts) -> None:
        self._manager = parts.manager
        self._shutdown = parts.shutdown
        in_path = build_mcp_server(parts, _conversation_in_path)
        by_session = build_mcp_server(parts, _conversation_of_session)
        by_session.add_request_handler(
            "server/discover", types.RequestParams, _handshake_discover(by_session)
        )
        self._in_path = _session_manager(in_path, parts)
        self._by_session = _session_manager(by_session, parts)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve MCP until cancelled; cancelling ends every MCP session (not the
        conversations: the service's own shutdown ends those)."""
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(self._in_path.run())
            await stack.enter_async_context(self._by_session.run())
            task_status.started()
            await trio.sleep_forever()

    async def asgi(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI app of the MCP routes."""
        found = find_route(str(scope["path"]))
        if found is not None and found[0].template == MCP_CONVERSATION_TEMPLATE:
            try:
                conversation_id = validate_conversation_id(found[1]["conversation_id"])
            except InvalidInputError as exc:
                await send_reply(send, _jsonrpc_error(400, types.INVALID_REQUEST, str(exc)))
                return
            # Starlette's `Request.path_params` reads this key, so handlers find it there.
            scope["path_params"] = {"conversation_id": conversation_id}
            await self._in_path.handle_request(scope, receive, send)
            return
        await self._serve_by_session(scope, receive, send)

    async def _serve_by_session(self, scope: Scope, receive: Receive, send: Send) -> None:
        session_id = header(scope, SESSION_HEADER)
        if scope["method"] != "DELETE" or not session_id:
            await self._by_session.handle_request(scope, receive, send)
            return
        status = 0

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        await self._by_session.handle_request(scope, receive, watch)
        # The client ended its session (the SDK answers 200 only for a session it knew).
        if 200 <= status < 300 and not self._shutdown.stopping:
            conversation_id = CONVERSATION_PREFIX + session_id
            report = await self._manager.kill_session(conversation_id)
            log.info("MCP session ended: %s (pid %s)", conversation_id, report.pid)


def _conversation_in_path(ctx: Context) -> str:
    params = getattr(ctx.request, "path_params", None) or {}
    conversation_id = params.get("conversation_id")
    if not isinstance(conversation_id, str):  # the router always sets it; never a guess
        raise NoConversationError("This request names no conversation.")
    return conversation_id


def _conversation_of_session(ctx: Context) -> str:
    session_id = request_header(ctx, SESSION_HEADER)
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS and session_id:
        return CONVERSATION_PREFIX + session_id
    base = str(getattr(ctx.request, "base_url", "http://HOST:PORT/"))
    url = base.rstrip("/") + MCP_CONVERSATION_TEMPLATE
    raise NoConversationError(
        f"This request (protocol {ctx.protocol_version}) has no MCP session, and /mcp keeps "
        "one browser per handshake session. Use the per-conversation endpoint, which serves "
        f"every protocol version: {url} (the conversation id: 1-128 of A-Z a-z 0-9 . _ : -); "
        "or connect here with the initialize handshake (protocol 2025-11-25 or older)."
    )


def _handshake_discover(server: Server[Any]) -> Any:
    async def discover(ctx: Context, params: Any) -> types.DiscoverResult:
        return types.DiscoverResult(
            supported_versions=list(HANDSHAKE_PROTOCOL_VERSIONS),
            capabilities=server.get_capabilities(),
        )

    return discover


def _session_manager(server: Server[Any], parts: ServiceParts) -> StreamableHTTPSessionManager:
    settings = parts.settings
    return StreamableHTTPSessionManager(
        app=server,
        # A plain JSON answer per POST instead of an event stream: the tools send nothing
        # before their result, and it saves a third of the per-call time.
        json_response=True,
        security_settings=_security(settings.host),
        # How long the SDK keeps a handshake session without requests: as long as the
        # manager keeps an idle browser.
        session_idle_timeout=settings.idle_timeout,
        max_request_body_size=settings.max_body_bytes,
    )


def _jsonrpc_error(status: int, code: int, message: str) -> Reply:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return Reply(status, json.dumps(body).encode())


def _security(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection on loopback (as the SDK does); elsewhere the token guards."""
    if not is_loopback(host):
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )
