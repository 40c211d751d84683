"""BrowserSession: one conversation's Chrome, its CDP connection and its tabs.

A session lives in a task of the manager's nursery (`run_browser_session`), because the CDP
connection and Chrome's watchers are scoped resources that must be opened and closed by one
task. Callers use it from their own tasks; the manager cancels a caller's in-flight call when
the session closes, so nobody waits on a dead browser.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import trio

from chrome_launcher import (
    ChromeProcess,
    KillTiming,
    LaunchError,
    LaunchOptions,
)
from chrome_launcher import launch_chrome as _launch_chrome

from .._errors import BrowserLaunchError, CdpError, CloseReason
from .._settings import Settings
from .._tasks import sole_exception
from ..cdp import CdpConnection, open_cdp_connection
from ._chrome_life import ChromeLife
from ._dirs import SessionDirs
from ._page import Page, PageState
from ._tabs import Tabs

log = logging.getLogger("browser_tool.session")


class BrowserSession(ChromeLife):
    """One Chrome for one conversation. Built only by `run_browser_session`."""

    def __init__(
        self, conversation_id: str, chrome: ChromeProcess, conn: CdpConnection, tabs: Tabs
    ) -> None:
        super().__init__(chrome, conn)
        self.conversation_id = conversation_id
        self.tabs = tabs

    @property
    def page(self) -> Page:
        """The current tab's Page: the one every tool acts on."""
        return self.tabs.current

    @property
    def shares_chrome(self) -> bool:
        """A context in a Chrome shared with other conversations (`ContextSession`)."""
        return False

    def pages(self) -> list[Page]:
        """Every page (tab) of this browser, the current one (`page`) first. A tab that is
        still being attached has no `session` yet (it raises CdpConnectionError)."""
        current = self.tabs.current
        return [current, *(p for p in self.tabs.pages() if p is not current)]

    def take_notes(self) -> list[str]:
        """What the tabs did since the last call (tabs opened or closed, dialogs, a crash),
        said once."""
        return self.tabs.take_notes()

    async def wait_for_end(self, **more: Callable[[], Awaitable[object]]) -> None:
        """As `ChromeLife.wait_for_end`, and also when no page could replace a crashed one."""
        await super().wait_for_end(page_failed=self.tabs.wait_failed, **more)

    def lost_because(self) -> str:
        """Why a crashed browser's state is gone, for the note of its successor's first call."""
        if self.page.state is PageState.FAILED:  # Chrome lives on; we ended it (issue 22)
            return (
                "crashed: its page crashed and no new page could be made in it, so the service "
                "closed it"
            )
        return f"crashed (exit status {self.report.exit_status if self.report else None})"


async def run_browser_session(
    conversation_id: str,
    settings: Settings,
    dirs: SessionDirs,
    instance_id: str,
    on_closed: Callable[[BrowserSession], None],
    *,
    profile_dir: Path | None = None,
    task_status: trio.TaskStatus[BrowserSession] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Launch Chrome, connect, set up the page, report the session as started, and keep it
    until it is closed or dies; then kill the group and clean up (shielded, never raises).

    Before `started`, raises BrowserLaunchError (Chrome or the connection failed to come up);
    nothing is left behind in that case either. `profile_dir`: a persistent profile to run on
    (kept after the browser ends), instead of a fresh one that goes with it.
    """
    options = launch_options(settings, dirs.root, instance_id, profile_dir)
    with launch_errors_unwrapped():
        async with trio.open_nursery() as nursery:
            try:
                chrome = await _launch_chrome(options, nursery)
            except LaunchError as exc:
                raise BrowserLaunchError(f"Could not start the browser: {exc}") from exc
            session: BrowserSession | None = None
            try:
                assert chrome.ws_url is not None
                async with open_cdp_connection(chrome.ws_url) as conn:
                    tabs = Tabs(conn, settings, dirs.downloads)
                    try:
                        with trio.fail_after(settings.launch_timeout):
                            # Chromium's handshake can stall ~160 ms after printing its URL:
                            # "ready" means answered commands (the set-up's), not an announced port.
                            await nursery.start(tabs.run_pump)
                            await tabs.setup()
                    except (CdpError, trio.TooSlowError) as exc:
                        raise BrowserLaunchError(
                            f"The browser started but did not answer over CDP: {exc!r}"
                        ) from exc
                    session = BrowserSession(conversation_id, chrome, conn, tabs)
                    task_status.started(session)
                    await session.wait_for_end()
                    tabs.closing()
                    # One that stopped answering gets no Browser.close and no SIGTERM grace.
                    hurry = session.close_reason is CloseReason.UNRESPONSIVE
                    polite = None if chrome.exited or conn.closed or hurry else polite_close(conn)
                    session.report = await chrome.aclose(polite=polite, hurry=hurry)
            finally:
                report = await chrome.aclose()
                if session is not None:
                    session.mark_closed(report)
                    on_closed(session)
                nursery.cancel_scope.cancel()


@contextmanager
def launch_errors_unwrapped() -> Iterator[None]:
    """Around a launch function's own nursery: a BrowserLaunchError raised before `started`
    leaves that nursery wrapped in a group; raise it alone, so callers catch it by its type
    (trio's `Nursery.start` unwraps only its own group)."""
    try:
        yield
    except BaseExceptionGroup as group:
        leaf = sole_exception(group)
        if isinstance(leaf, BrowserLaunchError):
            raise leaf from None
        raise


def launch_options(
    settings: Settings, session_dir: Path, instance_id: str, profile_dir: Path | None = None
) -> LaunchOptions:
    """The launch options of a Chrome of ours (a conversation's own, a pooled or a shared one);
    `profile_dir`: a persistent profile (a conversation's own Chrome only)."""
    return LaunchOptions(
        state_dir=settings.state_dir,
        instance_id=instance_id,
        session_dir=session_dir,
        profile_dir=profile_dir,
        chrome_path=settings.chrome_path,
        launch_timeout=settings.launch_timeout,
        death_link=settings.death_link,
        window_size=(settings.viewport_width, settings.viewport_height),
        sandbox=settings.sandbox,
        extra_args=js_heap_args(settings.js_heap_mb),
        kill_timing=KillTiming(
            polite_timeout=settings.polite_close_timeout, term_grace=settings.kill_grace
        ),
    )


def js_heap_args(megabytes: int) -> tuple[str, ...]:
    """Chrome's switch capping each page's JavaScript heap (none for 0: V8's default)."""
    return (f"--js-flags=--max-old-space-size={megabytes}",) if megabytes else ()


def polite_close(conn: CdpConnection) -> Callable[[], Awaitable[object]]:
    async def close() -> object:
        return await conn.send("Browser.close")

    return close
