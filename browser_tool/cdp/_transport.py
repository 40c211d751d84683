"""The socket under a CDP connection: a WebSocket (wsproto's framing) on a TCP stream we own.

Nothing past this module sees wsproto errors or OSError: a socket that cannot open or has
closed is a CdpConnectionError whose reason says why. `CdpTransport` is the seam a test fake can
fill.

Why wsproto under our own loop and not trio-websocket: trio-websocket runs a reader task of its
own that hands each message through a channel to the connection's reader, so every answer cost
one more task switch, and its send side takes a lock per message; on a warm `browser_eval` that
was a third of our CPU per call. Here `receive` is called by the connection's one reader task
and parses frames in place, so an answer goes socket -> reader -> caller. (trio-websocket 0.12
also never closed the client's TCP stream when the peer started the close handshake, and its
connect timeout did not cover a peer that accepts TCP but never answers the upgrade; owning
the stream fixes both here too.)
"""

from __future__ import annotations

import collections
import logging
import math
import os
import urllib.parse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Protocol

import trio
from wsproto import ConnectionType, WSConnection
from wsproto.connection import ConnectionState
from wsproto.events import (
    AcceptConnection,
    CloseConnection,
    Event,
    Message,
    Ping,
    RejectConnection,
    Request,
    TextMessage,
)
from wsproto.frame_protocol import CloseReason
from wsproto.utilities import LocalProtocolError, RemoteProtocolError

from .._duration import format_duration
from .._errors import CdpConnectionError, InvalidInputError

_log = logging.getLogger("browser_tool.cdp")

_RECEIVE_SIZE = 65536  # trio's default read size: one wake-up per 64 KiB of a large answer
_SocketError = (OSError, trio.BrokenResourceError, trio.ClosedResourceError)


class CdpTransport(Protocol):
    """A message socket. `receive` (one caller at a time) and `send_nowait` raise
    CdpConnectionError once it is closed; `aclose` is idempotent, bounded and never raises."""

    async def receive(self) -> str | bytes: ...

    def send_nowait(self, text: str) -> None:
        """Send `text` without blocking: written at once when the socket takes it (nearly
        always), else the rest goes to the backlog that `run_writer` writes."""
        ...

    async def run_writer(self) -> None:
        """Write the backlog as the socket takes it, until cancelled or the socket fails
        (CdpConnectionError). Cancellation never cuts a frame: the rest stays queued."""
        ...

    async def aclose(self) -> None: ...


class _WebSocketTransport:
    def __init__(
        self,
        stream: trio.SocketStream,
        ws: WSConnection,
        *,
        max_message_size: int,
        close_timeout: float,
    ) -> None:
        self._stream = stream
        self._ws = ws
        self._max_message_size = max_message_size
        self._close_timeout = close_timeout
        self._messages: collections.deque[str | bytes] = collections.deque()
        self._parts: list[str | bytes] = []  # the fragments of a message still arriving
        self._part_size = 0
        self._closed: str | None = None  # why, once closed
        self._fd = stream.socket.fileno()
        self._backlog: collections.deque[bytes] = collections.deque()  # the head may be a rest
        self._backlog_added = trio.Event()

    async def receive(self) -> str | bytes:
        while not self._messages:
            if self._closed is not None:
                raise CdpConnectionError(self._closed)
            try:
                data = await self._stream.receive_some(_RECEIVE_SIZE)
            except _SocketError as exc:
                raise self._fail(f"the socket failed ({exc!r})") from None
            try:
                self._ws.receive_data(data or None)  # b"": the peer closed the TCP stream
                for event in self._ws.events():
                    await self._handle(event)
            except (LocalProtocolError, RemoteProtocolError) as exc:
                raise self._fail(f"the WebSocket broke its protocol ({exc})") from None
        return self._messages.popleft()

    async def _handle(self, event: Event) -> None:
        if isinstance(event, Message):
            self._part_size += len(event.data)
            if self._part_size > self._max_message_size:
                await self._send_quietly(CloseConnection(CloseReason.MESSAGE_TOO_BIG))
                raise self._fail(
                    f"the WebSocket closed (code 1009 MESSAGE_TOO_BIG); a message was larger "
                    f"than max_message_size ({self._max_message_size} bytes)"
                )
            self._parts.append(event.data)
            if event.message_finished:
                parts, self._parts, self._part_size = self._parts, [], 0
                if len(parts) == 1:
                    self._messages.append(parts[0])
                elif isinstance(event, TextMessage):
                    self._messages.append("".join(str(part) for part in parts))
                else:
                    self._messages.append(
                        b"".join(p.encode() if isinstance(p, str) else p for p in parts)
                    )
        elif isinstance(event, Ping):
            await self._send_quietly(event.response())
        elif isinstance(event, CloseConnection):
            if self._ws.state is ConnectionState.REMOTE_CLOSING:
                await self._send_quietly(event.response())
            raise self._fail(_describe_close(event))

    # Why writes are synchronous: a write task (or a lock) per message cost a task switch on
    # every command, and a caller cancelled in the middle of an awaited write would leave half
    # a frame on the wire, corrupting the stream for every session. A non-blocking write either
    # takes the whole frame at once (a command is small, the socket buffer is not) or leaves a
    # rest that the writer task owns and finishes, whoever gave up meanwhile.
    def send_nowait(self, text: str) -> None:
        if self._closed is not None:
            raise CdpConnectionError(self._closed)
        try:
            frame = self._ws.send(TextMessage(data=text))
        except LocalProtocolError:  # closing: no more messages
            raise CdpConnectionError(self._closed or "the WebSocket is closing") from None
        self._write(frame)

    def _write(self, frame: bytes) -> None:
        if not self._backlog:
            try:
                sent = os.write(self._fd, frame)
            except BlockingIOError:
                sent = 0
            except OSError as exc:
                raise self._fail(f"the socket failed ({exc!r})") from None
            if sent == len(frame):
                return
            frame = frame[sent:]
        self._backlog.append(frame)
        self._backlog_added.set()

    def _flush(self) -> None:
        """Write as much of the backlog as the socket takes now."""
        while self._backlog:
            head = self._backlog[0]
            try:
                sent = os.write(self._fd, head)
            except BlockingIOError:
                return
            except OSError as exc:
                raise self._fail(f"the socket failed ({exc!r})") from None
            if sent < len(head):
                self._backlog[0] = head[sent:]
                return
            self._backlog.popleft()

    async def run_writer(self) -> None:
        while True:
            if not self._backlog:
                self._backlog_added = trio.Event()
                await self._backlog_added.wait()
                continue
            try:
                await trio.lowlevel.wait_writable(self._fd)
            except trio.ClosedResourceError:
                raise self._fail("the socket was closed") from None
            self._flush()

    async def _send_quietly(self, event: Event) -> None:
        try:
            self._write(self._ws.send(event))
        except (CdpConnectionError, LocalProtocolError) as exc:
            _log.debug("sending %s failed: %r", type(event).__name__, exc)
        await trio.lowlevel.checkpoint()

    def _fail(self, reason: str) -> CdpConnectionError:
        self._closed = self._closed or reason
        return CdpConnectionError(self._closed)

    async def aclose(self) -> None:
        # The polite close (our close frame, then the peer's) runs only for an owner that is
        # not cancelled, shielded (it finishes if the owner is cancelled meanwhile) and bounded
        # (a peer that never answers cannot hold it). The stream is closed on every path.
        if self._closed is None and trio.current_effective_deadline() != -math.inf:
            self._closed = "the connection was closed by its owner"
            with trio.move_on_after(self._close_timeout, shield=True):
                await self._close_politely()
        self._closed = self._closed or "the connection was closed by its owner"
        with trio.CancelScope(shield=True):
            await self._stream.aclose()

    async def _close_politely(self) -> None:
        await self._send_quietly(CloseConnection(CloseReason.NORMAL_CLOSURE))
        while self._ws.state is not ConnectionState.CLOSED:
            try:
                while self._backlog:
                    await trio.lowlevel.wait_writable(self._fd)
                    self._flush()
                data = await self._stream.receive_some(_RECEIVE_SIZE)
                self._ws.receive_data(data or None)
                for _ in self._ws.events():
                    pass  # late answers nobody waits for any more, then the peer's close
            except (
                *_SocketError,
                CdpConnectionError,
                LocalProtocolError,
                RemoteProtocolError,
            ) as exc:
                _log.debug("closing the CDP WebSocket failed: %r", exc)
                return


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
    transport = _WebSocketTransport(
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
            data = await stream.receive_some(_RECEIVE_SIZE)
            ws.receive_data(data or None)
            for event in ws.events():
                if isinstance(event, AcceptConnection):
                    return ws  # messages that came with the answer stay buffered in `ws`
                if isinstance(event, RejectConnection):
                    why = f"the server refused the WebSocket upgrade (HTTP {event.status_code})"
                    raise CdpConnectionError(f"could not connect to {url!r}: {why}")
            if not data:
                raise CdpConnectionError(f"could not connect to {url!r}: the server hung up")
    except (*_SocketError, LocalProtocolError, RemoteProtocolError) as exc:
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


def _describe_close(event: CloseConnection) -> str:
    if event.code == CloseReason.ABNORMAL_CLOSURE:
        return "the WebSocket closed (the peer closed the TCP connection)"
    try:
        name = CloseReason(event.code).name
    except ValueError:
        name = "UNKNOWN"
    detail = f": {event.reason}" if event.reason else ""
    text = f"the WebSocket closed (code {event.code} {name}{detail})"
    if event.code == CloseReason.MESSAGE_TOO_BIG:
        text += "; a message was larger than max_message_size"
    return text
