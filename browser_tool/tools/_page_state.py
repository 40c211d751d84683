"""browser_recent_console_logs, browser_clear_console_logs and browser_resize."""

from __future__ import annotations

import json
from typing import Any

from .._errors import ToolError
from ._context import ToolContext
from ._output import ToolOutput, spill_large_text

MAX_DIMENSION = 10000


async def recent_console_logs(ctx: ToolContext, args: dict[str, Any], timeout: float) -> ToolOutput:
    session = ctx.existing_browser()  # no browser yet: nothing logged; do not launch one
    entries = session.page.console.recent(int(args.get("limit", 100))) if session else []
    if not entries:
        return ToolOutput.ok("No console log entries.")
    text = json.dumps([e.to_json() for e in entries], ensure_ascii=False, indent=1)
    return ToolOutput.ok(
        spill_large_text(
            text, ctx.dirs().outputs, label="console", limit=ctx.settings.inline_text_limit
        )
    )


async def clear_console_logs(ctx: ToolContext, args: dict[str, Any], timeout: float) -> ToolOutput:
    session = ctx.existing_browser()
    count = session.page.console.clear() if session else 0
    return ToolOutput.ok(f"Cleared {count} console log entries.")


def check_dimensions(args: dict[str, Any]) -> tuple[int, int]:
    width, height = args.get("width"), args.get("height")
    ok = all(
        isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_DIMENSION
        for v in (width, height)
    )
    if not ok:
        raise ToolError(
            f"Invalid dimensions: width and height must be integers from 1 to {MAX_DIMENSION}; "
            f"got width={width!r}, height={height!r}"
        )
    return int(width), int(height)  # type: ignore[arg-type]


async def resize(ctx: ToolContext, args: dict[str, Any], timeout: float) -> ToolOutput:
    width, height = check_dimensions(args)
    session = await ctx.browser()
    await session.page.apply_viewport(width, height)
    return ToolOutput.ok("done")
