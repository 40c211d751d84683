"""browser_get_network_sources: the page's recent responses and where each came from.

Never launches a browser: with none running, nothing was loaded.
"""

from __future__ import annotations

from typing import Any

from ._context import ToolContext
from ._output import ToolOutput, spill_lines


async def network_sources(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    session = ctx.existing_browser()
    if session is None:
        return ToolOutput.ok("No responses recorded: no browser is running in this conversation.")
    await session.page.workers.caught_up()
    network = session.page.workers.network
    records = network.recent(int(args.get("limit", 50)))
    total, counts, dropped = len(network), network.counts(), network.dropped
    cleared = " The log was cleared." if args.get("clear") and network.clear() else ""
    if not records:
        return ToolOutput.ok(
            "No responses recorded since the session started or the log was cleared."
        )
    by_source = ", ".join(f"{source} {count}" for source, count in counts.items())
    header = f"{total} responses recorded; by source: {by_source}."
    if dropped:
        header += f" {dropped} older ones were dropped (the log keeps {network.capacity})."
    shown = "oldest first" if len(records) == total else f"the newest {len(records)}, oldest first"
    header += f"{cleared} Listed {shown}:"
    text = spill_lines(
        header,
        [record.describe() for record in records],
        ctx.dirs().outputs,
        label="network-sources",
        limit=ctx.settings.inline_text_limit,
        noun="responses",
    )
    return ToolOutput.ok(text)
