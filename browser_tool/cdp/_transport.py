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
from typing import Protocol

import trio
from wsproto import WSConnection
from wsproto.connection import ConnectionState
from wsproto.events import (
    CloseConnection,
    Event,
    Message,
    Ping,
    TextMessage,
)
from wsproto.frame_protocol import CloseReason
from wsproto.utilities import LocalProtocolError, RemoteProtocolError

from .._errors import CdpConnectionError

_log = logging.getLogger("browser_tool.cdp")

RECEIVE_SIZE = 65536  # trio's default read size: one wake-up per 64 KiB of a large answer
SOCKET_ERRORS = (OSError, trio.BrokenResourceError, trio.ClosedResourceError)


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


class WebSocketTransport:
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
                data = await self._stream.receive_some(RECEIVE_SIZE)
            except SOCKET_ERRORS as exc:
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
                data = await self._stream.receive_some(RECEIVE_SIZE)
                self._ws.receive_data(data or None)
                for _ in self._ws.events():
                    pass  # late answers nobody waits for any more, then the peer's close
            except (
                *SOCKET_ERRORS,
                CdpConnectionError,
                LocalProtocolError,
                RemoteProtocolError,
            ) as exc:
                _log.debug("closing the CDP WebSocket failed: %r", exc)
                return


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
