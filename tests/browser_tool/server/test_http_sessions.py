"""The HTTP API driving real Chromium through a real `browser-tool serve` subprocess.

Charter: loopback only, port 0, pages from the local fixture site; readiness from the
`listening on` line and from the fixture site's count of parked requests, never from sleeps;
every server stopped with SIGTERM and must exit 0; the state_dir fixture fails a test that
leaves a process or a file behind.
"""

from __future__ import annotations

import base64
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio

from chrome_launcher import live_group_members
from fixtures_site import running_fixtures
from tests.support.checks import wait_group_gone
from tests.support.http_calls import call, sessions
from tests.support.service import running_service

pytestmark = pytest.mark.chrome


async def test_navigate_eval_screenshot_inventory_and_delete(state_dir: Path) -> None:
    with running_fixtures() as site:
        async with running_service(state_dir) as service, service.client() as client:
            nav = await call(client, "conv-1", "browser_navigate", url=site.url_for("index.html"))
            assert nav["is_error"] is False, nav
            title = await call(client, "conv-1", "browser_eval", expression="document.title")
            assert title == {"output": title["output"], "is_error": False, "images": []}
            assert "<javascript_result>" in title["output"]

            shot = await call(client, "conv-1", "browser_take_screenshot")
            [image] = shot["images"]
            assert image["media_type"] == "image/png"
            assert base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n")
            assert await trio.Path(image["path"]).is_file()
            assert image["path"] in shot["output"]

            failed = await call(client, "conv-1", "browser_eval", expression="nope.nope")
            assert failed["is_error"] is True
            assert "ReferenceError" in failed["output"]

            row = (await sessions(client))["conv-1"]
            pid = row["pid"]
            assert row["state"] == "ready"
            assert row["calls"] == 4
            assert row["rss_bytes"] > 10 * 2**20
            assert "ReferenceError" in (row["last_error"] or "")
            assert 0 < row["idle_left_s"] <= 1800

            deleted = await client.delete("/v1/conversations/conv-1")
            report = deleted.json()
            assert deleted.status_code == 200
            assert report["existed"] is True
            assert report["pid"] == pid
            assert report["browser_killed"] is True
            assert report["survivors"] == 0
            assert report["files_removed"] is True
            assert report["errors"] == []
            assert live_group_members(pid) == []
            assert not await trio.Path(image["path"]).exists()
            again = (await client.delete("/v1/conversations/conv-1")).json()
            assert again["existed"] is False  # idempotent
            assert await sessions(client) == {}

            metrics = (await client.get("/metrics")).text
            assert 'browser_tool_launches_total{outcome="ok"} 1' in metrics
            assert 'browser_tool_kills_total{reason="delete"} 1' in metrics
            assert 'browser_tool_tool_calls_total{tool="browser_eval"} 2' in metrics
            assert 'browser_tool_tool_errors_total{tool="browser_eval"} 1' in metrics
            assert 'browser_tool_tool_call_seconds_count{tool="browser_eval"} 2' in metrics


async def test_two_conversations_in_parallel_have_their_own_browsers(state_dir: Path) -> None:
    async with running_service(state_dir) as service, service.client() as client:
        results: dict[str, Any] = {}

        async def conversation(name: str) -> None:
            await call(client, name, "browser_eval", expression=f"window.who = {name!r}")
            results[name] = await call(client, name, "browser_eval", expression="window.who")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(conversation, "alpha")
            nursery.start_soon(conversation, "beta")
        assert results["alpha"]["output"] == '<javascript_result>"alpha"</javascript_result>'
        assert results["beta"]["output"] == '<javascript_result>"beta"</javascript_result>'
        rows = await sessions(client)
        assert set(rows) == {"alpha", "beta"}
        assert rows["alpha"]["pid"] != rows["beta"]["pid"]


async def test_a_client_that_hangs_up_stops_its_call(state_dir: Path) -> None:
    # Without this the abandoned navigate would hold the conversation for its ten minutes.
    with running_fixtures() as site:
        async with running_service(state_dir) as service, service.client() as client:
            await call(client, "c1", "browser_eval", expression="1")
            hang = site.hang_path()

            async def abandoned() -> None:
                async with service.client() as gone:
                    await call(
                        gone, "c1", "browser_navigate", url=site.url_for(hang), timeout="10m"
                    )

            async with trio.open_nursery() as nursery:
                nursery.start_soon(abandoned)
                await trio.to_thread.run_sync(partial(site.wait_parked, path=hang))
                nursery.cancel_scope.cancel()  # closes that client's connection
            with trio.fail_after(60):  # a guard against the ten minutes, not a timing target
                after = await call(client, "c1", "browser_eval", expression="2")
            assert after["output"].startswith("<javascript_result>2</javascript_result>"), after
            assert (await sessions(client))["c1"]["calls"] == 3
            metrics = (await client.get("/metrics")).text
            assert 'browser_tool_tool_calls_total{tool="browser_navigate"} 1' in metrics
            assert 'browser_tool_tool_errors_total{tool="browser_navigate"} 1' in metrics


async def test_delete_during_an_in_flight_call_stops_it(state_dir: Path) -> None:
    with running_fixtures() as site:
        async with running_service(state_dir) as service, service.client() as client:
            await call(client, "c1", "browser_eval", expression="1")
            pid = (await sessions(client))["c1"]["pid"]
            answers: list[Any] = []

            async def hang() -> None:
                url = site.url_for("hang")
                answers.append(await call(client, "c1", "browser_navigate", url=url, timeout="60s"))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(hang)
                await trio.to_thread.run_sync(site.wait_parked)
                report = (await client.delete("/v1/conversations/c1")).json()
            assert report["existed"] is True
            assert report["browser_killed"] is True
            [answer] = answers
            assert answer["is_error"] is True
            assert "closed (delete)" in answer["output"]
            assert await wait_group_gone(pid, within=5.0)
            assert await sessions(client) == {}


async def test_reset_then_a_call_starts_clean(state_dir: Path) -> None:
    async with running_service(state_dir) as service, service.client() as client:
        await call(client, "c1", "browser_eval", expression="window.mark = 42")
        old_pid = (await sessions(client))["c1"]["pid"]
        reset = await client.post("/v1/conversations/c1/reset")
        assert reset.status_code == 200
        assert reset.json()["pid"] == old_pid
        assert reset.json()["browser_killed"] is True
        assert live_group_members(old_pid) == []
        fresh = await call(client, "c1", "browser_eval", expression="typeof window.mark")
        assert fresh["output"].startswith('<javascript_result>"undefined"</javascript_result>')
        assert (await sessions(client))["c1"]["pid"] != old_pid


async def test_keepalive_sets_the_idle_timeout_within_bounds(state_dir: Path) -> None:
    env = {"BROWSER_TOOL_MAX_IDLE_TIMEOUT": "300"}
    async with running_service(state_dir, env=env) as service, service.client() as client:
        await call(client, "c1", "browser_eval", expression="1")
        granted = await client.post("/v1/conversations/c1/keepalive", json={"idle_timeout_s": 120})
        assert granted.json() == {"conversation_id": "c1", "idle_timeout_s": 120.0}
        assert 100 < (await sessions(client))["c1"]["idle_left_s"] <= 120
        capped = await client.post("/v1/conversations/c1/keepalive", json={"idle_timeout_s": 1e6})
        assert capped.json()["idle_timeout_s"] == 300.0
        assert 280 < (await sessions(client))["c1"]["idle_left_s"] <= 300
