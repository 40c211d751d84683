"""One tab of a session: its CDP session, console buffer, workers, dialogs and crash handling.

The session's event pump (`Tabs.run_pump`) hands each tab the events of its own CDP session
(`handle` for page events, `handle_console` for console entries) and the tab acts on them at
once, so that no call ever blocks on a dialog and nothing the page says is lost between calls;
what a caller should hear of is noted.

A renderer crash replaces the page target. Until the new page is attached, `session` raises
CdpConnectionError and `wait_usable` waits; if no new page can be made, the page is FAILED and
its browser session ends as a crash (the next call gets a fresh browser).
"""

from __future__ import annotations

import contextlib
import enum
import logging
from pathlib import Path
from typing import Any

import trio

from .._errors import CdpCommandError, CdpConnectionError, CdpError, ToolError
from .._settings import Settings
from ..cdp import CdpConnection, CdpEvent, CdpSession
from ._ax_tree import Snapshot
from ._console import ConsoleBuffer, Numbering
from ._dialogs import answer_dialog, dialog_entry
from ._downloads import Download, Downloads
from ._notes import (
    PAGE_CRASHED_BETWEEN_CALLS,
    PAGE_CRASHED_DURING_CALL,
    PAGE_NOT_REPLACED,
    TAB_CLOSED_DURING_CALL,
    Notes,
)
from ._refs import RefTable
from ._workers import Workers

log = logging.getLogger("browser_tool.page")

_DIALOG = "Page.javascriptDialogOpening"  # both listeners: the console entry, the answer
#: A tab's console events, and its other events, as the session's pump listens for them.
CONSOLE_EVENTS = ("Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded", _DIALOG)
PAGE_EVENTS = (
    _DIALOG,
    "Inspector.targetCrashed",
    "Page.frameStartedNavigating",
    "Page.frameNavigated",
    "Page.frameStoppedLoading",
)
_SAME_DOCUMENT = ("sameDocument", "historySameDocument")
_COMMAND_TIMEOUT = 10.0
# How long a best-effort clean-up command (stop loading, terminate a script) is waited for. The
# command is on the wire at once and Chrome handles a session's commands in order, so this only
# bounds how late a call that already failed may answer (a frozen Chrome never does).
_CLEANUP_GRACE = 0.5


class PageState(enum.Enum):
    """Where the page is."""

    SETTING_UP = "setting up"  # until `attach` has attached the tab's target (or failed to)
    READY = "ready"  # attached: calls run
    CRASH_TOLD = "crash told"  # a call reported the crash; the pump has not handled it yet
    REPLACING = "replacing"  # the pump makes a new page after a crash
    FAILED = "failed"  # no new page could be made; the browser ends as a crash
    CLOSED = "closed"  # the tab was closed (by a tool, or it closed itself)


_WAITING = (PageState.SETTING_UP, PageState.CRASH_TOLD, PageState.REPLACING)


class Page:
    """One tab of a session. `session` is its CDP session; a crash replaces it. Built by `Tabs`,
    which shares among its tabs the ref table, the downloads and the console's numbering."""

    def __init__(
        self,
        conn: CdpConnection,
        settings: Settings,
        downloads_dir: Path,
        context: str = "",
        *,
        refs: RefTable | None = None,
        downloads: Downloads | None = None,
        numbering: Numbering | None = None,
    ) -> None:
        self.conn = conn
        # In a shared Chrome, the page's browser context: its tabs and popups are made there.
        self.in_context = {"browserContextId": context} if context else {}
        self.settings = settings
        self.downloads_dir = downloads_dir
        self.console = ConsoleBuffer(settings.console_buffer, numbering)
        self.workers = Workers(conn, self.console)  # its `run` is started by the Tabs
        self.notes = Notes()
        # Kept across a crash (an old ref is refused as another page's), shared by the tabs.
        self.refs = refs if refs is not None else RefTable()
        self.last_snapshot: Snapshot | None = None  # the last whole-page browser_snapshot
        self._downloads = downloads if downloads is not None else Downloads()
        self.downloads: dict[str, Download] = self._downloads.by_guid
        self.crashed = trio.Event()  # this page target's crash: a new one per attached page
        self.crashes = 0
        # What Chrome last said of the tab's target (Target.targetInfoChanged), and its opener.
        self.url = ""
        self.title = ""
        self.opener_id = ""
        self.loaded = trio.Event()  # the main frame's current document stopped loading
        # Set by the Tabs when this tab became current because the current one closed (until
        # the next result): a call's lost connection was that tab's closing, not a crash here.
        self.took_over = ""
        self._state = PageState.SETTING_UP
        self._state_changed = trio.Event()  # set (and replaced) on every move
        self._cdp: CdpSession | None = None
        self.target_id = ""
        # The URL of a main-frame navigation to a new document that has not committed yet: Chrome
        # holds back Runtime.evaluate until it commits, so an eval that times out says so.
        self.navigating_to: str | None = None
        self.viewport = (settings.viewport_width, settings.viewport_height)

    @property
    def state(self) -> PageState:
        return self._state

    def _move(self, state: PageState) -> None:
        self._state = state
        self._state_changed.set()
        self._state_changed = trio.Event()

    async def _wait_while(self, *states: PageState) -> None:
        while self._state in states:
            await self._state_changed.wait()

    @property
    def session(self) -> CdpSession:
        """The page's CDP session. Raises CdpConnectionError while a crashed page is being
        replaced (callers wait with `wait_usable` first)."""
        if self._cdp is None:
            failed = self._state is PageState.FAILED
            if self._state is PageState.CLOSED:
                raise CdpConnectionError("the tab was closed")
            raise CdpConnectionError(
                PAGE_NOT_REPLACED if failed else "the page is being replaced after a crash"
            )
        return self._cdp

    async def wait_usable(self) -> None:
        """Wait until the page is attached: at once, unless a crashed page is being replaced.
        Raises ToolError when no new page could be made (its browser is being closed)."""
        await self._wait_while(*_WAITING)
        if self._state is PageState.FAILED:
            raise ToolError(PAGE_NOT_REPLACED)
        if self._state is PageState.CLOSED:
            raise ToolError("The tab was closed (browser_tabs list shows the open ones).")

    def mark_closed(self) -> None:
        """For the Tabs: the tab's target is gone; nothing waits on it any more."""
        self._cdp = None
        self._move(PageState.CLOSED)

    async def wait_failed(self) -> None:
        await self._wait_while(*_WAITING, PageState.READY)

    def crash_error(self, session: CdpSession | None = None) -> ToolError:
        """The error of a call the crash cut short; the note saying the same is dropped. Given
        the crashed `session` while it is still the page's (the pump has not handled the crash
        yet: the connection fails its commands first), later calls wait for the new page and
        the crash is not noted again."""
        if self._state is PageState.CLOSED:
            return ToolError(TAB_CLOSED_DURING_CALL)
        if self.took_over and session is None:  # the call ran on the tab that closed
            return ToolError(f"{TAB_CLOSED_DURING_CALL} {self.took_over}")
        if session is not None and session is self._cdp and self._state is PageState.READY:
            self._move(PageState.CRASH_TOLD)
        self.notes.drop("crash")
        return ToolError(PAGE_CRASHED_DURING_CALL)

    async def send_best_effort(self, method: str) -> bool:
        """Send `method` to the page for a clean-up step: shielded (it runs when the call was
        cancelled too), at most `_CLEANUP_GRACE` seconds, and a CDP error is not the caller's.
        True when Chrome acknowledged it (a caller may say only what was checked)."""
        shield = trio.CancelScope(shield=True)
        with shield, trio.move_on_after(_CLEANUP_GRACE), contextlib.suppress(CdpError):
            await self.session.send(method)
            return True
        return False

    def take_notes(self) -> list[str]:
        return self.notes.take()

    async def attach(self, target_id: str) -> None:
        """Attach to the tab's target and enable what the tools need. Raises CdpError when
        the target does not answer (it closed meanwhile); the page is READY either way."""
        try:
            await self._attach(target_id)
        finally:
            if self._state is PageState.SETTING_UP:
                self._move(PageState.READY)

    def owns(self, session_id: str | None) -> bool:
        """Whether `session_id` is the tab's current CDP session."""
        return self._cdp is not None and session_id == self._cdp.session_id

    async def _attach(self, target_id: str) -> None:
        cdp = await self.conn.attach_to_target(target_id, timeout=_COMMAND_TIMEOUT)
        self._cdp, self.target_id = cdp, target_id
        self.crashed = trio.Event()
        self.navigating_to = None
        await cdp.send_batch(
            [
                ("Page.enable", None),
                ("Runtime.enable", None),
                ("Log.enable", None),
                ("Page.setLifecycleEventsEnabled", {"enabled": True}),
            ],
            timeout=_COMMAND_TIMEOUT,
        )
        await self.workers.attach_page(cdp)
        await self.apply_viewport(*self.viewport)

    async def apply_viewport(
        self, width: int, height: int, *, timeout: float | None = _COMMAND_TIMEOUT
    ) -> None:
        """Set the viewport. `timeout=None` leaves the bound to the caller's own deadline."""
        # Kept first: Chrome applies the size even when the caller stops waiting (a busy
        # renderer answers late), and a page replaced after a crash must get it too.
        self.viewport = (width, height)
        await self.session.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            timeout=timeout,
        )

    def handle_console(self, event: CdpEvent) -> None:
        """Take a console event of the tab's session (the pump checked `owns`)."""
        if event.method == _DIALOG:
            dialog_entry(self.settings, self.console, event.params)
        elif event.params.get("entry", {}).get("source") != "worker":  # else an echo
            self.console.add_event(event.method, event.params)

    async def handle(self, event: CdpEvent) -> None:
        """Act on an event of the tab's session (the pump checked `owns`). Raises CdpError when
        the page went away meanwhile."""
        p = event.params
        if event.method.startswith("Page.frame"):
            self._track_navigation(event.method, p)
        elif event.method == _DIALOG:
            await answer_dialog(
                self.session, self.settings, self.notes, p, timeout=_COMMAND_TIMEOUT
            )
        elif event.method == "Inspector.targetCrashed":
            self.crashes += 1
            told = self._state is PageState.CRASH_TOLD  # a call's crash_error said it already
            self._move(PageState.REPLACING)
            self.crashed.set()
            if not told:
                self.notes.add("crash", PAGE_CRASHED_BETWEEN_CALLS)
            self.console.add("error", "the page crashed (renderer died); replaced by about:blank")
            await self._reset_after_crash()

    def _track_navigation(self, method: str, p: dict[str, Any]) -> None:
        frame_id = p.get("frameId") or (p.get("frame") or {}).get("id")
        if frame_id != self.target_id:
            return  # an iframe's navigation does not hold back the main frame's scripts
        if method == "Page.frameStartedNavigating":
            if p.get("navigationType") not in _SAME_DOCUMENT:
                self.navigating_to = str(p.get("url", ""))
                if self.loaded.is_set():
                    self.loaded = trio.Event()
        else:  # committed (frameNavigated), or stopped, failed or done (frameStoppedLoading)
            self.navigating_to = None
            if method == "Page.frameStoppedLoading":
                self.loaded.set()
            if method == "Page.frameNavigated":
                self.console.page_url = str((p.get("frame") or {}).get("url", ""))

    async def _reset_after_crash(self) -> None:
        try:
            for attempt in (1, 2, 3):  # a new tab may land in the dying renderer and go with it
                try:
                    await self._replace_page()
                    break
                except CdpCommandError:
                    if attempt == 3:
                        raise
        except CdpError as exc:
            log.warning("no new page after a renderer crash: %s", exc)
            self._move(PageState.FAILED)
        finally:
            if self._state is PageState.REPLACING:  # replaced, or cancelled (the pump ends)
                self._move(PageState.READY)

    async def _replace_page(self) -> None:
        old = self.target_id
        if self._cdp is not None:
            self.conn.forget_session(self._cdp.session_id)
        self._cdp = None
        # The new page first: a browser left with no page at all may refuse to make one
        # (headless shell answered "Not supported" right after a renderer ran out of memory).
        tab = {"url": "about:blank", **self.in_context}
        created = await self.conn.send("Target.createTarget", tab, timeout=_COMMAND_TIMEOUT)
        # _attach replaces the crash event; calls still waiting hold the old, set one.
        await self._attach(created["targetId"])
        with contextlib.suppress(CdpError):
            await self.conn.send("Target.closeTarget", {"targetId": old}, timeout=_COMMAND_TIMEOUT)

    def new_download_watch(self) -> trio.Event:
        """Arm a fresh event that the next downloadWillBegin sets."""
        return self._downloads.new_watch()
