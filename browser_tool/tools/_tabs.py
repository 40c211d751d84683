"""browser_tabs: list the conversation's tabs, open one, make one current, close one.

Shaped like the peers' tool of the same name: `{action: "list" | "new" | "select" | "close",
index?, url?}`, tabs numbered from 0 in the order they opened. Every other tool acts on the
current tab; a tab a page opens (a popup, a `target=_blank` link) is announced by the result of
the call during which it opened, and does not become current until selected here.
"""

from __future__ import annotations

import contextlib
from typing import Any

import trio

from .._errors import CdpError, InvalidInputError, ToolError
from ..browser import BrowserSession, Page
from ._context import ToolContext
from ._navigate import check_url, navigate
from ._output import ToolOutput
from ._tool import TIMEOUT_FIELD, Tool, object_schema

_ACTIONS = ("list", "new", "select", "close")


def check_tabs_input(raw: dict[str, Any]) -> None:
    """`index` is for select and close only, and select needs one; `url` is for new only."""
    action = raw.get("action")
    if "url" in raw and action != "new":
        raise InvalidInputError("url", f"is only taken by action 'new', not {action!r}")
    if "index" in raw and action not in ("select", "close"):
        raise InvalidInputError("index", f"is only taken by 'select' and 'close', not {action!r}")
    if action == "select" and "index" not in raw:
        raise InvalidInputError("action", "'select' needs `index`, the tab to make current")


async def tabs_tool(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    action = args["action"]
    url = check_url(args["url"], ctx.settings.allowed_url_schemes) if "url" in args else None
    browser = await ctx.browser()
    tabs = browser.tabs
    with trio.move_on_at(ctx.deadline):
        if action == "new":
            page = await tabs.open_tab()
            tabs.select(page)
            opened = f"Opened tab {tabs.index(page)} and made it current."
            if url is None:
                return ToolOutput.ok(f"{opened}\n{await _listing(browser)}")
            result = await navigate(ctx, {"url": url})
            if result.is_error:
                return result.with_notes([opened])
            said = "" if result.output == "done" else f"{result.output}\n"  # e.g. a download
            return _prefixed(f"{opened}\n{said}{await _listing(browser)}", result)
        if action == "select":
            page = _tab_at(browser, args["index"])
            await page.wait_usable()
            tabs.select(page)
            with contextlib.suppress(CdpError):  # focus follows, as a person's click on a tab
                await page.session.send("Page.bringToFront", timeout=5.0)
            return ToolOutput.ok(f"Tab {args['index']} is now current.\n{await _listing(browser)}")
        if action == "close":
            return ToolOutput.ok(await _close(ctx, browser, args.get("index")))
        return ToolOutput.ok(await _listing(browser))
    raise ctx.timeout_error(f"on browser_tabs {action}")


def _tab_at(browser: BrowserSession, index: int) -> Page:
    pages = browser.tabs.pages()
    if not 0 <= index < len(pages):
        raise ToolError(
            f"There is no tab {index}: the open tabs are 0 to {len(pages) - 1} "
            "(browser_tabs list shows them)."
        )
    return pages[index]


async def _close(ctx: ToolContext, browser: BrowserSession, index: int | None) -> str:
    tabs = browser.tabs
    page = tabs.current if index is None else _tab_at(browser, index)
    number = tabs.index(page)
    if len(tabs.pages()) == 1:
        await page.wait_usable()
        # Until it loads, the listing below would still show the page it leaves.
        await navigate(ctx, {"url": "about:blank"})
        return (
            f"Tab {number} is the last tab, so it was not closed: it was navigated to "
            f"about:blank instead.\n{await _listing(browser)}"
        )
    was_current = page is tabs.current
    await tabs.close_tab(page)
    now = f" Tab {tabs.index(tabs.current)} is now current." if was_current else ""
    return f"Closed tab {number} ({page.url or 'about:blank'}).{now}\n{await _listing(browser)}"


async def _listing(browser: BrowserSession) -> str:
    """'Open tabs:' and a line per tab: '- 0: (current) [title] (url)'."""
    tabs = browser.tabs
    try:  # fresh titles and URLs (the cached ones may lag a just-loaded page)
        targets = await browser.conn.send("Target.getTargets", timeout=5.0)
        infos = {t.get("targetId"): t for t in targets.get("targetInfos", [])}
    except CdpError:
        infos = {}
    lines = ["Open tabs:"]
    for index, page in enumerate(tabs.pages()):
        info = infos.get(page.target_id) or {}
        url = str(info.get("url") or page.url or "about:blank")
        title = str(info.get("title") or page.title or "")
        current = " (current)" if page is tabs.current else ""
        lines.append(f"- {index}:{current} [{title}] ({url})")
    return "\n".join(lines)


def _prefixed(text: str, result: ToolOutput) -> ToolOutput:
    return ToolOutput.ok(text, images=result.images)


TABS_TOOL = Tool(
    "browser_tabs",
    "List, open, select or close the browser's tabs, numbered from 0 in the order they "
    "opened. Every other tool acts on the current tab. A tab the page opens (a popup, a "
    "target=_blank link, window.open) is announced in the result of the call that opened it "
    "(its index, URL and title) and does not become current until you select it; a tab that "
    "closes itself disappears, and if it was current the result says which tab is current "
    "now. 'new' opens a tab (at `url` if given) and makes it current; 'close' closes tab "
    "`index` (default: the current one); the last tab is never closed, it is navigated to "
    "about:blank instead. A browser keeps at most BROWSER_TOOL_MAX_TABS tabs (default 10): "
    "windows a page opens beyond that are closed as they open, and counted.",
    object_schema(
        {
            "action": {"type": "string", "enum": list(_ACTIONS), "description": "What to do"},
            "index": {
                "type": "integer",
                "minimum": 0,
                "maximum": 1000,
                "description": "Tab index, for select and close (close: default current tab)",
            },
            "url": {
                "type": "string",
                "minLength": 1,
                "description": "For new: the URL to open in the new tab (default: about:blank)",
            },
            "timeout": TIMEOUT_FIELD,
        },
        ["action"],
    ),
    tabs_tool,
    pre_check=check_tabs_input,
)
