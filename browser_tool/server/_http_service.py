"""run_http_service: the manager, the ASGI app and hypercorn's trio worker in one nursery.

Hypercorn because it runs natively on trio (no asyncio bridge), reports its bound addresses
through `task_status` (so `--port 0` is announced, never guessed) and stops its listeners on a
trigger. The order on shutdown is ours: stop accepting, drain the calls in flight (see
`Shutdown.drain`), cancel the serving nursery, then leave `open_session_manager`, which kills
every session.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from .._errors import ListenError
from .._settings import Settings
from .._tasks import sole_exception
from ._http_app import HttpApp
from ._mcp_http import McpHttpEndpoint
from ._runtime import Shutdown
from ._service_parts import open_service_parts

log = logging.getLogger("browser_tool.http")


def hypercorn_config(settings: Settings) -> Config:
    config = Config()
    host = settings.host
    config.bind = [f"[{host}]:{settings.port}" if ":" in host else f"{host}:{settings.port}"]
    config.errorlog = logging.getLogger("browser_tool.http.server")
    config.accesslog = None
    # We drain, stop the calls still running (so they can still answer) and cancel ourselves
    # (see Shutdown.drain); hypercorn's own deadline must come after ours, or it would cut
    # those answers off.
    config.graceful_timeout = settings.call_grace + 5.0
    config.include_server_header = False
    return config


async def run_http_service(
    settings: Settings,
    shutdown: Shutdown,
    announce: Callable[[str], None],
) -> None:
    """Serve the HTTP API and its MCP endpoints until `shutdown` is requested.

    Calls `announce(url)` once the socket accepts connections. Raises ListenError when the
    address cannot be bound, and what `open_session_manager` raises (each possibly inside
    single-member exception groups: see `sole_exception`).
    Every session is killed before this returns, however it ends.
    """
    async with open_service_parts(settings, shutdown) as parts:
        async with trio.open_nursery() as nursery:
            mcp = McpHttpEndpoint(parts)
            await nursery.start(mcp.run)
            app = HttpApp(parts, nursery, mcp=mcp.asgi)
            config = hypercorn_config(settings)
            try:
                binds = await nursery.start(
                    partial(
                        serve,
                        app,  # type: ignore[arg-type]  # hypercorn's ASGI types are TypedDicts
                        config,
                        shutdown_trigger=shutdown.requested.wait,
                    )
                )
            except (OSError, BaseExceptionGroup) as exc:
                leaf = sole_exception(exc)
                if not isinstance(leaf, OSError):
                    raise
                reason = leaf.strerror or str(leaf)
                raise ListenError(f"cannot listen on {config.bind[0]}: {reason}") from leaf
            parts.manager.handoffs.serve_at(settings.public_url or binds[0])  # issue 21
            announce(binds[0])
            await parts.wait_stopped()
            nursery.cancel_scope.cancel()
        log.info("closing %d session(s)", len(parts.manager.list_sessions()))
