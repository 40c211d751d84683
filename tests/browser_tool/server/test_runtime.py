"""The shutdown logic shared by `serve` and `mcp`, on trio's virtual clock: the drain waits
for calls in flight for exactly the grace, a second request cuts it short, and whatever still
runs is stopped through the manager. A fake manager records `skip_call_grace`; the real
signals are exercised end to end in test_http_signals.py."""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator
from typing import cast

import trio
import trio.testing

from browser_tool import BrowserSessionManager
from browser_tool.server._runtime import InFlight, Shutdown


class FakeManager:
    def __init__(self, release: trio.Event | None = None) -> None:
        self.skips: list[float] = []
        self._release = release

    def skip_call_grace(self) -> None:
        self.skips.append(trio.current_time())
        if self._release is not None:
            self._release.set()


def shutdown_with(manager: FakeManager) -> Shutdown:
    shutdown = Shutdown()
    shutdown.manager = cast(BrowserSessionManager, manager)
    return shutdown


async def hold(inflight: InFlight, until: trio.Event) -> None:
    with inflight.track():
        await until.wait()


async def test_drain_ends_when_the_last_call_does(autojump_clock: trio.testing.MockClock) -> None:
    inflight, done, manager = InFlight(), trio.Event(), FakeManager()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(hold, inflight, done)
        await trio.testing.wait_all_tasks_blocked()
        assert inflight.count == 1

        async def finish_later() -> None:
            await trio.sleep(3)
            done.set()

        nursery.start_soon(finish_later)
        start = trio.current_time()
        await shutdown_with(manager).drain(inflight, grace=10)
        assert trio.current_time() - start == 3
    assert manager.skips == []
    assert inflight.count == 0


async def test_drain_stops_what_outlives_the_grace(autojump_clock: trio.testing.MockClock) -> None:
    inflight, stopped = InFlight(), trio.Event()
    manager = FakeManager(release=stopped)  # a stopped call answers at once
    async with trio.open_nursery() as nursery:
        nursery.start_soon(hold, inflight, stopped)
        await trio.testing.wait_all_tasks_blocked()
        start = trio.current_time()
        await shutdown_with(manager).drain(inflight, grace=10)
        assert trio.current_time() - start == 10
    assert manager.skips == [start + 10]


async def test_drain_gives_up_on_a_call_that_ignores_the_stop(
    autojump_clock: trio.testing.MockClock,
) -> None:
    inflight, never = InFlight(), trio.Event()
    manager = FakeManager()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(hold, inflight, never)
        await trio.testing.wait_all_tasks_blocked()
        start = trio.current_time()
        await shutdown_with(manager).drain(inflight, grace=10)
        assert trio.current_time() - start == 11  # the grace, then one second for the reply
        assert inflight.count == 1
        nursery.cancel_scope.cancel()


async def test_a_second_request_skips_the_grace(autojump_clock: trio.testing.MockClock) -> None:
    inflight, stopped = InFlight(), trio.Event()
    manager = FakeManager(release=stopped)
    shutdown = shutdown_with(manager)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(hold, inflight, stopped)
        await trio.testing.wait_all_tasks_blocked()
        shutdown.request("SIGTERM")
        assert shutdown.stopping
        assert manager.skips == []

        async def second_signal() -> None:
            await trio.sleep(2)
            shutdown.request("SIGINT")

        nursery.start_soon(second_signal)
        start = trio.current_time()
        await shutdown.drain(inflight, grace=300)
        assert trio.current_time() - start == 2
    assert manager.skips == [start + 2]
    assert shutdown.hurried.is_set()


async def test_signals_become_requests() -> None:
    shutdown = Shutdown()

    async def two_signals() -> AsyncIterator[int]:
        yield signal.SIGTERM
        assert shutdown.stopping
        assert not shutdown.hurried.is_set()
        yield signal.SIGINT

    await shutdown.watch_signals(two_signals())
    assert shutdown.hurried.is_set()


def test_inflight_counts_nested_tracks() -> None:
    inflight = InFlight()
    with inflight.track(), inflight.track():
        assert inflight.count == 2
    assert inflight.count == 0
