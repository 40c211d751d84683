"""MCP over streamable HTTP, mounted at /mcp: each MCP session is one conversation, whose
browser is killed when the session ends (the client's DELETE, the SDK's idle expiry, a crash).

Sessions are a feature of the handshake protocol versions (up to 2025-11-25); the 2026-07-28
revision serves each request on its own. So `server/discover` advertises only handshake
versions, and clients that probe first (the SDK's `mode="auto"`) fall back to `initialize`.
A request that still arrives without a session gets an error result saying how to connect.
"""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types
import trio
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from .._errors import NoConversationError
from ._listen import is_loopback
from ._mcp import Context, build_mcp_server
from ._service_parts import ServiceParts
from ._wire import AsgiApp

log = logging.getLogger("browser_tool.mcp")

CONVERSATION_PREFIX = "mcp-"
_HOOKED = "browser_tool.conversation"


class McpHttpEndpoint:
    """The SDK's session manager wired to ours. Run `run` in a nursery, then serve `asgi`."""

    def __init__(self, parts: ServiceParts) -> None:
        settings = parts.settings
        self._manager = parts.manager
        self._shutdown = parts.shutdown
        self._server = build_mcp_server(parts, self._conversation_for)
        self._server.add_request_handler("server/discover", types.RequestParams, self._discover)
        self._sessions = StreamableHTTPSessionManager(
            app=self._server,
            # A plain JSON answer per POST instead of an event stream: the tools send nothing
            # before their result, and it saves a third of the per-call time.
            json_response=True,
            security_settings=_security(settings.host),
            # The SDK forgets a session idle this long; the manager would reap its browser then.
            session_idle_timeout=settings.idle_timeout,
            max_request_body_size=settings.max_body_bytes,
        )
        self.asgi: AsgiApp = StreamableHTTPASGIApp(self._sessions)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve MCP sessions until cancelled; cancelling ends every session."""
        async with self._sessions.run():
            task_status.started()
            await trio.sleep_forever()

    def _conversation_for(self, ctx: Context) -> str:
        # SDK 2.3 gives low-level handlers the per-connection `Connection` (its `state` and the
        # `exit_stack` it unwinds when the session ends, the documented place for per-session
        # cleanup) only as this attribute. The tests pin the behaviour for the pinned SDK.
        connection = getattr(ctx.session, "_connection", None)
        session_id = getattr(connection, "session_id", None)
        if connection is None or not session_id:
            raise NoConversationError(
                "This MCP endpoint keeps one browser per MCP session and this request has no "
                "session: connect with the initialize handshake (protocol 2025-11-25 or older)."
            )
        conversation_id = CONVERSATION_PREFIX + str(session_id)
        if _HOOKED not in connection.state:
            connection.state[_HOOKED] = conversation_id
            connection.exit_stack.push_async_callback(self._session_ended, conversation_id)
        return conversation_id

    async def _session_ended(self, conversation_id: str) -> None:
        if self._shutdown.stopping:
            return  # the manager is closing every session (reason "shutdown")
        report = await self._manager.kill_session(conversation_id, reason="delete")
        log.info("MCP session ended: %s (pid %s)", conversation_id, report.pid)

    async def _discover(self, ctx: Context, params: Any) -> types.DiscoverResult:
        return types.DiscoverResult(
            supported_versions=list(HANDSHAKE_PROTOCOL_VERSIONS),
            capabilities=self._server.get_capabilities(),
        )


def _security(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection on loopback (as the SDK does); elsewhere the token guards."""
    if not is_loopback(host):
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )
