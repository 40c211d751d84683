"""The watchdog between calls against real Chromium (issue 22): a stopped browser is replaced
after the call that found it, a page that draws without end is paused while its conversation
idles (its CPU, read from /proc, drops to about nothing) and resumed by its next call, a quiet
page is never touched, and a browser that grows past the memory limit is closed.

The watchdog samples every 100 ms over a 1 s window here, so each case takes seconds; tests
wait on its passes (`Watchdog.wait_sampled`) or on the browser's end, never on a clock."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
import trio

from browser_tool import BrowserSessionManager, CloseReason, open_session_manager
from chrome_launcher import group_usage
from fixtures_site import FixtureServer
from tests.support.checks import make_settings, wait_group_gone
from tests.support.manager_calls import C, call, js, ok

pytestmark = pytest.mark.chrome

FAST = {"watchdog_interval": 0.1, "idle_cpu_window": 1.0}


async def passes(manager: BrowserSessionManager, count: int) -> None:
    """Wait for `count` more passes of the watchdog."""
    await manager.watchdog.wait_sampled(manager.watchdog.statistics().samples + count)


async def cpu_rate(manager: BrowserSessionManager, pgid: int, over: int) -> float:
    """Cores the group used over the next `over` watchdog passes, from /proc."""
    before, t0 = group_usage([pgid])[pgid].cpu_seconds, time.monotonic()
    await passes(manager, over)
    return (group_usage([pgid])[pgid].cpu_seconds - before) / (time.monotonic() - t0)


async def test_a_stopped_browser_is_replaced_after_the_call_that_found_it(
    state_dir: Path, headless_shell: str, site: FixtureServer
) -> None:
    settings = make_settings(state_dir, idle_cpu_limit=0.0)
    async with open_session_manager(settings) as manager:
        await ok(manager, "browser_navigate", url=site.url_for("/index.html"))
        browser = await manager.get_or_create(C)
        os.kill(browser.pid, signal.SIGSTOP)
        try:
            started = trio.current_time()
            out = await call(manager, "browser_eval", expression="1", timeout="2s")
            took = trio.current_time() - started
            assert out.is_error
            assert out.output.startswith("Timeout after 2s evaluating the expression; Chrome did")
            assert "may have stopped answering" in out.output
            assert took < 2 + 0.5 + 1.0  # the timeout, the terminate's grace, slack
            with trio.fail_after(10):
                await browser.wait_closed()  # the probe found it silent and killed it
        finally:
            if browser.report is None:  # not killed: let it go on, the manager kills it
                os.kill(browser.pid, signal.SIGCONT)
        assert browser.close_reason is CloseReason.UNRESPONSIVE
        assert browser.report is not None
        assert browser.report.survivors == 0
        assert "browser_close" not in browser.report.steps  # no polite step for a silent one
        assert await wait_group_gone(browser.pid, within=5.0)
        out = await call(manager, "browser_eval", expression="6 * 7")
        assert not out.is_error, out.output
        assert out.output.startswith("<javascript_result>42</javascript_result>")
        assert "previous browser of this conversation stopped answering" in out.output
        assert "state T" in out.output
        assert manager.metrics.counter("browser_tool_kills_total", reason="unresponsive") == 1
        assert manager.metrics.counter("browser_tool_probes_total", outcome="silent") == 1


async def test_a_runaway_script_is_not_a_frozen_browser(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/index.html"))
    pid = manager.list_sessions()[0].pid
    out = await call(manager, "browser_eval", expression="while (true) {}", timeout="1s")
    assert out.output == (
        "Timeout after 1s evaluating the expression; "
        "Chrome confirmed that the script was terminated."
    )
    with trio.fail_after(10):  # the probe runs after the call, in the background: its count
        while manager.metrics.counter("browser_tool_probes_total", outcome="answered") < 1:  # noqa: ASYNC110
            await trio.sleep(0.01)
    assert await js(manager, "6 * 7") == 42  # the same page: no note, no new browser
    assert manager.list_sessions()[0].pid == pid
    assert manager.metrics.counter("browser_tool_kills_total", reason="unresponsive") == 0


async def test_a_busy_page_is_paused_between_calls_and_resumed_by_the_next(
    state_dir: Path, headless_shell: str, site: FixtureServer
) -> None:
    settings = make_settings(state_dir, idle_cpu_limit=0.2, **FAST)
    async with open_session_manager(settings) as manager:
        await ok(manager, "browser_navigate", url=site.url_for("/busy.html"))
        pgid = (await manager.get_or_create(C)).pid
        busy = await cpu_rate(manager, pgid, 3)
        with trio.fail_after(20):
            while manager.metrics.counter("browser_tool_pages_paused_total") < 1:
                await passes(manager, 1)
        paused = await cpu_rate(manager, pgid, 10)
        assert paused < 0.05 < busy, (busy, paused)
        assert manager.metrics.counter("browser_tool_pages_paused_total") == 1  # once
        before = await call(manager, "browser_eval", expression="document.visibilityState")
        assert before.output.startswith('<javascript_result>"visible"</javascript_result>')
        assert "the page was paused between calls because it used" in before.output
        assert "BROWSER_TOOL_IDLE_CPU_LIMIT" in before.output
        # It draws again: a frame comes (a hidden page would never run this callback).
        drawn = "new Promise(r => requestAnimationFrame(() => r(window.frames_drawn)))"
        assert isinstance(await js(manager, drawn), int)
        after = await call(manager, "browser_eval", expression="1")
        assert "paused" not in after.output  # said once


async def test_a_quiet_page_is_never_paused(
    state_dir: Path, headless_shell: str, site: FixtureServer
) -> None:
    settings = make_settings(state_dir, idle_cpu_limit=0.2, **FAST)
    async with open_session_manager(settings) as manager:
        await ok(manager, "browser_navigate", url=site.url_for("/index.html"))
        await passes(manager, 25)  # more than two windows of samples between calls
        assert manager.metrics.counter("browser_tool_pages_paused_total") == 0
        out = await call(manager, "browser_eval", expression="document.visibilityState")
        assert out.output == '<javascript_result>"visible"</javascript_result>'


async def test_a_browser_over_the_memory_limit_is_closed_between_calls(
    state_dir: Path, headless_shell: str, site: FixtureServer
) -> None:
    settings = make_settings(state_dir, idle_cpu_limit=0.0, max_browser_memory=400, **FAST)
    async with open_session_manager(settings) as manager:
        await ok(manager, "browser_navigate", url=site.url_for("/busy.html?grow=1"))
        browser = await manager.get_or_create(C)
        with trio.fail_after(30):
            await browser.wait_closed()
        assert browser.close_reason is CloseReason.MEMORY
        out = await call(manager, "browser_eval", expression="window.mib_held")
        assert out.output.startswith("<javascript_result>undefined</javascript_result>")  # new page
        assert "MiB of memory between calls, over the limit of 400 MiB" in out.output
        assert manager.metrics.counter("browser_tool_kills_total", reason="memory") == 1


async def test_in_shared_browser_mode_only_the_busy_context_is_paused(
    state_dir: Path, headless_shell: str, site: FixtureServer
) -> None:
    settings = make_settings(state_dir, isolation="context", idle_cpu_limit=0.2, **FAST)
    async with open_session_manager(settings) as manager:
        busy = await manager.call_tool(
            "busy", "browser_navigate", {"url": site.url_for("/busy.html")}
        )
        assert not busy.is_error, busy.output
        await ok(manager, "browser_navigate", url=site.url_for("/index.html"))  # conv-1: quiet
        with trio.fail_after(20):
            while manager.metrics.counter("browser_tool_pages_paused_total") < 1:
                await passes(manager, 1)
        await passes(manager, 15)  # more than a window for the quiet one, paused or not
        assert manager.metrics.counter("browser_tool_pages_paused_total") == 1
        quiet = await call(manager, "browser_eval", expression="document.visibilityState")
        assert quiet.output == '<javascript_result>"visible"</javascript_result>'  # no note
        drawn = "new Promise(r => requestAnimationFrame(() => r(window.frames_drawn)))"
        out = await manager.call_tool("busy", "browser_eval", {"expression": drawn})
        assert not out.is_error, out.output
        assert "the page was paused between calls because it used" in out.output


async def test_a_busy_page_a_person_holds_is_never_paused(
    state_dir: Path, headless_shell: str, site: FixtureServer
) -> None:
    """While a conversation's browser is handed to a person (issue 21) it stays READY with its
    turn free; the guard must still leave the person's page alone."""
    settings = make_settings(state_dir, idle_cpu_limit=0.2, **FAST)
    async with open_session_manager(settings) as manager:
        await ok(manager, "browser_navigate", url=site.url_for("/busy.html"))
        manager.handoffs.serve_at("http://127.0.0.1:9")  # no page is opened here
        await manager.hand_over(C, reason="Solve the puzzle", ttl=600)
        await passes(manager, 25)  # more than two windows of samples
        assert manager.metrics.counter("browser_tool_pages_paused_total") == 0
        manager.handoffs.end_all("the test is over")
        with trio.fail_after(20):  # handed back, the busy page is the guard's again
            while manager.metrics.counter("browser_tool_pages_paused_total") < 1:
                await passes(manager, 1)
