"""The socket under a CDP connection: a WebSocket, with its library's errors translated here.

Nothing past this module sees trio_websocket or wsproto: a closed or failed socket is a
CdpConnectionError whose reason says why. `CdpTransport` is the seam a test fake can fill.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Protocol

import trio
from trio_websocket import (
    CloseReason,
    ConnectionClosed,
    ConnectionRejected,
    ConnectionTimeout,
    HandshakeError,
    WebSocketConnection,
    open_websocket_url,
)
from wsproto.utilities import LocalProtocolError

from ._errors import CdpConnectionError, InvalidInputError

_log = logging.getLogger("browser_tool.cdp")


class CdpTransport(Protocol):
    """A message socket. `receive` and `send` raise CdpConnectionError once it is closed;
    `aclose` is idempotent, bounded and never raises."""

    async def receive(self) -> str | bytes: ...

    async def send(self, text: str) -> None: ...

    async def aclose(self) -> None: ...


class _WebSocketTransport:
    def __init__(self, websocket: WebSocketConnection, close_timeout: float) -> None:
        self._websocket = websocket
        self._close_timeout = close_timeout

    async def receive(self) -> str | bytes:
        try:
            return await self._websocket.get_message()
        except ConnectionClosed as exc:
            raise CdpConnectionError(_describe_close(exc.reason)) from None

    async def send(self, text: str) -> None:
        try:
            await self._websocket.send_message(text)
        except ConnectionClosed as exc:
            raise CdpConnectionError(_describe_close(exc.reason)) from None
        # wsproto raises this between the peer's close frame arriving and trio-websocket
        # recording it: the socket is closing, the same failure as above.
        except LocalProtocolError:
            raise CdpConnectionError("the browser is closing the WebSocket") from None

    async def aclose(self) -> None:
        # Shielded so a cancelled owner still closes the socket; bounded so a peer that never
        # answers the close frame cannot hold it. trio-websocket closes the stream either way.
        with trio.move_on_after(self._close_timeout, shield=True):
            try:
                await self._websocket.aclose()
            except (ConnectionClosed, OSError) as exc:
                _log.debug("closing the CDP WebSocket failed: %r", exc)


@asynccontextmanager
async def open_websocket_transport(
    url: str, *, max_message_size: int, connect_timeout: float, close_timeout: float
) -> AsyncIterator[CdpTransport]:
    """Open a WebSocket to `url`; close it on exit.

    Raises InvalidInputError for a URL that is not ws:// or wss:// with a host, and
    CdpConnectionError when the socket cannot be opened (refused, rejected, or no handshake
    within `connect_timeout`). The body's exceptions propagate unchanged.
    """
    try:
        websocket_cm = open_websocket_url(
            url,
            max_message_size=max_message_size,
            connect_timeout=connect_timeout,
            disconnect_timeout=close_timeout,
            # trio's 64 KiB reads instead of trio-websocket's 4 KiB: a multi-MB screenshot
            # would otherwise cost hundreds of wake-ups.
            receive_buffer_size=None,
        )
    except ValueError as exc:
        raise InvalidInputError("url", "must be a ws:// or wss:// URL with a host", url) from exc
    async with AsyncExitStack() as stack:
        try:
            websocket = await stack.enter_async_context(websocket_cm)
        except (HandshakeError, ConnectionClosed, OSError) as exc:
            raise CdpConnectionError(_describe_open_failure(url, exc, connect_timeout)) from exc
        yield _WebSocketTransport(websocket, close_timeout)


def _describe_close(reason: CloseReason | None) -> str:
    if reason is None:
        return "the WebSocket closed"
    detail = f": {reason.reason}" if reason.reason else ""
    text = f"the WebSocket closed (code {reason.code} {reason.name}{detail})"
    if reason.code == 1009:
        text += "; a message was larger than max_message_size"
    return text


def _describe_open_failure(url: str, exc: BaseException, connect_timeout: float) -> str:
    if isinstance(exc, ConnectionTimeout):
        why = f"no WebSocket handshake within {connect_timeout:g}s"
    elif isinstance(exc, ConnectionRejected):
        why = f"the server refused the WebSocket upgrade (HTTP {exc.status_code})"
    else:
        why = repr(exc.__cause__ or exc)
    return f"could not connect to {url!r}: {why}"
