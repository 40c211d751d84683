"""The single page of a session, and the event pump that keeps it honest.

One task reads every event the session cares about (console, exceptions, log entries, dialogs,
popups, downloads, renderer crashes) and acts on it at once, so that no call ever blocks on a
dialog and nothing the page says is lost between calls. What a caller should hear about in its
next result (a dialog, a closed popup, a crash) is queued as a note.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from .._errors import CdpError
from .._settings import Settings
from ..cdp import CdpConnection, CdpEvent, CdpSession
from ._console import ConsoleBuffer, format_remote_args, source_of

log = logging.getLogger("browser_tool.page")

_PUMP_EVENTS = (
    "Runtime.consoleAPICalled",
    "Runtime.exceptionThrown",
    "Log.entryAdded",
    "Page.javascriptDialogOpening",
    "Inspector.targetCrashed",
    "Page.frameStartedNavigating",
    "Page.frameNavigated",
    "Page.frameStoppedLoading",
    "Target.targetCreated",
    "Browser.downloadWillBegin",
    "Browser.downloadProgress",
)
_SAME_DOCUMENT = ("sameDocument", "historySameDocument")
_LEVELS = {"warning": "warn", "verbose": "debug", "assert": "error", "trace": "log"}
_COMMAND_TIMEOUT = 10.0
_CLEANUP_GRACE = 2.0  # a best-effort clean-up command (stop loading, terminate a script)


@dataclass
class Download:
    guid: str
    url: str
    suggested_filename: str
    state: str = "inProgress"
    received_bytes: int = 0
    done: trio.Event = field(default_factory=trio.Event)


class Page:
    """The one tab of a session. `cdp` is its CDP session; it changes when a crash resets it."""

    def __init__(self, conn: CdpConnection, settings: Settings, downloads_dir: Path) -> None:
        self.conn = conn
        self.settings = settings
        self.downloads_dir = downloads_dir
        self.console = ConsoleBuffer(settings.console_buffer)
        self.notes: list[str] = []
        self.downloads: dict[str, Download] = {}
        self.download_started = trio.Event()
        self.crashed = trio.Event()
        self.cdp: CdpSession | None = None
        self.target_id = ""
        # The URL of a main-frame navigation to a new document that has not committed yet.
        # Chrome holds back Runtime.evaluate until it commits (a server that never answers
        # blocks every script), so an eval that times out says so.
        self.navigating_to: str | None = None
        self.viewport = (settings.viewport_width, settings.viewport_height)
        # Until setup has adopted our page, and while a crash reset makes a new one, page
        # targets that appear are ours, not popups (Chrome announces its first tab unasked).
        self._settling = True

    @property
    def session(self) -> CdpSession:
        assert self.cdp is not None, "page used before setup"
        return self.cdp

    async def send_best_effort(self, method: str) -> None:
        """Send `method` to the page for a clean-up step: shielded (it runs when the call was
        cancelled too), at most `_CLEANUP_GRACE` seconds, and a CDP error is not the caller's."""
        shield = trio.CancelScope(shield=True)
        with shield, trio.move_on_after(_CLEANUP_GRACE), contextlib.suppress(CdpError):
            await self.session.send(method)

    def download_behavior(self) -> dict[str, Any]:
        """Browser.setDownloadBehavior's params: downloads go to `downloads_dir`."""
        path = str(self.downloads_dir)
        return {"behavior": "allowAndName", "downloadPath": path, "eventsEnabled": True}

    def take_notes(self) -> list[str]:
        notes, self.notes = self.notes, []
        return notes

    async def setup(self) -> None:
        """Find (or create) the page target, attach, and enable what the tools need."""
        try:
            # Sent at once, as are the page's own commands below: Chrome answers them while it
            # starts the tab's renderer, instead of one round trip after the other.
            _, targets, _ = await self.conn.send_batch(
                [
                    ("Browser.setDownloadBehavior", self.download_behavior()),
                    ("Target.getTargets", None),
                    ("Target.setDiscoverTargets", {"discover": True}),
                ],
                timeout=_COMMAND_TIMEOUT,
            )
            pages = [t for t in targets.get("targetInfos", []) if t.get("type") == "page"]
            if pages:
                self.target_id = pages[0]["targetId"]
            else:
                created = await self.conn.send("Target.createTarget", {"url": "about:blank"})
                self.target_id = created["targetId"]
            await self._attach(self.target_id)
        finally:
            self._settling = False

    async def _attach(self, target_id: str) -> None:
        cdp = await self.conn.attach_to_target(target_id, timeout=_COMMAND_TIMEOUT)
        self.cdp, self.target_id = cdp, target_id
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
        async with self.conn.listen(*_PUMP_EVENTS, session_id="*", buffer=10_000) as events:
            task_status.started()
            async for event in events:
                try:
                    await self._handle(event)
                except CdpError as exc:
                    # The page may be gone (crash, close); the pump must outlive that.
                    log.debug("handling %s failed: %s", event.method, exc)

    async def _handle(self, event: CdpEvent) -> None:
        p = event.params
        if event.method.startswith(("Target.", "Browser.")):
            await self._handle_browser_event(event.method, p)
            return
        if self.cdp is None or event.session_id != self.cdp.session_id:
            return
        if event.method == "Runtime.consoleAPICalled":
            frames = (p.get("stackTrace") or {}).get("callFrames") or [{}]
            level = str(p.get("type", "log"))
            self.console.add(
                _LEVELS.get(level, level),
                format_remote_args(p.get("args", [])),
                source_of(frames[0].get("url"), frames[0].get("lineNumber")),
                p["timestamp"] / 1000 if "timestamp" in p else None,
            )
        elif event.method == "Runtime.exceptionThrown":
            details = p.get("exceptionDetails", {})
            self.console.add(
                "exception",
                exception_text(details),
                source_of(details.get("url"), details.get("lineNumber")),
            )
        elif event.method == "Log.entryAdded":
            entry = p.get("entry", {})
            level = str(entry.get("level", "info"))
            self.console.add(
                _LEVELS.get(level, level),
                str(entry.get("text", "")),
                source_of(entry.get("url"), entry.get("lineNumber")),
            )
        elif event.method.startswith("Page.frame"):
            self._track_navigation(event.method, p)
        elif event.method == "Page.javascriptDialogOpening":
            await self._handle_dialog(p)
        elif event.method == "Inspector.targetCrashed":
            self.crashed.set()
            self.notes.append(
                "The page's renderer crashed; the page was reset to about:blank and its state "
                "(DOM, scripts, form input) was lost. Cookies and storage were kept."
            )
            self.console.add("error", "renderer crashed; page reset to about:blank")
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

    async def _handle_dialog(self, p: dict[str, Any]) -> None:
        kind = str(p.get("type", "alert"))
        message = str(p.get("message", ""))
        accept = self.settings.dialog_accepts(kind)
        params: dict[str, Any] = {"accept": accept}
        if accept and kind == "prompt":
            params["promptText"] = str(p.get("defaultPrompt", ""))
        # Recorded before the answer goes out: the script the dialog blocks, and the call that
        # waits for it, may finish before our command's own answer arrives.
        verdict = "accepted" if accept else "dismissed"
        self.console.add("dialog", f"{kind}: {message} ({verdict})", str(p.get("url", "")))
        self.notes.append(f"A JavaScript {kind} dialog appeared ({message!r}) and was {verdict}.")
        await self.session.send("Page.handleJavaScriptDialog", params, timeout=_COMMAND_TIMEOUT)

    async def _handle_browser_event(self, method: str, p: dict[str, Any]) -> None:
        if method == "Target.targetCreated":
            info = p.get("targetInfo", {})
            if (
                info.get("type") == "page"
                and info.get("targetId") != self.target_id
                and not self._settling
            ):
                # Single-tab model: a popup is closed and the agent told.
                url = info.get("url") or "about:blank"
                await self.conn.send(
                    "Target.closeTarget", {"targetId": info["targetId"]}, timeout=_COMMAND_TIMEOUT
                )
                self.notes.append(
                    f"The page opened a new window ({url}); it was closed, since this tool "
                    "keeps one tab. Navigate to the URL instead if you need it."
                )
        elif method == "Browser.downloadWillBegin":
            guid = str(p.get("guid", ""))
            self.downloads[guid] = Download(
                guid, str(p.get("url", "")), str(p.get("suggestedFilename", "download"))
            )
            self.download_started.set()
        elif method == "Browser.downloadProgress":
            download = self.downloads.get(str(p.get("guid", "")))
            if download is not None:
                download.state = str(p.get("state", download.state))
                download.received_bytes = int(p.get("receivedBytes", download.received_bytes))
                if download.state in ("completed", "canceled"):
                    download.done.set()

    async def _reset_after_crash(self) -> None:
        self._settling = True
        try:
            await self._replace_page()
        finally:
            self._settling = False

    async def _replace_page(self) -> None:
        old = self.target_id
        if self.cdp is not None:
            self.conn.forget_session(self.cdp.session_id)
        self.cdp = None
        with contextlib.suppress(CdpError):
            await self.conn.send("Target.closeTarget", {"targetId": old}, timeout=_COMMAND_TIMEOUT)
        created = await self.conn.send(
            "Target.createTarget", {"url": "about:blank"}, timeout=_COMMAND_TIMEOUT
        )
        self.target_id = created["targetId"]
        # _attach replaces the crash event; calls still waiting hold the old, set one.
        await self._attach(self.target_id)

    def new_download_watch(self) -> trio.Event:
        """Arm a fresh event that the next downloadWillBegin sets."""
        self.download_started = trio.Event()
        return self.download_started


def exception_text(details: dict[str, Any]) -> str:
    """'ReferenceError: foo is not defined' from Runtime exceptionDetails (first line only)."""
    exception = details.get("exception") or {}
    text = exception.get("description")
    if not text and "value" in exception:
        text = f"Uncaught {exception['value']!r}"
    if not text:
        text = str(details.get("text", "Uncaught exception"))
    return str(text).splitlines()[0] if text else "Uncaught exception"
