"""ServiceParts: what every door of one service shares, built once when the service opens.

The JSON endpoints, the MCP endpoints and the ASGI app in front of them answer for the same
manager under the same settings, count their calls in the same InFlight (so the shutdown drain
waits for all of them) and watch the same Shutdown. One record handed down, instead of four
arguments threaded through each constructor, keeps them from being mixed up or half passed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from .._settings import Settings
from ..conversations import BrowserSessionManager, open_session_manager
from ._runtime import InFlight, Shutdown


@dataclass(frozen=True)
class ServiceParts:
    manager: BrowserSessionManager
    settings: Settings
    inflight: InFlight
    shutdown: Shutdown

    async def wait_stopped(self) -> None:
        """Return once a stop was requested and the calls in flight ended or were stopped
        (see `Shutdown.drain`); the caller then cancels what still serves."""
        await self.shutdown.requested.wait()
        # Issue 21: calls waiting for a person would hold the drain up for its whole grace.
        self.manager.handoffs.end_all("the service is shutting down")
        await self.shutdown.drain(self.inflight, self.settings.call_grace)


@asynccontextmanager
async def open_service_parts(settings: Settings, shutdown: Shutdown) -> AsyncIterator[ServiceParts]:
    """Open the session manager (orphan sweep and reaper included) and yield the parts of a
    service around it. On exit every session is killed, however the body ended.

    Raises what `open_session_manager` raises.
    """
    async with open_session_manager(settings) as manager:
        # A second signal stops the calls in flight, and only the manager can do that.
        shutdown.manager = manager
        yield ServiceParts(manager, settings, InFlight(), shutdown)
