"""browser_snapshot: the page as Chrome's accessibility tree sees it, one element a line, with
refs for the elements a model may act on; the top of a long one inline, the whole in a file."""

from __future__ import annotations

from typing import Any

import trio

from .._errors import ToolError
from ..browser import capture_snapshot
from ._context import ToolContext
from ._output import ToolOutput, spill_top_lines
from ._tool import TIMEOUT_FIELD, Tool, object_schema


async def snapshot(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    session = await ctx.browser()
    page = session.page
    selector = args.get("selector") or None
    ref = args.get("ref") or None
    if selector and ref:
        raise ToolError("Give either selector or ref, not both")
    with trio.move_on_at(ctx.deadline) as deadline:
        await page.wait_usable()
        shot = await capture_snapshot(
            page, root_ref=ref, selector=selector, depth=args.get("depth")
        )
    if deadline.cancelled_caught:
        raise ctx.timeout_error("taking the snapshot")
    if not (selector or ref) and args.get("depth") is None:  # whole-page captures only
        page.last_snapshot = shot
    lines = shot.lines() or ["(no accessible content)"]
    text = spill_top_lines(
        shot.header(),
        lines,
        ctx.dirs().outputs,
        label="snapshot",
        limit=ctx.settings.snapshot_inline_limit,
        noun="lines",
    )
    return ToolOutput.ok(text)


SNAPSHOT_TOOL = Tool(
    "browser_snapshot",
    "Capture the page's accessibility snapshot: one element a line, indented by nesting, with "
    'role, name, states and value, e.g. `- button "Sign in" [ref=e12]`. Elements you can act '
    "on carry a ref to pass to the action tools (browser_click, browser_type, ...). Iframes "
    "and open shadow roots are included. A long snapshot keeps its top inline and the whole "
    "in a file the result names; use selector, ref or depth to see a part.",
    object_schema(
        {
            "selector": {
                "type": "string",
                "description": "CSS selector in the main frame: only that element's subtree",
                "minLength": 1,
            },
            "ref": {
                "type": "string",
                "description": "A ref from an earlier snapshot: only that element's subtree",
                "minLength": 1,
            },
            "depth": {
                "type": "integer",
                "description": "Show nesting levels up to this depth only (0: the top level)",
                "minimum": 0,
                "maximum": 1000,
            },
            "timeout": TIMEOUT_FIELD,
        },
        [],
    ),
    snapshot,
)
