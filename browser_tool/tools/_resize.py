"""browser_resize: set the page's viewport, within the call's deadline."""

from __future__ import annotations

from typing import Any

import trio

from .._errors import ToolError
from ._context import ToolContext
from ._output import ToolOutput

MAX_DIMENSION = 10000


def check_dimensions(args: dict[str, Any]) -> tuple[int, int]:
    """(width, height) from a resize input. Raises ToolError unless both are integers from 1
    to MAX_DIMENSION."""
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


async def resize(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    width, height = check_dimensions(args)
    page = (await ctx.browser()).page
    # The page may be slow to answer (a renderer busy in a script), so the command gets the
    # call's deadline like every other tool's work.
    with trio.move_on_at(ctx.deadline):
        await page.apply_viewport(width, height, timeout=None)
        return ToolOutput.ok("done")
    raise ctx.timeout_error(
        f"resizing the viewport to "
        f"{width}x{height}: the page did not answer (a script may be keeping it busy); "
        "the viewport may still change when it does."
    )
