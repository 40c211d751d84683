"""Tabs on real Chromium (headless shell) and the fixture pages: a target=_blank link and a
window.open sign-in become tabs the model can list, select and close; console and network
listings say which tab an entry came from; the cap; a background tab's crash; refs of another
tab; and in context mode, two conversations opening tabs at once never see each other's.

Charter: loopback only; tools driven through `manager.call_tool` as a front end would; where a
tab's arrival or departure is not in a call's result yet (Chrome announces it on its own
schedule), the test waits for the target event it is announced by, never for time; every
Chrome is killed by its session, and the state_dir fixture fails a test that leaves anything.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio
import trio.testing

from browser_tool import BrowserSessionManager, CdpError
from browser_tool import open_session_manager as open_manager
from browser_tool.browser import BrowserSession
from fixtures_site import FixtureServer
from tests.support.checks import make_settings, wait_group_gone
from tests.support.manager_calls import C, call, find_ref, js, ok
from tests.support.tabs import loaded, tab_count, tabs_showing

pytestmark = pytest.mark.chrome


async def page_targets(session: BrowserSession) -> list[str]:
    targets = await session.conn.send("Target.getTargets")
    return sorted(t["targetId"] for t in targets["targetInfos"] if t["type"] == "page")


async def test_blank_link_opens_a_tab_that_is_followed_and_closed(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/blank_link.html"))
    snap = await ok(manager, "browser_snapshot")
    session = await manager.get_or_create(C)
    out = await ok(manager, "browser_click", ref=find_ref(snap, "link", "Open in a new tab"))
    await tab_count(session, 2)
    await loaded(session, 1, "/index.html")
    out += await ok(manager, "browser_tabs", action="list")
    assert "The page opened a new tab: tab 1 (" in out, out
    assert "The current tab is still tab 0" in out
    assert f"- 0: (current) [Blank link] ({site.url_for('/blank_link.html')})" in out
    assert f"- 1: [Fixture Home] ({site.url_for('/index.html')})" in out
    # Select it: every tool now acts on it.
    selected = await ok(manager, "browser_tabs", action="select", index=1)
    assert "Tab 1 is now current." in selected
    assert "- 1: (current) [Fixture Home]" in selected
    assert await js(manager, "document.title") == "Fixture Home"
    # A ref of tab 0 is refused on tab 1, naming its tab.
    refused = await call(manager, "browser_click", ref=find_ref(snap, "link", "Open in a new tab"))
    assert refused.is_error
    assert "is on tab 0 (" in refused.output
    assert "not on the current tab" in refused.output
    # Close the current tab: tab 0 is current again, and the target is gone.
    popup_target = session.page.target_id
    async with session.conn.listen("Target.targetDestroyed") as destroyed:
        closed = await ok(manager, "browser_tabs", action="close")
        with trio.fail_after(10):  # Chrome answers closeTarget before the target is gone
            while (await destroyed.receive()).params["targetId"] != popup_target:
                pass
    assert "Closed tab 1" in closed, closed
    assert "Tab 0 is now current." in closed
    assert "- 1:" not in closed
    assert await js(manager, "document.title") == "Blank link"
    assert await page_targets(session) == [session.page.target_id]
    # The last tab is not closed: it is navigated to about:blank.
    last = await ok(manager, "browser_tabs", action="close", index=0)
    assert "it was navigated to about:blank instead" in last, last
    assert await js(manager, "location.href") == "about:blank"


async def test_sign_in_window_posts_back_and_closes_itself(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/idp_opener.html"))
    session = await manager.get_or_create(C)
    snap = await ok(manager, "browser_snapshot")
    out = await ok(
        manager, "browser_click", ref=find_ref(snap, "button", "Sign in with the provider")
    )
    await tab_count(session, 2)
    await loaded(session, 1, "/idp.html")
    out += await ok(manager, "browser_tabs", action="select", index=1)
    assert "idp.html" in out, out
    assert await js(manager, "document.title") == "Fixture Provider"
    await ok(manager, "browser_eval", expression="console.log('in the provider window'); 1")
    idp = await ok(manager, "browser_snapshot")
    # The provider's window posts the token to its opener and closes itself.
    approved = await ok(manager, "browser_click", ref=find_ref(idp, "button", "Approve"))
    await tab_count(session, 1)
    after = approved + await ok(manager, "browser_tabs", action="list")
    assert "closed; tab 0 (" in after, after
    assert "is now current" in after
    assert "- 0: (current) [Fixture Sign-in]" in after
    assert "- 1:" not in after
    # The message reaches the opener as a task of its own: its text is the signal.
    await ok(manager, "browser_wait_for", text="Signed in with token tok-42", timeout="10s")
    logs = await ok(manager, "browser_recent_console_logs")
    assert re.search(r"\[tab 0\] .*signin: token received tok-42", logs), logs
    # The closed window's log outlives it.
    assert re.search(r"\[closed tab\] .*in the provider window", logs), logs


async def test_console_and_network_entries_say_their_tab(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/idp_opener.html"))
    session = await manager.get_or_create(C)
    await ok(manager, "browser_eval", expression="console.log('from the opener'); 1")
    await ok(manager, "browser_eval", expression="document.getElementById('signin').click(); 1")
    await tab_count(session, 2)
    await loaded(session, 1, "/idp.html")
    await ok(manager, "browser_tabs", action="select", index=1)
    await ok(manager, "browser_eval", expression="console.log('from the popup'); 1")
    popup = session.tabs.pages()[1]
    # Chrome may announce the response a moment after the fetch resolves: wait for it.
    async with session.conn.listen(
        "Network.responseReceived", session_id=popup.session.session_id
    ) as responses:
        fetched = await js(manager, "fetch('/api/data.json').then(r => r.status)")
        assert fetched == 200
        with trio.fail_after(10):
            while "/api/data.json" not in (await responses.receive()).params["response"]["url"]:
                pass
    logs = await ok(manager, "browser_recent_console_logs")
    assert re.search(r"\[tab 0\] .*from the opener", logs), logs
    assert re.search(r"\[tab 1\] .*from the popup", logs), logs
    network = await ok(manager, "browser_get_network_sources")
    assert re.search(r"\[tab 0\] 200 Document network \S+/idp_opener\.html", network), network
    assert re.search(r"\[tab 1\] 200 Fetch network \S+/api/data\.json", network), network


async def test_fifty_windows_leave_at_most_the_cap_open(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/index.html"))
    session = await manager.get_or_create(C)
    cap = manager.settings.max_tabs
    over_cap = 50 - (cap - 1)
    async with session.conn.listen("Target.targetDestroyed") as destroyed:
        out = await ok(
            manager,
            "browser_eval",
            expression="for (let i = 0; i < 50; i++) window.open('about:blank#' + i); 1",
        )
        with trio.fail_after(30):  # every window over the cap is closed as it opens
            for _ in range(over_cap):
                await destroyed.receive()
    assert session.tabs.closed_over_cap == over_cap
    out += await ok(manager, "browser_tabs", action="list")
    assert len(session.tabs.pages()) == cap
    assert len(await page_targets(session)) == cap
    assert session.tabs.opened == 50
    # Tabs opened during one call are announced in one note: counted, each named by number.
    announced = out.count("The page opened a new tab") + sum(
        int(n) for n in re.findall(r"The page opened (\d+) new tabs", out)
    )
    assert announced == cap - 1, out
    refused = re.findall(r"tried to open (\d+) more tab\(s\)", out)  # in one result or two
    assert sum(int(n) for n in refused) == over_cap, out
    assert len(out) < 8000  # bounded: one line per kept tab, one count for the rest
    # At the cap, a new tab is refused with the reason.
    at_cap = await call(manager, "browser_tabs", action="new")
    assert at_cap.is_error
    assert "close one first" in at_cap.output


async def test_background_tab_crash_replaces_that_tab_only(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/index.html"))
    session = await manager.get_or_create(C)
    opened = await ok(manager, "browser_tabs", action="new", url=site.url_for("/console.html"))
    assert "Opened tab 1 and made it current." in opened, opened
    await ok(manager, "browser_tabs", action="select", index=0)
    background = session.tabs.pages()[1]
    old_target = background.target_id
    crashed = background.crashed
    session_of_crash = background.session

    async def crash() -> None:
        with contextlib.suppress(CdpError):  # the crash cuts the command short
            await session_of_crash.send("Page.crash")

    async with (
        session.conn.listen("Target.targetDestroyed") as destroyed,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(crash)
        with trio.fail_after(10):
            await crashed.wait()
            await background.wait_usable()
            # The crashed target is closed once its replacement is attached.
            while (await destroyed.receive()).params["targetId"] != old_target:
                pass
        nursery.cancel_scope.cancel()
    assert background.target_id != old_target
    text = await ok(manager, "browser_eval", expression="document.title")
    assert "Fixture Home" in text
    assert re.search(r"\[tab 1 \(.*\)\] Note: the page crashed", text), text
    assert len(session.tabs.pages()) == 2
    assert session.page is session.tabs.pages()[0]
    assert await page_targets(session) == sorted(p.target_id for p in session.tabs.pages())


async def test_kill_session_leaves_no_tab_or_process(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/blank_link.html"))
    await ok(manager, "browser_tabs", action="new", url=site.url_for("/index.html"))
    [info] = manager.list_sessions()
    assert info.pid is not None
    await manager.kill_session(C)
    assert await wait_group_gone(info.pid, within=5.0)


@pytest.fixture
async def shared(state_dir: Path, headless_shell: str) -> AsyncIterator[BrowserSessionManager]:
    async with open_manager(make_settings(state_dir, isolation="context")) as manager:
        yield manager


async def test_context_mode_conversations_never_see_each_others_tabs(
    shared: BrowserSessionManager, site: FixtureServer
) -> None:
    async def open_tabs(conversation: str, count: int) -> None:
        await shared.call_tool(
            conversation, "browser_navigate", {"url": site.url_for("/index.html")}
        )
        script = (
            f"for (let i = 0; i < {count}; i++) window.open('/index.html?{conversation}=' + i); 1"
        )
        out = await shared.call_tool(conversation, "browser_eval", {"expression": script})
        assert not out.is_error, out.output

    async with trio.open_nursery() as nursery:
        nursery.start_soon(open_tabs, "conv-a", 3)
        nursery.start_soon(open_tabs, "conv-b", 2)
    a = await shared.get_or_create("conv-a")
    b = await shared.get_or_create("conv-b")
    await tab_count(a, 4)
    await tab_count(b, 3)
    await tabs_showing(a, "conv-a=", 3)
    await tabs_showing(b, "conv-b=", 2)
    for session, mine, theirs in ((a, "conv-a", "conv-b"), (b, "conv-b", "conv-a")):
        listing = (
            await shared.call_tool(session.conversation_id, "browser_tabs", {"action": "list"})
        ).output
        assert mine in listing, listing
        assert theirs not in listing
    assert {p.target_id for p in a.tabs.pages()}.isdisjoint(p.target_id for p in b.tabs.pages())
    # Ending one conversation closes its tabs (its context goes) and leaves the other's.
    a_targets = {p.target_id for p in a.tabs.pages()}
    await shared.kill_session("conv-a")
    left = await b.conn.send("Target.getTargets")
    ids = {t["targetId"] for t in left["targetInfos"] if t["type"] == "page"}
    assert ids.isdisjoint(a_targets)
    assert {p.target_id for p in b.tabs.pages()} <= ids
    after = await shared.call_tool("conv-b", "browser_tabs", {"action": "list"})
    assert after.output.count("conv-b=") == 2, after.output
    # A tab opened with browser_tabs is made in the conversation's own context.
    new = await shared.call_tool("conv-b", "browser_tabs", {"action": "new"})
    assert "Opened tab 3 and made it current." in new.output, new.output
    info = await b.conn.send("Target.getTargetInfo", {"targetId": b.page.target_id})
    assert info["targetInfo"]["browserContextId"] == b.tabs.context


async def test_last_tab_closing_itself_is_replaced_by_a_blank_one(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/idp_opener.html"))
    session = await manager.get_or_create(C)
    await ok(manager, "browser_eval", expression="document.getElementById('signin').click(); 1")
    await tab_count(session, 2)
    await ok(manager, "browser_tabs", action="select", index=1)
    closed = await ok(manager, "browser_tabs", action="close", index=0)
    assert "Closed tab 0" in closed, closed
    popup = session.page
    async with session.conn.listen("Target.targetDestroyed") as destroyed:
        # A window a script opened may close itself; it is the last tab.
        await ok(manager, "browser_eval", expression="setTimeout(() => window.close(), 0); 1")
        with trio.fail_after(10):
            while (await destroyed.receive()).params["targetId"] != popup.target_id:
                pass
    await trio.testing.wait_all_tasks_blocked()  # the pump handled the close too
    assert session.page is not popup
    listing = await ok(manager, "browser_tabs", action="list")
    assert "The last tab (" in listing, listing
    assert "a new blank tab 0 is current" in listing
    assert "- 0: (current) [" in listing
    assert "(about:blank)" in listing
    assert "- 1:" not in listing
    assert await js(manager, "location.href") == "about:blank"
    assert await page_targets(session) == [session.page.target_id]


async def test_background_tab_keeps_its_viewport_and_its_dialog_is_answered(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/index.html"))
    session = await manager.get_or_create(C)
    await ok(manager, "browser_resize", width=800, height=600)
    await ok(manager, "browser_tabs", action="new")
    assert await js(manager, "innerWidth") == 800  # a new tab starts as the current one is
    await ok(manager, "browser_resize", width=1000, height=700)
    await ok(manager, "browser_tabs", action="select", index=0)
    assert await js(manager, "innerWidth") == 800  # each tab keeps its own
    # A popup in the background raises an alert: answered by policy, so its script goes on
    # (its result is set), and the note names its tab. (Raised once the tab is attached: one
    # raised before may be answered by headless Chrome's own default, unseen.)
    opened = await ok(manager, "browser_eval", expression="window.open('/dialogs.html'); 1")
    await tab_count(session, 3)
    popup = session.tabs.pages()[2]
    async with session.conn.listen(
        "Page.javascriptDialogClosed", session_id=popup.session.session_id
    ) as closed:
        await popup.session.send(
            "Runtime.evaluate", {"expression": "setTimeout(() => window.openAlert(), 0); 1"}
        )
        with trio.fail_after(10):
            await closed.receive()
    result = await popup.session.send(
        "Runtime.evaluate", {"expression": "document.getElementById('result').textContent"}
    )
    assert result["result"]["value"] == "undefined"  # alert() returned: the script went on
    later = opened + await ok(manager, "browser_eval", expression="1")
    assert re.search(r"\[tab 2 \([^)]*dialogs\.html\)\] A JavaScript alert dialog", later), later
    logs = await ok(manager, "browser_recent_console_logs")
    assert re.search(r"\[tab 2\] .*alert: alert text \(accepted\)", logs), logs


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Virtual time for the idle test: it jumps after 1 s of real idleness."""
    return trio.testing.MockClock(autojump_threshold=1.0)


async def test_idle_reaping_in_context_mode_leaves_no_tab_of_the_reaped_conversation(
    clock: trio.testing.MockClock, state_dir: Path, headless_shell: str, site: FixtureServer
) -> None:
    settings = make_settings(state_dir, isolation="context", idle_timeout=1800.0)
    async with open_manager(settings) as manager:
        script = "for (let i = 0; i < 2; i++) window.open('/index.html?alice=' + i); 1"
        await manager.call_tool("alice", "browser_navigate", {"url": site.url_for("/index.html")})
        await manager.call_tool("alice", "browser_eval", {"expression": script})
        alice = await manager.get_or_create("alice")
        await tab_count(alice, 3)
        alice_targets = {page.target_id for page in alice.tabs.pages()}
        manager.keepalive("bob", 7200.0)
        await manager.call_tool("bob", "browser_navigate", {"url": site.url_for("/index.html")})
        bob = await manager.get_or_create("bob")
        await trio.sleep(1800.5)  # past alice's idle deadline, not bob's
        await alice.wait_closed()
        left = await bob.conn.send("Target.getTargets")
        pages = {t["targetId"] for t in left["targetInfos"] if t["type"] == "page"}
        assert pages.isdisjoint(alice_targets)
        assert bob.page.target_id in pages
