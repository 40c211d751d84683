"""MCP over stdio: the process is one conversation. It ends at the end of stdin (the client
closed it: the conversation is deleted) or on SIGTERM/SIGINT (see `_cli_service`); either way
every browser is killed before the process exits.

MCP clients give a server about 2 s after closing stdin before they signal it, and the kill
ladder usually takes a few hundred milliseconds, so a clean end fits in that window.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any, cast

import trio
from mcp.server.stdio import stdio_server

from .._settings import Settings
from ._mcp import build_mcp_server
from ._runtime import Shutdown
from ._service_parts import open_service_parts

log = logging.getLogger("browser_tool.mcp")


def default_conversation_id() -> str:
    """One per process: two stdio servers on one state dir must not share a session dir."""
    return f"mcp-stdio-{os.getpid()}"


class _StdinLines:
    """stdin as the async iterator of text lines that the SDK's `stdio_server` reads.

    The SDK's own reader blocks in a worker thread that cannot be cancelled, so a signal could
    never stop a server whose client keeps stdin open. This one abandons its thread on
    cancellation instead (the thread stays parked in `readline` until the process exits).
    """

    def __aiter__(self) -> _StdinLines:
        return self

    async def __anext__(self) -> str:
        line: bytes = await trio.to_thread.run_sync(
            sys.stdin.buffer.readline, abandon_on_cancel=True
        )
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


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
            # stdout stays the SDK's: it points fd 1 at stderr while serving, so nothing
            # printed by accident can corrupt the protocol stream.
            async with stdio_server(stdin=cast(Any, _StdinLines())) as (read, write):
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
