"""browser_set_offline: cut the page and its workers off the network, or reconnect them."""

from __future__ import annotations

import collections
from typing import Any

import trio

from ..browser import Worker
from ._context import ToolContext
from ._output import ToolOutput

_NAMES = {"service_worker": ("service worker", "service workers"), "worker": ("worker", "workers")}


async def set_offline(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    offline = bool(args["offline"])
    workers = (await ctx.browser()).page.workers
    with trio.move_on_at(ctx.deadline):
        where = _where(await workers.set_offline(offline))
        if offline:
            return ToolOutput.ok(
                f"Offline mode is on for {where}: requests fail with "
                "net::ERR_INTERNET_DISCONNECTED unless a service worker answers them."
            )
        return ToolOutput.ok(f"Offline mode is off for {where}: the network is back.")
    mode = "on" if offline else "off"
    raise ctx.timeout_error(
        f"switching offline mode {mode}: the page "
        "did not answer; the mode takes effect when it does."
    )


def _where(workers: list[Worker]) -> str:
    """'the page', or 'the page, 1 service worker and 2 workers'."""
    counts = collections.Counter(worker.context for worker in workers)
    parts = ["the page", *(f"{n} {_NAMES[kind][n != 1]}" for kind, n in sorted(counts.items()))]
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
