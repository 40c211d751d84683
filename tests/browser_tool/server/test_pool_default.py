"""The pool each entry point runs with, and how the pool refills.

Charter: the defaults are a pure function of the command and the environment; the service's
default is checked on a real `browser-tool serve` (the pool's own log line is the readiness
signal, its metrics say where a browser came from); the refill runs on fake Chromes that start
and never announce an endpoint, so a launch stays under way until the test ends, and the pool's
own statistics say how many were under way at once. The state_dir fixture fails a test that
leaves a process or a file behind.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
import trio
import trio.testing

from browser_tool import PoolSource, Settings, open_session_manager
from browser_tool.cli._main import SERVICE_POOL_SIZE, default_pool_size
from chrome_launcher import cmdline
from tests.support.checks import FAKE_CHROME, live_processes_mentioning, make_settings
from tests.support.http_calls import call
from tests.support.service import running_service
from tests.support.sources import pooling


@pytest.mark.parametrize(
    ("command", "environ", "expected"),
    [
        ("serve", {}, SERVICE_POOL_SIZE),
        ("mcp", {}, SERVICE_POOL_SIZE),
        ("serve", {"BROWSER_TOOL_POOL_SIZE": ""}, SERVICE_POOL_SIZE),  # empty is unset
        ("serve", {"BROWSER_TOOL_POOL_SIZE": "0"}, None),  # the environment's own value
        ("mcp", {"BROWSER_TOOL_POOL_SIZE": "3"}, None),
        ("call", {}, None),  # the Settings' default: 0
        ("tools", {}, None),
    ],
)
def test_serve_and_mcp_keep_one_spare_chrome_unless_told_otherwise(
    command: str, environ: dict[str, str], expected: int | None
) -> None:
    assert SERVICE_POOL_SIZE == 1
    assert default_pool_size(command, environ) == expected


def test_stdio_mcp_on_a_profile_keeps_no_spare() -> None:
    """Its one conversation runs on the profile's dir: a spare could never serve it."""
    assert default_pool_size("mcp", {}, stdio_profile=True) is None


def test_the_in_process_api_keeps_no_pool_by_default() -> None:
    assert Settings().pool_size == 0


@pytest.mark.chrome
async def test_a_service_s_first_call_takes_the_spare_chrome(state_dir: Path) -> None:
    async with (
        running_service(state_dir, env={"BROWSER_TOOL_POOL_SIZE": ""}) as service,
        service.client() as client,
    ):
        await service.wait_for_log("pool: a browser is ready")
        out = await call(client, "a", "browser_eval", expression="1+1")
        assert out["output"] == "<javascript_result>2</javascript_result>"
        metrics = (await client.get("/metrics")).text
        assert 'browser_tool_handovers_total{source="pool"} 1' in metrics


async def test_the_pool_launches_every_missing_browser_at_once(state_dir: Path) -> None:
    pools: list[PoolSource] = []
    settings = make_settings(
        state_dir,
        pool_size=3,
        chrome_path=str(FAKE_CHROME / "never_announces.py"),
        launch_timeout=600.0,
    )
    async with open_session_manager(settings, source_factory=pooling(pools)) as manager:
        [pool] = pools
        await trio.testing.wait_all_tasks_blocked()
        stats = pool.statistics()
        assert (stats.size, stats.ready, stats.launching, stats.most_launching) == (3, 0, 3, 3)
        groups = set()
        for pid in live_processes_mentioning(str(state_dir)):
            if any("never_announces" in arg for arg in cmdline(pid) or []):
                with contextlib.suppress(ProcessLookupError):
                    groups.add(os.getpgid(pid))
        # Three Chromes starting at once, each in its own group. Counted by group, since the
        # fake's `#!/usr/bin/env python3` may pass through a wrapper (pyenv's shims are bash
        # processes with the same argv) before it runs.
        assert len(groups) == 3
        assert manager.metrics.counter("browser_tool_launches_total", outcome="ok") == 0


@pytest.mark.chrome
async def test_a_first_call_waits_for_the_spare_being_launched(
    state_dir: Path, headless_shell: str
) -> None:
    """A call that comes while the pool's first Chrome is starting takes that one when it is
    up, rather than starting a second Chrome beside it."""
    pools: list[PoolSource] = []
    settings = make_settings(state_dir, pool_size=1)
    async with open_session_manager(settings, source_factory=pooling(pools)) as manager:
        [pool] = pools
        await trio.testing.wait_all_tasks_blocked()
        assert pool.statistics().launching == 1
        out = await manager.call_tool("a", "browser_eval", {"expression": "1+1"})
        assert out.output == "<javascript_result>2</javascript_result>"
        counted = manager.metrics.counter
        assert counted("browser_tool_handovers_total", source="pool") == 1
        assert counted("browser_tool_launches_total", outcome="ok") == 1
