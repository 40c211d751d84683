"""Where browsers come from: the seam between the manager and the Chromes it runs.

The manager asks its source for a browser when a conversation needs one and hands it back when
the conversation is done with it. Today's source launches one Chrome per conversation; a
pre-warmed pool and a shared Chrome with a context per conversation are two more. Tests put a
stand-in here (see `SourceFactory`) instead of patching the manager.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import trio

from chrome_launcher import KillReport

from ._errors import BrowserLaunchError, CloseReason
from ._metrics import Metrics
from ._settings import Settings
from ._tasks import sole_exception
from .browser import BrowserSession, SessionDirs, run_browser_session

OnClosed = Callable[[BrowserSession], None]


class BrowserSource(Protocol):
    async def acquire(self, conversation_id: str, dirs: SessionDirs) -> BrowserSession:
        """A ready browser for `conversation_id`, its downloads going to `dirs`.

        Raises BrowserLaunchError when none can be had. Cancelled, it leaves nothing behind.
        """
        ...

    async def release(self, browser: BrowserSession, reason: CloseReason) -> KillReport | None:
        """The conversation is done with `browser` (why: `reason`). Returns the kill ladder's
        report; never raises."""
        ...

    def standby(self) -> list[BrowserSession]:
        """Browsers running for no conversation yet (a pool's), for the inventory and /metrics."""
        ...

    async def aclose(self) -> None:
        """The manager is closing: end whatever runs for no conversation. Never raises."""
        ...


# Builds a source for one manager: (settings, instance id, the manager's nursery, the callback
# a source calls once a browser it gave out is gone, whatever the reason, the manager's
# metrics). A source counts what it does: `browser_tool_launches_total` for every Chrome it
# launches (outcome ok or error), `browser_tool_handovers_total` for a browser it hands over
# without launching one (a pooled Chrome, a context in a shared Chrome).
SourceFactory = Callable[[Settings, str, trio.Nursery, OnClosed, Metrics], BrowserSource]


class LaunchSource:
    """One new Chrome per conversation, run in a task of the manager's nursery (the CDP
    connection and Chrome's watchers are scoped resources that one task must own)."""

    def __init__(
        self,
        settings: Settings,
        instance_id: str,
        nursery: trio.Nursery,
        on_closed: OnClosed,
        metrics: Metrics | None = None,
    ) -> None:
        self._settings = settings
        self._instance_id = instance_id
        self._nursery = nursery
        self._on_closed = on_closed
        self._metrics = metrics or Metrics()

    async def acquire(self, conversation_id: str, dirs: SessionDirs) -> BrowserSession:
        try:
            browser: BrowserSession = await self._nursery.start(
                run_browser_session,
                conversation_id,
                self._settings,
                dirs,
                self._instance_id,
                self._on_closed,
            )
        except BaseExceptionGroup as group:
            error = sole_exception(group)
            if isinstance(error, BrowserLaunchError):
                self._metrics.inc("browser_tool_launches_total", outcome="error")
                raise error from None
            raise
        self._metrics.inc("browser_tool_launches_total", outcome="ok")
        return browser

    async def release(self, browser: BrowserSession, reason: CloseReason) -> KillReport | None:
        return await browser.aclose(reason)

    def standby(self) -> list[BrowserSession]:
        return []

    async def aclose(self) -> None:
        pass
