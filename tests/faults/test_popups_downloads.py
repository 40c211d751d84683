"""Popups and downloads stay inside the conversation: a page opening fifty windows keeps at
most the tab cap open (the rest are closed as they open) and is told so within a bounded note,
and no window outlives the session; a download, however it starts, is written only under the
conversation's dir and goes with it."""

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


async def test_fifty_windows_leave_the_cap_open_and_are_counted_within_a_bounded_note(
    fault_manager: BrowserSessionManager,
) -> None:
    session = await fault_manager.get_or_create(C)
    opened, cap = 50, fault_manager.settings.max_tabs
    over_cap = opened - (cap - 1)  # the first tab is the page's own
    async with session.conn.listen("Target.targetDestroyed", session_id=None) as destroyed:
        out = await ok(
            fault_manager,
            "browser_eval",
            expression=f"for (let i = 0; i < {opened}; i++) window.open('about:blank#' + i); 1",
        )
        with trio.fail_after(30):  # every window over the cap is closed as it opens
            for _ in range(over_cap):
                await destroyed.receive()
    assert session.tabs.opened == opened
    assert session.tabs.closed_over_cap == over_cap
    assert sorted(await page_targets(fault_manager)) == sorted(
        page.target_id for page in session.tabs.pages()
    )
    assert len(session.tabs.pages()) == cap
    # The results name each kept tab once and count the rest; together, all 50.
    later = await ok(fault_manager, "browser_eval", expression="1")
    text = out + later
    named = text.count("The page opened a new tab") + sum(
        int(n) for n in re.findall(r"The page opened (\d+) new tabs", text)
    )
    counted = sum(int(n) for n in re.findall(r"tried to open (\d+) more tab\(s\)", text))
    assert named == cap - 1, text
    assert named + counted == opened
    assert len(out) < 8_000
    assert len(later) < 8_000
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
