"""Where browsers come from: the seam between the manager and the Chromes it runs.

The manager asks its source for a browser when a conversation needs one and hands it back when
the conversation is done with it. Today's source launches one Chrome per conversation; a
pre-warmed pool and a shared Chrome with a context per conversation are two more. Tests put a
stand-in here (see `SourceFactory`) instead of patching the manager.

A source hands out a `Browser`: what the manager needs of a browser, and no more. The real ones
are `BrowserSession`s (a conversation's own Chrome, a pooled one, or a context in a shared
Chrome); tools reach the page of one through `CallAccess.browser`, which narrows to it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import trio

from chrome_launcher import ChromeState, KillReport

from .._errors import BrowserLaunchError, CloseReason
from .._metrics import Metrics
from .._settings import Settings
from ..browser import BrowserSession, SessionDirs, run_browser_session


class Browser(Protocol):
    """A browser as the manager sees it. `BrowserSession` is one; tests script fakes."""

    conversation_id: str  # the conversation it serves (a pool hands it over by rewriting it)
    started_at: float  # trio time its lifetime started (its hand-over, for a pooled one)
    close_reason: CloseReason | None  # why it ended (or is ending); None while it runs
    state: ChromeState  # ready, closing, closed

    @property
    def pid(self) -> int: ...

    @property
    def alive(self) -> bool:
        """Ready and not exited or disconnected: a call may use it."""
        ...

    @property
    def shares_chrome(self) -> bool:
        """It is a context in a Chrome shared with other conversations."""
        ...

    def lost_because(self) -> str:
        """Why a crashed browser's state is gone, for its successor's first result."""
        ...

    def take_notes(self) -> list[str]:
        """What its page did since the last call (dialogs, popups, a crash), said once."""
        ...

    async def aclose(self, reason: CloseReason) -> KillReport | None:
        """Close it (idempotent) and return the kill ladder's report. Never raises."""
        ...

    async def wait_closed(self) -> None:
        """Block until it is gone, its processes and files included."""
        ...


OnClosed = Callable[[Browser], None]


class BrowserSource(Protocol):
    async def acquire(
        self, conversation_id: str, dirs: SessionDirs, profile_dir: Path | None = None
    ) -> Browser:
        """A ready browser for `conversation_id`, its downloads going to `dirs`; with
        `profile_dir`, a Chrome of its own launched on that persistent profile (never a pooled
        one; a source that cannot, the shared one, raises BrowserLaunchError saying why).

        Raises BrowserLaunchError when none can be had. Cancelled, it leaves nothing behind.
        """
        ...

    async def release(self, browser: Browser, reason: CloseReason) -> KillReport | None:
        """The conversation is done with `browser` (why: `reason`). Returns the kill ladder's
        report; never raises."""
        ...

    def standby(self) -> list[Browser]:
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


class SourceBase:
    """What every source keeps of the manager that built it (the `SourceFactory` arguments).
    A source with state of its own makes it in `_start`, called last."""

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
        self._start()

    def _start(self) -> None:
        """The source's own state and tasks, made once the common ones are set."""


class LaunchSource(SourceBase):
    """One new Chrome per conversation, run in a task of the manager's nursery (the CDP
    connection and Chrome's watchers are scoped resources that one task must own)."""

    async def acquire(
        self, conversation_id: str, dirs: SessionDirs, profile_dir: Path | None = None
    ) -> BrowserSession:
        run = functools.partial(run_browser_session, profile_dir=profile_dir)
        try:
            browser: BrowserSession = await self._nursery.start(
                run,
                conversation_id,
                self._settings,
                dirs,
                self._instance_id,
                self._on_closed,
            )
        except BrowserLaunchError:
            self._metrics.inc("browser_tool_launches_total", outcome="error")
            raise
        self._metrics.inc("browser_tool_launches_total", outcome="ok")
        return browser

    async def release(self, browser: Browser, reason: CloseReason) -> KillReport | None:
        return await browser.aclose(reason)

    def standby(self) -> list[Browser]:
        return []

    async def aclose(self) -> None:
        pass
