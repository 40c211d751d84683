"""Persistent profiles and storage state over HTTP (issue 21), against real `browser-tool
serve` subprocesses on the test's own state root (see tests/support/service.py).

Charter: loopback, port 0, readiness from the `listening on` line; a "restart" is a second
service on the same state root; a `kill -9` is SIGKILL to the service's pid (its Chromes are
then orphans, or die by the death link), and the next start-up's sweep is what cleans up.
Each test deletes the profiles it made: the state_dir fixture fails a test that leaves files.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import httpx
import pytest

from chrome_launcher import CHROMIUM, processes_on_profile
from fixtures_site import FixtureServer
from tests.support.checks import wait_group_gone
from tests.support.service import running_service

pytestmark = pytest.mark.chrome


async def title_after(client: httpx.AsyncClient, cid: str, url: str) -> str:
    base = f"/v1/conversations/{cid}/tools/"
    nav = await client.post(base + "browser_navigate", json={"url": url})
    assert not nav.json()["is_error"], nav.text
    out = await client.post(base + "browser_eval", json={"expression": "document.title"})
    assert not out.json()["is_error"], out.text
    text = out.json()["output"].removeprefix("<javascript_result>").split("</")[0]
    title = json.loads(text)
    assert isinstance(title, str)
    return title


def error_of(response: httpx.Response, status: int) -> dict[str, str]:
    assert response.status_code == status, response.text
    error: dict[str, str] = response.json()["error"]
    return error


async def test_signed_in_across_delete_and_restart_and_one_holder_at_a_time(
    state_dir: Path, site: FixtureServer
) -> None:
    async with running_service(state_dir) as service, service.client() as client:
        bound = await client.put("/v1/conversations/c1", json={"profile": "work"})
        assert bound.json() == {"conversation_id": "c1", "profile": "work"}
        assert await title_after(client, "c1", site.url_for("signin.html?user=eve")) == (
            "Signed in as eve"
        )
        taken = error_of(await client.put("/v1/conversations/c2", json={"profile": "work"}), 409)
        assert taken["code"] == "profile_in_use"
        assert "conversation 'c1'" in taken["message"]
        busy = error_of(await client.delete("/v1/profiles/work"), 409)
        assert busy["code"] == "profile_in_use"
        late = error_of(await client.put("/v1/conversations/c1", json={"profile": "x"}), 409)
        assert late["code"] == "conversation_bound"
        assert (await client.delete("/v1/conversations/c1")).json()["browser_killed"]
    async with running_service(state_dir) as service, service.client() as client:
        [listed] = (await client.get("/v1/profiles")).json()["profiles"]
        assert (listed["name"], listed["in_use"], listed["held_by"]) == ("work", False, None)
        assert (await client.put("/v1/conversations/c2", json={"profile": "work"})).is_success
        assert await title_after(client, "c2", site.url_for("signin.html")) == "Signed in as eve"
        [listed] = (await client.get("/v1/profiles")).json()["profiles"]
        assert listed["held_by"] == "c2"
        [session] = (await client.get("/v1/sessions")).json()["sessions"]
        assert (session["conversation_id"], session["profile"]) == ("c2", "work")
        await client.delete("/v1/conversations/c2")
        gone = await client.delete("/v1/profiles/work")
        assert gone.json() == {"profile": "work", "existed": True}
        again = await client.delete("/v1/profiles/work")
        assert again.json() == {"profile": "work", "existed": False}


@pytest.mark.parametrize("death_link", ["1", "0"], ids=["death-link", "orphaned"])
async def test_kill_9_of_the_service_leaves_the_profile_usable(
    state_dir: Path, site: FixtureServer, death_link: str
) -> None:
    """Full Chromium, which marks its profile with SingletonLock/Socket/Cookie: a SIGKILLed
    Chrome leaves them behind. With the death link its Chrome exits by itself with the service
    (and removes them); without, it runs on as an orphan until the next start-up's sweep kills
    it (proven ours by its argv marker) with SIGKILL, so they stay until the next launch on
    the profile removes them. The profile dir is kept either way."""
    env = {"BROWSER_TOOL_CHROME": str(CHROMIUM), "BROWSER_TOOL_DEATH_LINK": death_link}
    profile = state_dir / "profiles" / "keep"
    async with running_service(state_dir, env=env) as service, service.client() as client:
        await client.put("/v1/conversations/k1", json={"profile": "keep"})
        assert await title_after(client, "k1", site.url_for("signin.html?user=kim")) == (
            "Signed in as kim"
        )
        [session] = (await client.get("/v1/sessions")).json()["sessions"]
        assert os.path.lexists(profile / "SingletonLock")
        os.kill(service.process.pid, signal.SIGKILL)
        await service.process.wait()
    if death_link == "1":  # Chrome sees its pipe close and exits (removing its marks)
        assert await wait_group_gone(session["pid"], within=10)
    else:
        assert processes_on_profile(profile) != []  # an orphan, still running on it
    async with running_service(state_dir, env=env) as service, service.client() as client:
        assert processes_on_profile(profile) == []  # the start-up sweep ended the orphan
        # Whatever the dead Chrome left, make it the worst case: a lock naming another host,
        # which Chromium itself refuses ("in use by another computer"); the launch removes it
        # once it has proven no process runs on the profile.
        (profile / "SingletonLock").unlink(missing_ok=True)
        os.symlink("elsewhere-4242", profile / "SingletonLock")
        assert (profile / "Default").is_dir()  # and kept the profile
        assert (await client.put("/v1/conversations/k2", json={"profile": "keep"})).is_success
        title = await title_after(client, "k2", site.url_for("signin.html"))
        assert title in ("Signed in as kim", "Signed out")  # cookies flush lazily; not the point
        await client.delete("/v1/conversations/k2")
        assert (await client.delete("/v1/profiles/keep")).json()["existed"]


async def test_storage_state_over_http(state_dir: Path, site: FixtureServer) -> None:
    async with running_service(state_dir) as service, service.client() as client:
        none = error_of(await client.get("/v1/conversations/s1/storage-state"), 409)
        assert none["code"] == "no_browser"
        await title_after(client, "s1", site.url_for("signin.html?user=sam"))
        state = (await client.get("/v1/conversations/s1/storage-state")).json()
        assert [c["name"] for c in state["cookies"]] == ["signed_in"]
        put = await client.put("/v1/conversations/s2/storage-state", json=state)
        assert put.json() == {"conversation_id": "s2", "loaded": "pending"}
        assert await title_after(client, "s2", site.url_for("signin.html")) == "Signed in as sam"
        bad = error_of(
            await client.put("/v1/conversations/s2/storage-state", json={"cookies": [1]}), 400
        )
        assert bad["code"] == "invalid_input"
        assert "'cookies[0]'" in bad["message"]
        for cid in ("s1", "s2"):
            await client.delete(f"/v1/conversations/{cid}")


async def test_context_mode_refuses_a_binding_with_the_reason(state_dir: Path) -> None:
    env = {"BROWSER_TOOL_ISOLATION": "context"}
    async with running_service(state_dir, env=env) as service, service.client() as client:
        refused = error_of(await client.put("/v1/conversations/c", json={"profile": "p"}), 409)
        assert refused["code"] == "profiles_unavailable"
        assert "process mode only" in refused["message"]
        assert (await client.get("/v1/profiles")).json() == {"profiles": []}
