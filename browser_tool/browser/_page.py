"""The single page of a session, and the event pump that keeps it honest.

One task reads every event the session cares about (console, exceptions, log entries, dialogs,
popups, downloads, renderer crashes) and acts on it at once, so that no call ever blocks on a
dialog and nothing the page says is lost between calls; what a caller should hear of is noted.
Two listeners feed it: the page's console (and dialogs' entries, in wire order), and the rest;
a page logging without end fills only its own bounded buffer, never the events calls wait on.

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
from ._console import ConsoleBuffer
from ._dialogs import answer_dialog, dialog_entry
from ._downloads import Download, Downloads, download_params
from ._notes import PAGE_CRASHED_BETWEEN_CALLS, PAGE_CRASHED_DURING_CALL, PAGE_NOT_REPLACED, Notes
from ._refs import RefTable
from ._workers import Workers

log = logging.getLogger("browser_tool.page")

_DIALOG = "Page.javascriptDialogOpening"  # both listeners: the console entry, the answer
_CONSOLE_EVENTS = ("Runtime.consoleAPICalled", "Runtime.exceptionThrown", "Log.entryAdded", _DIALOG)
_PAGE_EVENTS = (
    _DIALOG,
    "Inspector.targetCrashed",
    "Page.frameStartedNavigating",
    "Page.frameNavigated",
    "Page.frameStoppedLoading",
    "Target.targetCreated",
    "Browser.downloadWillBegin",
    "Browser.downloadProgress",
)
_SAME_DOCUMENT = ("sameDocument", "historySameDocument")
_COMMAND_TIMEOUT = 10.0
# How long a best-effort clean-up command (stop loading, terminate a script) is waited for. The
# command is on the wire at once and Chrome handles a session's commands in order, so this only
# bounds how late a call that already failed may answer (a frozen Chrome never does).
_CLEANUP_GRACE = 0.5
_CONSOLE_QUEUE = 10_000  # console events waiting for the pump; more are dropped and counted


class PageState(enum.Enum):
    """Where the page is. Page targets that appear while SETTING_UP or REPLACING are ours (Chrome
    announces its first tab unasked), in the other states they are popups."""

    SETTING_UP = "setting up"  # until setup has attached our page (or failed to)
    READY = "ready"  # attached: calls run
    CRASH_TOLD = "crash told"  # a call reported the crash; the pump has not handled it yet
    REPLACING = "replacing"  # the pump makes a new page after a crash
    FAILED = "failed"  # no new page could be made; the browser ends as a crash


_WAITING = (PageState.SETTING_UP, PageState.CRASH_TOLD, PageState.REPLACING)


class Page:
    """The one tab of a session. `session` is its CDP session; a crash replaces it."""

    def __init__(
        self, conn: CdpConnection, settings: Settings, downloads_dir: Path, context: str = ""
    ) -> None:
        self.conn = conn
        # In a shared Chrome, the page's browser context: its tabs and popups are made there.
        self.in_context = {"browserContextId": context} if context else {}
        self.settings = settings
        self.downloads_dir = downloads_dir
        self.console = ConsoleBuffer(settings.console_buffer)
        self.workers = Workers(conn, self.console)  # its `run` is started with the pump
        self.notes = Notes(limits={"popup": settings.max_popups})
        self.refs = RefTable()  # kept across a crash: an old ref is refused as another page's
        self.last_snapshot: Snapshot | None = None  # the last whole-page browser_snapshot
        self._downloads = Downloads()
        self.downloads: dict[str, Download] = self._downloads.by_guid
        self.crashed = trio.Event()  # this page target's crash: a new one per attached page
        self.crashes = 0
        self.popups_opened = 0  # each is closed as it opens: one tab per conversation
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

    async def wait_failed(self) -> None:
        await self._wait_while(*_WAITING, PageState.READY)

    def crash_error(self, session: CdpSession | None = None) -> ToolError:
        """The error of a call the crash cut short; the note saying the same is dropped. Given
        the crashed `session` while it is still the page's (the pump has not handled the crash
        yet: the connection fails its commands first), later calls wait for the new page and
        the crash is not noted again."""
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

    async def setup(self) -> None:
        """Find (or create) the page target, attach, and enable what the tools need."""
        try:
            # Sent at once, as are the page's own commands below: Chrome answers them while it
            # starts the tab's renderer, instead of one round trip after the other.
            downloads = download_params(self.downloads_dir, self.in_context)
            _, targets, _ = await self.conn.send_batch(
                [
                    ("Browser.setDownloadBehavior", downloads),
                    ("Target.getTargets", None),
                    ("Target.setDiscoverTargets", {"discover": True}),
                ],
                timeout=_COMMAND_TIMEOUT,
            )
            pages = [t for t in targets.get("targetInfos", []) if t.get("type") == "page"]
            if pages and not self.in_context:
                self.target_id = pages[0]["targetId"]
            else:
                tab = {"url": "about:blank", **self.in_context}
                created = await self.conn.send("Target.createTarget", tab)
                self.target_id = created["targetId"]
            await self._attach(self.target_id)
        finally:
            self._move(PageState.READY)

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

    async def run_pump(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Handle events until the connection closes. Subscribes before reporting started."""
        listen = self.conn.listen
        async with (
            listen(*_PAGE_EVENTS, session_id="*", buffer=1000) as events,
            listen(*_CONSOLE_EVENTS, session_id="*", buffer=_CONSOLE_QUEUE) as console,
            trio.open_nursery() as nursery,
        ):
            nursery.start_soon(self._pump_console, console)
            task_status.started()
            async for event in events:
                try:
                    await self._handle(event)
                except CdpError as exc:
                    # The page may be gone (crash, close); the pump must outlive that.
                    log.debug("handling %s failed: %s", event.method, exc)
            nursery.cancel_scope.cancel()

    async def _pump_console(self, events: trio.MemoryReceiveChannel[CdpEvent]) -> None:
        async for event in events:
            if self._cdp is None or event.session_id != self._cdp.session_id:
                continue
            if event.method == _DIALOG:
                dialog_entry(self.settings, self.console, event.params)
            elif event.params.get("entry", {}).get("source") != "worker":  # else an echo
                self.console.add_event(event.method, event.params)

    async def _handle(self, event: CdpEvent) -> None:
        p = event.params
        if event.method.startswith(("Target.", "Browser.")):
            await self._handle_browser_event(event.method, p)
            return
        if self._cdp is None or event.session_id != self._cdp.session_id:
            return
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
        else:  # committed (frameNavigated), or stopped, failed or done (frameStoppedLoading)
            self.navigating_to = None
            if method == "Page.frameNavigated":
                self.console.page_url = str((p.get("frame") or {}).get("url", ""))

    async def _handle_browser_event(self, method: str, p: dict[str, Any]) -> None:
        if method == "Target.targetCreated":
            info = p.get("targetInfo", {})
            if (
                info.get("type") == "page"
                and info.get("targetId") != self.target_id
                and self._state not in (PageState.SETTING_UP, PageState.REPLACING)
                and self.in_context.items() <= info.items()
            ):
                await self._close_popup(info)
        else:
            self._downloads.handle(method, p)

    async def _close_popup(self, info: dict[str, Any]) -> None:
        """One tab per conversation: a window the page opens is closed at once, and noted."""
        self.popups_opened += 1
        url = info.get("url") or "about:blank"
        await self.conn.send(
            "Target.closeTarget", {"targetId": info["targetId"]}, timeout=_COMMAND_TIMEOUT
        )
        self.notes.add(
            "popup",
            f"The page opened a new window ({url}); it was closed, since this tool keeps one tab. "
            "Navigate to the URL instead if you need it.",
        )

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
