"""Idle reaping and max lifetime on trio's virtual clock, with real Chromium.

The clock jumps only after 1 s of real time in which every task is blocked, so a real launch
(about 0.1-0.7 s of I/O waits) is never mistaken for idleness, while a 30-minute idle wait takes
one second. Times are asserted exactly: the clock wakes at the deadline itself. A recording
browser source (tests/support/sources.py) says when and why each browser was handed back.

Only what needs a real Chrome is here (a real browser reaped, real files forgotten, a real
launch cut short); the state machine's transitions and races are tested without Chrome in
test_conversation_fake.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import trio
import trio.testing

from browser_tool import BrowserSessionManager, open_session_manager
from tests.support.checks import FAKE_CHROME, make_settings
from tests.support.sources import RecordingSource, recording

pytestmark = pytest.mark.chrome

C = "conv-1"


@pytest.fixture
def clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=1.0)


@asynccontextmanager
async def recorded_manager(
    state_dir: Path, **changes: object
) -> AsyncIterator[tuple[BrowserSessionManager, RecordingSource]]:
    sources: list[RecordingSource] = []
    settings = make_settings(state_dir, **changes)
    async with open_session_manager(settings, source_factory=recording(sources)) as manager:
        yield manager, sources[0]


async def _eval(manager: BrowserSessionManager, expression: str = "1") -> str:
    out = await manager.call_tool(C, "browser_eval", {"expression": expression})
    assert not out.is_error, out.output
    return out.output


async def test_idle_session_is_reaped_exactly_at_the_idle_timeout(
    clock: trio.testing.MockClock, state_dir: Path, headless_shell: str
) -> None:
    async with recorded_manager(state_dir, idle_timeout=1800.0) as (manager, source):
        await _eval(manager)
        call_ended = trio.current_time()
        released = await source.wait_released()
        assert (released.reason, released.at) == ("idle", call_ended + 1800.0)
        await released.done.wait()
        assert manager.list_sessions() == []
        out = await _eval(manager, "2")
        assert out.startswith("<javascript_result>2</javascript_result>")
        assert "closed because it was idle for 30m (idle timeout)" in out
        assert manager.metrics.counter("browser_tool_kills_total", reason="idle") == 1


async def test_a_conversation_without_browser_or_calls_is_forgotten_after_max_lifetime(
    clock: trio.testing.MockClock, state_dir: Path, headless_shell: str
) -> None:
    changes = {"idle_timeout": 1800.0, "max_lifetime": 3600.0}
    async with recorded_manager(state_dir, **changes) as (manager, source):
        shot = await manager.call_tool(C, "browser_take_screenshot", {})
        saved = Path(shot.images[0].path)
        released = await source.wait_released()  # idle-reaped; the conversation's files stay
        assert released.reason == "idle"
        await released.done.wait()
        reaped_at = trio.current_time()
        assert saved.exists()
        await trio.sleep_until(reaped_at + 3600.0 - 1.0)
        assert saved.exists()
        await trio.sleep_until(reaped_at + 3600.0 + 1.0)
        assert not saved.exists()
        assert manager.conversation_state(C) is None
        assert list((state_dir / "sessions").iterdir()) == []


async def test_a_call_that_begins_at_the_idle_deadline_is_never_followed_by_an_idle_kill(
    clock: trio.testing.MockClock, state_dir: Path, headless_shell: str
) -> None:
    # The clock's idle decision and a call beginning at the same virtual instant run in an
    # order trio leaves open (it shuffles each batch of runnable tasks). Either order is fine:
    # the clock first (the browser is handed back at the deadline; the call says so and gets a
    # fresh one) or the call first (the browser lives on). What must never happen is the bug
    # this pins: the decision acted on after the call began, killing the browser "because it
    # was idle" right after a call. Rounds go on until both orders were seen, so the test
    # proves the race ran both ways instead of hoping it did.
    seen: set[str] = set()
    async with recorded_manager(state_dir, idle_timeout=1800.0) as (manager, source):
        await _eval(manager)
        for _ in range(40):  # both come within a few rounds; not in 40: the race did not run
            deadline = trio.current_time() + 1800.0
            await trio.sleep_until(deadline)
            before = len(source.releases)
            out = await _eval(manager)
            ended = [(r.reason, r.at) for r in source.releases[before:]]
            if ended:  # the clock first
                assert ended == [("idle", deadline)]
                assert "closed because it was idle" in out
                seen.add("clock first")
            else:
                assert "closed because it was idle" not in out
                seen.add("call first")
            kills = len(source.releases)
            await trio.testing.wait_all_tasks_blocked()
            assert len(source.releases) == kills, f"killed after a call: {source.releases}"
            assert [info.conversation_id for info in manager.list_sessions()] == [C], out
            if len(seen) == 2:
                break
        assert seen == {"clock first", "call first"}


async def test_a_tool_timeout_bounds_the_launch_too(
    clock: trio.testing.MockClock, state_dir: Path
) -> None:
    # A Chrome that never announces its endpoint: the launch would wait launch_timeout (20s);
    # the call's own timeout (1s) ends it, the half-started browser is killed, and the result
    # says so. The autouse fixture checks that no process or file is left.
    settings = make_settings(state_dir, chrome_path=str(FAKE_CHROME / "never_announces.py"))
    async with open_session_manager(settings) as manager:
        started = trio.current_time()
        out = await manager.call_tool(C, "browser_eval", {"expression": "1", "timeout": "1s"})
        assert trio.current_time() - started == pytest.approx(1.0, abs=0.01)
        assert out.is_error
        assert out.output.startswith("Timeout after 1s: the browser did not start"), out.output
        assert manager.list_sessions() == []
