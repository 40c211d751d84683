"""What an action did to the page, in a few lines: a navigation (URL and title), a popup, a
dialog, a download, what changed in the elements the model last saw (by ref), new console
errors. Only what was checked is said; an action that changed nothing visible says so.

Used as `async with watch_action(page) as watch:` around the input; `await watch.finish(...)`
after it waits for the consequences within the call's deadline: a navigation's load, else a
short settle (two animation frames, no navigation pending). When the action's tab closed
itself (a sign-in window that posted its token back), the settle goes on on the tab that became
current, so the result comes after that tab handled what the closed one did (its opener's
message handler), and the tabs' note says which tab is current now.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import trio

from .._errors import CdpError, CdpSessionDetachedError, ToolError
from ..cdp import CdpEvent
from ._ax_tree import Snapshot, SnapshotNode
from ._downloads import place_download
from ._page import Page, PageState
from ._snapshot import capture_snapshot
from ._tabs import Tabs

MAX_CHANGES = 6  # element change lines shown; more are counted
MAX_ERRORS = 3  # console error lines shown
_SETTLE = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"
_EVENTS = (
    "Page.frameStartedNavigating",
    "Page.frameNavigated",
    "Page.lifecycleEvent",
    "Page.frameStoppedLoading",
)
_SAME_DOCUMENT = ("sameDocument", "historySameDocument")


@dataclass
class ActionWatch:
    page: Page
    events: trio.MemoryReceiveChannel[CdpEvent]
    console_before: int
    downloads_before: int
    url_before: str
    tabs: Tabs | None = None  # the session's tabs: the settle follows a tab that closed
    extra: list[str] = field(default_factory=list)  # what the tool itself did (file chooser)
    closed: bool = False  # the tab closed itself during the action (its session detached)
    _navigating: bool = False
    _loaded: bool = False
    _committed_url: str = ""
    _committed: bool = False

    def _take(self, event: CdpEvent) -> None:
        p = event.params
        main = self.page.target_id
        frame_id = p.get("frameId") or (p.get("frame") or {}).get("id")
        if frame_id != main:
            return
        if event.method == "Page.frameStartedNavigating":
            if p.get("navigationType") not in _SAME_DOCUMENT:
                self._navigating, self._loaded = True, False
        elif event.method == "Page.frameNavigated":
            self._committed_url = str(p.get("frame", {}).get("url", ""))
            self._committed = True
        elif (
            event.method == "Page.frameStoppedLoading"
            or (event.method == "Page.lifecycleEvent" and p.get("name") == "load")
        ) and self._navigating:
            self._loaded = True  # a page restored from the back/forward cache has no load

    def _drain(self) -> None:
        while True:
            try:
                event = self.events.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                return
            self._take(event)

    async def finish(self, deadline: float, timeout_text: str) -> list[str]:
        """Wait for the action's consequences (by `deadline`) and say what they were."""
        lines: list[str] = []
        with trio.move_on_at(deadline):
            try:
                if not self.closed:
                    await settle(self.page)
            except CdpSessionDetachedError:
                self.closed = True
            except CdpError:
                self.closed = self.page.state is PageState.CLOSED
            if self.closed:
                await self._settle_successor()
            self._drain()
            while self._navigating and not self._loaded and not self.closed:
                self._take(await self.events.receive())
        self._drain()
        url, title = await self._current(deadline)
        if self._navigating and not self._loaded:
            lines.append(
                f"Navigation started (to {self.page.navigating_to or self._committed_url or url})"
                f" and did not finish loading within {timeout_text}."
            )
        elif self._committed or url != self.url_before:
            lines.append(f"Navigated to {url} (title: {title!r}).")
        lines += self.extra
        lines += self.page.take_notes()  # popups closed, dialogs answered, a crash
        lines += await self._downloads(deadline)
        lines += self._console_errors()
        if not self._committed and url == self.url_before:
            lines += await self._changes(deadline)
        else:
            self.page.last_snapshot = None  # refs of the old document are gone with it
        if self.closed:  # the tabs' note says the tab closed and which is current now
            return lines
        return lines or ["No visible change on the page."]

    async def _settle_successor(self) -> None:
        """The action's tab closed itself: settle on the tab that became current instead."""
        if self.tabs is None:
            return
        current = await self.tabs.wait_closed(self.page)
        if current is not self.page:
            with contextlib.suppress(CdpError, ToolError):  # it may be going too
                await current.wait_usable()
                await settle(current)

    async def _current(self, deadline: float) -> tuple[str, str]:
        with trio.move_on_at(deadline), contextlib.suppress(CdpError):
            history = await self.page.session.send("Page.getNavigationHistory")
            entry = history["entries"][history["currentIndex"]]
            return str(entry.get("url", "")), str(entry.get("title", ""))
        return self._committed_url or self.url_before, ""

    async def _downloads(self, deadline: float) -> list[str]:
        lines = []
        for download in list(self.page.downloads.values())[self.downloads_before :]:
            with trio.move_on_at(deadline):
                await download.done.wait()
            if download.state != "completed":
                lines.append(f"A download of {download.url} is {download.state}.")
                continue
            path = place_download(self.page.downloads_dir, download)
            lines.append(
                f"Downloaded {download.suggested_filename!r} ({path.stat().st_size:,} bytes) "
                f"from {download.url}: saved as {path}"
            )
        return lines

    def _console_errors(self) -> list[str]:
        new = self.page.console.total - self.console_before
        errors = [
            e
            for e in self.page.console.recent(max(new, 0))
            if e.seq > self.console_before and e.level in ("error", "exception")
        ]
        lines = [f"Console {e.level}: {e.text[:200]}" for e in errors[:MAX_ERRORS]]
        if len(errors) > MAX_ERRORS:
            lines.append(
                f"... and {len(errors) - MAX_ERRORS} more console errors "
                "(browser_recent_console_logs)."
            )
        return lines

    async def _changes(self, deadline: float) -> list[str]:
        before = self.page.last_snapshot
        if before is None:
            return []
        with trio.move_on_at(deadline):
            try:
                after = await capture_snapshot(self.page)
            except CdpError:
                if self.page.state is PageState.CLOSED:
                    return []  # the tab closed itself: the tabs' note says so, and what's current
                return ["(The page's elements could not be compared: the tab did not answer.)"]
            self.page.last_snapshot = after
            return diff_snapshots(before, after)
        return ["(The page's elements could not be compared within the call's timeout.)"]


def diff_snapshots(before: Snapshot, after: Snapshot) -> list[str]:
    """Lines saying what changed between two snapshots of one document, by ref."""
    old = {n.ref: n for n in before.nodes if n.ref}
    new = {n.ref: n for n in after.nodes if n.ref}
    lines: list[str] = []
    for ref, node in new.items():
        was = old.get(ref)
        if was is None:
            lines.append(f"Appeared: {_line(node)}")
            continue
        if (was.value or "") != (node.value or ""):
            lines.append(f'{_line(node, value=False)}: "{was.value or ""}" -> "{node.value or ""}"')
        if _states(was) != _states(node):
            lines.append(
                f"{_line(node, value=False)}: [{', '.join(_states(was))}] -> "
                f"[{', '.join(_states(node))}]"
            )
        if was.name != node.name:
            lines.append(f'{_line(node, value=False)}: name was "{was.name}"')
    lines += [f"Gone: {_line(node)}" for ref, node in old.items() if ref not in new]
    if before.title != after.title:
        lines.insert(0, f"Title changed: {before.title!r} -> {after.title!r}")
    if len(lines) > MAX_CHANGES:
        lines = [*lines[:MAX_CHANGES], f"... and {len(lines) - MAX_CHANGES} more changes."]
    return lines


def _states(node: SnapshotNode) -> tuple[str, ...]:
    return tuple(s for s in node.states if s != "focused")  # focus follows every input


def _line(node: SnapshotNode, *, value: bool = True) -> str:
    name = f' "{node.name}"' if node.name else ""
    text = f"{node.role}{name} [ref={node.ref}]"
    return f"{text}: {node.value}" if value and node.value else text


async def settle(page: Page) -> None:
    """Wait two animation frames of `page` (what it does at once is done). Raises CdpError."""
    await page.session.send("Runtime.evaluate", {"expression": _SETTLE, "awaitPromise": True})


@contextlib.asynccontextmanager
async def watch_action(page: Page, tabs: Tabs | None = None) -> AsyncIterator[ActionWatch]:
    """Watch the page around an action; listen before the input is sent. Given the session's
    `tabs`, an action whose tab closes itself settles on the tab that became current."""
    url = ""
    with contextlib.suppress(CdpError, KeyError, IndexError):
        history = await page.session.send("Page.getNavigationHistory")
        url = str(history["entries"][history["currentIndex"]].get("url", ""))
    async with page.session.listen(*_EVENTS, buffer=1000) as events:
        yield ActionWatch(page, events, page.console.total, len(page.downloads), url, tabs)
