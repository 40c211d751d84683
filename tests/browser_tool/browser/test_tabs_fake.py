"""Which targets become tabs (issue 20), against a scripted fake DevTools peer: in a shared
Chrome only pages of the conversation's own browser context that one of ours opened; targets
without an opener (ours) never; over the cap, closed as they open; the tab closing while current
hands over to its opener.

Charter: loopback only (127.0.0.1, kernel-chosen port); the peer answers every command at once
(ids counted, so each target and session is known) and the test body sends the target events,
so their order is fixed. A round trip (`Target.getTargets` sent and answered) after the events
is the barrier proving the pump saw them: the pump reads events in order and the answer to a
later command comes after them on the wire, so the test waits on the pump's own reaction (a tab
attached, a target closed), never on time.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio
import trio.testing

from browser_tool import Settings
from browser_tool.browser import Tabs
from browser_tool.cdp import CdpConnection, open_cdp_connection
from tests.support.fake_cdp_peer import FakeCdpPeer, open_fake_cdp_peer

OURS, THEIRS = "ctx-ours", "ctx-theirs"


class Browser:
    """The peer's side: answers every command, records them, counts targets and sessions."""

    def __init__(self, peer: FakeCdpPeer) -> None:
        self.peer = peer
        self.commands: list[dict[str, Any]] = []
        self.closed: list[str] = []
        self.attached: list[str] = []
        self._ids = itertools.count(1)
        self.conn: CdpConnection | None = None

    async def serve(self) -> None:
        while True:
            command = await self.peer.receive_command()
            self.commands.append(command)
            method, params = command["method"], command.get("params") or {}
            result: dict[str, Any] = {}
            if method == "Target.getTargets":
                result = {"targetInfos": []}
            elif method == "Target.createTarget":
                result = {"targetId": f"made-{next(self._ids)}"}
            elif method == "Target.attachToTarget":
                self.attached.append(params["targetId"])
                result = {"sessionId": f"session-{params['targetId']}"}
            elif method == "Target.closeTarget":
                self.closed.append(params["targetId"])
                result = {"success": True}
            await self.peer.reply(command, result)

    async def created(self, target_id: str, context: str, opener: str | None) -> None:
        info = {"targetId": target_id, "type": "page", "url": "", "title": ""}
        info["browserContextId"] = context
        if opener:
            info["openerId"] = opener
        await self.peer.event("Target.targetCreated", {"targetInfo": info})

    async def wait_until(self, done: Callable[[], bool]) -> None:
        """Until `done()`: each round is a round trip (every event sent before it is read) and
        then every task blocked (the pump handled them, and what it sent was answered)."""
        with trio.fail_after(5):
            while True:
                assert self.conn is not None
                await self.conn.send("Target.getTargets")
                await trio.testing.wait_all_tasks_blocked()
                if done():
                    return


@asynccontextmanager
async def tabs_on_fake(max_tabs: int = 10) -> AsyncIterator[tuple[Tabs, Browser]]:
    async with open_fake_cdp_peer() as peer, trio.open_nursery() as nursery:
        browser = Browser(peer)
        nursery.start_soon(browser.serve)
        async with open_cdp_connection(peer.url) as conn:
            browser.conn = conn
            settings = Settings(state_dir=Path("/nonexistent"), max_tabs=max_tabs)
            tabs = Tabs(conn, settings, Path("/nonexistent/downloads"), OURS)
            await nursery.start(tabs.run_pump)
            await tabs.setup()
            yield tabs, browser
            nursery.cancel_scope.cancel()


async def test_only_popups_of_our_own_context_become_tabs() -> None:
    async with tabs_on_fake() as (tabs, browser):
        first = tabs.current.target_id
        await browser.created("theirs", THEIRS, opener="their-page")  # another conversation's
        await browser.created("made-by-us", OURS, opener=None)  # no opener: one of ours
        await browser.created("popup", OURS, opener=first)
        await browser.wait_until(lambda: "popup" in browser.attached)
        assert [page.target_id for page in tabs.pages()] == [first, "popup"]
        assert "theirs" not in browser.attached
        assert "made-by-us" not in browser.attached
        assert tabs.current.target_id == first  # a popup does not become current
        notes = tabs.take_notes()
        assert notes[0].startswith("The page opened a new tab: tab 1 (about:blank so far)")


async def test_popups_over_the_cap_are_closed_and_counted() -> None:
    async with tabs_on_fake(max_tabs=2) as (tabs, browser):
        first = tabs.current.target_id
        for n in range(4):
            await browser.created(f"popup-{n}", OURS, opener=first)
        await browser.wait_until(lambda: len(browser.closed) == 3)
        assert browser.closed == ["popup-1", "popup-2", "popup-3"]
        assert [page.target_id for page in tabs.pages()] == [first, "popup-0"]
        assert tabs.opened == 4
        assert tabs.closed_over_cap == 3
        notes = "\n".join(tabs.take_notes())
        assert "tried to open 3 more tab(s)" in notes
        assert tabs.take_notes() == []  # said once


async def test_current_tab_closing_hands_over_to_its_opener() -> None:
    async with tabs_on_fake() as (tabs, browser):
        first = tabs.current.target_id
        await browser.created("a", OURS, opener=first)
        await browser.created("b", OURS, opener=first)
        await browser.created("c", OURS, opener="a")
        await browser.wait_until(lambda: len(browser.attached) == 4)
        await browser.wait_until(lambda: all(p.state.value == "ready" for p in tabs.pages()))
        tabs.select(tabs.pages()[3])  # c, opened by a
        tabs.take_notes()
        await browser.peer.event("Target.targetDestroyed", {"targetId": "c"})
        await browser.wait_until(lambda: len(tabs.pages()) == 3)
        assert tabs.current.target_id == "a"
        assert tabs.take_notes() == [
            "The current tab (about:blank) closed; tab 1 (about:blank) is now current."
        ]
