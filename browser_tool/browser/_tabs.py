"""The tabs of a session: its Pages, which one is current, and the pump that feeds them.

One task (`run_pump`) reads the connection's events and hands each tab the events of its own
CDP session (console entries through a second listener, so a page logging without end fills
only its own bounded buffer, never the events calls wait on), keeps the downloads, and follows
the targets: a page target that one of ours opened (`window.open`, a `target=_blank` link: its
`openerId` is set) becomes a tab, attached with its own Page, up to `max_tabs`; more are closed
as they open and counted. Targets we make ourselves (the first tab, `open_tab`, a crash's
replacement) have no opener, so the pump never takes them for popups. A tab whose target goes
away (it closed itself) leaves the list; if it was current, its opener (else its neighbour)
becomes current and the next result says so. In a shared Chrome only targets of the session's
own browser context are looked at: other conversations' tabs are never seen.

Tabs are numbered from 0 in the order they opened, as the model sees them.
"""

from __future__ import annotations

import collections
import contextlib
import logging
from pathlib import Path
from typing import Any

import trio

from .._errors import CdpError, ToolError
from .._settings import Settings
from ..cdp import CdpConnection, CdpEvent
from ._console import ConsoleBuffer, Numbering
from ._downloads import Downloads, download_params
from ._page import CONSOLE_EVENTS, PAGE_EVENTS, Page, PageState
from ._refs import RefTable
from ._tab_notes import TabNotes, tab_label

log = logging.getLogger("browser_tool.tabs")

_TARGET_EVENTS = ("Target.targetCreated", "Target.targetInfoChanged", "Target.targetDestroyed")
_DOWNLOAD_EVENTS = ("Browser.downloadWillBegin", "Browser.downloadProgress")
_COMMAND_TIMEOUT = 10.0
_LOAD_WAIT = 5.0  # how long a new tab's load is waited for before its title is read
_CLOSE_WAIT = 2.0  # how long a call waits for the pump to see a detached tab's target go
_CONSOLE_QUEUE = 10_000  # console events waiting for the pump; more are dropped and counted


class Tabs:
    """A session's tabs. Built by its session; `run_pump` is started in the session's nursery,
    then `setup` opens the first tab."""

    def __init__(
        self, conn: CdpConnection, settings: Settings, downloads_dir: Path, context: str = ""
    ) -> None:
        self.conn = conn
        self.settings = settings
        self.downloads_dir = downloads_dir
        self.context = context
        self.in_context = {"browserContextId": context} if context else {}
        self.refs = RefTable()  # one numbering of refs for every tab: a ref names one tab's node
        self.refs.tab_of = self._tab_of_session
        self.downloads = Downloads()
        self.numbering = Numbering()
        self._pages: list[Page] = []
        self._current: Page | None = None
        self._scopes: dict[int, trio.CancelScope] = {}  # each tab's tasks, by id(page)
        self._nursery: trio.Nursery | None = None
        self._failed = trio.Event()
        self.opened = 0  # tabs the pages opened, those over the cap included
        self.closed_over_cap = 0  # tabs closed as they opened, the cap being reached
        self._notes = TabNotes(settings.max_tabs)
        self._closing = False  # the browser is being closed: its tabs go, none replaces them
        # The console buffers of the last closed tabs (a sign-in window's log outlives it).
        self._closed_consoles: collections.deque[ConsoleBuffer] = collections.deque(
            maxlen=settings.max_tabs
        )

    @property
    def current(self) -> Page:
        assert self._current is not None, "no tab before setup"
        return self._current

    def pages(self) -> list[Page]:
        """Every tab's Page, in tab order."""
        return list(self._pages)

    def consoles(self) -> list[tuple[str, ConsoleBuffer]]:
        """Every tab's console buffer with its tag ('tab 1'), then those of the last closed
        tabs ('closed tab'); the tag is '' when there is only one tab and nothing closed."""
        if len(self._pages) == 1 and not self._closed_consoles:
            return [("", self._pages[0].console)]
        tagged = [(f"tab {index}", page.console) for index, page in enumerate(self._pages)]
        return tagged + [("closed tab", console) for console in self._closed_consoles]

    def clear_consoles(self) -> int:
        """Empty every console buffer (those of closed tabs are forgotten); return the count."""
        count = sum(console.clear() for _, console in self.consoles())
        self._closed_consoles.clear()
        return count

    def index(self, page: Page) -> int:
        return self._pages.index(page)

    def label(self, page: Page) -> str:
        """'tab 1 (https://idp.example/sign-in)'."""
        return tab_label(self._pages, page)

    def select(self, page: Page) -> None:
        self._current = page
        self._notes.current_closed = ""

    def closing(self) -> None:
        """The browser (or context) is being closed: a tab closing is no longer replaced."""
        self._closing = True

    async def wait_closed(self, page: Page, timeout: float = _CLOSE_WAIT) -> Page:
        """`page`'s session was detached (its tab is closing itself): wait, at most `timeout`,
        for the pump to see its target go (then another tab is current and the tabs' note
        says which); return the current tab. A `page` that took over from the closed tab (the
        pump saw the close first) is not waited on."""
        if page.took_over:
            return self.current
        with trio.move_on_after(timeout):
            await page.wait_failed()  # returns once it is CLOSED (or FAILED)
        return self.current

    async def wait_failed(self) -> None:
        """Return once a tab's crashed page could not be replaced (the browser is broken)."""
        await self._failed.wait()

    def set_downloads_dir(self, downloads_dir: Path) -> None:
        self.downloads_dir = downloads_dir
        for page in self._pages:
            page.downloads_dir = downloads_dir

    async def run_pump(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Handle events until the connection closes. Subscribes before reporting started."""
        listen = self.conn.listen
        events = (*PAGE_EVENTS, *_TARGET_EVENTS, *_DOWNLOAD_EVENTS)
        async with (
            listen(*events, session_id="*", buffer=1000) as page_events,
            listen(*CONSOLE_EVENTS, session_id="*", buffer=_CONSOLE_QUEUE) as console,
            trio.open_nursery() as nursery,
        ):
            self._nursery = nursery
            nursery.start_soon(self._pump_console, console)
            task_status.started()
            async for event in page_events:
                try:
                    await self._handle(event)
                except CdpError as exc:
                    # A page may be gone (crash, close); the pump must outlive that.
                    log.debug("handling %s failed: %s", event.method, exc)
            nursery.cancel_scope.cancel()

    async def setup(self) -> None:
        """Find (or make) the first tab's target and attach it. Raises CdpError."""
        # Sent at once: Chrome answers them while it starts the tab's renderer.
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
            target_id = str(pages[0]["targetId"])
        else:
            tab = {"url": "about:blank", **self.in_context}
            created = await self.conn.send("Target.createTarget", tab, timeout=_COMMAND_TIMEOUT)
            target_id = str(created["targetId"])
        page = self._add(target_id, "")
        self._current = page
        await self._start(page)

    async def open_tab(self) -> Page:
        """Open a new, blank tab (not made current). Raises ToolError at the cap, CdpError."""
        if len(self._pages) >= self.settings.max_tabs:
            raise ToolError(
                f"There are {len(self._pages)} tabs open, the most this browser keeps "
                f"(BROWSER_TOOL_MAX_TABS={self.settings.max_tabs}); close one first "
                "(browser_tabs close)."
            )
        tab = {"url": "about:blank", **self.in_context}
        created = await self.conn.send("Target.createTarget", tab, timeout=_COMMAND_TIMEOUT)
        page = self._add(str(created["targetId"]), "")
        await self._start(page)
        return page

    async def close_tab(self, page: Page) -> None:
        """Close `page`'s tab (never the last: the caller navigates that one instead). If it
        was current, the tab `_successor` names becomes current. Raises CdpError."""
        assert len(self._pages) > 1, "the last tab is not closed"
        target_id = page.target_id
        self._drop(page)
        self._notes.current_closed = ""  # the caller's result says which tab is current now
        await self.conn.send(
            "Target.closeTarget", {"targetId": target_id}, timeout=_COMMAND_TIMEOUT
        )

    def take_notes(self) -> list[str]:
        """What the tabs did since the last call, said once: tabs opened (index, URL, title),
        closed, or refused at the cap; a change of current tab; each tab's own notes (the
        current tab's first, then the others', each naming its tab)."""
        notes = self._notes.take(self._pages, self.current)
        notes += self.current.take_notes()
        self.current.took_over = ""
        for page in self._pages:
            if page is not self.current:
                notes += [f"[{self.label(page)}] {note}" for note in page.take_notes()]
        return notes

    # The pump's side.

    def _add(self, target_id: str, opener_id: str) -> Page:
        page = Page(
            self.conn,
            self.settings,
            self.downloads_dir,
            self.context,
            refs=self.refs,
            downloads=self.downloads,
            numbering=self.numbering,
        )
        page.target_id, page.opener_id = target_id, opener_id
        if self._current is not None:  # a new tab starts as the current one is
            page.viewport = self._current.viewport
            page.workers.offline = self._current.workers.offline
        self._pages.append(page)
        return page

    async def _start(self, page: Page) -> None:
        """Start the tab's tasks and attach it. Raises CdpError (the tab is dropped then)."""
        assert self._nursery is not None, "tabs are opened once the pump runs"
        scope = await self._nursery.start(self._run_tab, page)
        self._scopes[id(page)] = scope
        try:
            await page.attach(page.target_id)
        except CdpError:
            self._drop(page, reopen=False)
            raise

    async def _run_tab(self, page: Page, *, task_status: trio.TaskStatus[trio.CancelScope]) -> None:
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                await nursery.start(page.workers.run)
                task_status.started(scope)
                await page.wait_failed()
                if page.state is PageState.FAILED:
                    self._failed.set()

    def _drop(self, page: Page, *, reopen: bool = True) -> None:
        if page not in self._pages:
            return
        index = self._pages.index(page)
        self._pages.remove(page)
        if (scope := self._scopes.pop(id(page), None)) is not None:
            scope.cancel()
        with contextlib.suppress(CdpError):
            self.conn.forget_session(page.session.session_id)
        page.mark_closed()
        if len(page.console):
            self._closed_consoles.append(page.console)
        if not self._pages and reopen and not self._closing and self._nursery is not None:
            # The last tab went (it closed itself): a blank one takes its place, so there is
            # always a current tab; calls wait for it as for a crash's replacement.
            self._current = self._add("", "")
            self._notes.current_closed = (
                f"The last tab ({page.url or 'about:blank'}) closed; a new blank tab 0 is current."
            )
            self._current.took_over = "A new blank tab 0 is current."
            self._nursery.start_soon(self._reopen, self._current)
        elif page is self._current and self._pages:
            self._current = self._successor(page, index)
            self._notes.current_closed = (
                f"The current tab ({page.url or 'about:blank'}) closed; {self.label(self._current)}"
                " is now current."
            )
            self._current.took_over = f"{self.label(self._current)} is now current."

    async def _reopen(self, page: Page) -> None:
        tab = {"url": "about:blank", **self.in_context}
        try:
            created = await self.conn.send("Target.createTarget", tab, timeout=_COMMAND_TIMEOUT)
            page.target_id = str(created["targetId"])
            await self._start(page)
        except (CdpError, KeyError) as exc:  # a browser that cannot make a page is broken
            log.warning("no new tab after the last one closed: %s", exc)
            self._failed.set()

    def _successor(self, page: Page, index: int) -> Page:
        for other in self._pages:
            if other.target_id == page.opener_id:
                return other
        return self._pages[max(0, index - 1)]

    def _tab_of_session(self, page_session_id: str) -> str | None:
        page = next((p for p in self._pages if p.owns(page_session_id)), None)
        return None if page is None else self.label(page)

    def _tab_of(self, target_id: str) -> Page | None:
        return next((p for p in self._pages if p.target_id == target_id), None)

    async def _pump_console(self, events: trio.MemoryReceiveChannel[CdpEvent]) -> None:
        async for event in events:
            for page in self._pages:
                if page.owns(event.session_id):
                    page.handle_console(event)
                    break

    async def _handle(self, event: CdpEvent) -> None:
        method, p = event.method, event.params
        if method.startswith("Browser."):
            self.downloads.handle(method, p)
        elif method.startswith("Target."):
            await self._handle_target(method, p.get("targetInfo") or p)
        else:
            for page in self._pages:
                if page.owns(event.session_id):
                    await page.handle(event)
                    break

    async def _handle_target(self, method: str, info: dict[str, Any]) -> None:
        target_id = str(info.get("targetId", ""))
        page = self._tab_of(target_id)
        if method == "Target.targetInfoChanged":
            if page is not None:
                page.url, page.title = str(info.get("url", "")), str(info.get("title", ""))
                if self._notes.url_known(page):
                    assert self._nursery is not None
                    self._nursery.start_soon(self._announce_load, page)
        elif method == "Target.targetDestroyed":
            if page is not None:
                self._drop(page)  # it closed itself (or its context went)
        elif (
            page is None
            and info.get("type") == "page"
            and info.get("openerId")
            and self.in_context.items() <= info.items()
            and self._current is not None
        ):
            await self._adopt(target_id, info)

    async def _adopt(self, target_id: str, info: dict[str, Any]) -> None:
        self.opened += 1
        if len(self._pages) >= self.settings.max_tabs:
            self.closed_over_cap += 1
            self._notes.over_cap += 1
            assert self._nursery is not None
            self._nursery.start_soon(self._close_target, target_id)
            return
        page = self._add(target_id, str(info.get("openerId", "")))
        page.url, page.title = str(info.get("url", "")), str(info.get("title", ""))
        self._notes.opened.append(page)
        assert self._nursery is not None
        self._nursery.start_soon(self._start_popup, page)

    async def _start_popup(self, page: Page) -> None:
        try:
            await self._start(page)
        except CdpError as exc:  # it closed before it was attached
            log.debug("tab %s not attached: %s", page.target_id, exc)

    async def _announce_load(self, page: Page) -> None:
        # Chrome does not announce a title change (targetInfoChanged keeps the URL as the
        # title): read it once the tab's document has loaded (or after a bound, if its load
        # ended before the tab was attached).
        with trio.move_on_after(_LOAD_WAIT):
            await page.loaded.wait()
        with contextlib.suppress(CdpError, KeyError):
            got = await self.conn.send(
                "Target.getTargetInfo", {"targetId": page.target_id}, timeout=_COMMAND_TIMEOUT
            )
            page.url, page.title = str(got["targetInfo"]["url"]), str(got["targetInfo"]["title"])
        self._notes.got_url.append(page)

    async def _close_target(self, target_id: str) -> None:
        with contextlib.suppress(CdpError):
            await self.conn.send(
                "Target.closeTarget", {"targetId": target_id}, timeout=_COMMAND_TIMEOUT
            )
