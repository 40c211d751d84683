"""Idle reaping and max lifetime on trio's virtual clock, with real Chromium.

The clock jumps only after 1 s of real time in which every task is blocked, so a real launch
(about 0.1-0.7 s of I/O waits) is never mistaken for idleness, while a 30-minute idle wait takes
one second. Times are asserted exactly: the reaper wakes at the deadline itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from browser_tool import BrowserSessionManager, open_session_manager
from fixtures_site import FixtureServer
from tests.support.checks import make_settings

C = "conv-1"


@pytest.fixture
def clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=1.0)


async def _eval(manager: BrowserSessionManager, expression: str = "1") -> str:
    out = await manager.call_tool(C, "browser_eval", {"expression": expression})
    assert not out.is_error, out.output
    return out.output


async def test_idle_session_is_reaped_exactly_at_the_idle_timeout(
    clock: trio.testing.MockClock, state_dir: Path, headless_shell: str
) -> None:
    async with open_session_manager(make_settings(state_dir, idle_timeout=1800.0)) as manager:
        await _eval(manager)
        call_ended = trio.current_time()
        session = await manager.get_or_create(C)
        await session.wait_closed()
        assert session.close_requested_at == call_ended + 1800.0
        assert session.close_reason == "idle"
        assert manager.list_sessions() == []
        out = await _eval(manager, "2")
        assert out.startswith("<javascript_result>2</javascript_result>")
        assert "closed because it was idle for 30m (idle timeout)" in out
        assert manager.metrics.counter("browser_tool_kills_total", reason="idle") == 1


async def test_the_idle_clock_does_not_run_during_a_call(
    clock: trio.testing.MockClock, state_dir: Path, site: FixtureServer, headless_shell: str
) -> None:
    settings = make_settings(state_dir, idle_timeout=1800.0, max_timeout=7200.0)
    async with open_session_manager(settings) as manager:
        await _eval(manager)
        session = await manager.get_or_create(C)
        started = trio.current_time()
        out = await manager.call_tool(
            C, "browser_navigate", {"url": site.url_for("/hang"), "timeout": "1h"}
        )
        call_ended = trio.current_time()
        assert out.output.startswith("Timeout after 1h waiting for page load")
        assert call_ended - started == pytest.approx(3600.0, abs=1.0)
        assert session.close_requested_at is None  # an hour in a call, and still alive
        await session.wait_closed()
        assert session.close_requested_at == call_ended + 1800.0


async def test_max_lifetime_ends_a_busy_session_between_calls(
    clock: trio.testing.MockClock, state_dir: Path, headless_shell: str
) -> None:
    settings = make_settings(state_dir, idle_timeout=1800.0, max_lifetime=3600.0)
    async with open_session_manager(settings) as manager:
        await _eval(manager)
        session = await manager.get_or_create(C)
        for _ in range(3):
            await trio.sleep(1000.0)
            await _eval(manager)  # busy: never idle for long
        await session.wait_closed()
        assert session.close_reason == "lifetime"
        assert session.close_requested_at == session.started_at + 3600.0
        out = await _eval(manager, "3")
        assert "reached its maximum lifetime of 1h" in out
        assert manager.metrics.counter("browser_tool_kills_total", reason="lifetime") == 1


async def test_lifetime_reached_during_a_call_ends_the_session_after_it(
    clock: trio.testing.MockClock, state_dir: Path, site: FixtureServer, headless_shell: str
) -> None:
    settings = make_settings(state_dir, max_lifetime=3600.0, max_timeout=7200.0)
    async with open_session_manager(settings) as manager:
        await _eval(manager)
        session = await manager.get_or_create(C)
        out = await manager.call_tool(
            C, "browser_navigate", {"url": site.url_for("/hang"), "timeout": "2h"}
        )
        call_ended = trio.current_time()
        assert out.output.startswith("Timeout after 2h")  # the call was not cut short
        await session.wait_closed()
        assert session.close_reason == "lifetime"
        assert session.close_requested_at == call_ended


async def test_a_conversation_without_browser_or_calls_is_forgotten_after_max_lifetime(
    clock: trio.testing.MockClock, state_dir: Path, headless_shell: str
) -> None:
    settings = make_settings(state_dir, idle_timeout=1800.0, max_lifetime=3600.0)
    async with open_session_manager(settings) as manager:
        shot = await manager.call_tool(C, "browser_take_screenshot", {})
        saved = Path(shot.images[0].path)
        session = await manager.get_or_create(C)
        await session.wait_closed()  # idle-reaped; the conversation's files stay
        reaped_at = trio.current_time()
        assert saved.exists()
        await trio.sleep_until(reaped_at + 3600.0 - 1.0)
        assert saved.exists()
        await trio.sleep_until(reaped_at + 3600.0 + 1.0)
        assert not saved.exists()
        assert list((state_dir / "sessions").iterdir()) == []
