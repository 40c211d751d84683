"""The conversation state machine and its clock without Chrome: scripted browsers
(tests/support/fake_browsers.py) under trio's autojump clock, with exact virtual times.

A call here is the manager's own `run_call` with a body that takes the conversation's browser
and holds it as the test says: the steps between states are the production ones.

The clock jumps after 0.1 s of real time in which every task is blocked, not at once: removing
a conversation's files runs in a worker thread, and trio counts a task waiting for a thread as
blocked, so a zero threshold would jump past deadlines while a file is being removed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio
import trio.testing

from browser_tool import (
    BrowserLaunchError,
    BrowserSessionManager,
    CloseReason,
    ConversationState,
    ToolOutput,
    open_session_manager,
    validate_conversation_id,
)
from browser_tool.browser import BROWSER_CRASHED_DURING_CALL
from browser_tool.conversations._calls import CallAccess, run_call
from browser_tool.conversations._conversation import take_turn
from tests.support.checks import make_settings
from tests.support.fake_browsers import FakeBrowserSource, Release, fake_browsers

C = "conv-1"
IDLE = 600.0
LIFE = 3600.0


async def HANG() -> None:
    """A call that hangs: bounded in virtual time, so a missed stop fails instead of hanging."""
    await trio.sleep(100 * LIFE)


@asynccontextmanager
async def fake_manager(
    state_dir: Path, *, instant: bool = True, **changes: object
) -> AsyncIterator[tuple[BrowserSessionManager, FakeBrowserSource]]:
    sources: list[FakeBrowserSource] = []
    changes = {"idle_timeout": IDLE, "max_lifetime": LIFE, "reap_on_start": False, **changes}
    settings = make_settings(state_dir, **changes)
    async with open_session_manager(
        settings, source_factory=fake_browsers(sources, instant=instant)
    ) as manager:
        yield manager, sources[0]


async def call(
    manager: BrowserSessionManager,
    hold: Callable[[], Awaitable[object]] | None = None,
    conversation_id: str = C,
) -> ToolOutput:
    """One call: take the conversation's browser (launched if needed), then `hold`."""
    lifecycle = manager._lifecycle

    async def body(access: CallAccess) -> ToolOutput:
        try:
            browser = await access.acquire()
        except BrowserLaunchError as exc:
            return ToolOutput.error(str(exc))
        if hold is not None:
            await hold()
        return ToolOutput.ok(f"pid {browser.pid}")

    conv = lifecycle.conversation(validate_conversation_id(conversation_id))
    async with take_turn(conv):
        return await run_call(lifecycle, conv, body)


@pytest.fixture
def clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0.1)


def state(manager: BrowserSessionManager) -> ConversationState | None:
    return manager.conversation_state(C)


async def test_a_first_call_launches_and_the_idle_clock_closes_at_the_deadline(
    clock: trio.testing.MockClock, state_dir: Path
) -> None:
    async with fake_manager(state_dir) as (manager, source):
        out = await call(manager)
        assert not out.is_error, out.output
        assert (len(source.launches), state(manager)) == (1, ConversationState.READY)
        ended = trio.current_time()

        assert await source.next_release() == Release(CloseReason.IDLE, ended + IDLE, C)
        out = await call(manager)  # waits while the browser is closing, then launches anew
        assert (await source.next_launch(2)).asked_at == ended + IDLE
        assert "was closed because it was idle for 10m" in out.output
        assert state(manager) is ConversationState.READY


async def test_the_idle_clock_does_not_run_during_a_call(
    clock: trio.testing.MockClock, state_dir: Path
) -> None:
    async with fake_manager(state_dir) as (manager, source):
        await call(manager, hold=lambda: trio.sleep_until(3 * IDLE))
        ended = trio.current_time()
        assert ended == 3 * IDLE
        assert await source.next_release() == Release(CloseReason.IDLE, ended + IDLE, C)


async def test_a_lifetime_reached_during_a_call_ends_the_browser_right_after_it(
    clock: trio.testing.MockClock, state_dir: Path
) -> None:
    async with fake_manager(state_dir) as (manager, source):
        await call(manager)  # launched at 0: its lifetime ends at LIFE
        await trio.sleep(IDLE / 2)
        out = await call(manager, hold=lambda: trio.sleep_until(LIFE + 100.0))
        assert not out.is_error, out.output  # the call that outlived it was not stopped
        assert await source.next_release() == Release(CloseReason.LIFETIME, LIFE + 100.0, C)


async def test_a_browser_past_its_lifetime_between_calls_ends_at_the_deadline(
    clock: trio.testing.MockClock, state_dir: Path
) -> None:
    async with fake_manager(state_dir, idle_timeout=LIFE) as (manager, source):
        await call(manager)
        await trio.sleep(LIFE - 10.0)
        await call(manager)  # the idle clock restarts; the lifetime does not
        assert await source.next_release() == Release(CloseReason.LIFETIME, LIFE, C)
        out = await call(manager)
        assert "reached its maximum lifetime of 1h" in out.output
        assert manager.metrics.counter("browser_tool_kills_total", reason="lifetime") == 1


async def test_a_call_at_the_idle_deadline_gets_a_running_browser_either_way(
    clock: trio.testing.MockClock, state_dir: Path
) -> None:
    async with fake_manager(state_dir) as (manager, source):
        await call(manager)
        deadline = trio.current_time() + IDLE
        await trio.sleep_until(deadline)  # the clock wakes at this very time too
        out = await call(manager)
        assert not out.is_error, out.output
        if source.releases:  # the clock went first: closed, then a fresh browser
            assert source.releases == [Release(CloseReason.IDLE, deadline, C)]
            assert (await source.next_launch(2)).asked_at == deadline
            assert "idle for 10m" in out.output
        else:  # the call went first: the browser is kept, its idle clock restarted
            assert len(source.launches) == 1
            assert await source.next_release() == Release(CloseReason.IDLE, deadline + IDLE, C)
        assert source.browsers[-1].alive or source.releases[-1].at == deadline + IDLE


async def test_a_delete_during_a_launch_stops_the_launch_and_the_call(
    clock: trio.testing.MockClock, state_dir: Path
) -> None:
    async with fake_manager(state_dir, instant=False) as (manager, source):
        outputs: list[ToolOutput] = []
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: _keep(outputs, call(manager)))
            launch = await source.next_launch()
            assert state(manager) is ConversationState.LAUNCHING
            report = await manager.kill_session(C)
        assert launch.cancelled
        assert launch.browser is None
        assert (report.existed, report.files_removed, report.browser_killed) == (True, True, False)
        assert "closed (delete)" in outputs[0].output
        assert state(manager) is None
        assert not launch.dirs.root.exists()
        assert source.releases == []


async def test_a_launch_that_fails_is_the_calls_error_and_the_next_call_tries_again(
    clock: trio.testing.MockClock, state_dir: Path
) -> None:
    async with fake_manager(state_dir, instant=False) as (manager, source):
        outputs: list[ToolOutput] = []
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: _keep(outputs, call(manager)))
            (await source.next_launch()).fail("Could not start the browser: no Chrome")
        assert outputs[0].is_error
        assert "no Chrome" in outputs[0].output
        assert state(manager) is ConversationState.NO_BROWSER
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: _keep(outputs, call(manager)))
            (await source.next_launch(2)).finish()
        assert not outputs[1].is_error, outputs[1].output
        assert state(manager) is ConversationState.READY


async def test_a_crash_during_a_call_stops_it_and_the_next_call_says_why(
    clock: trio.testing.MockClock, state_dir: Path
) -> None:
    async with fake_manager(state_dir) as (manager, source):
        await call(manager)  # launched by an earlier call: that is the usual case
        outputs: list[ToolOutput] = []
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: _keep(outputs, call(manager, hold=HANG)))
            await trio.sleep(5.0)
            assert state(manager) is ConversationState.IN_CALL
            source.browsers[0].crash()
        assert trio.current_time() == 5.0  # stopped at the crash, not at some timeout
        assert outputs[0].is_error
        assert outputs[0].output.startswith(BROWSER_CRASHED_DURING_CALL)
        assert state(manager) is ConversationState.NO_BROWSER
        out = await call(manager)
        assert len(source.launches) == 2
        assert "previous browser" in out.output
        assert "crashed (fake)" in out.output
        assert source.releases == []  # a crashed browser is not handed back: it is gone


async def test_a_crash_between_calls_is_said_by_the_next_call(
    clock: trio.testing.MockClock, state_dir: Path
) -> None:
    async with fake_manager(state_dir) as (manager, source):
        await call(manager)
        source.browsers[0].crash()
        assert state(manager) is ConversationState.NO_BROWSER
        out = await call(manager)
        assert "crashed (fake)" in out.output
        assert len(source.launches) == 2
        assert "crashed (fake)" not in (await call(manager)).output  # said once


async def test_a_reset_during_a_call_stops_it(
    clock: trio.testing.MockClock, state_dir: Path
) -> None:
    async with fake_manager(state_dir) as (manager, source):
        outputs: list[ToolOutput] = []
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: _keep(outputs, call(manager, hold=HANG)))
            await source.next_launch()
            await trio.sleep(1.0)
            await manager.reset_session(C)
        assert "closed (reset)" in outputs[0].output
        assert source.releases == [Release(CloseReason.RESET, 1.0, C)]
        assert state(manager) is ConversationState.NO_BROWSER
        assert "previous browser" not in (await call(manager)).output  # a reset is asked for


async def test_shutdown_during_a_launch_waits_the_call_grace_then_stops_it(
    clock: trio.testing.MockClock, state_dir: Path
) -> None:
    outputs: list[ToolOutput] = []
    async with (
        trio.open_nursery() as nursery,  # the call outlives the manager's block: shutdown ends it
        fake_manager(state_dir, instant=False, call_grace=7.0) as (manager, source),
    ):
        nursery.start_soon(lambda: _keep(outputs, call(manager)))
        launch = await source.next_launch()
        asked = trio.current_time()
    assert trio.current_time() == asked + 7.0
    assert launch.cancelled
    assert "closed (shutdown)" in outputs[0].output
    assert manager.conversation_state(C) is None


async def test_a_conversation_without_browser_or_calls_is_forgotten_after_max_lifetime(
    clock: trio.testing.MockClock, state_dir: Path
) -> None:
    async with fake_manager(state_dir) as (manager, source):
        await call(manager)
        closed_at = (await source.next_release()).at  # idle: the browser is gone
        await trio.sleep_until(closed_at + LIFE - 0.001)
        assert state(manager) is ConversationState.NO_BROWSER
        await trio.sleep(0.002)
        assert state(manager) is None


async def _keep(into: list[ToolOutput], output: Awaitable[ToolOutput]) -> None:
    into.append(await output)
