"""Tab results as a model reads them, found by driving the service from the outside: the last
tab's listing after 'close' shows what it shows now; a click whose tab closes itself does not
blame the call's timeout; many windows opened at once are announced in one short note.

Charter: real Chromium (headless shell) and the fixture pages, tools called through
`manager.call_tool`; waits are for target events, never for time.
"""

from __future__ import annotations

import pytest

from browser_tool import BrowserSessionManager
from fixtures_site import FixtureServer
from tests.support.manager_calls import C, find_ref, ok
from tests.support.tabs import open_provider_tab, tab_count

pytestmark = pytest.mark.chrome


async def test_closing_the_last_tab_lists_it_at_about_blank(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/blank_link.html"))
    out = await ok(manager, "browser_tabs", action="close")
    assert "it was navigated to about:blank instead" in out, out
    assert "- 0: (current) [about:blank] (about:blank)" in out, out
    assert "blank_link" not in out, out


async def test_a_click_whose_tab_closes_itself_does_not_blame_the_timeout(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await open_provider_tab(manager, site)
    idp = await ok(manager, "browser_snapshot")
    approved = await ok(manager, "browser_click", ref=find_ref(idp, "button", "Approve"))
    assert "timeout" not in approved, approved
    assert "The current tab (" in approved, approved
    assert "is now current" in approved


async def test_windows_opened_at_once_are_announced_in_one_note(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/index.html"))
    session = await manager.get_or_create(C)
    out = await ok(
        manager, "browser_eval", expression="for (let i = 0; i < 4; i++) window.open(); 1"
    )
    await tab_count(session, 5)
    out += await ok(manager, "browser_snapshot")  # a note not in the eval's is in this one
    assert out.count("The current tab is still tab 0") == 1, out
    assert "tabs 1, 2, 3, 4" in out, out


async def test_a_new_tab_at_a_url_lists_the_tabs_rather_than_done(
    manager: BrowserSessionManager, site: FixtureServer
) -> None:
    await ok(manager, "browser_navigate", url=site.url_for("/blank_link.html"))
    out = await ok(manager, "browser_tabs", action="new", url=site.url_for("/index.html"))
    assert out.startswith("Opened tab 1 and made it current.\nOpen tabs:\n"), out
    assert f"- 1: (current) [Fixture Home] ({site.url_for('/index.html')})" in out, out
    assert "done" not in out, out
