"""SharedBrowser: one Chrome that several conversations share, each in a browser context.

It is a full citizen like a conversation's own Chrome: launched by `chrome_launcher` in its own
process group with a PID record, the death link and the owner marker (so the orphan reaper
knows it), in a session dir of its own whose `.instance` file names the owning service. It
knows nothing of conversations: its `nursery` runs their context sessions (see
`_context_session`), which end with it.
"""

from __future__ import annotations

import logging
from pathlib import Path

import trio

from chrome_launcher import (
    ChromeProcess,
    KillReport,
    LaunchError,
    launch_chrome,
)

from .._errors import BrowserLaunchError, CdpError, CloseReason
from .._settings import Settings
from ..cdp import CdpConnection, open_cdp_connection
from ._chrome_life import ChromeLife
from ._dirs import SessionDirs
from ._session import launch_errors_unwrapped, launch_options, polite_close

log = logging.getLogger("browser_tool.shared")


class SharedBrowser(ChromeLife):
    """A shared Chrome and its control connection. Built only by `run_shared_browser`."""

    def __init__(
        self,
        chrome: ChromeProcess,
        conn: CdpConnection,
        nursery: trio.Nursery,
        settings: Settings,
        dirs: SessionDirs,
    ) -> None:
        super().__init__(chrome, conn)
        self.nursery = nursery  # open while `alive`: the context sessions run here
        self.settings = settings
        self.dirs = dirs
        self.unresponsive_why: str | None = None  # why it was killed as UNRESPONSIVE

    @property
    def ws_url(self) -> str:
        assert self.chrome.ws_url is not None
        return self.chrome.ws_url

    @property
    def spare_downloads(self) -> Path:
        """Where a context saves downloads before a conversation claims it (none do)."""
        return self.dirs.downloads

    @property
    def ending(self) -> bool:
        """The Chrome is going or gone (closed, crashed, or its control connection dropped)."""
        return not self.alive

    @property
    def exit_status(self) -> int | None:
        return self.report.exit_status if self.report else None

    async def close_unresponsive(self, why: str) -> bool:
        """Kill it as UNRESPONSIVE (no Browser.close, no SIGTERM grace), `why` being what
        each of its conversations is told. False, doing nothing, when it was ending already."""
        if not self.alive:
            return False
        self.unresponsive_why = why
        await self.aclose(CloseReason.UNRESPONSIVE)
        return True

    def mark_closed(self, report: KillReport | None) -> None:
        self.close_reason = self.close_reason or CloseReason.SHUTDOWN
        super().mark_closed(report)


async def run_shared_browser(
    settings: Settings,
    instance_id: str,
    root: Path,
    *,
    task_status: trio.TaskStatus[SharedBrowser] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Make the dir `root`, launch Chrome in it, connect, report the browser as started, and
    keep it until it is closed or dies; then kill the group and remove `root` (shielded).

    Before `started`, raises BrowserLaunchError; nothing is left behind then either.
    """
    dirs = SessionDirs(root)
    try:
        with launch_errors_unwrapped():
            async with trio.open_nursery() as nursery:
                try:
                    dirs.create(instance_id)
                    chrome = await launch_chrome(
                        launch_options(settings, root, instance_id), nursery
                    )
                except (LaunchError, OSError) as exc:
                    raise BrowserLaunchError(f"Could not start the shared browser: {exc}") from exc
                shared: SharedBrowser | None = None
                try:
                    async with open_cdp_connection(chrome.ws_url or "") as conn:
                        try:
                            with trio.fail_after(settings.launch_timeout):
                                await conn.send("Browser.getVersion")
                        except (CdpError, trio.TooSlowError) as exc:
                            raise BrowserLaunchError(
                                f"The shared browser started but did not answer over CDP: {exc!r}"
                            ) from exc
                        shared = SharedBrowser(chrome, conn, nursery, settings, dirs)
                        task_status.started(shared)
                        await shared.wait_for_end()
                        hurry = shared.close_reason is CloseReason.UNRESPONSIVE
                        gone = chrome.exited or conn.closed or hurry
                        polite = None if gone else polite_close(conn)
                        shared.report = await chrome.aclose(polite=polite, hurry=hurry)
                finally:
                    report = await chrome.aclose()
                    if shared is not None:
                        shared.mark_closed(report)
                        log.info("shared Chrome pid=%d ended (%s)", chrome.pid, shared.close_reason)
                    nursery.cancel_scope.cancel()
    finally:
        if error := await dirs.remove():
            log.warning("shared browser: %s", error)
