"""A call whose tab closes itself: an action settles on the tab that became current, so a
snapshot taken at once shows what the opener did with the closed tab's message; a command cut
short by its tab closing says the tab closed, not that the page crashed.

Charter: real Chromium (headless shell) and the fixture pages, tools called through
`manager.call_tool`; waits are for target events, never for time.
"""

from __future__ import annotations

import pytest

from browser_tool import BrowserSessionManager
from fixtures_site import FixtureServer
from tests.support.manager_calls import C, call, find_ref, ok
from tests.support.tabs import open_provider_tab, tab_count

pytestmark = pytest.mark.chrome


async def test_approve_click_result_and_an_immediate_snapshot_show_the_signed_in_opener(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await open_provider_tab(manager, site)
    idp = await ok(manager, "browser_snapshot")
    approved = await ok(manager, "browser_click", ref=find_ref(idp, "button", "Approve"))
    assert approved.startswith('Clicked button "Approve"'), approved
    assert "The current tab (" in approved, approved
    assert "closed; tab 0 (" in approved, approved
    assert "is now current" in approved, approved
    assert "crash" not in approved, approved
    assert "No visible change" not in approved, approved
    # No wait: the click's result came after the opener handled the provider's message.
    snap = await ok(manager, "browser_snapshot")
    assert "Signed in with token tok-42" in snap, snap
    assert "Signed out" not in snap, snap


async def test_a_tab_closing_itself_during_an_eval_is_said_closed_not_crashed(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await open_provider_tab(manager, site)
    session = await manager.get_or_create(C)
    out = await call(
        manager, "browser_eval", expression="window.close(); new Promise(r => setTimeout(r, 5000))"
    )
    text = out.output
    assert "crash" not in text, text
    assert text.startswith("The tab closed during the call"), text
    assert "closed; tab 0 (" in text, text
    assert "is now current" in text, text
    await tab_count(session, 1)
    listing = await ok(manager, "browser_tabs", action="list")
    assert "crash" not in listing, listing
    assert "- 0: (current) [Fixture Sign-in]" in listing, listing
