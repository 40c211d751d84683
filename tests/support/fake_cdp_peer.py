"""A scripted stand-in for Chrome's DevTools endpoint: a trio-websocket server on 127.0.0.1.

The test body is the script: it reads the commands the client sent (`receive_command`) and
answers, emits events, sends garbage or closes the socket, in exactly the order it wants. One
client connection per peer. Readiness comes from `nursery.start`, the port from the kernel.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import trio
from trio_websocket import WebSocketConnection, WebSocketRequest, serve_websocket

Message = dict[str, Any]

# The peer must be able to receive whatever the client may send in these tests.
_MAX_MESSAGE_SIZE = 64 * 1024 * 1024


class FakeCdpPeer:
    """The server side of one CDP connection. Get one from `open_fake_cdp_peer`."""

    def __init__(self) -> None:
        self.url = ""
        self._handed_over, self._incoming = trio.open_memory_channel[WebSocketConnection](1)
        self._websocket: WebSocketConnection | None = None
        self._release = trio.Event()

    async def _handle(self, request: WebSocketRequest) -> None:
        websocket = await request.accept()
        await self._handed_over.send(websocket)
        # trio-websocket closes the connection when the handler returns: hold it open until
        # the script closes it or the peer shuts down.
        await self._release.wait()

    async def connection(self) -> WebSocketConnection:
        """The client's connection, once it has connected."""
        if self._websocket is None:
            self._websocket = await self._incoming.receive()
        return self._websocket

    async def receive_command(self) -> Message:
        """The next command the client sent, parsed."""
        websocket = await self.connection()
        message: Message = json.loads(await websocket.get_message())
        return message

    async def send_raw(self, data: str | bytes) -> None:
        await (await self.connection()).send_message(data)

    async def send(self, message: Message) -> None:
        await self.send_raw(json.dumps(message))

    async def reply(self, command: Message, result: Message) -> None:
        """Answer `command` with `result`, on the session it came from."""
        await self.send(_on_session_of(command, {"id": command["id"], "result": result}))

    async def reply_error(
        self, command: Message, code: int, message: str, data: str | None = None
    ) -> None:
        error: Message = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        await self.send(_on_session_of(command, {"id": command["id"], "error": error}))

    async def event(self, method: str, params: Message, session_id: str | None = None) -> None:
        message: Message = {"method": method, "params": params}
        if session_id is not None:
            message["sessionId"] = session_id
        await self.send(message)

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        """Close the socket from the browser's side with a close frame."""
        await (await self.connection()).aclose(code, reason)
        self._release.set()


def _on_session_of(command: Message, message: Message) -> Message:
    if "sessionId" in command:
        message["sessionId"] = command["sessionId"]
    return message


@asynccontextmanager
async def open_fake_cdp_peer() -> AsyncIterator[FakeCdpPeer]:
    """Serve a FakeCdpPeer on 127.0.0.1, a kernel-chosen port; stop it on exit."""
    peer = FakeCdpPeer()
    async with trio.open_nursery() as nursery:
        serve = partial(
            serve_websocket, peer._handle, "127.0.0.1", 0, None, max_message_size=_MAX_MESSAGE_SIZE
        )
        server = await nursery.start(serve)
        peer.url = f"ws://127.0.0.1:{server.port}/devtools/browser/fake"
        try:
            yield peer
        finally:
            peer._release.set()
            nursery.cancel_scope.cancel()
