"""Stand-in browser sources for tests: the manager's seam for where browsers come from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import trio

from browser_tool import (
    Browser,
    CloseReason,
    LaunchSource,
    Metrics,
    PoolSource,
    SessionDirs,
    Settings,
    SourceFactory,
)
from chrome_launcher import KillReport


@dataclass
class Release:
    reason: CloseReason
    at: float  # trio time release was asked for
    pid: int
    done: trio.Event = field(default_factory=trio.Event)  # set once the browser is gone


@dataclass
class RecordingSource:
    """Real launches (LaunchSource), with every hand-back recorded at the trio time it was asked
    for, so a test can wait for the next one and assert exactly when and why it came."""

    inner: LaunchSource
    releases: list[Release] = field(default_factory=list)
    _released: trio.Event = field(default_factory=trio.Event)

    async def acquire(
        self, conversation_id: str, dirs: SessionDirs, profile_dir: Path | None = None
    ) -> Browser:
        return await self.inner.acquire(conversation_id, dirs, profile_dir)

    async def release(self, browser: Browser, reason: CloseReason) -> KillReport | None:
        record = Release(reason, trio.current_time(), browser.pid)
        self.releases.append(record)
        self._released.set()
        self._released = trio.Event()
        try:
            return await self.inner.release(browser, reason)
        finally:
            record.done.set()

    def standby(self) -> list[Browser]:
        return self.inner.standby()

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def wait_released(self, count: int = 1) -> Release:
        """The `count`-th release (1-based), once it was asked for."""
        while len(self.releases) < count:
            await self._released.wait()
        return self.releases[count - 1]


def recording(into: list[RecordingSource]) -> SourceFactory:
    """A source factory that builds a RecordingSource and appends it to `into`."""

    def build(
        settings: Settings,
        instance_id: str,
        nursery: trio.Nursery,
        on_closed: Callable[[Browser], None],
        metrics: Metrics,
    ) -> RecordingSource:
        source = RecordingSource(LaunchSource(settings, instance_id, nursery, on_closed, metrics))
        into.append(source)
        return source

    return build


def pooling(into: list[PoolSource]) -> SourceFactory:
    """A source factory that builds a PoolSource and appends it to `into` (to wait on it)."""

    def build(
        settings: Settings,
        instance_id: str,
        nursery: trio.Nursery,
        on_closed: Callable[[Browser], None],
        metrics: Metrics,
    ) -> PoolSource:
        source = PoolSource(settings, instance_id, nursery, on_closed, metrics)
        into.append(source)
        return source

    return build
