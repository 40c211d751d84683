"""Persistent profiles on real Chrome (issue 21, part 2), through the manager's Python API.

Each test runs on its own state root; a profile it made is deleted before it ends (the conftest
check fails a test that leaves files behind). A "restart" is a second manager opened on the
same state root after the first one closed.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from browser_tool import BrowserSessionManager, ConflictError, InvalidInputError
from browser_tool import open_session_manager as open_manager
from fixtures_site import FixtureServer
from tests.support.checks import make_settings
from tests.support.sources import RecordingSource, recording

pytestmark = pytest.mark.chrome


async def title_after(manager: BrowserSessionManager, cid: str, url: str) -> str:
    out = await manager.call_tool(cid, "browser_navigate", {"url": url})
    assert not out.is_error, out.output
    out = await manager.call_tool(cid, "browser_eval", {"expression": "document.title"})
    assert not out.is_error, out.output
    text = out.output.removeprefix("<javascript_result>").split("</javascript_result>")[0]
    title = json.loads(text)
    assert isinstance(title, str)
    return title


async def local_user(manager: BrowserSessionManager, cid: str) -> object:
    out = await manager.call_tool(cid, "browser_eval", {"expression": "localStorage.user ?? null"})
    assert not out.is_error, out.output
    return json.loads(out.output.removeprefix("<javascript_result>").split("</")[0])


async def test_a_login_survives_delete_and_restart_on_its_profile(
    state_dir: Path, headless_shell: str, site: FixtureServer
) -> None:
    settings = make_settings(state_dir)
    async with open_manager(settings) as manager:
        assert manager.bind_profile("first", "work") == "work"
        title = await title_after(manager, "first", site.url_for("signin.html?user=ada"))
        assert title == "Signed in as ada"
        for private in ("profiles", "profiles/work"):
            assert stat.S_IMODE((state_dir / private).stat().st_mode) == 0o700
        report = await manager.kill_session("first")
        assert report.browser_killed
        assert (state_dir / "profiles" / "work" / "Default").is_dir()
        # Without the profile, a conversation starts empty.
        assert await title_after(manager, "other", site.url_for("signin.html")) == "Signed out"
    async with open_manager(settings) as manager:  # a restart: a new manager, the same root
        [info] = await manager.list_profiles()
        assert (info.name, info.held_by) == ("work", None)
        assert info.size_bytes > 0
        manager.bind_profile("second", "work")
        assert await title_after(manager, "second", site.url_for("signin.html")) == (
            "Signed in as ada"
        )
        assert await local_user(manager, "second") == "ada"
        with pytest.raises(ConflictError, match="in use by conversation 'second'"):
            await manager.delete_profile("work")
        await manager.kill_session("second")
        assert await manager.delete_profile("work") is True
        assert await manager.delete_profile("work") is False
        assert await manager.list_profiles() == []


async def test_one_live_conversation_per_profile(
    manager: BrowserSessionManager, state_dir: Path, site: FixtureServer
) -> None:
    manager.bind_profile("a", "shared")
    manager.bind_profile("a", "shared")  # the same binding again: nothing to do
    with pytest.raises(ConflictError, match="'shared' is in use by conversation 'a'") as caught:
        manager.bind_profile("b", "shared")
    assert caught.value.code == "profile_in_use"
    await title_after(manager, "a", site.url_for("signin.html?user=bob"))
    # The idle reaper and a reset close the browser; the binding stays with the conversation.
    await manager.reset_session("a")
    with pytest.raises(ConflictError, match="in use by conversation 'a'"):
        manager.bind_profile("b", "shared")
    assert await title_after(manager, "a", site.url_for("signin.html")) == "Signed in as bob"
    with pytest.raises(ConflictError, match="bound to profile 'shared'") as bound:
        manager.bind_profile("a", "other")
    assert bound.value.code == "conversation_bound"
    await title_after(manager, "c", site.url_for("signin.html"))
    with pytest.raises(ConflictError, match="bind a profile before its first call") as started:
        manager.bind_profile("c", "other")
    assert started.value.code == "conversation_started"
    assert not (state_dir / "profiles" / "other").exists()
    [info] = await manager.list_profiles()
    assert info.held_by == "a"
    await manager.kill_session("a")
    manager.bind_profile("b", "shared")  # free again once its holder is gone
    assert await title_after(manager, "b", site.url_for("signin.html")) == "Signed in as bob"
    await manager.kill_session("b")
    assert await manager.delete_profile("shared")


@pytest.mark.parametrize("name", ["", "..", ".hidden", "a/b", "x" * 65, "a b", "é", None, 3])
async def test_bad_profile_names_are_refused_and_change_nothing(
    manager: BrowserSessionManager, state_dir: Path, name: object
) -> None:
    with pytest.raises(InvalidInputError, match="'profile'"):
        manager.bind_profile("c", name)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="'profile'"):
        await manager.delete_profile(name)  # type: ignore[arg-type]
    assert not (state_dir / "profiles").exists()


async def test_context_mode_refuses_profiles_and_says_why(
    state_dir: Path, headless_shell: str
) -> None:
    async with open_manager(make_settings(state_dir, isolation="context")) as manager:
        with pytest.raises(ConflictError, match="process mode only") as caught:
            manager.bind_profile("c", "work")
        assert caught.value.code == "profiles_unavailable"
    assert not (state_dir / "profiles").exists()


async def test_a_pooled_chrome_is_never_given_to_a_profiled_conversation(
    state_dir: Path, headless_shell: str, site: FixtureServer
) -> None:
    async with open_manager(make_settings(state_dir, pool_size=1)) as manager:
        pooled = {info.pid for info in manager.list_sessions() if info.state == "pooled"}
        manager.bind_profile("p", "pooltest")
        await title_after(manager, "p", site.url_for("signin.html?user=cy"))
        [mine] = [info for info in manager.list_sessions() if info.conversation_id == "p"]
        assert mine.pid not in pooled
        browser = await manager.get_or_create("p")
        assert browser.chrome.profile_dir == state_dir / "profiles" / "pooltest"
        await manager.kill_session("p")
        assert await manager.delete_profile("pooltest")


async def test_an_idle_reaped_profiled_conversation_comes_back_signed_in(
    state_dir: Path, headless_shell: str, site: FixtureServer
) -> None:
    sources: list[RecordingSource] = []
    settings = make_settings(state_dir)
    async with open_manager(settings, source_factory=recording(sources)) as manager:
        manager.bind_profile("idle", "kept")
        await title_after(manager, "idle", site.url_for("signin.html?user=fay"))
        manager.keepalive("idle", 0.2)  # the idle clock ends its browser a moment from now
        released = await sources[0].wait_released()
        assert released.reason == "idle"
        await released.done.wait()
        assert manager.list_sessions() == []
        # The next call runs on the profile again, which kept the login; its note says so.
        back = await manager.call_tool(
            "idle", "browser_navigate", {"url": site.url_for("signin.html")}
        )
        assert "was closed because it was idle" in back.output
        assert "on its profile 'kept'" in back.output
        assert "cookies and storage were kept" in back.output
        assert await title_after(manager, "idle", site.url_for("signin.html")) == "Signed in as fay"
        await manager.kill_session("idle")
        assert await manager.delete_profile("kept")
