"""Shared-browser mode through a real `browser-tool serve`: the sessions listing and /metrics
show the shared Chrome, and `kill -9` of the service leaves nothing running, by the death link
or, with it off, by the next start-up's orphan sweep.

Charter: real subprocesses and real signals sent by pid; readiness from the `listening on`
line and answered calls, never from sleeps; the state_dir fixture fails a test that leaves a
process or a file behind.
"""

from __future__ import annotations

import signal
from functools import partial
from pathlib import Path

import pytest
import trio

from chrome_launcher import live_group_members
from tests.support.checks import wait_group_gone
from tests.support.http_calls import call, sessions
from tests.support.service import running_service

pytestmark = pytest.mark.chrome

CONTEXT = {"BROWSER_TOOL_ISOLATION": "context"}


@pytest.mark.parametrize("death_link", [True, False], ids=["death-link", "reaper"])
async def test_kill_9_of_the_service_leaves_no_shared_chrome(
    state_dir: Path, death_link: bool
) -> None:
    env = CONTEXT | {"BROWSER_TOOL_DEATH_LINK": "1" if death_link else "0"}
    async with running_service(state_dir, env=env) as service, service.client() as client:
        async with trio.open_nursery() as nursery:
            for name in ("a", "b"):
                nursery.start_soon(partial(call, client, name, "browser_eval", expression="1"))
        rows = await sessions(client)
        assert {row["pid"] for row in rows.values()} == {rows["a"]["pid"]}
        assert all(row["shared"] for row in rows.values())
        pid = rows["a"]["pid"]
        metrics = (await client.get("/metrics")).text
        assert "browser_tool_shared_browsers 1\n" in metrics
        assert 'browser_tool_shared_browser_launches_total{outcome="ok"} 1' in metrics
        assert await service.stop(signal.SIGKILL) == -signal.SIGKILL
    if death_link:
        assert await wait_group_gone(pid, within=5.0), f"shared Chrome {pid} outlived the service"
    else:
        assert live_group_members(pid), "without the death link the shared Chrome is an orphan"
    assert len(list((state_dir / "pids").iterdir())) == 1
    async with running_service(state_dir, env=CONTEXT) as service, service.client() as client:
        assert await wait_group_gone(pid, within=5.0)
        assert list((state_dir / "pids").iterdir()) == []
        assert list((state_dir / "sessions").iterdir()) == []
        metrics = (await client.get("/metrics")).text
        killed = 0 if death_link else 1
        assert f'browser_tool_reaper_total{{outcome="killed"}} {killed}' in metrics
        assert 'browser_tool_reaper_total{outcome="error"} 0' in metrics
