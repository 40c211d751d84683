"""The pre-warmed pool (`BROWSER_TOOL_POOL_SIZE`) on real Chromium: a pooled Chrome is handed to
a new conversation's first call and replaced in the background; it is never given to a second
conversation, never handed out dead, listed and counted while it waits, killed at shutdown,
killed with the service (death link), and found by the orphan reaper when the death link is off.

Readiness is the pool's own signal (`PoolSource.wait_filled`) or the helper's JSON line;
deaths are confirmed through /proc (`wait_group_gone`, real time)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from browser_tool import BrowserSessionManager, PoolSource, open_session_manager
from browser_tool.server._metrics_text import render_metrics
from chrome_launcher import live_group_members, read_records
from fixtures_site import FixtureServer
from orphan_reaper import reap_orphans
from tests.support.checks import leftover_files, make_settings, wait_group_gone
from tests.support.plant_orphans import killed_after
from tests.support.pool_service import started_pool
from tests.support.sources import pooling

pytestmark = pytest.mark.chrome


def pooled_pids(manager: BrowserSessionManager) -> list[int]:
    return [info.pid for info in manager.list_sessions() if info.state == "pooled" and info.pid]


def pid_of(manager: BrowserSessionManager, conversation_id: str) -> int:
    [pid] = [i.pid for i in manager.list_sessions() if i.conversation_id == conversation_id]
    assert pid is not None
    return pid


async def test_a_pooled_chrome_is_handed_out_then_replaced_and_never_reused(
    state_dir: Path, headless_shell: str, site: FixtureServer
) -> None:
    pools: list[PoolSource] = []
    settings = make_settings(state_dir).with_changes(pool_size=1)
    async with open_session_manager(settings, source_factory=pooling(pools)) as manager:
        [pool] = pools
        await pool.wait_filled()
        [first] = pooled_pids(manager)
        counted = manager.metrics.counter
        assert counted("browser_tool_launches_total", outcome="ok") == 1  # the pool's launch
        metrics = render_metrics(manager)
        assert 'browser_tool_sessions{state="pooled"} 1' in metrics
        [slot] = [i.conversation_id for i in manager.list_sessions()]
        assert slot.startswith("pool-")

        out = await manager.call_tool("a", "browser_navigate", {"url": site.url_for("/index.html")})
        assert not out.is_error, out.output
        assert pid_of(manager, "a") == first  # the pooled one, now the conversation's
        assert "previous browser" not in out.output

        # A hand-over is no launch: it has its own counter.
        assert counted("browser_tool_handovers_total", source="pool") == 1
        await pool.wait_filled()  # refilled in the background
        assert counted("browser_tool_launches_total", outcome="ok") == 2
        [second] = pooled_pids(manager)
        assert second != first
        await manager.call_tool("a", "browser_eval", {"expression": "1"})
        assert pid_of(manager, "a") == first  # a conversation keeps its browser

        report = await manager.kill_session("a")
        assert (report.pid, report.survivors) == (first, 0)
        assert not live_group_members(first)
        out = await manager.call_tool("b", "browser_eval", {"expression": "document.title"})
        assert not out.is_error, out.output
        assert pid_of(manager, "b") == second
        assert first not in [i.pid for i in manager.list_sessions()]  # never given again
        # The slot of a's browser went with it; b's own dir is b's.
        names = sorted(p.name for p in (state_dir / "sessions").iterdir())
        assert len([n for n in names if n.startswith("pool-")]) == len(pooled_pids(manager)) + 1


async def test_a_pooled_chrome_that_died_is_not_handed_out(
    state_dir: Path, headless_shell: str
) -> None:
    pools: list[PoolSource] = []
    settings = make_settings(state_dir).with_changes(pool_size=1)
    async with open_session_manager(settings, source_factory=pooling(pools)) as manager:
        await pools[0].wait_filled()
        [dead] = pooled_pids(manager)
        os.killpg(dead, signal.SIGKILL)
        assert await wait_group_gone(dead, within=5.0)
        out = await manager.call_tool("c", "browser_eval", {"expression": "1 + 1"})
        assert not out.is_error, out.output
        assert out.output.startswith("<javascript_result>2</javascript_result>")
        assert pid_of(manager, "c") != dead
        assert manager.metrics.counter("browser_tool_kills_total", reason="crash") == 0


async def test_shutdown_kills_the_pool(state_dir: Path, headless_shell: str) -> None:
    pools: list[PoolSource] = []
    settings = make_settings(state_dir).with_changes(pool_size=2)
    async with open_session_manager(settings, source_factory=pooling(pools)) as manager:
        await pools[0].wait_filled()
        pids = pooled_pids(manager)
        assert len(pids) == 2
    for pid in pids:
        assert not live_group_members(pid)
    assert read_records(state_dir / "pids") == []
    assert leftover_files(state_dir) == []


async def test_kill_9_of_the_service_takes_its_pool_along(
    state_dir: Path, headless_shell: str
) -> None:
    pids = await started_pool(state_dir, 2, death_link=True)
    async with killed_after(pids):
        for pid in pids:
            assert await wait_group_gone(pid, within=5.0), f"pooled Chrome {pid} outlived kill -9"
        report = await reap_orphans(state_dir)  # what the next start-up does: tidy the files
    assert report.exit_code == 0
    assert leftover_files(state_dir) == []


async def test_the_orphan_reaper_kills_a_dead_service_s_pool(
    state_dir: Path, headless_shell: str
) -> None:
    pids = await started_pool(state_dir, 2, death_link=False)
    async with killed_after(pids):
        assert all(live_group_members(pid) for pid in pids)  # orphans: nothing killed them
        report = await reap_orphans(state_dir)
        assert sorted(k.pid for k in report.killed) == sorted(pids)
        for pid in pids:
            assert await wait_group_gone(pid, within=5.0)
    assert read_records(state_dir / "pids") == []
    assert not [p for p in (state_dir / "sessions").iterdir()]  # the pool's slots too
