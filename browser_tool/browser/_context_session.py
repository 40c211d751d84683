"""ContextSession: one conversation's browser context inside a shared Chrome.

It offers the tools the surface of a `BrowserSession` (its `page`, `alive`, `aclose`), so the
manager and the tools cannot tell the two apart; what differs is what it owns. It owns a
browser context (`Target.createBrowserContext`: its own cookies, storage, cache, service
workers and permissions), the tabs in it, a CDP connection of its own to the shared Chrome
(so its events, sessions and downloads never mix with another conversation's), and nothing
else: the Chrome, its process group and its PID record belong to the `SharedBrowser`.

Its task (`run_context_session`) runs in the shared browser's nursery. Closing it disposes of
its context; a Chrome that dies takes every context session with it, each of which then reports
a crash with the Chrome's own kill report.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

import trio

from chrome_launcher import KillReport, ProcStat

from .._errors import BrowserLaunchError, CdpError, CloseReason
from .._settings import Settings
from .._tasks import raise_sole
from ..cdp import CdpConnection, open_cdp_connection
from ._downloads import download_params
from ._freeze import probe_browser
from ._session import BrowserSession
from ._shared_browser import SharedBrowser
from ._tabs import Tabs

log = logging.getLogger("browser_tool.context")
# How long a context whose connection dropped waits to see whether its shared Chrome exited.
_EXIT_GRACE = 1.0


class ContextSession(BrowserSession):
    """One conversation's context in a shared Chrome. Built only by `run_context_session`;
    a spare one (made ahead of any conversation) gets its conversation from `claim`."""

    def __init__(self, shared: SharedBrowser, context_id: str, tabs: Tabs) -> None:
        super().__init__("", shared.chrome, tabs.conn, tabs)
        self.shared = shared
        self.context_id = context_id

    @property
    def shares_chrome(self) -> bool:
        return True

    async def claim(self, conversation_id: str, downloads: Path) -> None:
        """Hand this (spare) context to `conversation_id`, its downloads going to `downloads`.
        Raises CdpError when the shared Chrome does not answer."""
        await self.conn.send(
            "Browser.setDownloadBehavior",
            download_params(downloads, self.tabs.in_context),
            timeout=self.shared.settings.launch_timeout,
        )
        self.tabs.set_downloads_dir(downloads)
        self.conversation_id = conversation_id
        self.started_at = trio.current_time()

    async def shared_silent(self, timeout: float, stat: ProcStat | None) -> bool:
        """After this context did not answer a probe: whether its shared Chrome does not answer
        either, so the whole Chrome is to go. Stopped (`stat`, its process's, in state T): yes
        at once; else a probe on the Chrome's own connection decides."""
        if stat is not None and stat.state in "tT":
            return True
        return not await probe_browser(self.shared.conn, timeout)

    def lost_because(self) -> str:
        if self.shared.close_reason is CloseReason.UNRESPONSIVE:
            return (
                f"ran in a shared Chrome (pid {self.pid}) that {self.shared.unresponsive_why}, "
                "taking every conversation on it down"
            )
        if self.shared.close_reason is CloseReason.CRASH or self.chrome.exited:
            return (
                f"ran in a shared Chrome (pid {self.pid}) that crashed (exit status "
                f"{self.shared.exit_status}), taking every conversation on it down"
            )
        return f"lost its connection to the shared Chrome (pid {self.pid})"


async def run_context_session(
    shared: SharedBrowser,
    settings: Settings,
    on_closed: Callable[[BrowserSession], None],
    *,
    task_status: trio.TaskStatus[ContextSession] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Connect to the shared Chrome, make a context and its tab, report the session as
    started, and keep it until it is closed or its Chrome dies; then dispose of the context.

    Before `started`, raises BrowserLaunchError; nothing is left behind then either (the
    context goes with the connection that made it: `disposeOnDetach`). Never raises after.
    """
    session: ContextSession | None = None
    report: KillReport | None = None
    try:
        async with open_cdp_connection(shared.ws_url) as conn:
            try:
                async with trio.open_nursery() as nursery:
                    session = await _open_context(shared, settings, conn, nursery)
                    task_status.started(session)
                    await session.wait_for_end()
                    session.tabs.closing()
                    if conn.closed and not shared.chrome.exited:
                        # The socket closes as the Chrome dies, a moment before its exit shows:
                        # wait for that (bounded) so the note says which of the two it was.
                        with trio.move_on_after(_EXIT_GRACE):
                            await shared.chrome.wait_exited()
                    if session.close_reason is not CloseReason.CRASH:
                        report = await _dispose(session, settings.polite_close_timeout)
                    nursery.cancel_scope.cancel()
            except BaseExceptionGroup as group:
                raise_sole(group)
    except CdpError as exc:  # the connection would not open, or broke while closing
        if session is None:
            raise BrowserLaunchError(
                f"Could not connect to the shared browser (pid {shared.pid}): {exc}"
            ) from exc
        log.info("context of %r: %s", session.conversation_id, exc)
    finally:
        if session is not None:
            with trio.CancelScope(shield=True):
                await _finish(session, report, on_closed)


async def _open_context(
    shared: SharedBrowser, settings: Settings, conn: CdpConnection, nursery: trio.Nursery
) -> ContextSession:
    try:
        with trio.fail_after(settings.launch_timeout):
            made = await conn.send("Target.createBrowserContext", {"disposeOnDetach": True})
            context_id = str(made["browserContextId"])
            tabs = Tabs(conn, settings, shared.spare_downloads, context_id)
            await nursery.start(tabs.run_pump)
            await tabs.setup()
    except (CdpError, trio.TooSlowError, KeyError) as exc:
        raise BrowserLaunchError(
            f"The shared browser (pid {shared.pid}) could not make a context: {exc!r}"
        ) from exc
    return ContextSession(shared, context_id, tabs)


async def _dispose(session: ContextSession, timeout: float) -> KillReport:
    """Dispose of the context (its pages, renderers, storage); bounded, never raises."""
    started = time.monotonic()
    errors: tuple[str, ...] = ()
    with trio.move_on_after(timeout) as scope:
        try:
            await session.conn.send(
                "Target.disposeBrowserContext", {"browserContextId": session.context_id}
            )
        except CdpError as exc:
            errors = (f"disposing of the browser context failed: {exc}",)
    if scope.cancelled_caught:
        # Chrome still disposes of it when our connection closes (disposeOnDetach).
        errors = (f"disposing of the browser context took over {timeout:g}s",)
    shared = session.shared
    return KillReport(
        pid=shared.pid,
        pgid=shared.chrome.pgid,
        steps=("dispose_context",),
        sigterm_sent=False,
        sigkill_needed=False,
        survivors=0,
        exit_status=None,
        duration=time.monotonic() - started,
        errors=errors,
    )


async def _finish(
    session: ContextSession,
    report: KillReport | None,
    on_closed: Callable[[BrowserSession], None],
) -> None:
    shared_reason = session.shared.close_reason
    if session.close_reason is None:
        # Cancelled by its owner: the shared Chrome ends (a crash, a kill, or shutdown).
        session.close_reason = (
            CloseReason.CRASH
            if shared_reason in (CloseReason.CRASH, CloseReason.UNRESPONSIVE)
            else CloseReason.SHUTDOWN
        )
    if shared_reason is CloseReason.UNRESPONSIVE and session.close_reason is CloseReason.CRASH:
        # Its Chrome was killed for not answering: an end the conversation did not ask for,
        # counted once, as the Chrome's (conversations/_watchdog.py).
        session.close_reason = CloseReason.UNRESPONSIVE
    if session.close_reason in (CloseReason.CRASH, CloseReason.UNRESPONSIVE) and (
        session.chrome.exited or session.shared.ending
    ):
        # Its Chrome is dying: wait for the ladder so the report says how it ended.
        with trio.move_on_after(session.shared.settings.shutdown_timeout):
            await session.shared.wait_closed()
        report = session.shared.report
    session.mark_closed(report)
    on_closed(session)
