"""Session lifecycle against real Chromium: isolation between conversations, one launch per
conversation however many first calls race, kill_session during a hung call, crash recovery,
reset, shutdown, and a real-time guard that an idle session lives out its idle timeout."""

from __future__ import annotations

import os
import signal
import time
from functools import partial
from pathlib import Path

import pytest
import trio
import trio.testing

from browser_tool import (
    BrowserSessionManager,
    ConversationState,
    SessionClosedError,
    open_session_manager,
)
from chrome_launcher import live_group_members, read_records
from fixtures_site import FixtureServer
from tests.support.checks import FAKE_CHROME, make_settings, wait_group_gone
from tests.support.manager_calls import js, ok

pytestmark = pytest.mark.chrome


async def test_two_conversations_run_in_parallel_with_separate_state(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    async def visit(conversation: str, value: str) -> None:
        out = await manager.call_tool(
            conversation, "browser_navigate", {"url": site.url_for(f"/storage.html?v={value}")}
        )
        assert not out.is_error, out.output

    async with trio.open_nursery() as nursery:
        nursery.start_soon(visit, "alice", "A")
        nursery.start_soon(visit, "bob", "B")

    async def read(conversation: str) -> str:
        out = await manager.call_tool(
            conversation,
            "browser_eval",
            {"expression": "document.cookie + '|' + localStorage.getItem('fixture_key')"},
        )
        return out.output

    assert await read("alice") == '<javascript_result>"fixture_cookie=A|A"</javascript_result>'
    assert await read("bob") == '<javascript_result>"fixture_cookie=B|B"</javascript_result>'
    pids = {info.conversation_id: info.pid for info in manager.list_sessions()}
    assert set(pids) == {"alice", "bob"}
    assert pids["alice"] != pids["bob"]


async def test_concurrent_first_calls_start_one_chrome(
    manager: BrowserSessionManager, state_dir: Path
) -> None:
    results = []

    async def first_call() -> None:
        results.append(await manager.call_tool("c", "browser_eval", {"expression": "1"}))

    async with trio.open_nursery() as nursery:
        for _ in range(5):
            nursery.start_soon(first_call)
    assert [r.output for r in results] == ["<javascript_result>1</javascript_result>"] * 5
    assert manager.metrics.counter("browser_tool_launches_total", outcome="ok") == 1
    assert len(read_records(state_dir / "pids")) == 1
    assert len(manager.list_sessions()) == 1


async def test_get_or_create_races_launch_exactly_once(manager: BrowserSessionManager) -> None:
    found = []

    async def get() -> None:
        found.append(await manager.get_or_create("c"))

    async with trio.open_nursery() as nursery:
        for _ in range(4):
            nursery.start_soon(get)
    assert len({id(s) for s in found}) == 1
    assert manager.metrics.counter("browser_tool_launches_total", outcome="ok") == 1


async def test_kill_session_during_a_hung_navigate(
    manager: BrowserSessionManager, site: FixtureServer, state_dir: Path
) -> None:
    await ok(manager, "browser_eval", expression="1")
    [info] = manager.list_sessions()
    assert info.pid is not None
    outputs = []
    hang = site.hang_path()  # its own: another test's hung request must not look like ours

    async def hung() -> None:
        outputs.append(
            await manager.call_tool("conv-1", "browser_navigate", {"url": site.url_for(hang)})
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(hung)
        # The request reached the server.
        await trio.to_thread.run_sync(partial(site.wait_parked, path=hang))
        started = time.monotonic()
        report = await manager.kill_session("conv-1")
        elapsed = time.monotonic() - started
    assert elapsed < 2.0
    assert report.existed
    assert report.browser_killed
    assert report.survivors == 0
    assert report.files_removed
    assert live_group_members(info.pid) == []
    [output] = outputs
    assert output.is_error
    assert output.output.startswith("The browser session was closed (delete)")
    assert read_records(state_dir / "pids") == []
    assert list((state_dir / "sessions").iterdir()) == []
    # The call held its conversation's record, not its id: nothing it did while it was being
    # stopped (launching, writing a file) brought the conversation back.
    assert manager.conversation_state("conv-1") is None
    again = await manager.kill_session("conv-1")  # idempotent
    assert not again.existed


async def test_a_delete_during_a_launch_leaves_no_browser_behind(
    manager: BrowserSessionManager, state_dir: Path
) -> None:
    # A delete stops the launch in progress: its browser must not outlive the deleted
    # conversation untracked (no idle clock would ever find it), nor leave files behind.
    failures: list[BaseException] = []

    async def get() -> None:
        try:
            await manager.get_or_create("c")
        except SessionClosedError as exc:
            failures.append(exc)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(get)
        await trio.testing.wait_all_tasks_blocked()  # blocked inside the launch
        assert manager.conversation_state("c") is ConversationState.LAUNCHING
        assert [info.state for info in manager.list_sessions()] == ["starting"]
        report = await manager.kill_session("c")
    assert report.existed
    [failure] = failures
    assert "closed (delete)" in str(failure)
    assert manager.list_sessions() == []
    assert read_records(state_dir / "pids") == []
    assert list((state_dir / "sessions").iterdir()) == []
    assert not (await manager.kill_session("c")).existed


async def test_a_killed_chrome_is_replaced_and_the_result_says_so(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/index.html"))
    [info] = manager.list_sessions()
    assert info.pid is not None
    os.killpg(info.pid, signal.SIGKILL)
    assert await wait_group_gone(info.pid, within=5.0)
    out = await manager.call_tool("conv-1", "browser_eval", {"expression": "location.href"})
    assert not out.is_error, out.output
    assert out.output.startswith('<javascript_result>"about:blank"</javascript_result>')
    assert "previous browser of this conversation crashed" in out.output
    [new] = manager.list_sessions()
    assert new.pid != info.pid
    assert manager.metrics.counter("browser_tool_kills_total", reason="crash") == 1


async def test_renderer_crash_resets_the_page(
    state_dir: Path, site: FixtureServer, headless_shell: str
) -> None:
    settings = make_settings(state_dir, allowed_url_schemes=("chrome",))
    async with open_session_manager(settings) as manager:
        await ok(manager, "browser_navigate", url=site.url_for("/index.html"))
        crashed = await manager.call_tool(
            "conv-1", "browser_navigate", {"url": "chrome://crash", "timeout": "10s"}
        )
        assert crashed.is_error
        assert "crash" in crashed.output
        out = await manager.call_tool("conv-1", "browser_eval", {"expression": "1 + 1"})
        assert out.output.startswith("<javascript_result>2</javascript_result>"), out.output
        await ok(manager, "browser_navigate", url=site.url_for("/index.html"))
        assert await js(manager, "document.title") == "Fixture Home"


async def test_reset_closes_the_browser_and_clears_downloads(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    text = await ok(manager, "browser_navigate", url=site.url_for("/download/report.txt"))
    saved = Path(text.rsplit(" as ", 1)[1])
    assert saved.exists()
    [before] = manager.list_sessions()
    report = await manager.reset_session("conv-1")
    assert report.browser_killed
    assert not saved.exists()
    assert manager.list_sessions() == []
    out = await ok(manager, "browser_eval", expression="location.href")
    assert out == '<javascript_result>"about:blank"</javascript_result>'  # no note: asked for
    [after] = manager.list_sessions()
    assert after.pid != before.pid


async def test_shutdown_kills_every_session(state_dir: Path, headless_shell: str) -> None:
    async with open_session_manager(make_settings(state_dir)) as manager:
        for conversation in ("a", "b", "c"):
            await manager.call_tool(conversation, "browser_eval", {"expression": "1"})
        pids = [info.pid for info in manager.list_sessions()]
        assert len(pids) == 3
    for pid in pids:
        assert pid is not None
        assert live_group_members(pid) == []
    assert read_records(state_dir / "pids") == []
    assert list((state_dir / "sessions").iterdir()) == []
    assert list((state_dir / "instances").iterdir()) == []


async def test_an_idle_session_lives_out_its_idle_timeout_on_the_real_clock(
    state_dir: Path, headless_shell: str
) -> None:
    # The one real-time guard of the idle rule: a clock bug that ended idle sessions early
    # would show here. A tiny idle timeout instead of a long sleep; the signal is the browser's
    # own end, and what is checked is the rule (never before the timeout), not a duration.
    idle = 2.0
    async with open_session_manager(make_settings(state_dir, idle_timeout=idle)) as manager:
        await ok(manager, "browser_eval", expression="window.marker = 7")
        browser = await manager.get_or_create("conv-1")
        assert await js(manager, "window.marker") == 7  # alive and answering, same page
        idle_from = trio.current_time()  # the last call ended: the idle clock runs from here
        with trio.fail_after(idle + 30):
            await browser.wait_closed()
        assert trio.current_time() - idle_from >= idle
        await trio.testing.wait_all_tasks_blocked()  # the manager's own bookkeeping after it
        assert manager.list_sessions() == []
        assert manager.metrics.counter("browser_tool_kills_total", reason="idle") == 1


async def test_a_browser_that_will_not_start_is_a_clear_tool_error(state_dir: Path) -> None:
    settings = make_settings(state_dir, chrome_path=str(FAKE_CHROME / "exits_with_error.py"))
    async with open_session_manager(settings) as manager:
        out = await manager.call_tool("conv-1", "browser_eval", {"expression": "1"})
        assert out.is_error
        assert out.output.startswith("Could not start the browser")
        assert "libnss3" in out.output  # Chrome's own stderr explains why
        assert manager.list_sessions() == []
        assert manager.metrics.counter("browser_tool_launches_total", outcome="error") == 1
        assert read_records(state_dir / "pids") == []
        report = await manager.kill_session("not a valid id")  # never raises
        assert not report.existed
        assert report.errors
