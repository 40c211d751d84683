"""The socket under a CDP connection: a WebSocket whose TCP stream we own.

Nothing past this module sees trio_websocket errors or OSError: a socket that cannot open or
has closed is a CdpConnectionError whose reason says why. `CdpTransport` is the seam a test
fake can fill.

Why not `open_websocket_url`: in trio-websocket 0.12 it never closes the client's TCP stream
when the peer starts the close handshake (every Chrome that exits or crashes would leak a
socket until garbage collection, with a ResourceWarning), and its `connect_timeout` against a
peer that accepts TCP but never answers the upgrade waits forever. Owning the stream, with
`wrap_client_stream`, lets us close it on every path.
"""

from __future__ import annotations

import logging
import math
import urllib.parse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Protocol

import trio
from trio_websocket import (
    ConnectionClosed,
    ConnectionRejected,
    WebSocketConnection,
    wrap_client_stream,
)

from .._duration import format_duration
from .._errors import CdpConnectionError, InvalidInputError
from .._tasks import raise_sole

_log = logging.getLogger("browser_tool.cdp")


class CdpTransport(Protocol):
    """A message socket. `receive` and `send` raise CdpConnectionError once it is closed;
    `aclose` is idempotent, bounded and never raises."""

    async def receive(self) -> str | bytes: ...

    async def send(self, text: str) -> None: ...

    async def aclose(self) -> None: ...


class _WebSocketTransport:
    def __init__(
        self, websocket: WebSocketConnection, stream: trio.SocketStream, close_timeout: float
    ) -> None:
        self._websocket = websocket
        self._stream = stream
        self._close_timeout = close_timeout

    async def receive(self) -> str | bytes:
        try:
            return await self._websocket.get_message()
        except ConnectionClosed as exc:
            raise CdpConnectionError(_describe_close(exc)) from None

    async def send(self, text: str) -> None:
        try:
            await self._websocket.send_message(text)
        except ConnectionClosed as exc:
            raise CdpConnectionError(_describe_close(exc)) from None

    async def aclose(self) -> None:
        # The polite close waits for the peer's close frame, which trio-websocket's reader
        # task receives. When our caller is cancelled, that cancellation has reached the
        # reader too, so only the TCP close is left. Otherwise the handshake is shielded (it
        # finishes even if the caller is cancelled meanwhile) and bounded (a peer that never
        # answers cannot hold it). The stream is closed on every path.
        if trio.current_effective_deadline() != -math.inf:
            with trio.move_on_after(self._close_timeout, shield=True):
                try:
                    await self._websocket.aclose()
                except (ConnectionClosed, OSError) as exc:
                    _log.debug("closing the CDP WebSocket failed: %r", exc)
        with trio.CancelScope(shield=True):
            await self._stream.aclose()


@asynccontextmanager
async def open_websocket_transport(
    url: str, *, max_message_size: int, connect_timeout: float, close_timeout: float
) -> AsyncIterator[CdpTransport]:
    """Open a WebSocket to `url`; close it on exit.

    Raises InvalidInputError for a URL that is not ws://host[:port]/..., and CdpConnectionError
    when the socket cannot be opened (refused, rejected, or not open within
    `connect_timeout`). The body's exceptions propagate as themselves.
    """
    host, port, host_header, resource = _split_url(url)
    deadline = trio.current_time() + connect_timeout
    timed_out = CdpConnectionError(
        f"could not connect to {url!r}: no WebSocket handshake within "
        f"{format_duration(connect_timeout)}"
    )
    with trio.CancelScope(deadline=deadline) as connect_scope:
        try:
            stream = await trio.open_tcp_stream(host, port)
        except OSError as exc:
            raise CdpConnectionError(f"could not connect to {url!r}: {exc}") from exc
    if connect_scope.cancelled_caught:
        raise timed_out
    try:
        # trio-websocket's own reader task runs in this nursery until the stream closes.
        async with trio.open_nursery() as nursery:
            with trio.CancelScope(deadline=deadline) as connect_scope:
                websocket = await wrap_client_stream(
                    nursery,
                    stream,
                    host_header,
                    resource,
                    max_message_size=max_message_size,
                    # trio's 64 KiB reads, not trio-websocket's 4 KiB: a multi-MB screenshot
                    # would otherwise cost hundreds of wake-ups.
                    receive_buffer_size=None,
                )
            if connect_scope.cancelled_caught:
                await stream.aclose()  # ends trio-websocket's reader, which waits on it
                raise timed_out
            transport = _WebSocketTransport(websocket, stream, close_timeout)
            try:
                yield transport
            finally:
                await transport.aclose()
    except BaseExceptionGroup as group:
        # The upgrade was refused: trio-websocket's reader raises that into the nursery.
        for leaf in group.exceptions:
            if isinstance(leaf, ConnectionRejected):
                why = f"the server refused the WebSocket upgrade (HTTP {leaf.status_code})"
                raise CdpConnectionError(f"could not connect to {url!r}: {why}") from leaf
        raise_sole(group)
    finally:
        with trio.CancelScope(shield=True):
            await stream.aclose()


def _split_url(url: str) -> tuple[str, int, str, str]:
    parts = urllib.parse.urlsplit(url)
    try:
        port = parts.port or 80
    except ValueError:  # a port that is not a number in 0-65535
        port = -1
    if parts.scheme != "ws" or not parts.hostname or port < 0:
        raise InvalidInputError("url", "must be a ws://host[:port]/... URL", url)
    host_header = parts.netloc.rpartition("@")[2]
    resource = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.hostname, port, host_header, resource


def _describe_close(exc: ConnectionClosed) -> str:
    reason = exc.reason
    if reason is None:
        return "the WebSocket closed"
    detail = f": {reason.reason}" if reason.reason else ""
    text = f"the WebSocket closed (code {reason.code} {reason.name}{detail})"
    if reason.code == 1009:
        text += "; a message was larger than max_message_size"
    return text
