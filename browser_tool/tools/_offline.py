"""browser_set_offline: cut the page and its workers off the network, or reconnect them."""

from __future__ import annotations

from typing import Any

import trio

from .._duration import format_duration
from .._errors import ToolError
from ._context import ToolContext
from ._output import ToolOutput


async def set_offline(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    offline = bool(args["offline"])
    workers = (await ctx.browser()).page.workers
    with trio.move_on_at(ctx.deadline):
        count = await workers.set_offline(offline)
        scope = "the page" if not count else f"the page and its {count} worker(s)"
        if offline:
            return ToolOutput.ok(
                f"Offline mode is on for {scope}: requests fail with "
                "net::ERR_INTERNET_DISCONNECTED unless a service worker answers them."
            )
        return ToolOutput.ok(f"Offline mode is off for {scope}: the network is back.")
    mode = "on" if offline else "off"
    raise ToolError(
        f"Timeout after {format_duration(ctx.timeout)} switching offline mode {mode}: the page "
        "did not answer; the mode takes effect when it does."
    )
