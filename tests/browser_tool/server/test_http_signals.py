"""How `browser-tool serve` ends: SIGTERM (once and twice) and SIGKILL, with live Chromium.

Charter: real subprocesses and real signals sent by pid; readiness from the `listening on`
line, the service's own log line for "first signal handled", and the fixture site's parked
request count, never from sleeps. Grace periods are real time here (the service is another
process), so the assertions on elapsed time are bounds with a wide margin. After a SIGKILL the
Chromes must die by themselves (death link); the test then plays the reaper on what is left.
"""

from __future__ import annotations

import signal
import time
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from chrome_launcher import live_group_members
from fixtures_site import running_fixtures
from tests.support.checks import wait_group_gone
from tests.support.http_calls import call, sessions
from tests.support.service import running_service

pytestmark = pytest.mark.chrome


async def test_sigterm_with_three_live_sessions_kills_them_all_and_exits_0(
    state_dir: Path,
) -> None:
    async with running_service(state_dir) as service, service.client() as client:
        async with trio.open_nursery() as nursery:
            for name in ("a", "b", "c"):
                nursery.start_soon(partial(call, client, name, "browser_eval", expression="1"))
        pids = [row["pid"] for row in (await sessions(client)).values()]
        assert len(pids) == 3
        assert all(live_group_members(pid) for pid in pids)
        assert await service.stop(signal.SIGTERM) == 0
    for pid in pids:
        assert live_group_members(pid) == []
    assert list((state_dir / "pids").iterdir()) == []
    assert list((state_dir / "sessions").iterdir()) == []


async def _start_hung_call(
    client: httpx.AsyncClient, url: str, answers: list[Any], nursery: trio.Nursery
) -> None:
    async def hang() -> None:
        answers.append(await call(client, "c1", "browser_navigate", url=url, timeout="120s"))

    nursery.start_soon(hang)


async def test_sigterm_gives_a_call_in_flight_its_grace_then_stops_it(state_dir: Path) -> None:
    env = {"BROWSER_TOOL_CALL_GRACE": "1.5"}
    answers: list[Any] = []
    with running_fixtures() as site:
        async with running_service(state_dir, env=env) as service, service.client() as client:
            async with trio.open_nursery() as nursery:
                await _start_hung_call(client, site.url_for("hang"), answers, nursery)
                await trio.to_thread.run_sync(site.wait_parked)
                started = time.monotonic()
                assert await service.stop(signal.SIGTERM) == 0
            elapsed = time.monotonic() - started
    [answer] = answers
    assert answer["is_error"] is True
    assert "closed (shutdown)" in answer["output"]
    assert 1.5 <= elapsed < 15.0


async def test_a_second_signal_skips_the_grace(state_dir: Path) -> None:
    env = {"BROWSER_TOOL_CALL_GRACE": "300"}
    answers: list[Any] = []
    with running_fixtures() as site:
        async with running_service(state_dir, env=env) as service, service.client() as client:
            async with trio.open_nursery() as nursery:
                await _start_hung_call(client, site.url_for("hang"), answers, nursery)
                await trio.to_thread.run_sync(site.wait_parked)
                started = time.monotonic()
                service.process.send_signal(signal.SIGTERM)
                await service.wait_for_log("SIGTERM: stopping")
                assert await service.stop(signal.SIGINT) == 0
            elapsed = time.monotonic() - started
    [answer] = answers
    assert answer["is_error"] is True
    assert "closed (shutdown)" in answer["output"]
    assert elapsed < 15.0  # not the 300 s grace


async def test_sigkill_of_the_service_leaves_no_chrome_and_the_next_start_cleans_up(
    state_dir: Path,
) -> None:
    async with running_service(state_dir) as service, service.client() as client:
        async with trio.open_nursery() as nursery:
            for name in ("a", "b"):
                nursery.start_soon(partial(call, client, name, "browser_eval", expression="1"))
        pids = [row["pid"] for row in (await sessions(client)).values()]
        assert len(pids) == 2
        assert await service.stop(signal.SIGKILL) == -signal.SIGKILL
    for pid in pids:
        assert await wait_group_gone(pid, within=5.0), f"Chrome {pid} outlived the service"
    # Its records, session dirs and instance lock stay behind, by design: the next start-up's
    # orphan sweep removes them.
    assert len(list((state_dir / "pids").iterdir())) == 2
    async with running_service(state_dir) as service, service.client() as client:
        assert list((state_dir / "pids").iterdir()) == []
        assert list((state_dir / "sessions").iterdir()) == []
        metrics = (await client.get("/metrics")).text
        # The Chromes were gone already (death link): nothing to kill, only files to remove.
        assert 'browser_tool_reaper_total{outcome="killed"} 0' in metrics
        assert 'browser_tool_reaper_total{outcome="error"} 0' in metrics
        assert 'browser_tool_reaper_total{outcome="removed"} 0' not in metrics
