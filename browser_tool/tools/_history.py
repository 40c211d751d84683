"""browser_navigate_back / browser_navigate_forward: the tab's history, one entry at a time,
waiting for the entry's page to load."""

from __future__ import annotations

from typing import Any

from .._errors import ToolError
from ._actions import run_watched
from ._context import ToolContext
from ._output import ToolOutput
from ._tool import TIMEOUT_FIELD, Tool, object_schema


async def _go(ctx: ToolContext, step: int) -> ToolOutput:
    page = (await ctx.browser()).page
    history = await page.session.send("Page.getNavigationHistory")
    index = int(history["currentIndex"]) + step
    entries = history["entries"]
    if not 0 <= index < len(entries):
        which = "previous" if step < 0 else "next"
        raise ToolError(f"There is no {which} page in this tab's history; nothing was done.")
    entry = entries[index]

    async def go() -> str:
        await page.session.send("Page.navigateToHistoryEntry", {"entryId": entry["id"]})
        return "Went back." if step < 0 else "Went forward."

    return await run_watched(ctx, page, go)


async def navigate_back(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    return await _go(ctx, -1)


async def navigate_forward(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    return await _go(ctx, 1)


HISTORY_TOOLS = (
    Tool(
        "browser_navigate_back",
        "Go back to the previous page in the tab's history and wait for it to load.",
        object_schema({"timeout": TIMEOUT_FIELD}, []),
        navigate_back,
    ),
    Tool(
        "browser_navigate_forward",
        "Go forward to the next page in the tab's history and wait for it to load.",
        object_schema({"timeout": TIMEOUT_FIELD}, []),
        navigate_forward,
    ),
)
