"""MCP over stdio: the process is one conversation. It ends at the end of stdin (the client
closed it: the conversation is deleted) or on SIGTERM/SIGINT (see `_cli_service`); either way
every browser is killed before the process exits.

MCP clients give a server about 2 s after closing stdin before they signal it, and the kill
ladder usually takes a few hundred milliseconds, so a clean end fits in that window.

The wire is read and written by trio itself (non-blocking pipes, `trio.lowlevel.FdStream`),
handed to the SDK's `stdio_server` as its stdin and stdout. The SDK's own streams go through a
worker thread for every line read and for every write and flush: three thread round trips per
call, most of this door's cost (issue 23). While serving, fds 0 and 1 point at /dev/null and
stderr (as the SDK does), so nothing printed by accident can corrupt the protocol stream.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

import trio
from mcp.server.stdio import stdio_server

from .._settings import Settings
from ._mcp import build_mcp_server
from ._runtime import Shutdown
from ._service_parts import open_service_parts

log = logging.getLogger("browser_tool.mcp")

_READ_SIZE = 65536


def default_conversation_id() -> str:
    """One per process: two stdio servers on one state dir must not share a session dir."""
    return f"mcp-stdio-{os.getpid()}"


class StdinLines:
    """A readable fd as the async iterator of text lines that `stdio_server` reads; the last
    line may lack its newline. Cancellable at any point (trio waits for the fd itself)."""

    def __init__(self, stream: trio.lowlevel.FdStream) -> None:
        self._stream = stream
        self._buffer = bytearray()
        self._searched = 0  # no newline in the buffer before this index

    def __aiter__(self) -> StdinLines:
        return self

    async def __anext__(self) -> str:
        while True:
            end = self._buffer.find(b"\n", self._searched)
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                self._searched = 0
                return line.decode("utf-8", errors="replace")
            self._searched = len(self._buffer)
            chunk = await self._stream.receive_some(_READ_SIZE)
            if not chunk:
                if not self._buffer:
                    raise StopAsyncIteration
                line = bytes(self._buffer)
                self._buffer.clear()
                self._searched = 0
                return line.decode("utf-8", errors="replace")
            self._buffer += chunk


class StdoutWire:
    """A writable fd as the `write`/`flush` pair `stdio_server` writes to. Each `write` is one
    whole message line, sent at once; `flush` has nothing left to do."""

    def __init__(self, stream: trio.lowlevel.FdStream) -> None:
        self._stream = stream

    async def write(self, text: str) -> None:
        await self._stream.send_all(text.encode("utf-8"))

    async def flush(self) -> None:
        await trio.lowlevel.checkpoint()


@contextmanager
def claimed_stdio() -> Iterator[tuple[int, int]]:
    """Private duplicates of fds 0 and 1 for the wire, while fd 0 reads /dev/null and fd 1
    writes to stderr; both are restored on exit. Yields (read fd, write fd), which the caller's
    FdStreams own (and close)."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(devnull, 0)
        os.dup2(2, 1)
        yield wire_in, wire_out
    finally:
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        for fd in (devnull, saved_in, saved_out):
            os.close(fd)


async def run_mcp_stdio(
    settings: Settings, shutdown: Shutdown, conversation_id: str, profile: str | None = None
) -> None:
    """Serve MCP on stdin/stdout until stdin ends or `shutdown` is requested; with `profile`,
    the conversation runs on that persistent profile (issue 21).

    Raises what `open_session_manager` raises, and InvalidInputError or ConflictError when the
    profile cannot be bound. Every session is killed before this returns.
    """
    async with open_service_parts(settings, shutdown) as parts:
        if profile is not None:
            parts.manager.bind_profile(conversation_id, profile)
        server = build_mcp_server(parts, lambda ctx: conversation_id)
        stdin_ended = False

        async def serve_stdio() -> None:
            nonlocal stdin_ended
            with claimed_stdio() as (wire_in, wire_out):
                reader = trio.lowlevel.FdStream(wire_in)
                writer = trio.lowlevel.FdStream(wire_out)
                async with reader, writer:
                    stdin, stdout = cast(Any, StdinLines(reader)), cast(Any, StdoutWire(writer))
                    async with stdio_server(stdin=stdin, stdout=stdout) as (read, write):
                        await server.run(read, write, server.create_initialization_options())
            stdin_ended = True
            shutdown.request("end of stdin")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_stdio)
            await parts.wait_stopped()
            nursery.cancel_scope.cancel()
        if stdin_ended:
            report = await parts.manager.kill_session(conversation_id)
            log.info("conversation %s ended (pid %s)", conversation_id, report.pid)
