"""Opening a CDP connection: the TCP stream, the WebSocket handshake (wsproto), then the
CdpConnection with its reader and writer; and closing all of it on every path."""

from __future__ import annotations

import urllib.parse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, RejectConnection, Request
from wsproto.utilities import LocalProtocolError, RemoteProtocolError

from .._duration import format_duration
from .._errors import CdpConnectionError, InvalidInputError
from .._tasks import raise_sole
from ._connection import DEFAULT_MAX_MESSAGE_SIZE, CdpConnection
from ._transport import RECEIVE_SIZE, SOCKET_ERRORS, CdpTransport, WebSocketTransport


@asynccontextmanager
async def open_cdp_connection(
    url: str,
    *,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    connect_timeout: float = 10.0,
    close_timeout: float = 2.0,
) -> AsyncIterator[CdpConnection]:
    """Connect to the DevTools WebSocket at `url`; yield a CdpConnection; close it on exit.

    Raises InvalidInputError for a URL that is not ws://host[:port]/..., and CdpConnectionError
    when the connection cannot be opened (refused, rejected, no handshake within
    connect_timeout). On exit, whether normal, by error or by cancellation, the connection is
    closed as by `aclose()` (a cancelled owner skips the polite close handshake and just
    closes the socket), and what the body raised propagates as itself, never in a group.
    """
    transport_cm = open_websocket_transport(
        url,
        max_message_size=max_message_size,
        connect_timeout=connect_timeout,
        close_timeout=close_timeout,
    )
    async with transport_cm as transport:
        # The body runs inside the nursery of the reader and writer, so trio's strict
        # exception groups wrap what it raises in a group; callers see the exception itself.
        try:
            async with trio.open_nursery() as nursery:
                connection = CdpConnection(transport)
                nursery.start_soon(connection.run)
                try:
                    yield connection
                finally:
                    await connection.aclose()
        except BaseExceptionGroup as group:
            raise_sole(group)


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
    with trio.move_on_after(connect_timeout) as connect_scope:
        try:
            stream = await trio.open_tcp_stream(host, port)
        except OSError as exc:
            raise CdpConnectionError(f"could not connect to {url!r}: {exc}") from exc
        try:
            ws = await _handshake(stream, host_header, resource, url)
        except BaseException:
            with trio.CancelScope(shield=True):
                await stream.aclose()
            raise
    if connect_scope.cancelled_caught:
        raise CdpConnectionError(
            f"could not connect to {url!r}: no WebSocket handshake within "
            f"{format_duration(connect_timeout)}"
        )
    transport = WebSocketTransport(
        stream, ws, max_message_size=max_message_size, close_timeout=close_timeout
    )
    try:
        yield transport
    finally:
        await transport.aclose()


async def _handshake(
    stream: trio.SocketStream, host_header: str, resource: str, url: str
) -> WSConnection:
    ws = WSConnection(ConnectionType.CLIENT)
    try:
        await stream.send_all(ws.send(Request(host=host_header, target=resource)))
        while True:
            data = await stream.receive_some(RECEIVE_SIZE)
            ws.receive_data(data or None)
            for event in ws.events():
                if isinstance(event, AcceptConnection):
                    return ws  # messages that came with the answer stay buffered in `ws`
                if isinstance(event, RejectConnection):
                    why = f"the server refused the WebSocket upgrade (HTTP {event.status_code})"
                    raise CdpConnectionError(f"could not connect to {url!r}: {why}")
            if not data:
                raise CdpConnectionError(f"could not connect to {url!r}: the server hung up")
    except (*SOCKET_ERRORS, LocalProtocolError, RemoteProtocolError) as exc:
        raise CdpConnectionError(f"could not connect to {url!r}: {exc!r}") from None


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
