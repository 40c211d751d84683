"""Shared-browser mode (BROWSER_TOOL_ISOLATION=context) against real Chromium: conversations
in one Chrome cannot see each other's cookies, storage, service workers, downloads, viewport
or console; ending one (delete, idle) leaves the others as they were, and so does a renderer
crash; a killed Chrome gives each of its conversations a fresh context with a note; the cap
starts another Chrome; an empty one is closed after its linger; shutdown leaves nothing.

Charter: loopback only; readiness from answered calls and from the kernel (a group is gone
when no member is left); where nothing announces a background step (a Chrome closed after its
linger, a page's crash reset) a short bounded poll; idle time on trio's virtual clock; every
Chrome killed by pid; the state_dir fixture fails a test that leaves a process or a file.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import pytest
import trio
import trio.testing

from browser_tool import BrowserSessionManager, CdpError, session_dir_name
from browser_tool import open_session_manager as open_manager
from chrome_launcher import live_group_members, read_records
from fixtures_site import FixtureServer
from tests.support.checks import make_settings, wait_group_gone
from tests.support.service_worker_site import COUNT_JS, REGISTER_JS, service_worker_site

pytestmark = pytest.mark.chrome


@asynccontextmanager
async def shared_manager(
    state_dir: Path, **changes: object
) -> AsyncIterator[BrowserSessionManager]:
    settings = make_settings(state_dir, isolation="context", **changes)
    async with open_manager(settings) as manager:
        yield manager


@pytest.fixture
async def shared(state_dir: Path, headless_shell: str) -> AsyncIterator[BrowserSessionManager]:
    async with shared_manager(state_dir) as manager:
        yield manager


async def ok(manager: BrowserSessionManager, conversation: str, tool: str, **args: object) -> str:
    out = await manager.call_tool(conversation, tool, args)
    assert not out.is_error, out.output
    return out.output


async def js(manager: BrowserSessionManager, conversation: str, expression: str) -> object:
    text = await ok(manager, conversation, "browser_eval", expression=expression)
    return json.loads(text.removeprefix("<javascript_result>").split("</javascript_result>")[0])


async def until(condition: Callable[[], bool], *, within: float = 10.0) -> None:
    """Wait for a condition that no event announces (a shared Chrome closed in the background,
    a page's crash reset done): a short poll, bounded."""
    with trio.fail_after(within):
        while True:
            if condition():
                return
            await trio.sleep(0.01)


def chrome_pids(manager: BrowserSessionManager) -> dict[str, int | None]:
    return {info.conversation_id: info.pid for info in manager.list_sessions()}


async def test_two_conversations_in_one_chrome_see_nothing_of_each_other(
    shared: BrowserSessionManager, site: FixtureServer, state_dir: Path
) -> None:
    await ok(shared, "alice", "browser_navigate", url=site.url_for("/storage.html?v=A"))
    await ok(shared, "bob", "browser_navigate", url=site.url_for("/index.html"))
    pids = chrome_pids(shared)
    assert pids["alice"] == pids["bob"] is not None
    assert all(info.shared for info in shared.list_sessions())

    # Cookies and localStorage of the same origin.
    assert await js(shared, "bob", "document.cookie") == ""
    assert await js(shared, "bob", "localStorage.getItem('fixture_key')") is None
    assert await js(shared, "alice", "document.cookie") == "fixture_cookie=A"

    # Downloads: to the conversation's own dir, and only its own result hears of it.
    saved = await ok(shared, "alice", "browser_navigate", url=site.url_for("/download/a.txt"))
    alice_downloads = state_dir / "sessions" / session_dir_name("alice") / "downloads"
    bob_downloads = state_dir / "sessions" / session_dir_name("bob") / "downloads"
    assert str(alice_downloads / "a.txt") in saved
    assert [p.name for p in alice_downloads.iterdir()] == ["a.txt"]
    assert list(bob_downloads.iterdir()) == []
    bob_says = await ok(shared, "bob", "browser_eval", expression="1")
    assert "download" not in bob_says.lower()

    # The viewport and the console buffer.
    await ok(shared, "alice", "browser_resize", width=500, height=400)
    await ok(shared, "alice", "browser_eval", expression="console.log('alice only')")
    assert await js(shared, "alice", "innerWidth") == 500
    assert await js(shared, "bob", "innerWidth") == 1280
    assert "alice only" in await ok(shared, "alice", "browser_recent_console_logs")
    assert "alice only" not in await ok(shared, "bob", "browser_recent_console_logs")

    # Service workers of the same origin.
    with service_worker_site() as base:
        await ok(shared, "alice", "browser_navigate", url=f"{base}/sw.html")
        await ok(shared, "bob", "browser_navigate", url=f"{base}/blank.html")
        assert await js(shared, "alice", REGISTER_JS) == f"{base}/sw.js"
        assert await js(shared, "alice", COUNT_JS) == 1
        assert await js(shared, "bob", COUNT_JS) == 0


async def test_deleting_one_conversation_leaves_the_other_as_it_was(
    shared: BrowserSessionManager, site: FixtureServer, state_dir: Path
) -> None:
    await ok(shared, "alice", "browser_navigate", url=site.url_for("/index.html"))
    await ok(shared, "bob", "browser_navigate", url=site.url_for("/storage.html?v=B"))
    await ok(shared, "bob", "browser_eval", expression="document.body.dataset.mark = 'kept'")
    pid = chrome_pids(shared)["bob"]
    assert pid is not None

    report = await shared.kill_session("alice")
    assert (report.existed, report.browser_killed, report.files_removed) == (True, True, True)
    assert (report.pid, report.survivors, report.errors) == (pid, 0, ())
    assert not (state_dir / "sessions" / session_dir_name("alice")).exists()
    assert live_group_members(pid)  # the shared Chrome lives on
    assert await js(shared, "bob", "document.body.dataset.mark") == "kept"
    assert await js(shared, "bob", "location.pathname + '|' + document.cookie") == (
        "/storage.html|fixture_cookie=B"
    )
    assert chrome_pids(shared) == {"bob": pid}


async def test_a_renderer_crash_touches_only_its_own_page(
    shared: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(shared, "alice", "browser_navigate", url=site.url_for("/index.html"))
    await ok(shared, "bob", "browser_navigate", url=site.url_for("/index.html"))
    await ok(shared, "bob", "browser_eval", expression="window.mark = 'kept'")
    alice = await shared.get_or_create("alice")
    crashed = alice.page.crashed
    with contextlib.suppress(CdpError):  # the page may die before it answers
        await alice.page.session.send("Page.crash", timeout=10)
    await crashed.wait()
    await alice.page.wait_usable()  # the page's reset to about:blank is done
    assert await js(shared, "bob", "window.mark") == "kept"
    out = await ok(shared, "alice", "browser_eval", expression="location.href")
    assert "the page crashed since the previous call" in out
    assert "about:blank" in out


async def test_sigkill_of_the_shared_chrome_gives_each_conversation_a_fresh_context_with_a_note(
    shared: BrowserSessionManager, site: FixtureServer, state_dir: Path
) -> None:
    for name in ("alice", "bob"):
        await ok(shared, name, "browser_navigate", url=site.url_for(f"/storage.html?v={name}"))
    pid = chrome_pids(shared)["alice"]
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    assert await wait_group_gone(pid, within=10.0)

    for name in ("alice", "bob"):
        out = await ok(shared, name, "browser_eval", expression="location.href")
        assert out.startswith('<javascript_result>"about:blank"</javascript_result>'), out
        assert f"ran in a shared Chrome (pid {pid}) that crashed (exit status -9)" in out
        assert "a fresh browser was started" in out
    new_pids = chrome_pids(shared)
    assert new_pids["alice"] == new_pids["bob"] != pid
    assert [e.record and e.record.pid for e in read_records(state_dir / "pids")] == [
        new_pids["alice"]
    ]
    assert shared.metrics.counter("browser_tool_kills_total", reason="crash") == 2


async def test_the_cap_starts_another_chrome_and_an_empty_one_is_closed(
    state_dir: Path, headless_shell: str
) -> None:
    async with shared_manager(
        state_dir, contexts_per_browser=2, shared_browser_linger=0.0
    ) as manager:
        async with trio.open_nursery() as nursery:
            for name in ("a", "b", "c"):
                nursery.start_soon(partial(ok, manager, name, "browser_eval", expression="1"))
        pids = chrome_pids(manager)
        assert len(set(pids.values())) == 2
        assert sorted(list(pids.values()).count(pid) for pid in set(pids.values())) == [1, 2]
        assert len(read_records(state_dir / "pids")) == 2
        counted = manager.metrics.counter
        assert counted("browser_tool_shared_browser_launches_total", outcome="ok") == 2

        # The Chrome holding only "c" is left empty: closed (linger 0), the other untouched.
        [alone] = [pid for pid in set(pids.values()) if list(pids.values()).count(pid) == 1]
        [name] = [n for n, pid in pids.items() if pid == alone]
        assert alone is not None
        await manager.kill_session(name)
        assert await wait_group_gone(alone, within=10.0)
        await until(lambda: counted("browser_tool_shared_browser_ends_total", reason="linger") == 1)
        [entry] = read_records(state_dir / "pids")
        assert entry.record is not None
        assert entry.record.pid != alone
        assert "shared_browsers 1\n" in manager.metrics.render()


async def test_shutdown_leaves_no_shared_chrome_and_no_file(
    state_dir: Path, headless_shell: str
) -> None:
    async with shared_manager(state_dir, contexts_per_browser=1) as manager:
        for name in ("a", "b"):
            await ok(manager, name, "browser_eval", expression="1")
        pids = set(chrome_pids(manager).values())
        assert len(pids) == 2
    for pid in pids:
        assert isinstance(pid, int)
        assert await wait_group_gone(pid, within=10.0)
    assert read_records(state_dir / "pids") == []
    assert list((state_dir / "sessions").iterdir()) == []


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Virtual time (see test_lifecycle_clock.py): it jumps after 1 s of real idleness."""
    return trio.testing.MockClock(autojump_threshold=1.0)


async def test_idle_reaping_disposes_of_one_context_and_leaves_the_chrome(
    clock: trio.testing.MockClock, state_dir: Path, headless_shell: str, site: FixtureServer
) -> None:
    async with shared_manager(state_dir, idle_timeout=1800.0) as manager:
        await ok(manager, "alice", "browser_navigate", url=site.url_for("/storage.html?v=A"))
        manager.keepalive("bob", 7200.0)
        await ok(manager, "bob", "browser_eval", expression="window.mark = 'kept'")
        pid = chrome_pids(manager)["bob"]
        assert pid is not None
        await trio.sleep(1800.5)  # past alice's idle deadline, not bob's
        assert chrome_pids(manager) == {"bob": pid}
        assert live_group_members(pid)
        assert await js(manager, "bob", "window.mark") == "kept"
        out = await ok(manager, "alice", "browser_navigate", url=site.url_for("/index.html"))
        assert "was closed because it was idle for 30m" in out
        assert await js(manager, "alice", "localStorage.getItem('fixture_key')") is None
