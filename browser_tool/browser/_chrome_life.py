"""The life of a Chrome of ours as its holder sees it: ready, closing, closed; why it closed;
the kill ladder's report. Shared by a conversation's own Chrome (`BrowserSession`) and a Chrome
that conversations share (`SharedBrowser`); the task that owns the Chrome drives it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio

from chrome_launcher import ChromeProcess, ChromeState, KillReport

from .._errors import CloseReason
from .._tasks import first_of
from ..cdp import CdpConnection


class ChromeLife:
    def __init__(self, chrome: ChromeProcess, conn: CdpConnection) -> None:
        self.chrome = chrome
        self.conn = conn
        self.state = ChromeState.READY
        self.started_at = trio.current_time()
        self.close_reason: CloseReason | None = None
        self.report: KillReport | None = None
        self._close_requested = trio.Event()
        self._closed = trio.Event()

    @property
    def pid(self) -> int:
        return self.chrome.pid

    @property
    def alive(self) -> bool:
        return self.state is ChromeState.READY and not self.chrome.exited and not self.conn.closed

    async def aclose(self, reason: CloseReason) -> KillReport | None:
        """Close it (idempotent) and return the kill ladder's report. Never raises."""
        if self.close_reason is None:
            self.close_reason = reason
        if self.state is ChromeState.READY:
            self.state = ChromeState.CLOSING
        self._close_requested.set()
        with trio.CancelScope(shield=True):
            await self._closed.wait()
        return self.report

    async def wait_closed(self) -> None:
        """Block until the Chrome's group is gone and its files removed."""
        await self._closed.wait()

    async def wait_for_end(self, **more: Callable[[], Awaitable[object]]) -> None:
        """For the owning task: return when a close is requested, Chrome exits, the connection
        drops, or one of `more` returns (each a crash, unless a close was asked for first)."""
        ended = await first_of(
            requested=self._close_requested.wait,
            exited=self.chrome.wait_exited,
            dropped=self.conn.wait_closed,
            **more,
        )
        if self.close_reason is None and ended != "requested":
            self.close_reason = CloseReason.CRASH
        self.state = ChromeState.CLOSING

    def mark_closed(self, report: KillReport | None) -> None:
        """For the owning task: the group is gone; keep the ladder's report and wake everyone
        waiting in `aclose`."""
        self.report = self.report or report
        self.state = ChromeState.CLOSED
        self._closed.set()
