"""Popups and downloads stay inside the conversation: a page opening fifty windows gets each
closed as it opens and reported within a bounded note, and no window outlives the session; a
download, however it starts, is written only under the conversation's dir and goes with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import trio

from browser_tool import BrowserSessionManager
from fixtures_site import DOWNLOAD_BODY, FixtureServer
from tests.support.checks import wait_group_gone
from tests.support.manager_calls import C, ok

pytestmark = pytest.mark.chrome


async def page_targets(manager: BrowserSessionManager) -> list[str]:
    session = await manager.get_or_create(C)
    targets = await session.conn.send("Target.getTargets")
    return [t["targetId"] for t in targets["targetInfos"] if t["type"] == "page"]


async def test_fifty_windows_are_closed_counted_and_reported_within_a_cap(
    fault_manager: BrowserSessionManager,
) -> None:
    session = await fault_manager.get_or_create(C)
    opened = 50
    async with session.conn.listen("Target.targetDestroyed", session_id=None) as destroyed:
        out = await ok(
            fault_manager,
            "browser_eval",
            expression=f"for (let i = 0; i < {opened}; i++) window.open('about:blank#' + i); 1",
        )
        with trio.fail_after(30):  # every popup's closing is announced
            for _ in range(opened):
                await destroyed.receive()
    page = session.page
    assert page.popups_opened == opened
    assert await page_targets(fault_manager) == [page.target_id]
    # Each result names at most `max_popups` of them and counts the rest; together, all 50.
    later = await ok(fault_manager, "browser_eval", expression="1")
    cap = fault_manager.settings.max_popups
    reported = 0
    for text in (out, later):
        named = text.count("The page opened a new window")
        assert named <= cap
        more = re.search(r"\.\.\. and (\d+) more popup event\(s\) like these", text)
        reported += named + (int(more[1]) if more else 0)
    assert reported == opened
    [info] = fault_manager.list_sessions()
    assert info.pid is not None
    await fault_manager.kill_session(C)
    assert await wait_group_gone(info.pid, within=5.0)


async def test_downloads_land_only_in_the_conversation_dir_and_go_with_it(
    fault_manager: BrowserSessionManager, site: FixtureServer, state_dir: Path
) -> None:
    home_downloads = Path.home() / "Downloads"
    before = set(home_downloads.iterdir()) if home_downloads.is_dir() else set()
    text = await ok(fault_manager, "browser_navigate", url=site.url_for("/download/report.txt"))
    match = re.search(r"as (\S+)$", text)
    assert match, text
    saved = Path(match[1])
    assert saved.read_bytes() == DOWNLOAD_BODY
    conversation_dir = saved.parent.parent
    assert saved.parent.name == "downloads"
    assert conversation_dir.parent == state_dir / "sessions"
    # A download the page starts by itself lands in the same place.
    session = await fault_manager.get_or_create(C)
    started = session.page.new_download_watch()
    click = (
        "const a = document.createElement('a'); a.href = 'data:text/plain,hello'; "
        "a.download = '../../escape.txt'; document.body.append(a); a.click(); 1"
    )
    await ok(fault_manager, "browser_eval", expression=click)
    with trio.fail_after(10):
        await started.wait()
        download = list(session.page.downloads.values())[-1]
        await download.done.wait()
    assert download.state == "completed"
    assert (saved.parent / download.guid).read_bytes() == b"hello"
    files = {p.relative_to(state_dir) for p in state_dir.rglob("*") if p.is_file()}
    assert all(p.parts[0] in ("sessions", "pids", "instances", "tmp") for p in files)
    assert not any(p.name == "escape.txt" for p in state_dir.rglob("*"))
    await fault_manager.kill_session(C)
    assert not conversation_dir.exists()
    after = set(home_downloads.iterdir()) if home_downloads.is_dir() else set()
    assert after == before
