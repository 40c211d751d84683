"""Issue 22 in shared-browser mode (BROWSER_TOOL_ISOLATION=context), against real Chromium: a
shared Chrome that stops answering (SIGSTOP of its browser process) is found by the probe
after a call timed out, killed, and every conversation on it gets a fresh context in a new
shared Chrome, with a note.

Charter: readiness from the kernel (the stopped group is gone) and from the Chrome's own end;
every Chrome killed by pid; one stopped by the test is continued in a `finally` unless the
service killed it; the state_dir fixture fails a test that leaves a process or a file.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import trio

from browser_tool import CloseReason, open_session_manager
from browser_tool.browser import ContextSession
from fixtures_site import FixtureServer
from tests.support.checks import make_settings, wait_group_gone

pytestmark = pytest.mark.chrome


async def test_a_stopped_shared_chrome_is_replaced_for_every_conversation_on_it(
    state_dir: Path, headless_shell: str, site: FixtureServer
) -> None:
    settings = make_settings(state_dir, isolation="context", idle_cpu_limit=0.0)
    async with open_session_manager(settings) as manager:
        for name in ("alice", "bob"):
            out = await manager.call_tool(
                name, "browser_navigate", {"url": site.url_for(f"/index.html?v={name}")}
            )
            assert not out.is_error, out.output
        alice = await manager.get_or_create("alice")
        bob = await manager.get_or_create("bob")
        assert alice.pid == bob.pid  # one shared Chrome
        assert isinstance(alice, ContextSession)
        shared = alice.shared
        pid = shared.pid
        os.kill(pid, signal.SIGSTOP)
        try:
            started = trio.current_time()
            out = await manager.call_tool(
                "alice", "browser_eval", {"expression": "1", "timeout": "2s"}
            )
            took = trio.current_time() - started
            assert out.is_error
            assert out.output.startswith("Timeout after 2s"), out.output
            assert took < 2 + 0.5 + 1.0  # the timeout, the terminate's grace, slack
            with trio.fail_after(10):
                await shared.wait_closed()  # the probe found the shared Chrome silent
        finally:
            if shared.report is None:  # not killed: let it go on, the manager kills it
                os.kill(pid, signal.SIGCONT)
        assert shared.close_reason is CloseReason.UNRESPONSIVE
        assert shared.report is not None
        assert shared.report.survivors == 0
        assert await wait_group_gone(pid, within=5.0)

        new_pids: set[int] = set()
        for name in ("alice", "bob"):
            out = await manager.call_tool(name, "browser_eval", {"expression": "6 * 7"})
            assert not out.is_error, out.output
            assert out.output.startswith("<javascript_result>42</javascript_result>"), out.output
            assert f"ran in a shared Chrome (pid {pid}) that stopped answering" in out.output
            assert "state T" in out.output
            assert "a fresh browser was started" in out.output
            new_pids.add((await manager.get_or_create(name)).pid)
        assert len(new_pids) == 1  # one new shared Chrome for both
        assert pid not in new_pids
        assert manager.metrics.counter("browser_tool_kills_total", reason="unresponsive") == 1
        assert manager.metrics.counter("browser_tool_kills_total", reason="crash") == 0


async def test_the_shared_chrome_is_judged_by_its_own_connection_when_not_stopped(
    state_dir: Path, headless_shell: str
) -> None:
    """A wedged Chrome need not be in state T: without it, the probe on the shared Chrome's
    own connection decides (a stopped Chrome stands in for a wedged one here)."""
    settings = make_settings(state_dir, isolation="context", idle_cpu_limit=0.0)
    async with open_session_manager(settings) as manager:
        context = await manager.get_or_create("alice")
        assert isinstance(context, ContextSession)
        assert not await context.shared_silent(1.0, None)  # it answers
        pid = context.shared.pid
        os.kill(pid, signal.SIGSTOP)
        try:
            assert await context.shared_silent(0.5, None)  # no state given: the probe decides
        finally:
            os.kill(pid, signal.SIGCONT)
        assert not await context.shared_silent(5.0, None)  # continued, it answers again
        assert context.alive


async def test_a_runaway_script_in_a_context_kills_nothing(
    state_dir: Path, headless_shell: str, site: FixtureServer
) -> None:
    settings = make_settings(state_dir, isolation="context", idle_cpu_limit=0.0)
    async with open_session_manager(settings) as manager:
        for name in ("alice", "bob"):
            out = await manager.call_tool(name, "browser_navigate", {"url": site.url_for("/")})
            assert not out.is_error, out.output
        bob = await manager.get_or_create("bob")
        out = await manager.call_tool(
            "alice", "browser_eval", {"expression": "while (true) {}", "timeout": "1s"}
        )
        assert out.output.startswith("Timeout after 1s"), out.output
        with trio.fail_after(10):  # the probe runs after the call, in the background
            while manager.metrics.counter("browser_tool_probes_total", outcome="answered") < 1:  # noqa: ASYNC110
                await trio.sleep(0.01)
        for name in ("alice", "bob"):
            out = await manager.call_tool(name, "browser_eval", {"expression": "6 * 7"})
            assert out.output == "<javascript_result>42</javascript_result>", out.output
        assert await manager.get_or_create("bob") is bob
        assert bob.alive
        assert manager.metrics.counter("browser_tool_kills_total", reason="unresponsive") == 0
