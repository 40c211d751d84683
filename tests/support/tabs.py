"""Tabs in tests on real Chromium: waiting (by Chrome's target events, bounded) for tabs to
come, show a URL and load, and opening the identity provider's window of the fixture site."""

from __future__ import annotations

import trio
import trio.testing

from browser_tool import BrowserSessionManager
from browser_tool.browser import BrowserSession
from fixtures_site import FixtureServer
from tests.support.manager_calls import C, find_ref, ok


async def tab_count(session: BrowserSession, count: int) -> None:
    """Wait (by events, bounded) until the session holds `count` attached tabs."""
    with trio.fail_after(10):
        async with session.conn.listen(
            "Target.targetCreated", "Target.targetDestroyed", "Target.targetInfoChanged"
        ) as events:
            while True:
                # The pump handles what this listener got, then the count is read.
                await trio.testing.wait_all_tasks_blocked()
                if len(session.tabs.pages()) == count:
                    break
                await events.receive()
        for page in session.tabs.pages():
            await page.wait_usable()


async def tabs_showing(session: BrowserSession, marker: str, count: int) -> None:
    """Wait (by events, bounded) until `count` tabs show a URL holding `marker`."""
    with trio.fail_after(10):
        async with session.conn.listen("Target.targetInfoChanged") as events:
            while True:
                await trio.testing.wait_all_tasks_blocked()
                if sum(marker in page.url for page in session.tabs.pages()) == count:
                    return
                await events.receive()


async def loaded(session: BrowserSession, index: int, marker: str) -> None:
    """Wait until tab `index` shows a URL holding `marker` and its document has loaded."""
    await tabs_showing(session, marker, 1)
    load = (
        "new Promise(r => document.readyState === 'complete' ? r(1) "
        ": addEventListener('load', () => r(1)))"
    )
    with trio.fail_after(10):
        page = session.tabs.pages()[index]
        await page.session.send("Runtime.evaluate", {"expression": load, "awaitPromise": True})


async def open_provider_tab(manager: BrowserSessionManager, site: FixtureServer) -> BrowserSession:
    """The sign-in page (idp_opener.html) with the provider's window open, loaded and selected
    as tab 1; returns the conversation's browser."""
    await ok(manager, "browser_navigate", url=site.url_for("/idp_opener.html"))
    session = await manager.get_or_create(C)
    snap = await ok(manager, "browser_snapshot")
    await ok(manager, "browser_click", ref=find_ref(snap, "button", "Sign in with the provider"))
    await tab_count(session, 2)
    await loaded(session, 1, "/idp.html")
    await ok(manager, "browser_tabs", action="select", index=1)
    return session
