"""A scripted browser source for Chrome-free tests of the manager (no process, no socket).

The test plays the far side of the seam, as with httpx's MockTransport: every launch waits in
`FakeBrowserSource.launches` until the test finishes it (`Launch.finish`) or fails it
(`Launch.fail`), or the source finishes it at once (`instant=True`); a browser ends when the
manager closes it or when the test makes it crash (`FakeBrowser.crash`). Every hand-back is
recorded with the trio time it was asked for.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import trio

from browser_tool import (
    Browser,
    BrowserLaunchError,
    BrowserSource,
    CloseReason,
    Metrics,
    SessionDirs,
    Settings,
    SourceFactory,
)
from chrome_launcher import ChromeState, KillReport

_pids = itertools.count(100_000)


class FakeBrowser:
    """A `Browser` with nothing behind it: alive until closed or crashed."""

    def __init__(self, conversation_id: str, on_closed: Callable[[Browser], None]) -> None:
        self.conversation_id = conversation_id
        self.started_at = trio.current_time()
        self.close_reason: CloseReason | None = None
        self.state = ChromeState.READY
        self.notes: list[str] = []
        self._pid = next(_pids)
        self._on_closed = on_closed
        self._closed = trio.Event()

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def alive(self) -> bool:
        return self.state is ChromeState.READY

    @property
    def shares_chrome(self) -> bool:
        return False

    def lost_because(self) -> str:
        return "crashed (fake)"

    def take_notes(self) -> list[str]:
        notes, self.notes = self.notes, []
        return notes

    async def aclose(self, reason: CloseReason) -> KillReport | None:
        self._end(reason)
        return None

    async def wait_closed(self) -> None:
        await self._closed.wait()

    def crash(self) -> None:
        """The browser dies on its own (as Chrome exiting or its connection dropping)."""
        self._end(CloseReason.CRASH)

    def _end(self, reason: CloseReason) -> None:
        if self.state is ChromeState.CLOSED:
            return
        self.close_reason = self.close_reason or reason
        self.state = ChromeState.CLOSED
        self._closed.set()
        self._on_closed(self)


@dataclass(eq=False)
class Launch:
    """One launch in flight, for the test to finish or fail."""

    conversation_id: str
    dirs: SessionDirs
    asked_at: float
    browser: FakeBrowser | None = None
    error: BrowserLaunchError | None = None
    cancelled: bool = False  # the manager gave up on it (a delete, a shutdown, a timeout)
    _done: trio.Event = field(default_factory=trio.Event)

    def finish(self) -> None:
        self._done.set()

    def fail(self, message: str = "Could not start the browser: scripted failure") -> None:
        self.error = BrowserLaunchError(message)
        self._done.set()


@dataclass(frozen=True)
class Release:
    reason: CloseReason
    at: float  # trio time the release was asked for
    conversation_id: str


class FakeBrowserSource:
    """A `BrowserSource` whose launches the test scripts."""

    def __init__(self, on_closed: Callable[[Browser], None], *, instant: bool) -> None:
        self.instant = instant
        self.launches: list[Launch] = []
        self.browsers: list[FakeBrowser] = []
        self.releases: list[Release] = []
        self._on_closed = on_closed
        self._changed = trio.Event()

    async def acquire(
        self, conversation_id: str, dirs: SessionDirs, profile_dir: Path | None = None
    ) -> Browser:
        launch = Launch(conversation_id, dirs, trio.current_time())
        self.launches.append(launch)
        self._poke()
        if self.instant:
            launch.finish()
        try:
            await launch._done.wait()
        except trio.Cancelled:
            launch.cancelled = True
            raise
        if launch.error is not None:
            raise launch.error
        launch.browser = FakeBrowser(conversation_id, self._on_closed)
        self.browsers.append(launch.browser)
        self._poke()
        return launch.browser

    async def release(self, browser: Browser, reason: CloseReason) -> KillReport | None:
        self.releases.append(Release(reason, trio.current_time(), browser.conversation_id))
        self._poke()
        return await browser.aclose(reason)

    def standby(self) -> list[Browser]:
        return []

    async def aclose(self) -> None:
        pass

    async def next_launch(self, count: int = 1) -> Launch:
        """The `count`-th launch (1-based), once it was asked for."""
        while len(self.launches) < count:
            await self._wait()
        return self.launches[count - 1]

    async def next_release(self, count: int = 1) -> Release:
        """The `count`-th release (1-based), once it was asked for."""
        while len(self.releases) < count:
            await self._wait()
        return self.releases[count - 1]

    async def _wait(self) -> None:
        await self._changed.wait()

    def _poke(self) -> None:
        self._changed.set()
        self._changed = trio.Event()


def fake_browsers(into: list[FakeBrowserSource], *, instant: bool = True) -> SourceFactory:
    """A source factory that builds a FakeBrowserSource and appends it to `into`."""

    def build(
        settings: Settings,
        instance_id: str,
        nursery: trio.Nursery,
        on_closed: Callable[[Browser], None],
        metrics: Metrics,
    ) -> BrowserSource:
        source = FakeBrowserSource(on_closed, instant=instant)
        into.append(source)
        return source

    return build
