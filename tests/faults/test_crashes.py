"""Crashes and freezes in the middle of a call: the renderer dies, the whole Chrome group is
SIGKILLed, or it is frozen with SIGSTOP. The call fails with the one message for what
happened, well before its own deadline when something died; nothing hangs; the next call
works (in the same browser after a renderer crash, in a fresh one after the browser went,
and it says so); and over HTTP no request ever gets a 500."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import pytest
import trio

from browser_tool import BrowserSessionManager, CdpConnectionError
from browser_tool.browser import BROWSER_CRASHED_DURING_CALL, PAGE_CRASHED_DURING_CALL
from tests.faults.pages import EXHAUST_MEMORY, JS_HEAP_MB, NEVER_RESOLVES
from tests.support.checks import wait_group_gone
from tests.support.http_calls import call as http_call
from tests.support.manager_calls import C, call, js
from tests.support.service import running_service

pytestmark = pytest.mark.chrome

CALL_TIMEOUT = 30.0  # the stuck call's own deadline; every failure here must come well before


async def stuck_call_then(manager: BrowserSessionManager, act: object) -> tuple[str, bool, float]:
    """Start an eval that never finishes, run `act()` once it is running, and return the
    call's output, whether it failed, and the seconds from the act to the answer."""
    result: dict[str, object] = {}
    session = await manager.get_or_create(C)
    listen = session.conn.listen("Runtime.consoleAPICalled", session_id="*")
    async with listen as console, trio.open_nursery() as nursery:

        async def stuck() -> None:
            out = await call(
                manager,
                "browser_eval",
                expression=f"console.log('running'); {NEVER_RESOLVES}",
                timeout=f"{int(CALL_TIMEOUT)}s",
            )
            result["out"] = out
            result["at"] = trio.current_time()

        nursery.start_soon(stuck)
        await console.receive()  # the expression runs
        acted = trio.current_time()
        await act()  # type: ignore[operator]
    out = result["out"]
    seconds = float(result["at"]) - acted  # type: ignore[arg-type]
    return out.output, out.is_error, seconds  # type: ignore[attr-defined]


async def test_a_renderer_crash_mid_call_fails_it_promptly_and_the_page_is_replaced(
    fault_manager: BrowserSessionManager,
) -> None:
    session = await fault_manager.get_or_create(C)
    pid = session.pid

    async def crash() -> None:
        # Chrome answers Page.crash only by crashing: the command fails with its session.
        with contextlib.suppress(CdpConnectionError):
            await session.page.session.send("Page.crash")

    output, failed, seconds = await stuck_call_then(fault_manager, crash)
    print(f"\nrenderer crash mid-call: the call answered {seconds * 1000:.0f} ms after the crash")
    assert failed
    assert output == PAGE_CRASHED_DURING_CALL
    assert seconds < CALL_TIMEOUT / 3
    assert await js(fault_manager, "1 + 1") == 2
    [info] = fault_manager.list_sessions()
    assert info.pid == pid  # the same browser


async def test_sigkill_of_the_group_mid_call_fails_it_and_the_next_call_says_fresh(
    fault_manager: BrowserSessionManager,
) -> None:
    session = await fault_manager.get_or_create(C)
    pid = session.pid

    async def kill() -> None:
        os.killpg(pid, signal.SIGKILL)

    output, failed, seconds = await stuck_call_then(fault_manager, kill)
    print(f"\nSIGKILL mid-call: the call answered {seconds * 1000:.0f} ms after the signal")
    assert failed
    assert output == BROWSER_CRASHED_DURING_CALL
    assert seconds < CALL_TIMEOUT / 3
    assert await wait_group_gone(pid, within=5.0)
    out = await call(fault_manager, "browser_eval", expression="'fresh'")
    assert out.output.startswith('<javascript_result>"fresh"</javascript_result>')
    assert "the previous browser of this conversation crashed" in out.output
    [info] = fault_manager.list_sessions()
    assert info.pid != pid


async def test_sigstop_fails_the_call_at_its_deadline_and_kill_still_ends_the_group(
    fault_manager: BrowserSessionManager,
) -> None:
    session = await fault_manager.get_or_create(C)
    pid = session.pid
    os.killpg(pid, signal.SIGSTOP)
    try:
        start = trio.current_time()
        out = await call(fault_manager, "browser_eval", expression="1", timeout="2s")
        waited = trio.current_time() - start
        assert out.is_error
        assert out.output.startswith("Timeout after 2s"), out.output
        assert waited >= 2.0
        with trio.fail_after(30):
            report = await fault_manager.kill_session(C)
        print(f"\nSIGSTOP: call failed after {waited:.2f} s; kill took {report.duration_s:.2f} s")
        assert report.browser_killed
        # A stopped Chrome answers no Browser.close; the ladder continues it after SIGTERM
        # (issue 22), so it may exit on TERM, or (killed as unresponsive by the probe that
        # follows a timed-out call) be SIGKILLed at once: either way the group is gone.
        assert await wait_group_gone(pid, within=5.0)
    finally:
        if not await wait_group_gone(pid, within=0.1):
            os.killpg(pid, signal.SIGKILL)
    out = await call(fault_manager, "browser_eval", expression="'fresh'")
    assert out.output == '<javascript_result>"fresh"</javascript_result>'


async def test_over_http_a_crash_and_the_calls_right_after_it_never_get_a_500(
    state_dir: Path, headless_shell: str
) -> None:
    env = {"BROWSER_TOOL_JS_HEAP_MB": str(JS_HEAP_MB)}
    async with running_service(state_dir, env=env) as service, service.client() as client:
        await http_call(client, "c1", "browser_eval", expression="1")
        statuses: list[int] = []

        async def post(expression: str) -> None:
            response = await client.post(
                "/v1/conversations/c1/tools/browser_eval",
                json={"expression": expression, "timeout": "60s"},
            )
            statuses.append(response.status_code)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(post, EXHAUST_MEMORY)
            for _ in range(5):  # queued behind the crash: they run while the page is replaced
                nursery.start_soon(post, "1")
        assert statuses == [200] * 6
        out = await http_call(client, "c1", "browser_eval", expression="2")
        assert out["output"] == "<javascript_result>2</javascript_result>"
        await client.delete("/v1/conversations/c1")
