"""Stand-ins for what a tool reaches through its ToolContext: the conversation (the
`ConversationAccess` the manager lends a call), its browser, the page and the page's CDP session.

Scripted, with no Chrome and no socket, so tests run them on trio's autojump clock and assert
exact virtual times. A CDP method the script does not answer never answers, the way a busy
renderer does not; a launch can take virtual time, or fail with any exception.

Checked, not cast: `BrowserUse`, `PageUse` and `SessionUse` below name what the tools use of a
browser, its page and the page's CDP session, and `_stand_ins_fit` makes mypy check that both
the real classes and the stand-ins fit them. A real signature that changes fails the check on
the real side (update the protocol), and a stand-in that drifts fails it on the stand-in side.
The one remaining cast (`lend`) hands a checked stand-in over where a `BrowserSession` is typed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, Protocol, cast

import trio

from browser_tool import BrowserSession, HandoffError, Settings, ToolError
from browser_tool.browser import (
    PAGE_CRASHED_DURING_CALL,
    Download,
    PageState,
    RefTable,
    SessionDirs,
)
from browser_tool.browser._console import ConsoleBuffer
from browser_tool.browser._workers import Workers
from browser_tool.cdp import CdpConnection, CdpEvent, CdpSession
from browser_tool.tools import ToolContext, ToolOutput, find_tool, prepare_input, run_tool

Answer = Mapping[str, Any] | BaseException


class SessionUse(Protocol):
    """What tools use of a page's CDP session (`CdpSession`)."""

    async def send(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]: ...

    def listen(
        self, *methods: str, buffer: int = 1000
    ) -> AbstractAsyncContextManager[trio.MemoryReceiveChannel[CdpEvent]]: ...


class PageUse(Protocol):
    """What tools use of a page (`browser_tool.browser.Page`)."""

    @property
    def session(self) -> SessionUse: ...
    @property
    def crashed(self) -> trio.Event: ...
    @property
    def navigating_to(self) -> str | None: ...
    @property
    def console(self) -> ConsoleBuffer: ...
    @property
    def workers(self) -> Workers: ...
    @property
    def viewport(self) -> tuple[int, int]: ...
    @property
    def downloads(self) -> Mapping[str, Download]: ...
    @property
    def downloads_dir(self) -> Path: ...
    @property
    def refs(self) -> RefTable: ...

    def new_download_watch(self) -> trio.Event: ...
    async def wait_usable(self) -> None: ...
    def crash_error(self, session: CdpSession | None = None) -> ToolError: ...
    async def send_best_effort(self, method: str) -> bool: ...
    async def apply_viewport(
        self, width: int, height: int, *, timeout: float | None = 10.0
    ) -> None: ...


class TabsUse(Protocol):
    """What the listing tools use of a browser's tabs (`browser_tool.browser.Tabs`)."""

    def pages(self) -> Sequence[PageUse]: ...
    def consoles(self) -> list[tuple[str, ConsoleBuffer]]: ...
    def clear_consoles(self) -> int: ...
    async def wait_closed(self, page: Any, timeout: float = ...) -> Any: ...


class BrowserUse(Protocol):
    """What tools use of a browser (`BrowserSession`)."""

    @property
    def page(self) -> PageUse: ...
    @property
    def tabs(self) -> TabsUse: ...
    @property
    def alive(self) -> bool: ...


class StandInCdp:
    """A page's CDP session: `answers` maps a method to its result or to the error it raises;
    any other method never answers. `sent` records every command with its params."""

    def __init__(self, answers: Mapping[str, Answer] | None = None) -> None:
        self.answers = dict(answers or {})
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def send(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        self.sent.append((method, dict(params or {})))
        answer = self.answers.get(method)
        if answer is None:
            await trio.sleep_forever()
        await trio.lowlevel.checkpoint()
        if isinstance(answer, BaseException):
            raise answer
        return dict(answer)

    def methods(self) -> list[str]:
        return [method for method, _ in self.sent]

    @asynccontextmanager
    async def listen(
        self, *methods: str, buffer: int = 1000
    ) -> AsyncIterator[trio.MemoryReceiveChannel[CdpEvent]]:
        """A subscription on which no event ever comes."""
        sender, receiver = trio.open_memory_channel[CdpEvent](buffer)
        async with sender, receiver:
            yield receiver


class StandInPage:
    """The attributes of `browser_tool.browser.Page` that tools use."""

    def __init__(self, cdp: StandInCdp, downloads_dir: Path) -> None:
        self.session = cdp
        self.downloads_dir = downloads_dir
        self.refs = RefTable()
        self.crashed = trio.Event()
        self.navigating_to: str | None = None
        self.console = ConsoleBuffer(100)
        # The real thing: with no worker attached it sends only on the page's session, so it
        # never reaches the connection (None here); it types the session as a CdpSession.
        self.workers = Workers(cast(CdpConnection, None), self.console)
        self.workers.page_session = cast(CdpSession, cdp)
        self.viewport = (1280, 720)
        self.best_effort: list[str] = []
        self.downloads: dict[str, Download] = {}
        self.state = PageState.READY  # attached: a warm call waits for nothing

    def new_download_watch(self) -> trio.Event:
        return trio.Event()

    async def wait_usable(self) -> None:
        await trio.lowlevel.checkpoint()

    def crash_error(self, session: CdpSession | None = None) -> ToolError:
        return ToolError(PAGE_CRASHED_DURING_CALL)

    async def send_best_effort(self, method: str) -> bool:
        self.best_effort.append(method)
        await trio.lowlevel.checkpoint()
        return True

    async def apply_viewport(
        self, width: int, height: int, *, timeout: float | None = 10.0
    ) -> None:
        self.viewport = (width, height)
        params = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        await self.session.send("Emulation.setDeviceMetricsOverride", params)


class StandInTabs:
    def __init__(self, page: StandInPage) -> None:
        self.page = page

    def pages(self) -> list[StandInPage]:
        return [self.page]

    def consoles(self) -> list[tuple[str, ConsoleBuffer]]:
        return [("", self.page.console)]

    def clear_consoles(self) -> int:
        return self.page.console.clear()

    async def wait_closed(self, page: StandInPage, timeout: float = 2.0) -> StandInPage:
        # No pump here: the tab is the only one, and stays.
        await trio.lowlevel.checkpoint()
        return self.page


class StandInBrowser:
    def __init__(self, page: StandInPage, alive: bool) -> None:
        self.page = page
        self.tabs = StandInTabs(page)  # one tab
        self.alive = alive  # whether its connection is up


def _stand_ins_fit(real: BrowserSession, stand_in: StandInBrowser) -> list[BrowserUse]:
    """Never called: mypy checks here that the real browser and the stand-in both fit what
    tools use, so neither can drift from the other unseen."""
    return [real, stand_in]


def lend(browser: StandInBrowser) -> BrowserSession:
    """The stand-in where `ConversationAccess` types a `BrowserSession` (checked above)."""
    return cast(BrowserSession, browser)


class StandInConversation:
    """A `ConversationAccess`. `browser()` takes `launch_seconds` of (virtual) time, then returns
    the stand-in browser or raises `launch_error`; `launches` counts the calls."""

    conversation_id = "conv-1"
    browser_alive = True  # a test sets False: the browser's connection went

    def __init__(
        self,
        root: Path,
        cdp: StandInCdp | None = None,
        *,
        launch_seconds: float = 0.0,
        launch_error: BaseException | None = None,
        running: bool = False,
    ) -> None:
        self.root = root
        self.cdp = cdp or StandInCdp()
        self.page = StandInPage(self.cdp, SessionDirs(root).downloads)
        self.launch_seconds = launch_seconds
        self.launch_error = launch_error
        self.running = running
        self.launches = 0

    async def browser(self) -> BrowserSession:
        self.launches += 1
        if self.launch_seconds:
            await trio.sleep(self.launch_seconds)
        if self.launch_error is not None:
            raise self.launch_error
        self.running = True
        return lend(StandInBrowser(self.page, self.browser_alive))

    def existing_browser(self) -> BrowserSession | None:
        return lend(StandInBrowser(self.page, self.browser_alive)) if self.running else None

    def dirs(self) -> SessionDirs:
        dirs = SessionDirs(self.root)
        for path in (dirs.root, dirs.downloads, dirs.screenshots, dirs.outputs):
            path.mkdir(parents=True, exist_ok=True)
        return dirs

    def request_handoff(self, reason: str) -> str:
        raise HandoffError("unserved", "no live view in the stand-in")


def make_context(
    conversation: StandInConversation, *, timeout: float = 15.0, working_dir: Path | None = None
) -> ToolContext:
    """A call's context whose deadline is `timeout` seconds from now, as the manager makes it."""
    settings = Settings(state_dir=conversation.root / "state")
    return ToolContext(
        settings,
        working_dir or conversation.root,
        timeout,
        trio.current_time() + timeout,
        conversation,
    )


async def call(
    conversation: StandInConversation,
    name: str,
    args: dict[str, object],
    *,
    working_dir: Path | None = None,
) -> ToolOutput:
    """Call tool `name` as the manager does: the input checked, the deadline set from its
    timeout (default 15s), then `run_tool`."""
    tool = find_tool(name)
    checked, timeout = prepare_input(tool, args, 15.0, 600.0)
    ctx = make_context(conversation, timeout=timeout, working_dir=working_dir)
    return await run_tool(ctx, tool, checked)
